"""`mem settle`: a memory two sides superseded, chained as a person chooses.

Two clones that supersede one memory (without a key: keyed facts are
chained by time in the merge itself, chains.py) give it two successors. The
merge cannot know which revision the team means, so the driver stops with
a conflict on the old entry, its two versions between markers differing in
`superseded_by` only (docs/teams.md). Settling keeps one successor as the
old entry's and chains the other after it: the old entry is superseded by
the kept one, the kept one by the other, each link with both ends. Only the
conflicted file changes (the successors are in it: a supersede keeps the
category), and it is staged when a merge is waiting for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput
from ..storage.journal import write_atomic
from ..storage.textedit import edit_block
from ..storage.yamlio import emit_entry, parse_entries
from . import gitops
from .chains import written_order

if TYPE_CHECKING:
    from ..storage.store import Store

OURS, MIDDLE, THEIRS = "<<<<<<< ours", "=======", ">>>>>>> theirs"


@dataclass
class SettleResult:
    file: str  # the conflicted file, relative to the grimoire's root
    chain: list[str] = field(default_factory=list)  # the old id, then its successors in order
    staged: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "chain": self.chain, "staged": self.staged}


def settle(store: Store, entry_id: str, keep: str | None = None) -> SettleResult:
    """Chain the two successors of `entry_id` in its conflicted file: `keep` first, else the one written
    first (source timestamp, then id)."""
    with store.lock():
        path, lines, (start, middle, end) = _conflict(store, entry_id)
        ours, theirs = _version(lines[start + 1 : middle], entry_id), _version(lines[middle + 1 : end], entry_id)
        if _without_link(ours) != _without_link(theirs):
            raise BadInput(
                f"{entry_id}: both sides changed more than its successor",
                "keep one version between the markers by hand, then `mem validate`",
            )
        successors = [str(ours.get("superseded_by")), str(theirs.get("superseded_by"))]
        text = "\n".join(lines[:start] + emit_entry(ours).rstrip("\n").split("\n") + lines[end + 1 :])
        items, spans = _parsed(text, path, entry_id)
        found = {item.get("id"): index for index, item in enumerate(items) if isinstance(item, dict)}
        missing = [s for s in successors if s not in found]
        if missing or len(set(successors)) != 2:
            raise BadInput(
                f"{entry_id}: its successors {', '.join(map(str, successors))} are not two entries of "
                f"{store.config.relative(path)}",
                "keep one version between the markers by hand, then `mem validate`",
            )
        if keep is not None and keep not in successors:
            raise BadInput(f"{keep} is not a successor of {entry_id}", f"--keep one of {', '.join(successors)}")
        by_id = {s: items[found[s]] for s in successors}
        first, second = (
            (keep, next(s for s in successors if s != keep))
            if keep
            else tuple(e["id"] for e in sorted(by_id.values(), key=written_order))
        )
        changes = {
            entry_id: {**ours, "superseded_by": first},
            first: {**by_id[first], "superseded_by": second},
            second: {**by_id[second], "supersedes": first},
        }
        write_atomic(path, _edited(text, items, spans, changes).encode("utf-8"))
    rel = store.config.relative(path)
    return SettleResult(rel, [entry_id, first, second], _stage(store, path))


def _conflict(store: Store, entry_id: str) -> tuple[Path, list[str], tuple[int, int, int]]:
    """The file and line indexes (start, middle, end markers) of the driver's conflict on `entry_id`."""
    wanted = f"- id: {entry_id}"
    for file in store.files():
        if not file.path.exists():
            continue
        lines = file.path.read_text(encoding="utf-8").split("\n")
        for start, line in enumerate(lines):
            if line != OURS:
                continue
            middle = lines.index(MIDDLE, start) if MIDDLE in lines[start:] else -1
            end = lines.index(THEIRS, start) if THEIRS in lines[start:] else -1
            if 0 < middle < end and lines[start + 1] == wanted and lines[middle + 1] == wanted:
                return file.path, lines, (start, middle, end)
    raise BadInput(
        f"no merge conflict on {entry_id} in the grimoire's files",
        "`mem validate` names the conflicts ([merge-conflict]); settle one of those",
    )


def _version(lines: list[str], entry_id: str) -> dict[str, Any]:
    items, _ = parse_entries("\n".join(lines) + "\n", f"{entry_id} (one side)")
    if len(items) != 1 or not isinstance(items[0], dict):
        raise BadInput(f"{entry_id}: a side of its conflict is not one entry", "edit the conflict by hand")
    return items[0]


def _without_link(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != "superseded_by"}


def _parsed(text: str, path: Path, entry_id: str) -> tuple[list[Any], list[tuple[int, int]]]:
    if OURS in text.split("\n"):
        raise BadInput(
            f"{path.name} holds other conflicts besides {entry_id}'s",
            "settle or edit those first (`mem validate` names them), then settle this one",
        )
    return parse_entries(text, path.name)


def _edited(text: str, items: list[Any], spans: list[tuple[int, int]], changes: dict[str, dict]) -> str:
    """`text` with the changed entries' lines edited in place (only the fields that changed)."""
    lines = text.split("\n")
    for index in sorted(range(len(items)), key=lambda i: spans[i][0], reverse=True):
        item = items[index]
        if isinstance(item, dict) and item.get("id") in changes:
            start, stop = spans[index]
            lines[start - 1 : stop] = edit_block(lines[start - 1 : stop], item, changes[item["id"]])
    return "\n".join(lines)


def _stage(store: Store, path: Path) -> bool:
    """Stage the settled file when git is waiting for it (a merge stopped on it)."""
    root = gitops.work_tree(store.config.root)
    if root is None:
        return False
    unmerged = gitops.run(["diff", "--name-only", "--diff-filter=U", "--", str(path)], root, check=False).stdout
    if not unmerged.strip():
        return False
    return gitops.run(["add", "--", str(path)], root, check=False).returncode == 0
