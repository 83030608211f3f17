"""The commit `mem archive` makes: HEAD's grimoire files with just the move applied.

The work tree may hold edits nobody has committed: a new memory, a comment,
an entry a teammate is still writing. None of that belongs in a commit
titled `mem archive`. So the commit is built from the committed (HEAD)
versions of the files the archive touches: the archived entries (as HEAD
has them) are removed from their category file and appended to the
archive, and the result is committed through plumbing
(`gitops.commit_contents`) without touching the work tree. The work tree
gets the same move applied to its own version, so afterwards `git diff`
shows exactly the edits that were there before.

The plan is made before anything is written, so a caller that must not
archive without a commit (the session hook) can leave everything as it is.
No commit can be made when git is in the middle of an operation or HEAD is
detached, when one of the files has staged changes (the commit would have
to drop or take them), or when an archived entry fails `mem validate`'s
rules (a secret in a committed entry). An entry HEAD does not hold (never
committed) is archived in the work tree only.

Only the archived entries are parsed: HEAD's files are split into entries
textually (`chunks.parse_reusing`), as the catalog does, and parsed whole
only when splitting could differ from the parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, cast

from ..core.errors import Damaged, GitFailed
from ..storage.chunks import KNOWN, parse_reusing
from ..storage.store import Store
from ..storage.textedit import rewrite
from ..storage.yamlio import emit_entry
from .rules import archived_data


class Move(NamedTuple):
    """The entries of one category an archive moves: id -> reason, in the
    order they are appended to the archive file. A compaction also marks
    them `superseded_by` its condensed entry, appends that entry (`added`)
    to the category file, and commits the moved entries HEAD never held from
    their work-tree data (`current`), so the commit is whole."""

    category: str
    source: Path
    target: Path
    reasons: dict[str, str]
    superseded_by: str | None = None
    added: tuple[dict[str, Any], ...] = ()
    current: dict[str, dict[str, Any]] = {}  # noqa: RUF012 (a NamedTuple default: never mutated)

    def archived(self, entry_id: str, data: dict[str, Any], moment: datetime) -> dict[str, Any]:
        """An entry this move takes, as the archive holds it (in the commit and the work tree alike)."""
        marked = {**data, "superseded_by": self.superseded_by} if self.superseded_by else data
        return archived_data(marked, self.reasons[entry_id], moment)


def land(store: Store, moves: list[Move], data: dict[str, dict[str, Any]], moment: datetime) -> None:
    """Stage the moves in the work tree (`data`: each moved entry's as the
    work tree has it) and land them together (inside `store.lock()`): both
    files of a move change at once, so a memory is never lost or doubled."""
    for move in moves:
        store.ensure_file(move.category, archived=True)
        store.write(
            move.target, appended=[move.archived(entry_id, data[entry_id], moment) for entry_id in move.reasons]
        )
        store.write(move.source, {entry_id: None for entry_id in move.reasons}, list(move.added))
    store.commit()


class Plan(NamedTuple):
    """The commit an archive would make: the new file contents and the
    reasons of the entries it moves; `blocked` says why no commit can be
    made now (then nothing else is set), `notes` what the commit leaves out."""

    root: Path | None = None
    head: str | None = None
    contents: dict[str, bytes] = {}  # noqa: RUF012 (a NamedTuple default: never mutated)
    reasons: dict[str, str] = {}  # noqa: RUF012
    blocked: str | None = None
    notes: tuple[str, ...] = ()


def busy(store: Store) -> str | None:
    """Why mem must not commit in this repository now (`gitops.busy`), or None."""
    from ..git import gitops

    root = gitops.work_tree(store.config.root)
    return gitops.busy(root) if root is not None else None


def plan(store: Store, moves: list[Move], moment: datetime) -> Plan:
    """The commit of these moves applied to HEAD's files (read, not written)."""
    from ..git import gitops

    root = gitops.work_tree(store.config.root)
    if root is None:
        return Plan(notes=("not a git repository: archived without a commit",))
    why = gitops.busy(root)
    if why:
        return Plan(blocked=why)
    head = gitops.commit_of(root, "HEAD")
    if head is None:
        return Plan(notes=("archived without a commit: the repository has no commit yet",))
    rel = {path: path.resolve().relative_to(root).as_posix() for move in moves for path in (move.source, move.target)}
    changed = gitops.staged(root, head, sorted(set(rel.values())))
    if changed:
        return Plan(
            blocked=f"{', '.join(changed)} {'has' if len(changed) == 1 else 'have'} staged changes (commit or unstage them)"
        )
    committed = gitops.blobs_at(root, head, list(rel.values()))
    texts = {
        path: gitops.read_blob(root, committed[name][1]) if name in committed else None for path, name in rel.items()
    }
    contents: dict[Path, bytes] = {}
    reasons: dict[str, str] = {}
    try:
        for move in moves:
            reasons.update(_move(store, move, texts, contents, moment))
    except Damaged as exc:
        return Plan(blocked=f"the committed {exc.path} cannot be read ({exc.problem})")
    except _Invalid as exc:
        return Plan(blocked=str(exc))
    left = [entry_id for move in moves for entry_id in move.reasons if entry_id not in reasons]
    notes = (
        (f"not committed, never committed before: {', '.join(left)} (archived in the work tree only)",) if left else ()
    )
    return Plan(root, head, {rel[path]: data for path, data in contents.items()}, reasons, None, notes)


def commit(plan: Plan, message: Callable[[dict[str, str]], str]) -> str | None:
    """Make the planned commit (None when it moves nothing)."""
    from ..git import gitops

    if not plan.contents or plan.root is None or plan.head is None:
        return None
    try:
        return gitops.commit_contents(plan.root, plan.head, plan.contents, message(plan.reasons))
    except GitFailed as exc:
        exc.message = f"archived {', '.join(plan.reasons)} but the commit failed: {exc.message}"
        raise


class _Invalid(Exception):
    """An archived entry that `mem validate` would reject."""


def _move(
    store: Store, move: Move, texts: dict[Path, bytes | None], contents: dict[Path, bytes], moment: datetime
) -> dict[str, str]:
    """Apply one category's move to the committed texts (updating `contents`);
    the ids HEAD holds, which are the ones moved, with their reasons."""
    from ..memory.entry_rules import check_entry

    source = contents.get(move.source, texts[move.source])
    if source is None and (move.added or move.current):
        source = store.new_file(move.category)
    if source is None:
        return {}
    where = store.config.relative(move.source) + " (committed)"
    text = source.decode("utf-8", "surrogateescape")
    ids, spans, present = _entries(text, where, set(move.reasons))
    moved = {entry_id: present.get(entry_id, move.current.get(entry_id)) for entry_id in move.reasons}
    moved = {entry_id: data for entry_id, data in moved.items() if data is not None}
    if not moved:
        return {}
    contents[move.source] = rewrite(
        text, ids, spans, present, {entry_id: None for entry_id in present}, list(move.added)
    ).encode("utf-8", "surrogateescape")
    # In the order the work tree appends them, so both files end alike.
    # Each moved id is in the committed file or in the work tree's entries (`current`).
    appended = [move.archived(entry_id, cast("dict[str, Any]", data), moment) for entry_id, data in moved.items()]
    for data in appended:
        problems = check_entry(store.config, data, emit_entry(data).split("\n"), True, move.category)
        if problems:
            _, entry_id, rule, message = problems[0]
            raise _Invalid(f"the archived {entry_id} would not pass `mem validate`: [{rule}] {message}")
    target = contents.get(move.target, texts[move.target]) or store.new_file(move.category, archived=True)
    target_text = target.decode("utf-8", "surrogateescape")
    target_ids, target_spans, _ = _entries(target_text, store.config.relative(move.target) + " (committed)", set())
    contents[move.target] = rewrite(target_text, target_ids, target_spans, {}, {}, appended).encode(
        "utf-8", "surrogateescape"
    )
    return {entry_id: move.reasons[entry_id] for entry_id in moved}


def without(text: str, where: str, ids: set[str]) -> tuple[str, set[str]]:
    """`text` (a grimoire file) with the entries of these ids taken out, only
    their lines touched, and the ids it held (a purge: purging.py)."""
    found, spans, present = _entries(text, where, ids)
    return rewrite(text, found, spans, present, dict.fromkeys(present), []), set(present)


_ID_RUN = re.compile(r"MEM-[0-9]{8}-[0-9]+")
_SHORTEST = len("MEM-00000000-0")


def _entries(text: str, where: str, wanted: set[str]) -> tuple[list[str | None], list[tuple[int, int]], dict[str, Any]]:
    """Each item's id (None for those not `wanted`) and line span, and the
    wanted items by id (the first of each): only the chunks naming a wanted
    id are parsed (`chunks.parse_reusing`)."""

    def names_none(chunk) -> bool:
        """Whether no wanted id occurs in the chunk's text. An id of the usual
        form occurs only as a prefix of a maximal `MEM-<8 digits>-<digits>`
        run (no `M` is inside one), so the runs are found once rather than
        every id searched for (quadratic for an archive of thousands)."""
        if not usual:
            return not any(entry_id in chunk.text for entry_id in wanted)
        return not any(run[:n] in wanted for run in _ID_RUN.findall(chunk.text) for n in range(_SHORTEST, len(run) + 1))

    usual = all(_ID_RUN.fullmatch(entry_id) for entry_id in wanted)
    _, placed = parse_reusing(text, where, names_none)
    ids: list[str | None] = []
    found: dict[str, Any] = {}
    for item, _, _, _ in placed:
        entry_id = item.get("id") if item is not KNOWN and isinstance(item, dict) else None
        ids.append(entry_id if entry_id in wanted and entry_id not in found else None)
        if entry_id is not None and ids[-1] is not None:
            found[entry_id] = item
    return ids, [span for _, span, _, _ in placed], found
