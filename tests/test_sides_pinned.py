"""Which side of a merge yields its new ids (git/sides.py), in process: a real
history built with git (a bare origin whose default branch is main, a pushed
feature branch, a local branch, a local main past what it pushed, and the
FETCH_HEAD a pull leaves), and the exact rank each commit gets, with a merge
base and without one. Asked from outside the repository, as the driver may
be: git run where the working directory is the repository would hide a call
that lost the root it was given. What `make mutation` runs for sides.py."""

from __future__ import annotations

from contextlib import chdir
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import git

from grimoire_cli.git.sides import _fetched_for_merge, _SharedHistory, ours_yields


@dataclass(frozen=True)
class History:
    """start: pushed first; pushed: origin/main past it; main: a local commit past pushed; feature: pushed
    as origin/feature from start; mine, other: local branches from start, never pushed."""

    root: Path
    git_dir: Path
    start: str
    pushed: str
    main: str
    feature: str
    mine: str
    other: str


def commit(repo: Path, name: str) -> str:
    (repo / f"{name}.txt").write_text(f"{name}\n", encoding="utf-8")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", name, cwd=repo)
    return git("rev-parse", "HEAD", cwd=repo).strip()


def branch_from(repo: Path, start: str, name: str) -> str:
    git("checkout", "-q", "-b", name, start, cwd=repo)
    made = commit(repo, name)
    git("checkout", "-q", "main", cwd=repo)
    return made


def build(tmp_path: Path) -> History:
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    git("config", "user.name", "t", cwd=repo)
    git("config", "user.email", "t@t", cwd=repo)
    start = commit(repo, "start")
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    git("remote", "add", "origin", str(remote), cwd=repo)
    pushed = commit(repo, "pushed")
    git("push", "-q", "origin", "main", cwd=repo)
    feature = branch_from(repo, start, "feature")
    git("push", "-q", "origin", "feature", cwd=repo)
    git("fetch", "-q", "origin", cwd=repo)
    git("remote", "set-head", "origin", "main", cwd=repo)
    (repo / ".git" / "FETCH_HEAD").unlink()  # no pull under way
    main = commit(repo, "main")
    mine = branch_from(repo, start, "mine")
    other = branch_from(repo, start, "other")
    return History(repo, repo / ".git", start, pushed, main, feature, mine, other)


@pytest.fixture
def history(tmp_path) -> History:
    built = build(tmp_path)
    with chdir(tmp_path):  # outside the repository
        yield built


def pull_feature(history: History) -> None:
    """The FETCH_HEAD `git pull origin feature` leaves: feature for merging, what else came not."""
    git("fetch", "-q", "origin", "feature", cwd=history.root)
    # A plain fetch appended (--append): origin's main arrives marked not-for-merge.
    git("fetch", "-q", "--append", "origin", cwd=history.root)


def test_the_fetch_head_names_only_the_commits_fetched_for_merging(history):
    assert _fetched_for_merge(history.git_dir) == []  # no FETCH_HEAD
    pull_feature(history)
    fetch_head = history.git_dir / "FETCH_HEAD"
    lines = fetch_head.read_text(encoding="utf-8").splitlines()
    assert any(line.startswith(history.pushed) and "\tnot-for-merge\t" in line for line in lines)
    assert _fetched_for_merge(history.git_dir) == [history.feature]
    # A blank line (an editor's) names nothing; bytes that are no UTF-8 do not stop the read.
    fetch_head.write_bytes(fetch_head.read_bytes() + b"\n  \n" + history.mine.encode() + b"\t\tbranch '\xff'\n")
    assert _fetched_for_merge(history.git_dir) == [history.feature, history.mine]
    fetch_head.unlink()
    assert _fetched_for_merge(history.git_dir) == []


def test_the_remote_tracking_tips_and_the_default_branch_are_read_from_the_root_given(history):
    shared = _SharedHistory(history.root, history.git_dir)
    assert shared.root == history.root
    assert shared.tips == {
        "refs/remotes/origin/HEAD": history.pushed,
        "refs/remotes/origin/main": history.pushed,
        "refs/remotes/origin/feature": history.feature,
    }
    assert shared.defaults == {"refs/remotes/origin/main"}
    assert shared.fetched == []


def test_a_side_ranks_by_the_most_shared_commit_it_brings_past_the_base(history):
    pull_feature(history)
    shared = _SharedHistory(history.root, history.git_dir)
    assert shared.fetched == [history.feature]
    start = history.start
    assert shared.rank(history.main, start) == (True, False, True)  # brings origin/main's commit
    assert shared.rank(history.pushed, start) == (True, False, True)
    assert shared.rank(history.feature, start) == (False, True, True)  # pushed, and fetched for this merge
    assert shared.rank(history.mine, start) == (False, False, False)  # local only
    # Past the pushed commit, main brings only its own local commit.
    assert shared.rank(history.main, history.pushed) == (False, False, False)
    assert shared.rank(start, start) == (False, False, False)


def test_without_a_base_a_side_ranks_by_the_refs_holding_the_commit_itself(history):
    pull_feature(history)
    shared = _SharedHistory(history.root, history.git_dir)
    assert shared.rank(history.start) == (True, True, True)  # in main and in the fetched feature
    assert shared.rank(history.pushed) == (True, False, True)
    assert shared.rank(history.feature) == (False, True, True)
    assert shared.rank(history.main) == (False, False, False)  # not pushed
    assert shared.rank(history.mine) == (False, False, False)


def test_the_side_ranked_lower_yields_and_on_a_tie_theirs_does(history):
    pull_feature(history)
    root, git_dir, start = history.root, history.git_dir, history.start
    assert ours_yields(root, git_dir, history.mine, history.feature, start) is True
    assert ours_yields(root, git_dir, history.feature, history.mine, start) is False
    # The default branch outranks the branch fetched for this merge.
    assert ours_yields(root, git_dir, history.main, history.feature, start) is False
    assert ours_yields(root, git_dir, history.feature, history.main, start) is True
    assert ours_yields(root, git_dir, history.mine, history.other, start) is False  # a tie
    assert ours_yields(root, git_dir, history.main, history.main, start) is False
    # Without a base: the commits themselves.
    assert ours_yields(root, git_dir, history.mine, history.pushed) is True
    assert ours_yields(root, git_dir, history.pushed, history.mine) is False
    assert ours_yields(root, git_dir, history.mine, history.other) is False


def test_a_fetched_side_outranks_one_only_pushed(history):
    """The middle of the rank: both sides pushed, neither in the default branch, one fetched for merging."""
    git("push", "-q", "origin", "mine", cwd=history.root)
    git("fetch", "-q", "origin", "feature", cwd=history.root)
    root, git_dir, start = history.root, history.git_dir, history.start
    shared = _SharedHistory(root, git_dir)
    assert shared.rank(history.mine, start) == (False, False, True)
    assert shared.rank(history.mine) == (False, False, True)
    assert ours_yields(root, git_dir, history.mine, history.feature, start) is True
    assert ours_yields(root, git_dir, history.feature, history.mine, start) is False
    assert ours_yields(root, git_dir, history.mine, history.feature) is True
    # A pushed branch outranks a local one.
    assert ours_yields(root, git_dir, history.other, history.mine, start) is True
    assert ours_yields(root, git_dir, history.mine, history.other, start) is False


def test_what_git_cannot_answer_is_not_shared_and_theirs_yields(history, tmp_path):
    """A commit this clone does not have, or a root that is no repository: git fails, nothing is
    shared, no error (the merge goes on as on a tie)."""
    pull_feature(history)
    unknown = "0" * 40
    shared = _SharedHistory(history.root, history.git_dir)
    assert shared.rank(unknown) == (False, False, False)
    assert ours_yields(history.root, history.git_dir, unknown, history.mine) is False
    assert ours_yields(history.root, history.git_dir, history.mine, unknown) is False
    (tmp_path / "no repository").mkdir()
    nowhere = _SharedHistory(tmp_path / "no repository", history.git_dir)
    assert (nowhere.tips, nowhere.defaults, nowhere.fetched) == ({}, set(), [history.feature])
    assert nowhere.rank(history.feature, history.start) == (False, False, False)
