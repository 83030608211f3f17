"""Local entries give way (docs/agent-personas.md): a local entry (`tracked: false`)
whose id a tracked entry also has takes a fresh id.

A clone numbers local and tracked entries from one sequence per day, so
outside a git operation it never mints a clash itself; but a pull brings
teammates' tracked ids, and no teammate ever saw this clone's local ones.
The local entry is volatile and nobody else's, and local and tracked
entries never link to each other (adding refuses it), so renaming it, and
the links other local entries have to it, loses nothing. `mem check` (the
session hooks, after a pull) and every write settle clashes first, in a
lock of their own, so the new ids are known before anything else is
numbered. Nothing is settled while git is mid-operation (a rebase replays
tracked ids this checkout does not have yet): the next command after it does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.model import next_id, parse_id
from ..storage import tombstones
from ..storage.issued import in_use

if TYPE_CHECKING:
    from ..storage.store import Store

REFERENCES = ("supersedes", "superseded_by")


def clashes(store: Store) -> set[str]:
    """Ids a local entry shares with a tracked one (one indexed catalog read)."""
    local = store.local_paths()
    if not local:
        return set()
    return store.reads.shared_with_tracked(local)


def settle(store: Store) -> dict[str, str]:
    """Give each local entry that clashes a fresh id of its day, and point
    local links at it; old -> new. Takes the lock itself; nothing when there
    is no clash or git is mid-operation."""
    if not clashes(store):
        return {}
    from ..git import gitops

    root = gitops.work_tree(store.config.root)
    if root is not None and gitops.busy(root):
        return {}
    with store.lock():
        return _settle(store, clashes(store))


def note_arrived(store: Store) -> None:
    """Ids that arrived in the files (a pull, a checkout) count as issued here, as this clone's own do: a hand edit
    that then deletes such an entry does not free its id for the next add (storage/issued.py). Run at session start."""
    from ..core.model import format_id
    from ..storage.issued import record

    known = store.issued()
    marks = [(day, n) for day, n in store.reads.highest_per_day() if n and n > known.get(day, 0)]
    if marks:
        with store.lock():
            record(store.config.local_dir, [format_id(day, n) for day, n in marks])


def _settle(store: Store, found: set[str]) -> dict[str, str]:
    local = store.local_paths()
    rows = store.reads.rows_by_file(local)
    mapping: dict[str, str] = {}
    taken: dict[str, set[str]] = {}
    issued = store.issued()  # never an id this clone already issued (storage/issued.py)
    for entry_id in sorted(found):
        day = (parse_id(entry_id) or ("", 0))[0]
        if not day:
            continue  # not an id mem mints: left to `mem validate`
        if day not in taken:
            taken[day] = set(store.reads.ids_of_day(day)) | store.ids_in_damaged() | in_use(issued, day)
            taken[day] |= tombstones.of_day(store.config.archive_dir, day)  # purged ids are never reissued
        mapping[entry_id] = next_id(taken[day], day)
        taken[day].add(mapping[entry_id])
    paths = {f.rel: f.path for f in store.files()}
    for rel, file_rows in rows.items():
        changes: dict[str, dict[str, Any] | None] = {}
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
