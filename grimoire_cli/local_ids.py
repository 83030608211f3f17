"""Local entries give way (README: Kinds): a local entry (`tracked: false`)
whose id a tracked entry also has takes a fresh id.

A clone numbers local and tracked entries from one sequence per day, so it
never mints a clash itself; but a pull brings teammates' tracked ids, and no
teammate ever saw this clone's local ones. The local entry is volatile and
nobody else's, and local and tracked entries never link to each other
(adding refuses it), so renaming it, and the links other local entries
have to it, loses nothing. `mem check` (the session hooks, after a pull)
and every write settle clashes before anything else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import next_id, parse_id
from .storage.catalog.queries import STATES, Filter

if TYPE_CHECKING:
    from .storage.store import Store

REFERENCES = ("supersedes", "superseded_by")


def _local_paths(store: "Store") -> set[str]:
    return {f.rel for f in store.files() if not store.config.category(f.category).tracked}


def clashes(store: "Store") -> set[str]:
    """Ids a local entry shares with a tracked one (a catalog read; nothing parsed when none is local)."""
    local = _local_paths(store)
    if not local:
        return set()

    def query(catalog, paths: list[str]) -> set[str]:
        mine = [p for p in paths if p in local]
        ids = set(catalog.ids(mine, Filter(at=0.0, states=STATES))) if mine else set()
        return {row.data.get("id") for row in catalog.by_ids(ids) if row.path in paths and row.path not in local} if ids else set()

    return store.ask(query)


def settle(store: "Store") -> dict[str, str]:
    """Give each local entry that clashes a fresh id of its day, and point
    local links to it at the new id; old -> new. Call under a `store.lock()`
    of its own: the new ids are known to the catalog once it lands."""
    found = clashes(store)
    if not found:
        return {}
    local = _local_paths(store)
    rows = store.ask(lambda catalog, paths: {p: catalog.file_entries(p) for p in paths if p in local})
    mapping: dict[str, str] = {}
    taken: dict[str, set[str]] = {}
    for entry_id in sorted(found):
        day = (parse_id(entry_id) or ("", 0))[0]
        if not day:
            continue  # not an id mem mints: left to `mem validate`
        if day not in taken:
            taken[day] = set(store.ask(lambda catalog, paths: catalog.ids_of_day(paths, day))) | store.ids_in_damaged()
        mapping[entry_id] = next_id(taken[day], day)
        taken[day].add(mapping[entry_id])
    paths = {f.rel: f.path for f in store.files()}
    for rel, file_rows in rows.items():
        changes: dict[str, dict[str, Any]] = {}
        for row in file_rows:
            if isinstance(row.data, dict) and (renamed := _renamed(row.data, mapping)) != row.data:
                changes[row.data["id"]] = renamed
        if changes:
            store.write(paths[rel], changes)
    return mapping


def _renamed(data: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
    out = dict(data)
    if out.get("id") in mapping:
        out["id"] = mapping[out["id"]]
    for key in REFERENCES:
        if isinstance(out.get(key), str) and out[key] in mapping:
            out[key] = mapping[out[key]]
    if isinstance(out.get("related_memories"), list):
        out["related_memories"] = [mapping.get(r, r) if isinstance(r, str) else r for r in out["related_memories"]]
    return out
