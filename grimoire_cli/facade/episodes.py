"""`g.episodes`: episodic memory (docs/agent-personas.md), what happened, in
what context, how it ended and what was learned. SABRE's own names for these
calls are in `adapters/sabre.py`; the work is done by `kinds/episodes.py`.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.bounds import text as bounds_text
from ..core.bounds import whole
from .host import Namespace
from .kinds import categories_of

if TYPE_CHECKING:
    from ..core.model import Entry
    from ..retrieval.search import Hit


class Episodes(Namespace):
    """The episodes of the grimoire it serves."""

    def add(
        self,
        event: str,
        *,
        context: dict[str, Any] | None = None,
        learned: str | None = None,
        outcome: str = "unknown",
        category: str | None = None,
        tags: Iterable[str] = (),
        importance: int | None = None,
        session_id: str | None = None,
        agent: str | None = None,
    ) -> Entry:
        """Record that `event` happened: in what `context`, how it ended, what was learned."""
        from ..kinds.episodes import content_of, fields_for
        from ..memory.request import Request

        spec = self.config.of_kind("episode", category)
        fields = fields_for(event, context=context, learned=learned, outcome=outcome)
        return self.grimoire.add_many(
            [
                Request(
                    content_of(fields),
                    category=spec.name,
                    fields=fields,
                    tags=list(tags),
                    importance=importance,
                    session_id=session_id,
                    agent=agent,
                )
            ]
        )[0]

    def list(
        self,
        text: str | None = None,
        *,
        event: str | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        limit: int = 10,
        category: str | None = None,
    ) -> builtins.list[Hit]:
        """Active episodes matching `text` best first (BM25 over event, lesson
        and context, blended with recency), else newest first; of one `event`,
        created within `since`..`until` (30d, 48h, an ISO date or time)."""
        from ..kinds.tasks import check_event
        from ..retrieval.filters import filter_of
        from ..retrieval.search import ranked_or_newest

        whole(limit, "the limit")
        if text is not None:
            bounds_text(text, "the query")
        chosen = filter_of(
            self.config,
            self.grimoire.now(),
            {"active"},
            categories_of(self.config, "episode", category),
            None,
            since=since,
            until=until,
        )
        chosen = chosen.but(name=check_event(event)) if event is not None else chosen
        return ranked_or_newest(
            self.store,
            text,
            chosen,
            self.grimoire.now(),
            recency_weight=float(self.config.retrieval["recency_weight"]),
            limit=limit,
        )
