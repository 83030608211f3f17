"""The commit `mem archive` makes: HEAD's grimoire files with just the move applied.

The work tree may hold edits nobody has committed: a new memory, a comment,
an entry a teammate is still writing. None of that belongs in a commit
titled `mem archive`. So the commit is built from the committed (HEAD)
versions of the files the archive touched: the archived entries (as HEAD
has them) are removed from their category file and appended to the
archive, and the result is committed through plumbing (`gitops.commit_contents`)
without touching the work tree. The work tree already holds the same move
applied to its own version, so afterwards `git diff` shows exactly the
edits that were there before.

No commit is made (the move stays in the work tree, and a note says why)
when git is in the middle of an operation or HEAD is detached, when one of
the files has staged changes (the commit would have to drop or take them),
or when the files the commit would hold fail `mem validate`'s rules.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from .errors import Damaged, GitFailed
from .lifecycle import archived_data
from .storage.store import Store
from .storage.textedit import rewrite
from .storage.yamlio import parse_entries


class Move:
    """The entries of one category that an archive moved, by id, with their reasons."""

    def __init__(self, category: str, source: Path, target: Path, reasons: dict[str, str]):
        self.category = category
        self.source = source
        self.target = target
        self.reasons = reasons


def busy(store: Store) -> str | None:
    """Why mem must not commit in this repository now (`gitops.busy`), or None."""
    from .git import gitops

    root = gitops.work_tree(store.config.root)
    return gitops.busy(root) if root is not None else None


def commit_archive(store: Store, moves: list[Move], moment: datetime, message: Any, notes: list[str]) -> str | None:
    """Commit the moves applied to HEAD's files; None (with a note) when no
    commit can or need be made. `message(reasons)` words the commit for the
    entries it holds."""
    from .git import gitops
    from .validate import check_contents

    root = gitops.work_tree(store.config.root)
    if root is None:
        notes.append("not a git repository: archived without a commit")
        return None
    why = gitops.busy(root)
    if why:
        notes.append(f"archived without a commit: {why} (commit the archive yourself when it is over)")
        return None
    head = gitops.commit_of(root, "HEAD")
    if head is None:
        notes.append("archived without a commit: the repository has no commit yet")
        return None
    rel = {path: path.resolve().relative_to(root).as_posix() for move in moves for path in (move.source, move.target)}
    committed = gitops.blobs_at(root, head, list(rel.values()))
    staged = [path for path, (mode, blob) in gitops.blobs_at(root, None, list(rel.values())).items() if committed.get(path) != (mode, blob)]
    if staged:
        notes.append(f"archived without a commit: {', '.join(sorted(staged))} has staged changes "
                     "(commit or unstage them; the archive is in the work tree)")
        return None
    texts = {path: gitops.read_blob(root, committed[rel[path]][1]) if rel[path] in committed else None for path in rel}
    contents: dict[Path, bytes] = {}
    reasons: dict[str, str] = {}
    try:
        for move in moves:
            moved = _move(store, move, texts, contents, moment)
            reasons.update((entry_id, move.reasons[entry_id]) for entry_id in moved)
    except Damaged as exc:
        notes.append(f"archived without a commit: the committed {exc.path} cannot be read ({exc.problem})")
        return None
    left = sorted(set().union(*(move.reasons for move in moves)) - set(reasons))
    if left:
        notes.append(f"not committed (never committed before): {', '.join(left)}; the archive of "
                     f"{'it' if len(left) == 1 else 'them'} is in the work tree")
    if not contents:
        return None
    problems = check_contents(store, contents)
    if problems:
        notes.append(f"archived without a commit: the commit would not pass `mem validate`: {problems[0]}")
        return None
    try:
        return gitops.commit_contents(root, head, {rel[path]: data for path, data in contents.items()}, message(reasons))
    except GitFailed as exc:
        exc.message = f"archived {', '.join(sorted(reasons))} but the commit failed: {exc.message}"
        raise


def _move(store: Store, move: Move, texts: dict[Path, bytes | None], contents: dict[Path, bytes], moment: datetime) -> list[str]:
    """Apply one category's move to the committed texts (updating `contents`);
    the ids HEAD holds, which are the ones moved."""
    source = contents.get(move.source, texts[move.source])
    if source is None:
        return []
    where = store.config.relative(move.source) + " (committed)"
    text = source.decode("utf-8", "surrogateescape")
    items, spans = parse_entries(text, where)
    ids = [item.get("id") if isinstance(item, dict) else None for item in items]
    present = {entry_id: item for entry_id, item in zip(ids, items) if entry_id in move.reasons}
    if not present:
        return []
    contents[move.source] = rewrite(text, ids, spans, present, {entry_id: None for entry_id in present}, []).encode("utf-8", "surrogateescape")
    target = contents.get(move.target, texts[move.target]) or store.new_file(move.category, archived=True)
    target_text = target.decode("utf-8", "surrogateescape")
    target_items, target_spans = parse_entries(target_text, store.config.relative(move.target) + " (committed)")
    appended = [archived_data(present[entry_id], move.reasons[entry_id], moment) for entry_id in present]
    contents[move.target] = rewrite(target_text, [None] * len(target_items), target_spans, {}, {}, appended).encode("utf-8", "surrogateescape")
    return list(present)
