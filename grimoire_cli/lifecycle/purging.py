"""`mem archive --purge` (Loa's archive retention): an archived entry is kept
`archive.retention_days` days after it was archived, then removed from its
archive file in a commit of its own; git history keeps it.

Nothing is purged unless the retention is configured. Purging never touches
an active file. The commit is built, as the archive's is (archive_commit.py),
from HEAD's archive files with just those entries taken out, so whatever
else the work tree holds stays uncommitted; an archived entry HEAD does not
hold (never committed: no history would keep it) is left in place, and a
note says so. When no commit can be made now (git mid-operation, a detached
HEAD, staged changes in those files), nothing is purged and a note says why.
Outside git, or with `--no-commit`, the entries are removed from the files
only. Each purged id is recorded so it is never issued again
(storage/tombstones.py); the record lands before the entries go.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.clock import iso
from ..core.errors import BadInput
from ..core.model import Entry, epoch
from ..storage import tombstones
from ..storage.catalog.queries import Filter, Order
from ..storage.journal import write_atomic
from .archive_commit import without

if TYPE_CHECKING:
    from ..storage.store import Store
    from .archiving import ArchiveResult

UNSET = (
    "set memory_schema.archive.retention_days in .loa.config.yaml (e.g. 365): "
    "archived entries older than that are then purged"
)


def purge(store: Store, *, dry_run: bool = False, commit: bool = True) -> ArchiveResult:
    """Remove the archived entries older than the retention from the archive
    files, in one commit; `result.purged` holds their ids."""
    from .archiving import ArchiveResult

    days = store.config.settings.archive.retention_days
    if days is None:
        raise BadInput("archive retention is not configured: nothing to purge by", UNSET)
    result = ArchiveResult(dry_run=dry_run, purged=[])
    with store.lock():
        moment = store.runtime.now()
        old = _past_retention(store, moment.timestamp() - days * 86400)
        tracked = {i for i, e in old.items() if store.config.category(e.category).tracked}
        plan = _committed_plan(store, {i: old[i] for i in tracked}, moment) if commit and tracked else None
        if plan is not None and plan.blocked:
            result.notes.append(f"not purging now: {plan.blocked}")
            return result
        old = {i: e for i, e in old.items() if _purgeable(i, tracked, plan, result.notes)}
        result.purged = sorted(old)
        result.reasons = {i: f"archived {old[i].data.get('archived_at')}" for i in result.purged}
        if dry_run or not old:
            return result
        _remove(store, old, moment)
        if plan is not None and plan.root is not None and plan.head is not None and plan.held:
            result.commit = _commit(plan.root, plan.head, plan.contents, sorted(plan.held), days)
    return result


def _purgeable(entry_id: str, tracked: set[str], plan: _Plan | None, notes: list[str]) -> bool:
    """Whether to purge this entry: a local one always; a tracked one when
    HEAD holds it (git history keeps it), or when no commit is made (outside
    git, `--no-commit`: said once in `notes`)."""
    if entry_id not in tracked:
        return True
    if plan is None or plan.root is None:
        why = "not a git repository" if plan is not None else "--no-commit"
        note = f"{why}: purged without a commit"
        if note not in notes:
            notes.append(note)
        return True
    if entry_id not in plan.held:
        note = f"not purged, never committed (no history would keep them): {', '.join(plan.left)}"
        if note not in notes:
            notes.append(note)
        return False
    return True


def _past_retention(store: Store, cutoff: float) -> dict[str, Entry]:
    """The archived entries archived at or before `cutoff` (POSIX seconds), by id."""
    chosen = Filter(at=cutoff, states=("archived",))
    found = {}
    for entry in store.reads.listed(chosen, Order.INDEXED, include_archive=True).values():
        when = epoch(entry.data.get("archived_at"))
        if entry.archived and when is not None and when <= cutoff:
            found[entry.id] = entry
    return found


class _Plan:
    """The purge commit: new contents by relative path, the ids HEAD holds (`held`)
    and those it does not (`left`); `blocked` says why no commit can be made now."""

    __slots__ = ("blocked", "contents", "head", "held", "left", "root")

    def __init__(self, root: Path | None = None, head: str | None = None, blocked: str | None = None):
        self.root, self.head, self.blocked = root, head, blocked
        self.contents: dict[str, bytes] = {}
        self.held: set[str] = set()
        self.left: list[str] = []


def _committed_plan(store: Store, tracked: dict[str, Entry], moment: datetime) -> _Plan:
    """HEAD's archive files without the entries to purge, and HEAD's record of purged ids with them."""
    from ..git import gitops

    root = gitops.work_tree(store.config.root)
    if root is None:
        return _Plan()
    why = gitops.busy(root)
    head = gitops.commit_of(root, "HEAD") if not why else None
    if why or head is None:
        return _Plan(blocked=why or "the repository has no commit yet")
    by_path: dict[str, set[str]] = {}
    for entry_id, entry in tracked.items():
        path = store.category_path(entry.category, archived=True)
        by_path.setdefault(_relative(path, root), set()).add(entry_id)
    record = _relative(store.config.archive_dir / tombstones.FILE, root)
    changed = gitops.staged(root, head, sorted([*by_path, record]))
    if changed:
        return _Plan(blocked=f"{', '.join(changed)} {'has' if len(changed) == 1 else 'have'} staged changes")
    plan = _Plan(root, head)
    blobs = gitops.blobs_at(root, head, [*by_path, record])
    for rel, ids in sorted(by_path.items()):
        if rel not in blobs:
            continue
        text = gitops.read_blob(root, blobs[rel][1]).decode("utf-8", "surrogateescape")
        kept, held = without(text, f"{rel} (committed)", ids)
        if held:
            plan.contents[rel] = kept.encode("utf-8", "surrogateescape")
            plan.held |= held
    plan.left = sorted(set(tracked) - plan.held)
    if plan.held:
        before = gitops.read_blob(root, blobs[record][1]).decode("utf-8") if record in blobs else None
        plan.contents[record] = tombstones.added(before, sorted(plan.held), iso(moment)).encode("utf-8")
    return plan


def _relative(path: Path, root: Path) -> str:
    return path.resolve().relative_to(root).as_posix()


def _remove(store: Store, old: dict[str, Entry], moment: datetime) -> None:
    """The work tree: the ids recorded first (a failure after only over-reserves them), then the entries removed."""
    record = store.config.archive_dir / tombstones.FILE
    try:
        before = record.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = None
    tracked = sorted(i for i, e in old.items() if store.config.category(e.category).tracked)
    if tracked:
        record.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(record, tombstones.added(before, tracked, iso(moment)).encode("utf-8"))
    by_path: dict[Path, list[str]] = {}
    for entry_id, entry in old.items():
        by_path.setdefault(store.category_path(entry.category, archived=True), []).append(entry_id)
    for path, ids in by_path.items():
        store.write(path, dict.fromkeys(ids))
    store.commit()


def _commit(root: Path, head: str, contents: dict[str, bytes], ids: list[str], days: int) -> str | None:
    """The purge's own commit; its message says how many and which ids."""
    from ..core.errors import GitFailed
    from ..git import gitops

    count = len(ids)
    message = (
        f"mem archive --purge: {count} memor{'y' if count == 1 else 'ies'} archived more than {days} days ago\n\n"
        + "".join(f"{entry_id}: purged\n" for entry_id in ids)
    )
    try:
        return gitops.commit_contents(root, head, contents, message)
    except GitFailed as exc:
        exc.message = f"purged {', '.join(ids)} but the commit failed: {exc.message}"
        raise
