"""Which side of a merge gives way when both minted the same new id.

Published ids never change (issue 42): an id that has reached the shared
history keeps naming its memory forever, because other clones have already
written against it (supersedes, applies, archives, `related`) and will push
those writes later. So the side whose new ids are not yet shared yields and
is renumbered, with every reference in its files rewritten.

What is shared is read from git's own refs, which the driver (during the
merge) and the hooks (after it) see alike:

- a remote's default branch (`refs/remotes/<remote>/HEAD`): the team's history;
- the commit a `git pull` or `git fetch` brought in for merging (FETCH_HEAD's
  lines not marked not-for-merge): the upstream of a pull from anywhere;
- any remote-tracking branch (pushed, so someone may have pulled it).

A side ranks by the most shared of the commits it brings (those the merge
base has not): a local main with unpushed commits on top of what it pulled
still brings the team's history, and its ids from there do not yield to a
pushed feature branch's. The side ranked lower (in that order) yields; on a
tie theirs (the side merged in) yields, as when a local feature branch is
merged into main. A rebase or
cherry-pick replays theirs' commits onto ours: theirs always yields there
(the caller never asks).
"""

from __future__ import annotations

from pathlib import Path

from . import gitops


def ours_yields(root: Path, git_dir: Path, ours: str, theirs: str, base: str | None = None) -> bool:
    """Whether, merging `theirs` into `ours` (from `base`), ours' new ids are the ones renumbered."""
    shared = _SharedHistory(root, git_dir)
    return shared.rank(theirs, base) > shared.rank(ours, base)


class _SharedHistory:
    def __init__(self, root: Path, git_dir: Path):
        self.root = root
        self.fetched = _fetched_for_merge(git_dir)
        listed = gitops.run(
            ["for-each-ref", "--format=%(refname) %(objectname) %(symref)", "refs/remotes"], root, check=False
        ).stdout
        rows = [line.split() for line in listed.splitlines()]
        self.tips = {parts[0]: parts[1] for parts in rows if len(parts) >= 2}
        self.defaults = {parts[2] for parts in rows if len(parts) == 3}

    def rank(self, commit: str, base: str | None = None) -> tuple[bool, bool, bool]:
        """(in a remote's default branch, fetched for this merge, in any remote-tracking branch), of the
        commits `commit` brings past `base` (of `commit` itself without one): higher is more widely
        shared. The default branch comes first: `git merge origin/main` into a pushed feature branch keeps
        main's ids, though FETCH_HEAD names the feature's own upstream."""
        if base is None:
            out = gitops.run(
                ["for-each-ref", "--contains", commit, "--format=%(refname)", "refs/remotes"], self.root, check=False
            ).stdout
            containing = set(out.split())
            fetched = any(gitops.is_ancestor(self.root, commit, tip) for tip in self.fetched)
            return bool(containing & self.defaults), fetched, bool(containing)
        shared = {ref for ref, tip in self.tips.items() if self._brings(commit, tip, base)}
        fetched = any(self._brings(commit, tip, base) for tip in self.fetched)
        return bool(shared & self.defaults), fetched, bool(shared)

    def _brings(self, commit: str, tip: str, base: str) -> bool:
        """Whether `commit` has a commit of `tip`'s history that `base` has not."""
        common = gitops.merge_base(self.root, commit, tip)
        return common is not None and not gitops.is_ancestor(self.root, common, base)


def _fetched_for_merge(git_dir: Path) -> list[str]:
    try:
        lines = (git_dir / "FETCH_HEAD").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    return [line.split()[0] for line in lines if line.strip() and "\tnot-for-merge\t" not in line]
