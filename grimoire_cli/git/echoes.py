"""Applies a merge would count twice: commits both sides hold a copy of.

A rebase or a cherry-pick copies a commit with its author, time and message.
When the original comes back (a local branch taken from unpushed commits, then
`git pull --rebase`, then the branch merged; or a branch rebased onto a main
that already has a pick of its commit), both sides hold the same apply: the
merge base predates it, so adding both sides' counts since the base counts it
twice. Git meets the same change twice in text and takes it once when the two
are identical; a counter that moved on since on one side is not. The merge
driver and `mem merge-fixup` raise the base by what the copied commits
applied, so each apply is counted once.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ..storage.yamlio import parse_entries
from . import gitops

Counts = dict[str, tuple[int, int]]  # memory key -> (applications, successes)


def memory_key(item: dict) -> str:
    """What makes an entry the memory it is (category, content, source), as one string: no renumbering changes it."""
    return json.dumps([item.get("category"), item.get("content"), item.get("source")], sort_keys=True, default=str)


def echoes(root: Path, base: str, ours: str, theirs: str) -> list[str]:
    """Theirs' commits since `base` of which ours holds a copy (the same author, time and message), one original to
    a copy. A copy whose original `base` holds is that one's: a rebase replays a branch's commit (the base is its
    parent) onto a line holding picks of the commits before it, and a script commits with one message in one second."""
    copies = Counter(key for _, key in _log(root, f"{base}..{ours}"))
    if not copies:
        return []
    copies.subtract(key for _, key in _log(root, f"{ours}..{base}"))
    found = []
    for sha, key in reversed(_log(root, f"{base}..{theirs}")):  # oldest first: a copy pairs with the first original
        if copies[key] > 0:
            copies[key] -= 1
            found.append(sha)
    return found


def _log(root: Path, revisions: str) -> list[tuple[str, str]]:
    text = gitops.output(["log", "--no-merges", "--format=%H%x00%an%x00%ae%x00%at%x00%B%x1e", revisions], root) or ""
    out = []
    for record in text.split("\x1e"):
        sha, _, key = record.strip("\n").partition("\x00")
        if key:
            out.append((sha, key))
    return out


def counts_added(root: Path, storage: str, shas: list[str]) -> Counts:
    """memory key -> the applications and successes these commits added, each against its parent."""
    out: Counts = {}
    for sha in shas:
        names = gitops.output(["diff-tree", "-r", "--name-only", "--no-commit-id", f"{sha}^", sha, "--", storage], root)
        files = [name for name in (names or "").split() if name.endswith((".yaml", ".yml"))]
        # Over all the files the commit changed at once: archiving moves a memory, counts and all, from one
        # file to another, which applies nothing.
        before: Counts = {}
        after: Counts = {}
        for name in files:
            before.update(_counts(gitops.output(["show", f"{sha}^:{name}"], root) or "", name))
            after.update(_counts(gitops.output(["show", f"{sha}:{name}"], root) or "", name))
        for key, (runs, wins) in after.items():
            was = before.get(key, (0, 0))
            if (runs, wins) != was:
                total = out.get(key, (0, 0))
                out[key] = (total[0] + runs - was[0], total[1] + wins - was[1])
    return out


def _counts(text: str, where: str) -> Counts:
    try:
        items, _ = parse_entries(text, where) if text.strip() else ([], [])
    except Exception:
        return {}  # a file this commit left broken: its counts are not knowable, and the merge reports it
    out: Counts = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("effectiveness"), dict):
            made = item["effectiveness"]
            out[memory_key(item)] = (count_of(made, "applications"), count_of(made, "successes"))
    return out


def count_of(made: dict, name: str) -> int:
    """An effectiveness count, 0 when missing or not a whole number (the merge driver reads them so too)."""
    value = made.get(name, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def raised(base: dict | None, entry: dict, echoed: Counts) -> dict | None:
    """`base` with the copied commits' applies to `entry`'s memory counted in: both sides hold them, so
    adding both sides' changes since this base counts them once."""
    added = echoed.get(memory_key(entry))
    if not added:
        return base
    start: dict[str, Any] = dict(base) if base is not None else {}  # its other fields stay unknown, as without a base
    found = start.get("effectiveness")
    made: dict = found if isinstance(found, dict) else {}
    start["effectiveness"] = {
        **made,
        "applications": count_of(made, "applications") + added[0],
        "successes": count_of(made, "successes") + added[1],
    }
    return start
