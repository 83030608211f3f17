"""The facade's methods for the kinds of memory (docs/agent-personas.md): keyed
facts, episodes, procedures and prospective tasks; `Grimoire` inherits them, so `api.py` stays the map of the
commands Loa's protocol defines and this file the map of the rest.

Each method is one call an agent runtime makes; SABRE's own names for them
are in `adapters/sabre.py`. The work is done by the kind's module.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.bounds import text as bounds_text
from ..core.bounds import whole
from ..core.errors import BadInput, Duplicate, NotFound

if TYPE_CHECKING:
    from ..core.config import Config
    from ..core.model import Entry
    from ..kinds.procedures import Checklist, Saved
    from ..retrieval.search import Hit
    from ..storage.catalog.queries import Filter
    from ..storage.store import Store


class KindsFacade:
    """Mixed into `Grimoire`: it provides `config`, `store`, and the methods stubbed below."""

    config: Config
    store: Store

    if TYPE_CHECKING:

        def now(self) -> datetime: ...
        def add_many(self, items: Iterable[Any], *, skip_invalid: bool = False) -> list[Entry]: ...
        def list(self, *, categories: Iterable[str] | None = None, **options: Any) -> list[Entry]: ...
        def _filter(
            self,
            states: set[str],
            categories: Iterable[str] | None,
            tags: Iterable[str] | None,
            *,
            since: str | datetime | None = None,
            until: str | datetime | None = None,
        ) -> Filter: ...

    def _of_kind(self, kind: str, category: str | None = None) -> builtins.list[str]:
        """The categories of `kind` a read covers: `category` (checked), else
        all of them; none is bad input with the preset that adds one."""
        if category is not None or not self.config.names_of_kind(kind):
            return [self.config.of_kind(kind, category).name]
        return self.config.names_of_kind(kind)

    # -- episodes ------------------------------------------------------------

    def add_episode(
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
        return self.add_many(
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

    def episodes(
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
        from ..retrieval.search import ranked_or_newest

        whole(limit, "the limit")
        if text is not None:
            bounds_text(text, "the query")
        chosen = self._filter({"active"}, self._of_kind("episode", category), None, since=since, until=until)
        chosen = chosen.but(name=check_event(event)) if event is not None else chosen
        return ranked_or_newest(
            self.store,
            text,
            chosen,
            self.now(),
            recency_weight=float(self.config.retrieval["recency_weight"]),
            limit=limit,
        )

    # -- procedures ----------------------------------------------------------

    def add_procedure(
        self,
        document: dict[str, Any] | str,
        *,
        where: str = "procedure",
        category: str | None = None,
        confidence: float | None = None,
        importance: int | None = None,
    ) -> Saved:
        """Keep a runbook (a mapping, or its YAML/JSON text; see kinds/procedures.py);
        it supersedes the active procedure of its name. The same version again
        writes nothing (`written` False). mem never runs a step."""
        from ..kinds.procedures import Saved, content_of, fields_of, parse
        from ..memory.request import Request

        spec = self.config.of_kind("procedure", category)
        if not isinstance(document, str):
            try:
                document = json.dumps(document)  # checked as a file would be (JSON is YAML)
            except (TypeError, ValueError):
                raise BadInput("the procedure is not JSON-able", "give text, lists and mappings") from None
        document = parse(document, where)
        fields = fields_of(document)
        tags = document.get("tags") or []  # parse checked they are text
        request = Request(
            content_of(fields),
            category=spec.name,
            fields=fields,
            tags=tags,
            confidence=confidence,
            importance=importance,
        )
        try:
            return Saved(self.add_many([request])[0], True)
        except Duplicate as exc:  # the add path refuses the version already active (adding.py): nothing written
            current = self._active_procedure(fields["name"])
            if current is None or current.id != exc.of or current.category != spec.name:
                raise
            return Saved(current, False)

    def _active_procedure(self, name: str) -> Entry | None:
        """The active version of the procedure `name`, if any."""
        from ..storage.catalog.queries import Filter, Order

        chosen = Filter(at=self.now().timestamp(), categories=self._of_kind("procedure"), name=name)
        rowids = self.store.ordered(chosen, Order.NEWEST, 1)
        return self.store.load(rowids).get(rowids[0]) if rowids else None

    def procedure(self, name: str, params: dict[str, str] | None = None, *, template: bool = False) -> Checklist:
        """The active procedure `name` as a checklist, its `{params}` filled in
        (BadInput naming any missing one; a `template` leaves them as written).
        Nothing is executed."""
        from ..kinds.procedures import checklist

        found = self._active_procedure(name)
        if found is None:
            raise NotFound(f"no active procedure named {name!r}", "list them with `mem procedures`")
        return checklist(found, dict(params or {}), template)

    def procedures(self, *, category: str | None = None) -> builtins.list[Entry]:
        """The active procedures, by name."""
        return sorted(
            self.list(categories=self._of_kind("procedure", category)), key=lambda entry: str(entry.data.get("name"))
        )

    # -- the store ---------------------------------------------------------------

    def categories(self) -> builtins.list[dict[str, Any]]:
        """Each category of this scope: name, kind, ttl, floor, tracked, file."""
        return [
            {
                "name": c.name,
                "kind": c.kind,
                "ttl": c.ttl,
                "confidence_required": c.confidence_required,
                "tracked": c.tracked,
                "file": self.config.relative(self.store.category_path(c.name)),
            }
            for c in self.config.categories.values()
        ]
