"""The renumbering of merges a rebase flattened, undone after it.

`git pull --rebase` replays this clone's commits since the upstream it last
met, dropping the merges among them: both lines are replayed one after the
other. A dropped merge had renumbered the collisions of its day (the driver
in the files both sides changed, mem's hook in a commit of its own for the
files git took whole), and that hook's commit is replayed like any other. Its
renames belong to a merge that no longer exists: the picks renumbered the
same memories anew (`trees.prior_renames`), so the replay leaves a memory
under the dropped merge's id in a file git took whole, or a reference to it,
while the picks' references name the picks' id (issue 42: a compaction's
archived memories and the condensed entry that names them).

Each id a flattened merge gave a memory is renamed back to the id the
replay gave that memory: the last one the picks renumbered it to, else the
one it had before the merge.
"""

from __future__ import annotations

from pathlib import Path

from . import gitops
from .numbering import memory_of, renames_since
from .trees import Rename, tree_ids

HOOK_COMMITS = (
    "mem: renumber memory ids that collided in the merge",
    "mem: merge archived memories' lifecycle in the merge",
)


def strays(
    root: Path, storage: str, records: list[Rename], base: str, start: str, tip: str, replayed: tuple[str, ...]
) -> dict[str, str]:
    """Id a flattened merge gave a memory -> the id the rebase gave it, for the rebase of the commits
    `base..tip` onto `start` that replayed `replayed` (post-rewrite's list). Empty when no merge was
    dropped (`git rebase --rebase-merges` replays them)."""
    listed = gitops.output(["log", "--reverse", "--format=%H %P%x09%s", f"{base}..{tip}"], root) or ""
    rows = [(line.split("\t", 1)[0].split(), line.split("\t", 1)[-1]) for line in listed.splitlines() if line]
    dropped = [shas for shas, _ in rows if len(shas) == 3 and shas[0] not in replayed]
    if not dropped:
        return {}
    # What the merge settled to: the hook's commit right after it, when there is one.
    settled = {shas[1]: shas[0] for shas, subject in rows if len(shas) == 2 and subject.startswith(HOOK_COMMITS)}
    given: dict[str, str] = {}  # memory key -> the last id the picks renumbered it to (renames may chain)
    for _, key, new in records:
        given[key] = new
    before: dict[str, str] = {}  # memory key -> its id before the first dropped merge that renamed it
    upstream = tree_ids(root, start, storage) or {}
    out: dict[str, str] = {}
    clashing: set[str] = set()
    for merge, *parents in dropped:
        after = tree_ids(root, settled.get(merge, merge), storage) or {}
        for parent in parents:
            if gitops.is_ancestor(root, parent, start):
                continue  # upstream's line: not replayed, its ids are upstream's
            held = tree_ids(root, parent, storage) or {}
            for old, new in renames_since(held, after).items():
                key = memory_of(held[old])
                if new in upstream and memory_of(upstream[new]) == key:
                    target = new  # the memory reached upstream under this id (a branch merged there): published
                else:
                    target = given.get(key) or before.setdefault(key, old)
                # An id two dropped merges gave two memories (one kept under it) is left as it is: which one a
                # reference means, no merge can say.
                if out.get(new, target) != target:
                    clashing.add(new)
                out[new] = target
    return {stray: target for stray, target in out.items() if stray not in clashing and stray != target}


def origins(root: Path, storage: str, replayed: tuple[str, ...]) -> dict[str, str]:
    """Grimoire file -> the replayed commit whose version of it the rebase left (git took it whole from
    there: no driver renamed its ids), for the files HEAD holds as one of them held them. Its ids and
    references mean what they meant in that commit."""
    head = _blobs(root, "HEAD", storage)
    out: dict[str, str] = {}
    for commit in reversed(replayed):
        for path, blob in _blobs(root, commit, storage).items():
            if head.get(path) == blob:
                out.setdefault(path, commit)
    return out


def _blobs(root: Path, rev: str, storage: str) -> dict[str, str]:
    listing = gitops.output(["ls-tree", "-r", rev, "--", storage], root) or ""
    return {line.split("\t", 1)[1]: line.split()[2] for line in listing.splitlines() if "\t" in line}
