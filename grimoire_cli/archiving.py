"""`mem archive` and `mem check`: moving entries to the archive and committing
just that change."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from . import clock
from .errors import BadInput, GitFailed, no_memory
from .lifecycle import archive_reason, archived_data, check_reason, expiring_within
from .storage.catalog.queries import Filter
from .storage.store import Store


@dataclass
class ArchiveResult:
    """What `archive` moved (or would move, on a dry run) and why."""

    archived: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    commit: str | None = None
    dry_run: bool = False
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"archived": self.archived, "commit": self.commit, "reasons": self.reasons, "dry_run": self.dry_run, "notes": self.notes}


def commit_message(reasons: dict[str, str]) -> str:
    count = len(reasons)
    lines = [f"mem archive: {count} memor{'y' if count == 1 else 'ies'}", ""]
    lines.extend(f"{entry_id}: {reason}" for entry_id, reason in reasons.items())
    return "\n".join(lines) + "\n"


def archive(store: Store, *, ids: Iterable[str] | None = None, reason: str | None = None,
            dry_run: bool = False, commit: bool = True) -> ArchiveResult:
    """Move expired and ineffective entries (or the given ids) to the archive."""
    ids = list(ids or [])
    if reason is not None:
        check_reason(reason)
        if not ids:
            raise BadInput("--reason goes with ids", "name the ids to archive, e.g. mem archive MEM-20260101-001 --reason manual")
    result = ArchiveResult(dry_run=dry_run)
    with store.lock():
        moment = clock.now()  # after any wait for the lock: what expired meanwhile is archived too
        chosen: dict[str, str] = {}
        if ids:
            entries = store.by_id(ids, unique=True)
            for entry_id in ids:
                entry = entries.get(entry_id)
                if entry is None:
                    raise no_memory(entry_id)
                if entry.archived:
                    raise BadInput(f"{entry_id} is already archived")
                chosen[entry_id] = reason or ("superseded" if entry.superseded_by else "manual")
        else:
            for light in store.ask(lambda catalog, paths: catalog.lights(paths), include_archive=False, skip_damaged=False):
                why = archive_reason(light, moment)
                if why:
                    chosen.setdefault(light.id, why)
            entries = store.by_id(list(chosen), unique=True)
        result.archived = sorted(chosen)
        result.reasons = {k: chosen[k] for k in result.archived}
        if dry_run or not chosen:
            return result
        touched: list[Path] = []
        by_category: dict[str, list[str]] = {}
        for entry_id in result.archived:
            by_category.setdefault(entries[entry_id].category, []).append(entry_id)
        for category, group in by_category.items():
            source = store.category_path(category)
            target = store.ensure_file(category, archived=True)
            # Both files land together (see Store.commit): never a lost or doubled memory.
            store.write(target, appended=[archived_data(entries[i].data, chosen[i], moment) for i in group])
            store.write(source, {i: None for i in group})
            touched.extend([source, target])
        store.commit()
        if commit:
            # Still under the grimoire lock: concurrent `mem archive` runs commit one at a time.
            result.commit = _commit(store.config.root, touched, commit_message(result.reasons), result)
    return result


def _commit(root: Path, paths: list[Path], message: str, result: ArchiveResult) -> str | None:
    from .git import gitops

    work_tree = gitops.work_tree(root)
    if work_tree is None:
        result.notes.append("not a git repository: archived without a commit")
        return None
    try:
        return gitops.commit_paths(work_tree, paths, message)
    except GitFailed as exc:
        exc.message = f"archived {', '.join(result.archived)} but the commit failed: {exc.message}"
        raise


@dataclass
class CheckResult:
    """What `check` found due at session start, and what it archived."""

    expired: list[str] = field(default_factory=list)
    expiring: list[str] = field(default_factory=list)
    review: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    commit: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def unarchived(self) -> list[str]:
        """Expired entries still in place (auto_archive off)."""
        return [i for i in self.expired if i not in self.archived]

    @property
    def due(self) -> list[str]:
        return sorted(set(self.unarchived) | set(self.expiring) | set(self.review))

    def to_dict(self) -> dict[str, Any]:
        return {"expired": self.expired, "expiring": self.expiring, "review": self.review,
                "archived": self.archived, "due": self.due, "commit": self.commit, "notes": self.notes}


def check(store: Store, *, commit: bool = True) -> CheckResult:
    """Session start: archive what expired (auto_archive), report what is due."""
    moment = clock.now()
    lifecycle = store.config.lifecycle
    result = CheckResult()
    chosen = Filter(at=moment.timestamp(), states=("active", "expired"))
    lights = store.ask(lambda catalog, paths: catalog.lights(paths, chosen), include_archive=False, skip_damaged=False)
    for entry in sorted(lights, key=lambda light: light.id):
        if entry.is_expired(moment):
            result.expired.append(entry.id)
        elif expiring_within(entry, moment, lifecycle["warn_before_archive_days"]):
            result.expiring.append(entry.id)
        if entry.tier in ("low", "ineffective") and not entry.is_expired(moment):
            result.review.append(entry.id)
    if result.expired and lifecycle["auto_archive"]:
        done = archive(store, ids=result.expired, reason="expired", commit=commit)
        result.archived = done.archived
        result.commit = done.commit
        result.notes = done.notes
    return result
