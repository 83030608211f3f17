"""The JSON of results built from more than one object: what `mem show`,
`mem recall` and `mem facts` print with `--json`, and what the MCP server
returns for the same calls (one definition, so the shapes cannot drift).
Results of a single object have their own `to_dict()`/`view()`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..api import Grimoire
    from ..core.model import Entry


def shown(grimoire: Grimoire, entry: Entry) -> dict[str, Any]:
    """`mem show ID --json`: the entry, its computed heat (memory tier,
    effective importance) and how often it was recalled."""
    from ..core.clock import iso

    count, last = grimoire.facts.accesses([entry.id]).get(entry.id, (0, None))
    accesses = {"count": count, "last": iso(datetime.fromtimestamp(last, UTC)) if last is not None else None}
    return {**entry.view(grimoire.now()), **grimoire.lifecycle.heat(entry), "accesses": accesses}


def recalled(key: str, entry: Entry) -> dict[str, Any]:
    """`mem recall KEY --json`: the value under a key and where it lives."""
    from ..kinds.facts import value_of

    return {
        "key": key,
        "value": value_of(entry),
        "id": entry.id,
        "category": entry.category,
        "expires_at": entry.data.get("expires_at"),
    }


def fact(entry: Entry, moment: datetime) -> dict[str, Any]:
    """One row of `mem facts --json`: the entry with its value decoded."""
    from ..kinds.facts import value_of

    return {**entry.view(moment), "value": value_of(entry)}
