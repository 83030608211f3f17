"""The JSON of results built from more than one object: what `mem show`,
`mem recall` and `mem facts` print with `--json`, and what the MCP server
returns for the same calls (one definition, so the shapes cannot drift).
Results of a single object have their own `to_dict()`/`view()`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..core.model import Entry


class _Shows(Protocol):
    """What `shown` needs of a `Grimoire` (a feature module does not import the facade)."""

    def now(self) -> datetime: ...
    def accesses(self, ids: Iterable[str]) -> dict[str, tuple[int, float]]: ...
    def heat(self, entry: Entry) -> dict[str, Any]: ...


def shown(grimoire: _Shows, entry: Entry) -> dict[str, Any]:
    """`mem show ID --json`: the entry, its computed heat (memory tier,
    effective importance) and how often it was recalled."""
    from ..core.clock import iso

    count, last = grimoire.accesses([entry.id]).get(entry.id, (0, None))
    accesses = {"count": count, "last": iso(datetime.fromtimestamp(last, UTC)) if last is not None else None}
    return {**entry.view(grimoire.now()), **grimoire.heat(entry), "accesses": accesses}


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
