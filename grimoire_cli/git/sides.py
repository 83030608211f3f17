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

The side ranked lower (in that order) yields; on a tie theirs (the side merged in) yields,
as when a local feature branch is merged into main. A rebase or
cherry-pick replays theirs' commits onto ours: theirs always yields there
(the caller never asks).
"""

from __future__ import annotations

from pathlib import Path

from . import gitops


def ours_yields(root: Path, git_dir: Path, ours: str, theirs: str) -> bool:
    """Whether, merging `theirs` into `ours`, ours' new ids are the ones renumbered."""
    shared = _SharedHistory(root, git_dir)
    return shared.rank(theirs) > shared.rank(ours)


class _SharedHistory:
    def __init__(self, root: Path, git_dir: Path):
        self.root = root
        self.fetched = _fetched_for_merge(git_dir)
        listed = gitops.run(["for-each-ref", "--format=%(refname) %(symref)", "refs/remotes"], root, check=False).stdout
        self.defaults = {parts[1] for parts in (line.split() for line in listed.splitlines()) if len(parts) == 2}

    def rank(self, commit: str) -> tuple[bool, bool, bool]:
        """(in a remote's default branch, fetched for this merge, in any remote-tracking branch): higher is
        more widely shared. The default branch comes first: `git merge origin/main` into a pushed feature
        branch keeps main's ids, though FETCH_HEAD names the feature's own upstream."""
        out = gitops.run(
            ["for-each-ref", "--contains", commit, "--format=%(refname)", "refs/remotes"], self.root, check=False
        ).stdout
        containing = set(out.split())
        fetched = any(self._is_ancestor(commit, tip) for tip in self.fetched)
        return bool(containing & self.defaults), fetched, bool(containing)

    def _is_ancestor(self, commit: str, tip: str) -> bool:
        return gitops.run(["merge-base", "--is-ancestor", commit, tip], self.root, check=False).returncode == 0


def _fetched_for_merge(git_dir: Path) -> list[str]:
    try:
        lines = (git_dir / "FETCH_HEAD").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    return [line.split()[0] for line in lines if line.strip() and "\tnot-for-merge\t" not in line]
