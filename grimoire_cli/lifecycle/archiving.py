"""`mem archive` and `mem check`: moving entries to the archive and committing
just that change."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..core.errors import BadInput, no_memory
from ..core.model import Entry, sort_key
from ..memory import local_ids
from ..storage.catalog.queries import Filter, Order
from ..storage.store import Store
from . import archive_commit
from .archive_commit import Move
from .rules import archive_reason, check_reason, expiring_within


@dataclass
class ArchiveResult:
    """What `archive` moved (or would move, on a dry run) and why."""

    archived: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    commit: str | None = None
    dry_run: bool = False
    notes: list[str] = field(default_factory=list)
    purged: list[str] | None = None  # a purge's (purging.py): the ids removed from the archive

    def to_dict(self) -> dict[str, Any]:
        shown = {
            "archived": self.archived,
            "commit": self.commit,
            "reasons": self.reasons,
            "dry_run": self.dry_run,
            "notes": self.notes,
        }
        return shown if self.purged is None else {**shown, "purged": self.purged}


def commit_message(reasons: dict[str, str]) -> str:
    count = len(reasons)
    lines = [f"mem archive: {count} memor{'y' if count == 1 else 'ies'}", ""]
    lines.extend(f"{entry_id}: {reason}" for entry_id, reason in reasons.items())
    return "\n".join(lines) + "\n"


def archive(
    store: Store,
    *,
    ids: Iterable[str] | None = None,
    categories: Iterable[str] | None = None,
    reason: str | None = None,
    dry_run: bool = False,
    commit: bool = True,
    only_with_commit: bool = False,
) -> ArchiveResult:
    """Move expired and ineffective entries (or the given ids, or every
    entry of `categories` not yet archived: reason `cleared` unless given)
    to the archive, and commit just that move (`archive_commit`). When no
    commit can be made now, the move is made without one and a note says
    why; with `only_with_commit`, nothing is moved instead (the note says so)."""
    ids = list(ids or [])
    categories = [store.config.category(name).name for name in categories or []]
    if ids and categories:
        raise BadInput("give ids or --category, not both", "archive a whole category with mem archive --category CAT")
    if reason is not None:
        check_reason(reason)
        if not ids and not categories:
            raise BadInput(
                "--reason goes with ids or --category",
                "name the ids to archive, e.g. mem archive MEM-20260101-001 --reason manual",
            )
    result = ArchiveResult(dry_run=dry_run)
    with store.lock():
        moment = store.runtime.now()  # after any wait for the lock: what expired meanwhile is archived too
        chosen: dict[str, str] = {}
        if categories:
            ids = unarchived_ids(store, categories, moment)
            reason = reason or "cleared"
        if ids:
            entries = store.by_id(ids, unique=True)
            for entry_id in ids:
                entry = entries.get(entry_id)
                if entry is None:
                    raise no_memory(entry_id)
                if entry.archived:
                    raise BadInput(f"{entry_id} is already archived")
                chosen[entry_id] = reason or ("superseded" if entry.superseded_by else "manual")
        elif not categories:
            for light in store.reads.lights(skip_damaged=False):
                why = archive_reason(light, moment)
                if why:
                    chosen.setdefault(light.id, why)
            entries = store.by_id(list(chosen), unique=True)
        result.archived = sorted(chosen)
        result.reasons = {k: chosen[k] for k in result.archived}
        if dry_run or not chosen:
            return result
        by_category: dict[str, list[str]] = {}
        for entry_id in result.archived:
            by_category.setdefault(entries[entry_id].category, []).append(entry_id)
        moves = [
            Move(
                category,
                store.category_path(category),
                store.category_path(category, archived=True),
                {i: chosen[i] for i in group},
            )
            for category, group in by_category.items()
        ]
        # Planned before anything is written: a caller may rather not archive at all.
        # A local category's files are git-ignored: moved, never committed.
        tracked = [move for move in moves if store.config.category(move.category).tracked]
        planned = archive_commit.plan(store, tracked, moment) if commit and tracked else None
        if planned is not None and planned.blocked:
            if only_with_commit:
                result.notes.append(f"not archiving now: {planned.blocked}")
                result.archived, result.reasons = [], {}
                return result
            result.notes.append(f"archived without a commit: {planned.blocked}")
        archive_commit.land(store, moves, {entry_id: entries[entry_id].data for entry_id in result.archived}, moment)
        if planned is not None:
            result.notes.extend(planned.notes)
            # Still under the grimoire lock: concurrent `mem archive` runs commit one at a time.
            result.commit = archive_commit.commit(planned, commit_message)
    return result


def unarchived_ids(store: Store, categories: Iterable[str], moment: datetime) -> list[str]:
    """The ids of every entry of these categories still in place: active,
    expired or superseded (what clearing a category moves)."""
    chosen = Filter(at=moment.timestamp(), states=("active", "expired", "superseded"), categories=categories)
    return sorted(entry.id for entry in store.reads.listed(chosen, Order.INDEXED).values())


@dataclass
class CheckResult:
    """What `check` found due at session start, and what it archived."""

    expired: list[str] = field(default_factory=list)
    expiring: list[str] = field(default_factory=list)
    review: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    commit: str | None = None
    notes: list[str] = field(default_factory=list)
    # Tasks due now (kinds/tasks.py): {"id", "task", "trigger", "due_at"} each, listed first.
    tasks: list[dict[str, Any]] = field(default_factory=list)
    # With `remember` (a session hook): the due ids no earlier remembering check reported.
    unreported: set[str] | None = None
    # Local entries given a fresh id because a pulled tracked entry has theirs (local_ids.py): old -> new.
    renamed: dict[str, str] = field(default_factory=dict)
    off: bool = False  # memory_schema.enabled is false: nothing was checked (the note says so)

    @property
    def unarchived(self) -> list[str]:
        """Expired entries still in place (auto_archive off)."""
        return [i for i in self.expired if i not in self.archived]

    @property
    def due(self) -> list[str]:
        """Due tasks first, then the entries that need attention."""
        tasks = [task["id"] for task in self.tasks]
        return tasks + sorted((set(self.unarchived) | set(self.expiring) | set(self.review)) - set(tasks))

    def to_dict(self) -> dict[str, Any]:
        return {
            "expired": self.expired,
            "expiring": self.expiring,
            "review": self.review,
            "archived": self.archived,
            "due": self.due,
            "tasks": self.tasks,
            "commit": self.commit,
            "notes": self.notes,
            "renamed": self.renamed,
        }


OFF = "memory is off (memory_schema.enabled: false): nothing checked or archived"

# In the cache: the ids the last hook run reported, so the next says only what is new.
REPORTED = "check-reported.json"


def unreported(store: Store, result: CheckResult) -> set[str]:
    """The ids due now that the last call did not report; remembers these
    for the next call (volatile state: best effort, in the cache)."""
    from ..storage import journal

    before = journal.kept(store.cache, REPORTED)
    before = set(before) if isinstance(before, list) else set()
    now = set(result.due)
    if now != before:
        journal.keep(store.cache, REPORTED, sorted(now))
    return now - before


def expiring(store: Store, moment: datetime, days: int, excluded: Iterable[str] = ()) -> list[Entry]:
    """The active entries (of no `excluded` category) that expire within
    `days` (`rules.expiring_within`), newest first as `mem list` orders them;
    the catalog finds them (what `check` reports), so only they are read whole."""
    chosen = Filter(at=moment.timestamp(), excluded=excluded)
    horizon = moment.timestamp() + days * 86400
    with store.reading():  # the rows and their load read one state (storage/handed.py)
        lights = store.reads.needing_attention(chosen, horizon, skip_damaged=True)
        loaded = store.load([light.rowid for light in lights if expiring_within(light, moment, days)])
    return sorted(loaded.values(), key=sort_key, reverse=True)


def check(store: Store, *, commit: bool = True, archive_expired: bool = True) -> CheckResult:
    """Session start: archive what expired (auto_archive), report what is due.

    Nothing is archived (only reported) without `archive_expired`, while git
    is mid-operation or HEAD is detached (a session hook must not change the
    tree under a bisect, rebase or merge, nor leave commits on a detached
    HEAD), or, with `commit`, when the archive could not be committed (the
    hook must not leave a tree dirtied by a move nobody asked for)."""
    if not store.config.enabled:  # Loa's switch: a session start does nothing, and says so
        return CheckResult(notes=[OFF], off=True)
    moment = store.runtime.now()
    lifecycle = store.config.lifecycle
    result = CheckResult()
    result.renamed = local_ids.settle(store)  # a pull brought a tracked id a local entry has
    local_ids.note_arrived(store)  # and ids a deleted entry must not free
    chosen = Filter(at=moment.timestamp(), states=("active", "expired"))
    horizon = moment.timestamp() + lifecycle["warn_before_archive_days"] * 86400
    lights = store.reads.needing_attention(chosen, horizon)
    for entry in sorted(lights, key=lambda light: light.id):
        if entry.is_expired(moment):
            result.expired.append(entry.id)
        elif expiring_within(entry, moment, lifecycle["warn_before_archive_days"]):
            result.expiring.append(entry.id)
        if entry.tier in ("low", "ineffective") and not entry.is_expired(moment):
            result.review.append(entry.id)
    if store.config.names_of_kind("task"):
        from ..kinds.tasks import due

        result.tasks = [
            {"id": e.id, "task": e.data.get("task"), "trigger": e.data.get("trigger"), "due_at": e.data.get("due_at")}
            for e in due(store, moment)
        ]
    if result.expired and lifecycle["auto_archive"] and archive_expired:
        why = archive_commit.busy(store)
        if why:  # even without a commit: moving files under a bisect or rebase breaks it
            result.notes.append(f"not archiving now: {why}")
            return result
        done = archive(store, ids=result.expired, reason="expired", commit=commit, only_with_commit=commit)
        result.archived = done.archived
        result.commit = done.commit
        result.notes.extend(done.notes)
    return result
