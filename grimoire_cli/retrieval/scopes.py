"""Scopes (SABRE's personas): one grimoire folder each,
`grimoires/<scope>/memory/`, with its own catalog, lock and archive.

Ids are unique per scope. Listing counts each scope's entries from its own
catalog; a query across scopes ranks in each and merges best first (each
scope's relevance is relative to its own best match, as a single query's is).
The facade (`Grimoire.scopes`, `Grimoire.query_scopes`) opens the scopes.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.config import Config, is_inside
from ..core.settings import SCOPE_RE
from ..storage.catalog.queries import STATES, Filter
from ..storage.store import Store

if TYPE_CHECKING:
    from .search import Hits


class ScopeInfo:
    """One scope: its name, folder and counts."""

    __slots__ = ("active", "current", "entries", "name", "path")

    def __init__(self, name: str, path: str, active: int, entries: int, current: bool):
        self.name, self.path, self.active, self.entries, self.current = name, path, active, entries, current

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.name,
            "path": self.path,
            "active": self.active,
            "entries": self.entries,
            "current": self.current,
        }


def info(store: Store, moment: datetime, current: bool) -> ScopeInfo:
    """A scope's counts: active entries, and entries in every state (archive included)."""
    at = moment.timestamp()
    active = store.count(Filter(at=at))
    every = store.count(Filter(at=at, states=STATES), include_archive=True)
    config = store.config
    return ScopeInfo(config.scope or "", config.relative(config.storage_dir), active, every, current)


def by_scope(config: Config, paths: Iterable[Path]) -> dict[str | None, list[Path]]:
    """Files grouped by the scope whose grimoire holds them (`<scopes>/<name>/memory/...`);
    None for those in no scope's folder (checked in the current grimoire)."""
    groups: dict[str | None, list[Path]] = {}
    folder = config.scopes_dir
    for path in paths:
        name = None
        if folder is not None:
            parts = path.resolve().relative_to(folder).parts if is_inside(folder, path.resolve()) else ()
            if len(parts) > 2 and parts[1] == "memory" and SCOPE_RE.match(parts[0]):
                name = parts[0]
        groups.setdefault(name, []).append(path)
    return groups


def merged(hits: Iterable[tuple[str, Hits]], limit: int) -> Hits:
    """Each scope's hits labelled with it, best first across scopes, at most
    `limit`; when there are none, what each scope filtered out, summed."""
    from .search import Hits

    out = Hits()
    for scope, found in hits:
        for hit in found:
            hit.scope = scope
            out.append(hit)
        for reason, count in found.filtered_out.items():
            out.filtered_out[reason] = out.filtered_out.get(reason, 0) + count
        out.notes.extend(note for note in found.notes if note not in out.notes)
    out.sort(key=lambda hit: (-hit.score, hit.scope, hit.entry.id))
    del out[limit:]
    if out:
        out.filtered_out.clear()
    return out
