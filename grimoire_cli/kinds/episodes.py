"""Episodic memory (SABRE): something that happened (an event), in what
context, how it ended and what was learned, kept in a category of kind
`episode`.

An episode is an occurrence: the same event happening again is another
episode, never a duplicate. Its content is one readable line made of its
fields (what `mem list` and `mem context` show); search indexes the fields
themselves too (`catalog.rows.kind_texts`), so `mem episodes QUERY` ranks
by the same BM25 over event, lesson and context values as `mem query`,
blended with recency (`search.ranked_or_newest`). Without a query, episodes
come newest first.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.errors import BadInput
from .tasks import check_event

OUTCOMES = ("success", "failure", "unknown")
_CONTEXT_SHOWN = 300  # characters of context in the content line; the field keeps it all


def check_outcome(outcome: str) -> str:
    if outcome not in OUTCOMES:
        raise BadInput(f"bad outcome {outcome!r}", f"give one of {', '.join(OUTCOMES)}")
    return outcome


def context_json(text: str) -> dict[str, Any]:
    """`--context-json`: a JSON object."""
    from ..core.schemas import json_value

    try:
        value = json_value(text)
    except ValueError as exc:
        raise BadInput(
            f"--context-json is not JSON ({exc.args[0]})", 'give an object, like \'{"table": "users", "rows": 120}\''
        ) from None
    if not isinstance(value, dict):
        raise BadInput("--context-json must be a JSON object", 'give an object, like \'{"table": "users"}\'')
    return value


def fields_for(
    event: str, *, context: dict[str, Any] | None = None, learned: str | None = None, outcome: str = "unknown"
) -> dict[str, Any]:
    """A new episode's fields (checked against kinds.schema.json when added)."""
    fields: dict[str, Any] = {"event": check_event(event), "outcome": check_outcome(outcome)}
    if learned is not None:
        if not isinstance(learned, str) or not learned.strip():
            raise BadInput("--learned is empty", "say what was learned, or leave it out")
        fields["learned"] = learned
    if context:
        fields["context"] = dict(context)
    return fields


def content_of(fields: dict[str, Any]) -> str:
    """The episode as one line: `event (outcome): learned [k=v, ...]`."""
    line = f"{fields['event']} ({fields['outcome']})"
    if fields.get("learned"):
        line += f": {' '.join(fields['learned'].split())}"
    context = fields.get("context") or {}
    if context:
        shown = ", ".join(
            f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}" for k, v in context.items()
        )
        line += f" [{shown[:_CONTEXT_SHOWN]}{'…' if len(shown) > _CONTEXT_SHOWN else ''}]"
    return line
