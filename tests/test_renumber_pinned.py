"""The hooks' renumbering (git/renumber.py), in process: real histories built
with git in tmp_path, git's state files written as git writes them, and the
fixup run from outside the repository (git run where the working directory
is the repository would hide a call that lost the root it was given).
Pinned: the exact answers of the module's functions, the plan each hook
makes, and the files, ids and notes the fixup leaves. What `make mutation`
runs for renumber.py, beside test_merge_pinned.py and
test_flattened_pinned.py."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from contextlib import ExitStack, chdir
from pathlib import Path
from typing import cast

import pytest
from conftest import git
from test_merge_pinned import (
    APPLIED,
    ARCHIVED,
    HEAD,
    MEMORY,
    PICKED_AND_ARCHIVED,
    REDIS,
    archived_lifecycles,
    commit_all,
    entry,
    fixup,
    items,
    run_driver,
    side_and_main,
    tracked_start,
    write,
)

from grimoire_cli import Grimoire
from grimoire_cli.core.errors import BadInput
from grimoire_cli.git.echoes import memory_key
from grimoire_cli.git.merge import memory_of
from grimoire_cli.git.renumber import (
    FixupResult,
    _ambiguous,
    _changes,
    _folded,
    _head_file,
    _lifecycle,
    _lifecycle_of,
    _merged_by_driver,
    _Plan,
    _rebasing,
    _refers,
    _renamed_for,
    _repeated_ids,
    _scope_changes,
    _still_meant,
    plan,
)
from grimoire_cli.git.trees import Tree, state_file

FACTS = (MEMORY / "facts.yaml").as_posix()
DECISIONS = (MEMORY / "decisions.yaml").as_posix()


def ids(*numbers: str) -> list[str]:
    return [f"MEM-20261122-{n}" for n in numbers]


def sha(repo: Path, rev: str) -> str:
    return git("rev-parse", rev, cwd=repo).strip()


# -- git's state files -----------------------------------------------------------------------------


def test_a_head_file_names_one_commit_or_none(tmp_path):
    one, two = "a" * 40, "b" * 40
    (tmp_path / "MERGE_HEAD").write_text(f"{one}\n")
    (tmp_path / "OCTOPUS").write_text(f"{one}\n{two}\n")
    (tmp_path / "EMPTY").write_text("")
    assert _head_file(tmp_path, "MERGE_HEAD") == one
    assert _head_file(tmp_path, "OCTOPUS") is None  # an octopus merge: left alone
    assert _head_file(tmp_path, "EMPTY") is None
    assert _head_file(tmp_path, "CHERRY_PICK_HEAD") is None
    (tmp_path / "A_DIR").mkdir()
    assert _head_file(tmp_path, "A_DIR") is None


@pytest.mark.parametrize("folder", ["rebase-merge", "rebase-apply"])
def test_a_rebase_is_under_way_while_either_of_its_folders_is_there(tmp_path, folder):
    assert _rebasing(tmp_path) is False
    (tmp_path / folder).write_text("a file is no rebase's state")
    assert _rebasing(tmp_path) is False
    (tmp_path / folder).unlink()
    (tmp_path / folder).mkdir()
    assert _rebasing(tmp_path) is True


# -- the renames a rebase kept -----------------------------------------------------------------------


def test_the_renames_of_a_rebase_by_old_id():
    old, other = ids("002", "003")
    records = [(old, "memory a", ids("010")[0]), (other, "memory c", ids("011")[0]), (old, "memory b", ids("012")[0])]
    assert _renamed_for(records) == {old: {"memory a", "memory b"}, other: {"memory c"}}
    assert _renamed_for([]) == {}
    # Only an old id renamed to two new ones is ambiguous; the same new id twice is not.
    assert _ambiguous(records) == {old: set(ids("010", "012"))}
    assert _ambiguous([(old, "memory a", ids("010")[0]), (old, "memory b", ids("010")[0])]) == {}
    assert _ambiguous([]) == {}


def test_a_rename_holds_in_a_merged_file_unless_its_old_id_there_is_another_memory(tmp_path):
    held: dict[Path, dict[str, str]] = {}
    path = tmp_path / "facts.yaml"
    picked, upstream = entry("002", "the picked fact"), entry("002", "upstream's fact")
    path.write_text(HEAD + upstream + entry("003", "a fact no pick renamed"))
    renamed = dict(zip(ids("002", "003", "004"), ids("010", "011", "012")))
    meant = {ids("002")[0]: {memory_of(picked.rstrip())}, ids("003")[0]: {memory_of("no such memory")}}
    # 002 here is upstream's, not the memory the pick renamed: it stays. 003 was renamed for another memory
    # than this file's too. 004 is no id of this file: a reference to it is renamed.
    assert _still_meant(renamed, meant, path, held) == {ids("004")[0]: ids("012")[0]}
    assert held == {
        path: {
            ids("002")[0]: memory_of(upstream.rstrip()),
            ids("003")[0]: memory_of(entry("003", "a fact no pick renamed").rstrip()),
        }
    }
    # The file as it was read is what counts (each file is read once per fixup).
    path.write_text(HEAD + picked)
    assert _still_meant(renamed, meant, path, held) == {ids("004")[0]: ids("012")[0]}
    fresh: dict[Path, dict[str, str]] = {}
    # The picked memory itself: renamed; an old id no pick renamed (no `meant`): renamed wherever it is.
    unmeant = {ids("002")[0]: meant[ids("002")[0]]}
    assert _still_meant(renamed, unmeant, path, fresh) == renamed
    # A file that is not there holds nothing.
    assert _still_meant(renamed, meant, tmp_path / "gone.yaml", {}) == renamed


def test_an_undecodable_byte_in_a_merged_file_does_not_stop_the_renames(tmp_path):
    path = tmp_path / "facts.yaml"
    picked = entry("002", "the picked fact")
    path.write_bytes((HEAD + picked).encode() + b"  note: \xff\n")
    renamed = {ids("002")[0]: ids("010")[0]}
    meant = {ids("002")[0]: {memory_of("another memory")}}
    assert _still_meant(renamed, meant, path, {}) == {}


# -- what an entry names -------------------------------------------------------------------------------


def test_an_entry_refers_to_a_renamed_id_by_a_supersede_link_or_a_related_memory():
    names = {ids("002")[0]: ids("004")[0]}
    assert _refers({"supersedes": ids("002")[0]}, names)
    assert _refers({"superseded_by": ids("002")[0]}, names)
    assert _refers({"related_memories": [7, ids("002")[0]]}, names)
    assert not _refers({"supersedes": ids("003")[0], "superseded_by": ids("004")[0]}, names)
    assert not _refers({"related_memories": ids("003")}, names)
    assert not _refers({"related_memories": ids("002")[0]}, names)  # not a list: not read
    assert not _refers({"supersedes": ids("002"), "id": ids("002")[0]}, names)  # not a string; the id is no link
    assert not _refers({}, names)


def test_the_lifecycle_of_an_entry_is_its_superseded_by_and_effectiveness():
    item = {"id": "x", "superseded_by": "y", "effectiveness": {"applications": 1}, "content": "c"}
    assert _lifecycle_of(item) == {"superseded_by": "y", "effectiveness": {"applications": 1}}
    assert _lifecycle_of({"id": "x"}) == {}


# -- the plan each hook makes ---------------------------------------------------------------------------


def planned(repo: Path, hook: str, *args: str, stdin: str = "") -> _Plan | None:
    with chdir(repo.parent):
        return plan(repo, repo / ".git", hook, list(args), stdin)


def apart(repo: Path) -> None:
    """Branch `side` adds a decision, main a preference (after the redis fact both hold): no file both change."""
    side_and_main(
        repo,
        {"decisions.yaml": entry("002", "the side decides", "", "decision")},
        {"preferences.yaml": entry("003", "main prefers", "", "preference")},
    )


def test_after_a_merge_git_committed_the_plan_names_its_parents_and_their_base(repo):
    apart(repo)
    main, side, base = sha(repo, "main"), sha(repo, "side"), sha(repo, "side^")
    git("merge", "-q", "--no-edit", "side", cwd=repo)
    merge = _Plan("merge", main, (base, main, side), False, stage=False, keeper=main)
    assert planned(repo, "post-merge", "0") == merge
    assert planned(repo, "post-merge", "1") is None  # --squash: nothing committed yet
    assert planned(repo, "post-merge") == merge
    # Without ORIG_HEAD, the merge is still this clone's own.
    (repo / ".git" / "ORIG_HEAD").unlink()
    assert planned(repo, "post-merge", "0") == merge
    # The next commit is no merge; a fast-forward makes none either.
    commit_all_new(repo, "facts.yaml", HEAD + REDIS + entry("004", "after the merge"))
    assert planned(repo, "post-merge", "0") is None


def commit_all_new(repo: Path, name: str, text: str) -> None:
    write(repo, name, text)
    commit_all(repo, f"write {name}")


def test_a_fast_forward_to_a_merge_made_elsewhere_fixes_only_an_id_used_twice(repo):
    apart(repo)
    start = sha(repo, "main")
    git("checkout", "-q", "-b", "server", cwd=repo)
    commit_all_new(repo, "learnings.yaml", entry("005", "the server's learning", "", "learning"))
    server = sha(repo, "server")
    git("merge", "-q", "--no-edit", "side", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    git("merge", "-q", "--ff-only", "server", cwd=repo)
    assert sha(repo, "ORIG_HEAD") == start
    base = sha(repo, "side^")
    assert planned(repo, "post-merge", "0") == _Plan(
        "merge", server, (base, server, sha(repo, "side")), False, stage=False, keeper=server, only_if_repeated=True
    )


def test_an_octopus_merge_and_a_merge_of_unrelated_histories(repo):
    apart(repo)
    git("checkout", "-q", "-b", "third", "side^", cwd=repo)
    commit_all_new(repo, "learnings.yaml", entry("006", "the third learns", "", "learning"))
    git("checkout", "-q", "main", cwd=repo)
    git("merge", "-q", "--no-edit", "side", "third", cwd=repo)
    assert len(git("rev-parse", "HEAD^@", cwd=repo).split()) == 3
    assert planned(repo, "post-merge", "0") is None
    git("checkout", "-q", "--orphan", "lonely", cwd=repo)
    git("rm", "-q", "-rf", ".", cwd=repo)
    (repo / "notes.txt").write_text("no grimoire here\n")
    git("add", "notes.txt", cwd=repo)
    git("commit", "-qm", "lonely", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    main = sha(repo, "main")
    # Not yet committed, the pre-commit hook's plan has no versions either.
    git("merge", "-q", "--no-commit", "--allow-unrelated-histories", "lonely", cwd=repo)
    assert planned(repo, "pre-commit") == _Plan("merge", main, None, False, stage=True, keeper=main)
    git("merge", "--abort", cwd=repo)
    git("merge", "-q", "--no-edit", "--allow-unrelated-histories", "lonely", cwd=repo)
    assert planned(repo, "post-merge", "0") == _Plan("merge", main, None, False, stage=False, keeper=main)


def test_a_merge_into_a_branch_not_yet_pushed_keeps_the_pushed_sides_ids(repo, tmp_path):
    tracked_start(repo, tmp_path)
    commit_all_new(repo, "preferences.yaml", entry("002", "main prefers", "", "preference"))
    git("push", "-q", "origin", "HEAD:main", cwd=repo)
    git("fetch", "-q", "origin", cwd=repo)
    git("checkout", "-q", "-b", "feature", "HEAD~1", cwd=repo)
    commit_all_new(repo, "decisions.yaml", entry("002", "the feature decides", "", "decision"))
    feature, pushed, base = sha(repo, "feature"), sha(repo, "origin/main"), sha(repo, "feature^")
    git("merge", "-q", "--no-edit", "origin/main", cwd=repo)
    assert planned(repo, "post-merge", "0") == _Plan(
        "merge", feature, (base, feature, pushed), False, stage=False, keeper=pushed
    )
    fixed = fixup(repo, "post-merge", "0")
    assert (fixed.side, fixed.renumbered, fixed.files) == ("ours", {ids("002")[0]: ids("003")[0]}, [DECISIONS])
    git("reset", "-q", "--hard", feature, cwd=repo)
    # The same merge stopped by a conflict: the pre-commit hook's plan.
    commit_all_new(repo, "preferences.yaml", entry("002", "the feature prefers", "", "preference"))
    feature = sha(repo, "feature")
    assert subprocess.run(["git", "merge", "-q", "origin/main"], cwd=repo, capture_output=True).returncode == 1
    assert planned(repo, "pre-commit") == _Plan(
        "merge", feature, (base, feature, pushed), False, stage=True, keeper=pushed
    )


def test_while_a_merge_stops_on_a_conflict_the_pre_commit_hook_plans_to_stage(repo):
    side_and_main(
        repo,
        {"facts.yaml": HEAD + REDIS + entry("002", "the side fact")},
        {"facts.yaml": HEAD + REDIS + entry("002", "the fact of main")},
    )
    main, side, base = sha(repo, "main"), sha(repo, "side"), sha(repo, "side^")
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    assert planned(repo, "pre-commit") == _Plan("merge", main, (base, main, side), False, stage=True, keeper=main)
    assert planned(repo, "post-commit") is None  # a merge is post-merge's
    assert planned(repo, "post-checkout") is None


def test_a_cherry_pick_is_planned_from_its_picked_commit(repo):
    side_and_main(
        repo,
        {"facts.yaml": HEAD + REDIS + entry("002", "the side fact")},
        {"facts.yaml": HEAD + REDIS + entry("002", "the fact of main")},
    )
    main, side, base = sha(repo, "main"), sha(repo, "side"), sha(repo, "side^")
    assert subprocess.run(["git", "cherry-pick", "side"], cwd=repo, capture_output=True).returncode == 1
    assert planned(repo, "pre-commit") == _Plan("cherry-pick", main, (base, main, side), True, stage=True)
    git("checkout", "-q", "--theirs", FACTS, cwd=repo)
    git("add", FACTS, cwd=repo)
    git("-c", "core.editor=true", "cherry-pick", "--continue", cwd=repo)
    # Committed: post-commit's ours is the commit before the pick's (CHERRY_PICK_HEAD as git leaves it while
    # its hooks run).
    (repo / ".git" / "CHERRY_PICK_HEAD").write_text(f"{side}\n")
    assert planned(repo, "post-commit") == _Plan("cherry-pick", main, (base, main, side), True, stage=False)
    # A rebase's picks are fixed once, after it.
    (repo / ".git" / "rebase-merge").mkdir()
    assert planned(repo, "post-commit") is None
    assert planned(repo, "pre-commit") is None


def test_a_picked_root_commit_has_no_base_and_a_root_head_no_commit_before_it(repo):
    assert planned(repo, "pre-commit") is None  # no commit yet
    commit_all_new(repo, "facts.yaml", HEAD + REDIS)
    root = sha(repo, "HEAD")
    (repo / ".git" / "CHERRY_PICK_HEAD").write_text(f"{root}\n")
    assert planned(repo, "pre-commit") == _Plan("cherry-pick", root, None, True, stage=True)
    assert planned(repo, "post-commit") is None  # HEAD has no commit before it
    (repo / ".git" / "CHERRY_PICK_HEAD").unlink()
    assert planned(repo, "pre-commit") is None and planned(repo, "post-commit") is None


def test_after_a_rebase_the_plan_names_the_commit_replayed_onto_and_the_branch_before_it(repo):
    apart(repo)
    commit_all_new(repo, "learnings.yaml", entry("004", "main learns", "", "learning"))
    git("checkout", "-q", "side", cwd=repo)
    commit_all_new(repo, "errors.yaml", entry("005", "the side errs", "", "error"))
    first, tip, base, main = sha(repo, "side~1"), sha(repo, "side"), sha(repo, "side~2"), sha(repo, "main")
    git("rebase", "-q", "main", cwd=repo)
    new_first, new_tip = sha(repo, "HEAD~1"), sha(repo, "HEAD")
    stdin = f"{first} {new_first}\n{tip} {new_tip}\n"
    rebased = _Plan("rebase", main, None, True, stage=False, versions=(base, main, tip), replayed=(first, tip))
    assert planned(repo, "post-rewrite", "rebase", stdin=stdin) == rebased
    # Lines git may add past the two shas, and blank or short ones, change nothing.
    assert (
        planned(repo, "post-rewrite", "rebase", stdin=f"\n{first} {new_first} extra\nodd\n{tip} {new_tip}\n") == rebased
    )
    assert planned(repo, "post-rewrite", "amend", stdin=stdin) is None
    assert planned(repo, "post-rewrite", stdin=stdin) is None
    assert planned(repo, "post-rewrite", "rebase", stdin="") is None
    assert planned(repo, "post-rewrite", "rebase", stdin=f"{first}\n") is None
    # While the hook runs, the merge backend's state names the commit replayed onto and the branch's old tip.
    state = repo / ".git" / "rebase-merge"
    state.mkdir()
    (state / "onto").write_text(f"{base}\n")
    (state / "orig-head").write_text(f"{first}\n")
    assert planned(repo, "post-rewrite", "rebase", stdin=stdin) == _Plan(
        "rebase", base, None, True, stage=False, versions=(base, base, first), replayed=(first, tip)
    )


def test_a_rebase_onto_a_root_or_an_unrelated_history(repo):
    commit_all_new(repo, "facts.yaml", HEAD + REDIS)
    root = sha(repo, "HEAD")
    # Listed as rewritten to a root commit, with no state to name what it was replayed onto: nothing to fix.
    assert planned(repo, "post-rewrite", "rebase", stdin=f"{root} {root}\n") is None
    git("checkout", "-q", "--orphan", "lonely", cwd=repo)
    git("rm", "-q", "-rf", ".", cwd=repo)
    (repo / "notes.txt").write_text("no grimoire here\n")
    git("add", "notes.txt", cwd=repo)
    git("commit", "-qm", "lonely", cwd=repo)
    lonely = sha(repo, "lonely")
    commit_all_new_any(repo, "more.txt")
    replayed = sha(repo, "HEAD")
    state = repo / ".git" / "rebase-merge"
    state.mkdir()
    (state / "onto").write_text(f"{root}\n")
    assert planned(repo, "post-rewrite", "rebase", stdin=f"{replayed} {replayed}\n") == _Plan(
        "rebase", root, None, True, stage=False, versions=None, replayed=(replayed,)
    )
    assert lonely != replayed


def commit_all_new_any(repo: Path, name: str) -> None:
    (repo / name).write_text(f"{name}\n")
    git("add", name, cwd=repo)
    git("commit", "-qm", name, cwd=repo)


def feature_past_alices_push(repo: Path, tmp_path: Path) -> str:
    """The pushed start; alice pushes a preference onto origin/main; HEAD on `feature`, made at start and
    fast-forwarded to origin/main, so it brings a pushed commit past the base. Returns start."""
    tracked_start(repo, tmp_path)
    start = sha(repo, "main")
    git("checkout", "-q", "-b", "alice", cwd=repo)
    commit_all_new(repo, "preferences.yaml", entry("002", "alice prefers", "", "preference"))
    git("push", "-q", "origin", "HEAD:main", cwd=repo)
    git("fetch", "-q", "origin", cwd=repo)
    git("checkout", "-q", "-b", "feature", start, cwd=repo)
    git("merge", "-q", "--ff-only", "origin/main", cwd=repo)
    return start


def test_the_side_that_brings_pushed_commits_past_the_base_keeps_its_ids_though_its_tip_is_not_pushed(repo, tmp_path):
    """Both tips unpushed; theirs merged origin/main's new commit since the base: ours yields. (Asked of the
    tips alone, without the base, neither is on a remote and ours would keep its ids.)"""
    start = feature_past_alices_push(repo, tmp_path)
    commit_all_new(repo, "decisions.yaml", entry("003", "the feature decides", "", "decision"))
    commit_all_new(repo, "facts.yaml", HEAD + REDIS + entry("004", "the feature's fact"))
    feature = sha(repo, "feature")
    git("checkout", "-q", "main", cwd=repo)
    commit_all_new(repo, "learnings.yaml", entry("003", "main learns", "", "learning"))
    commit_all_new(repo, "facts.yaml", HEAD + REDIS + entry("004", "main's fact"))
    main = sha(repo, "main")
    assert subprocess.run(["git", "merge", "-q", "feature"], cwd=repo, capture_output=True).returncode == 1
    planned_merge = _Plan("merge", main, (start, main, feature), False, stage=True, keeper=feature)
    assert planned(repo, "pre-commit") == planned_merge
    git("checkout", "-q", "--theirs", FACTS, cwd=repo)
    git("add", FACTS, cwd=repo)
    git("commit", "-q", "--no-edit", cwd=repo)
    assert planned(repo, "post-merge", "0") == dataclasses.replace(planned_merge, stage=False)


def test_a_post_merge_with_no_commit_plans_nothing(repo):
    assert planned(repo, "post-merge", "0") is None


# -- an id used twice ---------------------------------------------------------------------------------------


def store_of(repo: Path):
    return Grimoire.open(repo).store


def test_an_id_used_twice_is_found_across_the_files_past_a_missing_one(repo):
    write(repo, "facts.yaml", HEAD + REDIS + entry("002", "another fact"))
    write(repo, "decisions.yaml", entry("003", "a decision", "", "decision"))
    assert _repeated_ids(store_of(repo)) is False
    # learnings.yaml is missing, errors.yaml after it repeats 001.
    (repo / MEMORY / "learnings.yaml").unlink()
    write(repo, "errors.yaml", entry("001", "an error", "", "error"))
    assert _repeated_ids(store_of(repo)) is True


def test_an_undecodable_byte_does_not_stop_the_scan_for_repeated_ids(repo):
    (repo / FACTS).write_bytes((HEAD + REDIS).encode() + b"  note: \xff\n" + entry("002", "another").encode())
    assert _repeated_ids(store_of(repo)) is False
    write(repo, "decisions.yaml", entry("002", "a decision", "", "decision"))
    assert _repeated_ids(store_of(repo)) is True


def test_a_local_categorys_ids_are_not_counted_but_the_files_after_it_are(repo):
    config = repo / ".loa.config.yaml"
    local = "    scratch: {storage_file: scratch.yaml, ttl: permanent, confidence_required: 0.5, tracked: false}\n"
    text = config.read_text()
    config.write_text(text.replace("    fact:", local + "    fact:", 1))
    store = store_of(repo)
    scratch = repo / MEMORY / "local" / "scratch.yaml"
    assert [file.rel for file in store.files()][:2] == [(MEMORY / "local/scratch.yaml").as_posix(), FACTS]
    scratch.parent.mkdir(exist_ok=True)
    scratch.write_text(entry("001", "a scratch note", "", "scratch") + entry("001", "again", "", "scratch"))
    write(repo, "facts.yaml", HEAD + REDIS)
    assert _repeated_ids(store_of(repo)) is False
    write(repo, "decisions.yaml", entry("001", "a decision", "", "decision"))
    assert _repeated_ids(store_of(repo)) is True


# -- the references a merge renames -------------------------------------------------------------------------


def test_the_yielding_sides_references_take_the_new_ids_and_the_keepers_own_stay(repo):
    """No file both sides changed (git takes each whole, no driver runs): the side merged in yields 002 and 003.
    Its supersede of main's redis fact reaches the fact (a field the start did not have); main's own links to
    its 002 and 003 stay."""
    redis_by = entry("001", "the cache is redis", "  superseded_by: MEM-20261122-002\n")
    valkey = entry(
        "002",
        "the cache is valkey",
        "  supersedes: MEM-20261122-001\n  related_memories: [MEM-20261122-001]\n",
        "decision",
    )
    learns = entry(
        "003", "valkey needs a restart", "  related_memories: [MEM-20261122-002, MEM-20261122-003]\n", "learning"
    )
    prefers = entry("002", "main prefers tabs", "  superseded_by: MEM-20261122-003\n", "preference")
    errs = entry(
        "003",
        "main errs on spaces",
        "  supersedes: MEM-20261122-002\n  related_memories: [MEM-20261122-002, MEM-20261122-001]\n",
        "error",
    )
    # An entry only main has (an id of another day: no collision) naming main's 002.
    errs += entry("001", "main notes the tabs", "  related_memories: [MEM-20261122-002]\n", "error").replace(
        "id: MEM-20261122-001", "id: MEM-20261121-001"
    )
    side_and_main(
        repo,
        {"facts.yaml": HEAD + redis_by, "decisions.yaml": valkey, "learnings.yaml": learns},
        {"preferences.yaml": prefers, "errors.yaml": errs},
    )
    git("merge", "-q", "--no-edit", "side", cwd=repo)
    fixed = fixup(repo, "post-merge", "0")
    new = dict(zip(ids("002", "003"), ids("004", "005")))
    assert (fixed.operation, fixed.renumbered, fixed.side, fixed.lifecycle, fixed.notes, fixed.staged) == (
        "merge",
        new,
        "theirs",
        [],
        [],
        False,
    )
    assert fixed.files == [DECISIONS, FACTS, (MEMORY / "learnings.yaml").as_posix()]
    assert (repo / FACTS).read_text() == HEAD + redis_by.replace("-002", "-004")
    assert (repo / DECISIONS).read_text() == valkey.replace("-002", "-004")
    assert (repo / MEMORY / "learnings.yaml").read_text() == learns.replace("-002", "-004").replace("-003", "-005")
    assert (repo / MEMORY / "preferences.yaml").read_text() == prefers
    assert (repo / MEMORY / "errors.yaml").read_text() == errs
    assert git("log", "-1", "--format=%B", cwd=repo) == (
        "mem: renumber memory ids that collided in the merge\n\n"
        "MEM-20261122-002 -> MEM-20261122-004\nMEM-20261122-003 -> MEM-20261122-005\n\n"
    )
    assert fixed.commit == sha(repo, "HEAD") and git("status", "--porcelain", cwd=repo) == ""


def unrelated(repo: Path, ours: dict[str, str], theirs: dict[str, str]) -> None:
    """main commits `ours`; an orphan branch (the same config, none of main's memory files) `theirs`; main merges
    it: no merge base, so no driver's mapping, and no file both sides hold."""
    made = sorted(path.name for path in (repo / MEMORY).glob("*.yaml"))  # mem init's empty files
    for name in made:
        (repo / MEMORY / name).unlink()
    for name, text in ours.items():
        write(repo, name, text)
    commit_all(repo, "ours")
    git("checkout", "-q", "--orphan", "other", cwd=repo)
    for name in ours:
        (repo / MEMORY / name).unlink()
    for name, text in theirs.items():
        write(repo, name, text)
    commit_all(repo, "theirs")
    git("checkout", "-q", "main", cwd=repo)
    git("merge", "-q", "--no-edit", "--allow-unrelated-histories", "other", cwd=repo)


TWICE = entry("009", "one learning", "  related_memories: [MEM-20261122-001]\n", "learning") + entry(
    "009", "another learning", "  related_memories: [MEM-20261122-001]\n", "learning"
)


# Read after learnings.yaml: its link to theirs' 001 is renamed though an id twice was met before it.
PREFERS = entry("003", "theirs prefers", "  related_memories: [MEM-20261122-001]\n", "preference")


def merged_with_an_id_twice_in_one_file(repo: Path) -> FixupResult:
    unrelated(
        repo,
        {"facts.yaml": HEAD + REDIS},
        {
            "decisions.yaml": entry("001", "theirs decides", "", "decision"),
            "learnings.yaml": TWICE,
            "preferences.yaml": PREFERS,
        },
    )
    return fixup(repo, "post-merge", "0")


def test_a_collision_no_driver_saw_takes_a_fresh_number_and_an_id_twice_in_a_file_gets_a_note(repo):
    fixed = merged_with_an_id_twice_in_one_file(repo)
    assert fixed.renumbered == {ids("001")[0]: ids("010")[0]}
    assert fixed.notes == [
        "MEM-20261122-009 is used by 2 entries and none or several are new; rename by hand, then `mem validate`",
        f"{(MEMORY / 'learnings.yaml').as_posix()}: MEM-20261122-009 appears twice in one file; rename by hand, "
        "then `mem validate`",
    ]
    assert (repo / DECISIONS).read_text() == entry("010", "theirs decides", "", "decision")
    assert (repo / MEMORY / "preferences.yaml").read_text() == PREFERS.replace("-001", "-010")


def test_a_file_with_an_id_twice_is_left_for_the_hand_that_renames_it(repo):
    """_changes noted an id twice in one file but kept the first entry's change, which the write (by id) gave
    both entries: the second memory ('another learning') was lost, and committed."""
    fixed = merged_with_an_id_twice_in_one_file(repo)
    assert (repo / MEMORY / "learnings.yaml").read_text() == TWICE
    assert fixed.files == [DECISIONS, (MEMORY / "preferences.yaml").as_posix()]


def test_a_damaged_file_is_passed_over_and_its_ids_are_not_given_again(repo):
    """Theirs brings a file mem cannot parse that still names 002 and 003: the collision on 001 is
    renumbered past them, and the damaged file is left as it is."""
    damaged = "- id: MEM-20261122-002\n  content: [never closed\n# MEM-20261122-003 was here\n"
    unrelated(
        repo,
        {"facts.yaml": HEAD + REDIS},
        {"decisions.yaml": entry("001", "theirs decides", "", "decision"), "errors.yaml": damaged},
    )
    fixed = fixup(repo, "post-merge", "0")
    assert (fixed.renumbered, fixed.files, fixed.notes) == ({ids("001")[0]: ids("004")[0]}, [DECISIONS], [])
    assert (repo / DECISIONS).read_text() == entry("004", "theirs decides", "", "decision")
    assert (repo / MEMORY / "errors.yaml").read_text() == damaged


def test_an_id_three_entries_use_is_left_with_a_note(repo):
    unrelated(
        repo,
        {"facts.yaml": HEAD + REDIS + entry("002", "our other fact")},
        {
            "decisions.yaml": entry("001", "theirs decides", "", "decision"),
            "errors.yaml": entry("001", "theirs errs", "", "error"),
            "learnings.yaml": entry("002", "theirs learns", "", "learning"),
        },
    )
    fixed = fixup(repo, "post-merge", "0")
    # 001 is left as it is; 002, after it, still takes a fresh number.
    assert (fixed.renumbered, fixed.files) == ({ids("002")[0]: ids("003")[0]}, [(MEMORY / "learnings.yaml").as_posix()])
    assert fixed.notes == [
        "MEM-20261122-001 is used by 3 entries and none or several are new; rename by hand, then `mem validate`"
    ]


# -- what the fixup stages or commits --------------------------------------------------------------------------


def test_an_unknown_hook_is_bad_input_naming_the_hooks(repo):
    with pytest.raises(BadInput) as raised:
        fixup(repo, "post-checkout")
    assert (raised.value.message, raised.value.hint) == (
        "unknown hook 'post-checkout'",
        "use one of post-merge, post-rewrite, post-commit, pre-commit (mem's hooks call this; `mem hooks install` "
        "sets them up)",
    )


LEARNINGS = (MEMORY / "learnings.yaml").as_posix()


def picked_with_two_references(repo: Path, tmp_path: Path) -> None:
    """A cherry-pick stopped on facts.yaml (both added 002), the driver run: the pick's decision and learning
    still name its 002, which the driver renumbered 006."""
    side_and_main(
        repo,
        {
            "facts.yaml": HEAD + REDIS + entry("002", "the side fact"),
            "decisions.yaml": entry("003", "use it", "  related_memories: [MEM-20261122-002]\n", "decision"),
            "learnings.yaml": entry("005", "it helps", "  supersedes: MEM-20261122-002\n", "learning"),
        },
        {"facts.yaml": HEAD + REDIS + entry("002", "the fact of main")},
    )
    assert subprocess.run(["git", "cherry-pick", "side"], cwd=repo, capture_output=True).returncode == 1
    assert run_driver(repo, tmp_path, FACTS).renumbered == {ids("002")[0]: ids("006")[0]}


def test_files_with_unstaged_changes_are_not_renumbered_while_a_commit_is_concluded(repo, tmp_path):
    picked_with_two_references(repo, tmp_path)
    for path in (DECISIONS, LEARNINGS):
        with (repo / path).open("a") as file:
            file.write("# my own note\n")
    before = [(repo / path).read_text() for path in (DECISIONS, LEARNINGS)]
    fixed = fixup(repo, "pre-commit")
    assert fixed.to_dict() == {
        "operation": "cherry-pick",
        "renumbered": {},
        "side": "theirs",
        "lifecycle": [],
        "files": [],
        "commit": None,
        "staged": False,
        "notes": [
            f"not renumbered: {DECISIONS}, {LEARNINGS} has unstaged changes; stage them and commit again",
        ],
    }
    assert [(repo / path).read_text() for path in (DECISIONS, LEARNINGS)] == before


def test_the_fix_is_staged_in_the_index_the_commit_uses(repo, tmp_path):
    """`git commit -a` or `git commit PATH` concludes with an index of its own (mem's hook passes it on)."""
    picked_with_two_references(repo, tmp_path)
    own = repo / ".git" / "commit-index"
    own.write_bytes((repo / ".git" / "index").read_bytes())
    with (repo / DECISIONS).open("a") as file:
        file.write("# staged in the commit's index only\n")
    subprocess.run(["git", "add", DECISIONS], cwd=repo, check=True, env={**os.environ, "GIT_INDEX_FILE": str(own)})
    grimoire = Grimoire.open(repo)
    grimoire.store.runtime.git_index_file = str(own)
    with chdir(repo.parent):
        fixed = grimoire.merge_fixup("pre-commit")
    assert (fixed.renumbered, fixed.files, fixed.staged, fixed.notes) == (
        {},  # the driver renumbered the entry; only references are left
        [DECISIONS, LEARNINGS],
        True,
        [],
    )
    assert (repo / DECISIONS).read_text() == entry(
        "003", "use it", "  related_memories: [MEM-20261122-006]\n", "decision"
    ) + "# staged in the commit's index only\n"
    in_own = {**os.environ, "GIT_INDEX_FILE": str(own)}
    unstaged = lambda env=None: subprocess.run(
        ["git", "diff", "--name-only"], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert unstaged(in_own) == []
    assert unstaged() == [DECISIONS, LEARNINGS]  # git's own index was left as it was


def test_a_post_merge_fix_is_committed_with_a_change_not_yet_staged(repo):
    """After a merge git committed, nothing is being concluded: the fix is a commit of its own."""
    side_and_main(
        repo,
        {"decisions.yaml": entry("002", "the side decides", "  related_memories: [MEM-20261122-002]\n", "decision")},
        {"preferences.yaml": entry("002", "main prefers", "", "preference")},
    )
    git("merge", "-q", "--no-edit", "side", cwd=repo)
    with (repo / DECISIONS).open("a") as file:
        file.write("# my own note\n")
    fixed = fixup(repo, "post-merge", "0")
    assert (fixed.renumbered, fixed.files, fixed.notes) == ({ids("002")[0]: ids("003")[0]}, [DECISIONS], [])
    assert fixed.commit == sha(repo, "HEAD")


def test_a_merge_that_only_carries_an_archived_memorys_lifecycle_says_so_in_its_commit(repo, tmp_path):
    """Main archived the redis fact; the side applied it: the archived copy gets the apply."""
    applied = entry("001", "the cache is redis", APPLIED.format(2, 1, 50, "2026-11-22T10:00:00Z"))
    side_and_main(
        repo,
        {"facts.yaml": HEAD + applied + entry("003", "the cache is fast")},
        {"facts.yaml": HEAD, "archive/facts.yaml": REDIS + ARCHIVED},
    )
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    assert run_driver(repo, tmp_path, FACTS).conflicts == []
    git("commit", "-q", "--no-edit", cwd=repo)
    fixed = fixup(repo, "post-merge", "0")
    assert (fixed.renumbered, fixed.lifecycle, fixed.files) == (
        {},
        ["MEM-20261122-001"],
        [(MEMORY / "archive/facts.yaml").as_posix()],
    )
    assert git("log", "-1", "--format=%B", cwd=repo) == (
        "mem: merge archived memories' lifecycle in the merge\n\nMEM-20261122-001: lifecycle from both sides\n\n"
    )


def test_a_fast_forward_to_a_merge_made_where_no_hook_ran_fixes_the_id_it_left_twice(repo):
    side_and_main(
        repo,
        {"decisions.yaml": entry("002", "the side decides", "", "decision")},
        {"learnings.yaml": entry("003", "main learns", "", "learning")},
    )
    git("checkout", "-q", "-b", "server", cwd=repo)
    commit_all_new(repo, "preferences.yaml", entry("002", "the server prefers", "", "preference"))
    git("merge", "-q", "--no-edit", "side", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    git("merge", "-q", "--ff-only", "server", cwd=repo)
    fixed = fixup(repo, "post-merge", "0")
    assert (fixed.renumbered, fixed.files) == ({ids("002")[0]: ids("004")[0]}, [DECISIONS])
    assert (repo / DECISIONS).read_text() == entry("004", "the side decides", "", "decision")
    # Made where the hooks ran (the fix staged into the merge): a fast-forward to it finds nothing to do.
    git("checkout", "-q", "-b", "hooked", "server~1", cwd=repo)
    git("merge", "-q", "--no-commit", "side", cwd=repo)
    write(repo, "decisions.yaml", entry("004", "the side decides", "", "decision"))
    commit_all(repo, "merge, fixed")
    git("checkout", "-q", "-b", "late", "hooked~1", cwd=repo)
    git("merge", "-q", "--ff-only", "hooked", cwd=repo)
    assert fixup(repo, "post-merge", "0").to_dict() == FixupResult("merge").to_dict()


# -- the names each file takes (`_changes`, called as `_scope_changes` calls it) ------------------------------

STORAGE = MEMORY.as_posix()


def started(repo: Path) -> str:
    """The keeper's commit: the redis fact alone."""
    write(repo, "facts.yaml", HEAD + REDIS)
    commit_all(repo, "start")
    return sha(repo, "HEAD")


def related(number: str, text: str, *named: str, category: str = "decision") -> str:
    listed = ", ".join(f"MEM-20261122-{n}" for n in named)
    return entry(number, text, f"  related_memories: [{listed}]\n", category)


def changes(repo: Path, keeper: str, mapping: dict[str, str], **options) -> tuple[dict, FixupResult]:
    result = FixupResult("rebase")
    with chdir(repo.parent):
        out = _changes(store_of(repo), repo, STORAGE, keeper, dict(mapping), result, **options)
    return {
        path: {i: (d or {}).get("related_memories", d and d["id"]) for i, d in by_id.items()}
        for path, by_id in out.items()
    }, result


def test_a_file_the_driver_merged_takes_only_new_numbers_one_a_replayed_commit_left_takes_its_own(repo):
    keeper = started(repo)
    write(repo, "decisions.yaml", related("020", "merged by the driver", "002", "007"))
    write(repo, "learnings.yaml", related("021", "left by a replayed commit", "002", "007", category="learning"))
    write(
        repo,
        "facts.yaml",
        HEAD + REDIS + entry("002", "upstream's fact") + related("023", "upstream's", "002", "007", category="fact"),
    )
    driver = {ids("002")[0]: ids("004")[0]}
    strays = {ids("007")[0]: ids("008")[0]}
    options = {
        "merged": {DECISIONS},
        "strays": strays,
        "written": {(MEMORY / "learnings.yaml").as_posix(): {ids("002")[0]: ids("009")[0]}},
    }
    meant = {ids("002")[0]: {memory_of("the memory a pick renamed")}}
    out, result = changes(repo, keeper, driver, meant=meant, **options)
    assert out == {
        DECISIONS: {ids("020")[0]: ids("002", "008")},
        (MEMORY / "learnings.yaml").as_posix(): {ids("021")[0]: ids("009", "008")},
        FACTS: {ids("023")[0]: ids("002", "008")},  # its 002 is upstream's, not the one the pick renamed
    }
    assert result.renumbered == {}
    # Without what the picks meant, every 002 of a file neither merged nor left whole is renamed.
    out, result = changes(repo, keeper, driver, **options)
    assert out[FACTS] == {ids("002")[0]: ids("002")[0].replace("002", "004"), ids("023")[0]: ids("004", "008")}
    assert result.renumbered == {ids("002")[0]: ids("004")[0]}


def test_a_fresh_number_passes_the_ids_the_start_held_and_the_names_the_mapping_gives(repo):
    """Upstream's 002 and a replayed 002 collide, with no driver's number: the fresh one passes 005, which the
    start held though nothing holds it now, and 010, a name the mapping gives that no entry holds yet."""
    write(repo, "facts.yaml", HEAD + REDIS + entry("002", "upstream's fact") + entry("005", "deleted since"))
    commit_all(repo, "start")
    keeper = sha(repo, "HEAD")
    write(repo, "facts.yaml", HEAD + REDIS + entry("002", "upstream's fact"))
    write(repo, "decisions.yaml", entry("002", "a replayed decision", "", "decision"))
    assert changes(repo, keeper, {})[0] == {DECISIONS: {ids("002")[0]: ids("006")[0]}}
    assert changes(repo, keeper, {ids("009")[0]: ids("010")[0]})[0] == {DECISIONS: {ids("002")[0]: ids("011")[0]}}


def test_a_drivers_number_another_memory_holds_is_replaced_by_a_fresh_one(repo):
    """A driver that numbered a picked file alone gave the replayed 002 the number 003, which another memory
    holds by then: the replayed decision takes 004 instead, its day kept."""
    write(repo, "facts.yaml", HEAD + REDIS + entry("002", "upstream's fact"))
    commit_all(repo, "upstream")
    keeper = sha(repo, "HEAD")
    write(repo, "facts.yaml", HEAD + REDIS + entry("002", "upstream's fact") + entry("003", "another fact"))
    write(repo, "decisions.yaml", entry("002", "a replayed decision", "", "decision"))
    out, result = changes(repo, keeper, {ids("002")[0]: ids("003")[0]})
    assert out == {DECISIONS: {ids("002")[0]: ids("004")[0]}}
    assert result.renumbered == {ids("002")[0]: ids("004")[0]}
    # Where every copy of 002 is the start's, the driver's 003 stands (nothing of 002 is renamed).
    write(repo, "decisions.yaml", "")
    assert changes(repo, keeper, {ids("002")[0]: ids("003")[0]})[0] == {}


def test_an_entry_the_start_holds_keeps_its_references_though_its_text_was_edited(repo):
    """An id one entry holds is the start's when the start holds it, whatever its text says now: its link to
    009 is the start's own 009, not the one renamed."""
    write(repo, "facts.yaml", HEAD + REDIS + related("002", "noted", "009", category="fact"))
    commit_all(repo, "start")
    keeper = sha(repo, "HEAD")
    write(repo, "facts.yaml", HEAD + REDIS + related("002", "noted, edited by hand", "009", category="fact"))
    assert changes(repo, keeper, {ids("009")[0]: ids("010")[0]}) == ({}, FixupResult("rebase"))


def test_a_supersede_link_to_an_id_the_rebase_gave_two_memories_takes_the_one_that_links_back(repo):
    keeper = started(repo)
    write(
        repo,
        "learnings.yaml",
        entry(
            "010",
            "one line's memory",
            "  supersedes: MEM-20261122-016\n  superseded_by: MEM-20261122-013\n",
            "learning",
        )
        + entry("012", "the other line's memory", "  supersedes: MEM-20261122-014\n", "learning")
        + entry("013", "the successor", "  supersedes: MEM-20261122-002\n", "learning")
        + entry("014", "the predecessor", "  superseded_by: MEM-20261122-002\n", "learning")
        + entry("015", "linked back by none", "  supersedes: MEM-20261122-002\n", "learning")
        + entry("016", "another predecessor", "  superseded_by: MEM-20261122-002\n", "learning"),
    )
    write(repo, "errors.yaml", entry("002", "an error", "  supersedes: MEM-20261122-014\n", "error"))
    ambiguous = {ids("002")[0]: set(ids("010", "012", "019"))}  # no entry holds 019 now: it links back to none
    result = FixupResult("rebase")
    with chdir(repo.parent):
        out = _changes(store_of(repo), repo, STORAGE, keeper, {}, result, ambiguous=ambiguous)
    links = {i: (d.get("supersedes"), d.get("superseded_by")) for by_id in out.values() for i, d in by_id.items()}
    # 014's 002 stays: 002 itself and 012 link back to it. 015's: none does.
    assert links == {ids("013")[0]: (ids("010")[0], None), ids("016")[0]: (None, ids("010")[0])}
    with chdir(repo.parent):
        assert _changes(store_of(repo), repo, STORAGE, keeper, {}, FixupResult("rebase")) == {}


def renamed_twice_in_git_state(repo: Path, operation: str) -> dict:
    """The hook's work in one scope while a rebase (or a range cherry-pick) has kept, in git's own state, that
    its picks renamed 002 twice: to 010 and to 012 (a flattened merge's two lines). A replayed decision's 001
    collides with the start's; another memory holds 002 in errors.yaml."""
    keeper = started(repo)
    write(
        repo,
        "learnings.yaml",
        entry("013", "the successor", "  supersedes: MEM-20261122-002\n", "learning")
        + entry("010", "one line's memory", "  superseded_by: MEM-20261122-013\n", "learning")
        + entry("012", "the other line's memory", "", "learning"),
    )
    write(repo, "decisions.yaml", entry("001", "a replayed decision", "", "decision"))
    write(repo, "errors.yaml", entry("002", "an error", "  related_memories: [MEM-20261122-002]\n", "error"))
    git_dir = repo / ".git"
    (git_dir / ("rebase-merge" if operation == "rebase" else "sequencer")).mkdir()
    state = cast(Path, state_file(git_dir, Grimoire.open(repo).config.storage_dir))
    keys = (memory_of(entry("010", "one line's memory")), memory_of(entry("012", "the other line's memory")))
    state.write_text(json.dumps([[ids("002")[0], keys[0], ids("010")[0]], [ids("002")[0], keys[1], ids("012")[0]]]))
    found = _Plan(operation, keeper, None, True, stage=False)
    with chdir(repo.parent), ExitStack() as locks:
        out = _scope_changes(store_of(repo), repo, git_dir, found, FixupResult(operation), locks)
    fields = ("id", "supersedes", "related_memories")
    return {
        i: None if d is None else {k: d[k] for k in fields if k in d}
        for by_id in out.values()
        for i, d in by_id.items()
    }


@pytest.mark.parametrize("operation", ["rebase", "cherry-pick"])
def test_the_renames_kept_in_git_state_settle_a_link_to_an_id_renamed_twice(repo, operation):
    """The successor's link to 002 takes 010, the one of the two that links back to it; the replayed decision's
    001 takes a fresh number past every id the kept renames name."""
    assert renamed_twice_in_git_state(repo, operation) == {
        ids("001")[0]: {"id": ids("014")[0]},
        ids("013")[0]: {"id": ids("013")[0], "supersedes": ids("010")[0]},
    }


def test_a_range_picks_new_memory_under_an_id_an_earlier_pick_renamed_is_renumbered(repo):
    """A range cherry-pick (git's sequencer state): an earlier pick's driver renamed that branch's 005 (another
    memory) to 009. This pick brings a new memory B as 005 in a file only it changed, and HEAD holds its own
    005: B takes a fresh number past 009 though the kept rename was for 005."""
    write(repo, "facts.yaml", HEAD + REDIS)
    commit_all(repo, "start")
    start = sha(repo, "HEAD")
    git("checkout", "-q", "-b", "branch", cwd=repo)
    b = entry("005", "the branch's memory B", "", "decision")
    write(repo, "decisions.yaml", b)
    commit_all(repo, "the branch decides")
    picked = sha(repo, "HEAD")
    git("checkout", "-q", "main", cwd=repo)
    write(repo, "facts.yaml", HEAD + REDIS + entry("005", "main's own five"))
    commit_all(repo, "main's five")
    ours = sha(repo, "HEAD")
    write(repo, "decisions.yaml", b)  # the pick applied, not yet committed
    git_dir = repo / ".git"
    (git_dir / "sequencer").mkdir()
    kept = cast(Path, state_file(git_dir, Grimoire.open(repo).config.storage_dir))
    kept.write_text(json.dumps([[ids("005")[0], memory_of(entry("005", "memory A")), ids("009")[0]]]))
    found = _Plan("cherry-pick", ours, (start, ours, picked), True, stage=True)
    result = FixupResult("cherry-pick")
    with chdir(repo.parent), ExitStack() as locks:
        out = _scope_changes(store_of(repo), repo, git_dir, found, result, locks)
    assert {i: d["id"] for by_id in out.values() for i, d in by_id.items() if d} == {ids("005")[0]: ids("010")[0]}
    assert list(out) == [DECISIONS] and result.renumbered == {ids("005")[0]: ids("010")[0]}


# -- one memory archived on one side, active on the other -----------------------------------------------------


def folded(repo: Path, active: str, archived: str, archive_file: str = "archive/facts.yaml") -> tuple[dict, list]:
    write(repo, "facts.yaml", HEAD + active)
    (repo / MEMORY / archive_file).parent.mkdir(parents=True, exist_ok=True)
    (repo / MEMORY / archive_file).write_text(archived)
    by_id: dict[str, list] = {}
    for item in store_of(repo).entries(include_archive=True, skip_damaged=True):
        by_id.setdefault(item.id, []).append(item)
    result = FixupResult("merge")
    out = _folded(by_id, result)
    return {i: (a.file, a.data.get("effectiveness"), b.file) for i, (a, b) in out.items()}, result.lifecycle


def test_a_memory_archived_on_one_side_and_active_on_the_other_is_folded_into_the_archived_copy(repo):
    picked = entry("002", "the picked fact")
    applied = picked + APPLIED.format(1, 1, 100, "2026-11-22T12:00:00Z")
    archive = (MEMORY / "archive/facts.yaml").as_posix()
    assert folded(repo, REDIS + applied, picked + ARCHIVED) == (
        {
            ids("002")[0]: (
                archive,
                {"applications": 1, "successes": 1, "score": 100, "last_applied": "2026-11-22T12:00:00Z"},
                FACTS,
            )
        },
        [ids("002")[0]],
    )
    # Pairs that are not one memory, listed before one that is, change nothing of it.
    third = entry("003", "a third fact")
    active = REDIS + third.replace("session_id: s", "session_id: t") + applied
    assert list(
        folded(repo, active, entry("001", "another cache") + ARCHIVED + third + ARCHIVED + picked + ARCHIVED)[0]
    ) == ids("002")
    # Both copies in one file: no file was taken whole.
    assert folded(repo, REDIS + picked + ARCHIVED + applied, "") == ({}, [])
    # Not one memory: another text, another source; or both archived, or three copies.
    assert folded(repo, REDIS + applied, entry("002", "another fact") + ARCHIVED) == ({}, [])
    other_source = picked.replace("session_id: s", "session_id: t")
    assert folded(repo, REDIS + other_source, picked + ARCHIVED) == ({}, [])
    assert folded(repo, REDIS + picked + ARCHIVED, picked + ARCHIVED) == ({}, [])
    assert folded(repo, REDIS + picked + picked, picked + ARCHIVED) == ({}, [])


def test_another_scopes_renames_are_labelled_with_its_name(repo):
    bob = repo / "grimoires" / "bob" / "memory"
    bob.mkdir(parents=True)
    write(repo, "facts.yaml", HEAD + REDIS)
    (bob / "facts.yaml").write_text(HEAD + REDIS)
    commit_all(repo, "start")
    git("checkout", "-q", "-b", "side", cwd=repo)
    (bob / "decisions.yaml").write_text(related("002", "the side of bob decides", "002"))
    commit_all(repo, "side")
    git("checkout", "-q", "main", cwd=repo)
    (bob / "preferences.yaml").write_text(entry("002", "the main of bob prefers", "", "preference"))
    commit_all(repo, "main")
    git("merge", "-q", "--no-edit", "side", cwd=repo)
    with chdir(repo.parent):
        fixed = Grimoire.open(repo).merge_fixup("post-merge", ["0"], all_scopes=True)
    assert (fixed.renumbered, fixed.files) == (
        {"bob:MEM-20261122-002": "bob:MEM-20261122-003"},
        ["grimoires/bob/memory/decisions.yaml"],
    )
    assert (bob / "decisions.yaml").read_text() == related("003", "the side of bob decides", "003")


def test_each_archived_memory_gets_the_other_sides_lifecycle_change_counted_from_the_base(repo, tmp_path):
    """Main archives four memories: one new on main (theirs has no copy), one archived since the base (both
    alike), one it superseded (the side superseded it by another: a conflict, left with a note), and the redis
    fact applied once at the base, which the side applied again: its applies add up from the base's."""
    once = APPLIED.format(1, 1, 100, "2026-11-20T10:00:00Z")
    twice = APPLIED.format(2, 2, 100, "2026-11-22T10:00:00Z")
    long_archived = entry("009", "long archived", "  superseded_by: MEM-20261122-001\n" + ARCHIVED)
    old = entry("006", "the cache is old")
    write(repo, "facts.yaml", HEAD + entry("001", "the cache is redis", once) + old)
    write(repo, "archive/facts.yaml", long_archived)
    commit_all(repo, "start")
    git("checkout", "-q", "-b", "side", cwd=repo)
    by_side = entry("008", "the cache is new on the side", "  supersedes: MEM-20261122-006\n")
    write(
        repo,
        "facts.yaml",
        HEAD + entry("001", "the cache is redis", twice) + old + "  superseded_by: MEM-20261122-008\n" + by_side,
    )
    commit_all(repo, "side")
    git("checkout", "-q", "main", cwd=repo)
    by_main = entry("007", "the cache is new on main", "  supersedes: MEM-20261122-006\n")
    write(repo, "facts.yaml", HEAD + by_main)
    archive = (
        entry("005", "archived on main", ARCHIVED)
        + long_archived
        + old
        + "  superseded_by: MEM-20261122-007\n"
        + ARCHIVED
        + entry("001", "the cache is redis", once + ARCHIVED)
    )
    write(repo, "archive/facts.yaml", archive)
    commit_all(repo, "main")
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    assert run_driver(repo, tmp_path, FACTS).conflicts == []
    git("commit", "-q", "--no-edit", cwd=repo)
    fixed = fixup(repo, "post-merge", "0")
    assert (fixed.renumbered, fixed.lifecycle, fixed.notes) == (
        {},
        ["MEM-20261122-001"],
        [
            "MEM-20261122-006: both sides changed its lifecycle differently; check superseded_by and "
            "effectiveness by hand"
        ],
    )
    archived = {e["id"][-3:]: e.get("effectiveness") for e in items((repo / MEMORY / "archive/facts.yaml").read_text())}
    assert archived == {
        "005": None,
        "009": None,
        "006": None,
        "001": {"applications": 2, "successes": 2, "score": 100, "last_applied": "2026-11-22T10:00:00Z"},
    }


def lifecycle_carried(repo: Path, mine: str, theirs: str, here: str, echoed: dict | None = None) -> dict:
    """_lifecycle for the redis fact applied once at the base: `mine` (main's archived copy, its effectiveness
    and archive fields), `theirs` (the side's facts.yaml past its head), `here` (the archived copy in the work
    tree). Each call starts again from a base of its own."""
    write(repo, "archive/facts.yaml", "")
    write(repo, "facts.yaml", HEAD + entry("001", "the cache is redis", APPLIED.format(1, 1, 100, "T1")))
    commit_all(repo, "base")
    base = sha(repo, "HEAD")
    git("checkout", "-q", "-b", f"side{len(git('branch', cwd=repo).split())}", cwd=repo)
    write(repo, "facts.yaml", HEAD + theirs)
    commit_all(repo, "side")
    other = sha(repo, "HEAD")
    git("checkout", "-q", base, cwd=repo)
    write(repo, "facts.yaml", HEAD)
    write(repo, "archive/facts.yaml", mine)
    commit_all(repo, "main archives")
    trees = tuple(Tree(repo, commit, STORAGE) for commit in (base, sha(repo, "HEAD"), other))
    write(repo, "archive/facts.yaml", here)
    result = FixupResult("merge")
    with chdir(repo.parent):
        entries = list(store_of(repo).entries(include_archive=True, skip_damaged=True))
        out = _lifecycle(entries, trees, {}, result, folder=repo, echoed=echoed)  # type: ignore[arg-type]
    return {entry_id: fields.get("effectiveness", fields) for (_, entry_id), fields in out.items()}


def applied(applications: int, when: str) -> str:
    return entry("001", "the cache is redis", APPLIED.format(applications, applications, 100, when))


def test_an_archived_copys_applies_are_counted_from_the_base_once_each(repo):
    twice = applied(2, "T2") + ARCHIVED
    key = memory_key(items(REDIS)[0])

    def counts(out: dict) -> list:
        return [(i, e["applications"], e["last_applied"]) for i, e in out.items()]

    # Both sides hold main's second apply (the side picked it), and the side applied once more: three in all.
    assert counts(lifecycle_carried(repo, twice, applied(3, "T3"), twice, echoed={key: (1, 1)})) == [
        (ids("001")[0], 3, "T3")
    ]
    # Not picked, the two sides' applies since the base add up.
    assert counts(lifecycle_carried(repo, twice, applied(3, "T3"), twice)) == [(ids("001")[0], 4, "T3")]
    # The same record on both sides is one change: the copy here, which lacks it, takes it once.
    assert counts(lifecycle_carried(repo, twice, applied(2, "T2"), applied(1, "T1") + ARCHIVED)) == [
        (ids("001")[0], 2, "T2")
    ]
    assert lifecycle_carried(repo, twice, applied(2, "T2"), twice) == {}
    # The side holds the memory twice, a copy under 004 first: the one under the archived entry's own id is read.
    copy = applied(5, "T5").replace("-001", "-004")
    assert counts(lifecycle_carried(repo, twice, copy + applied(3, "T3"), twice)) == [(ids("001")[0], 4, "T3")]


def side_applied_and_picked(repo: Path) -> None:
    """Applied once at the base; the side applies it again, and main picks that commit (after a commit of its
    own, so the pick is a copy with another parent). HEAD on main."""
    write(repo, "facts.yaml", HEAD + applied(1, "T1"))
    commit_all(repo, "start")
    git("checkout", "-q", "-b", "side", cwd=repo)
    write(repo, "facts.yaml", HEAD + applied(2, "T2"))
    commit_all(repo, "the side applies")
    git("checkout", "-q", "main", cwd=repo)
    write(repo, "decisions.yaml", entry("002", "main decides", "", "decision"))
    commit_all(repo, "main decides")
    git("cherry-pick", "side", cwd=repo)


def the_side_applies_again_and_main_merges(repo: Path, tmp_path: Path, when: str) -> None:
    """The side applies the memory a third time (at `when`); main merges it, the driver merging facts.yaml."""
    git("checkout", "-q", "side", cwd=repo)
    write(repo, "facts.yaml", HEAD + applied(3, when))
    commit_all(repo, "the side applies again")
    git("checkout", "-q", "main", cwd=repo)
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    assert run_driver(repo, tmp_path, FACTS).conflicts == []


def test_an_apply_main_picked_from_the_side_counts_once_in_the_archived_copy(repo, tmp_path):
    """Main archives the memory after the pick; the side applies a third time. The merge's archived copy holds
    three applies, the picked one once."""
    side_applied_and_picked(repo)
    write(repo, "facts.yaml", HEAD)
    write(repo, "archive/facts.yaml", applied(2, "T2") + ARCHIVED)
    commit_all(repo, "main archives")
    the_side_applies_again_and_main_merges(repo, tmp_path, "T3")
    git("commit", "-q", "--no-edit", cwd=repo)
    fixed = fixup(repo, "post-merge", "0")
    assert (fixed.lifecycle, fixed.notes) == (ids("001"), [])
    archived = items((repo / MEMORY / "archive/facts.yaml").read_text())
    assert [(e["id"], e["effectiveness"]["applications"], e["effectiveness"]["last_applied"]) for e in archived] == [
        (ids("001")[0], 3, "T3")
    ]


def test_the_driver_counts_an_apply_both_sides_hold_through_a_pick_once(repo, tmp_path):
    """After the pick each side applies once more. The driver's merge of facts.yaml holds four applies: the
    base's, the picked one once, and one of each side."""
    side_applied_and_picked(repo)
    write(repo, "facts.yaml", HEAD + applied(3, "T3"))
    commit_all(repo, "main applies")  # in the same second as the side's next: another message, no copy
    the_side_applies_again_and_main_merges(repo, tmp_path, "T4")
    assert [
        (e["effectiveness"]["applications"], e["effectiveness"]["last_applied"])
        for e in items((repo / FACTS).read_text())
    ] == [(4, "T4")]


def picked_past_a_fact_of_main(repo: Path, tmp_path: Path, branch: str, number: str, renumbered: str) -> None:
    """Main adds a fact of its own as `number`, then picks `branch`'s last commit, whose new fact took the same
    number: the driver numbers the picked one `renumbered`."""
    write(repo, "facts.yaml", HEAD + REDIS + entry(number, "a fact of main"))
    commit_all(repo, "a fact of main")  # not the branch's message: no copy of its commit
    assert subprocess.run(["git", "cherry-pick", branch], cwd=repo, capture_output=True).returncode == 1
    assert run_driver(repo, tmp_path, FACTS).renumbered == {ids(number)[0]: ids(renumbered)[0]}
    git("-c", "core.editor=true", "cherry-pick", "--continue", cwd=repo)


def merging_after_archiving(repo: Path, tmp_path: Path, branch: str, facts: str, archive: str):
    """Main writes `facts` and archives the redis fact as `archive`, then merges `branch`: the driver's result."""
    write(repo, "facts.yaml", facts)
    write(repo, "archive/facts.yaml", archive)
    commit_all(repo, "main archives")
    assert subprocess.run(["git", "merge", "-q", branch], cwd=repo, capture_output=True).returncode == 1
    return run_driver(repo, tmp_path, FACTS)


def test_one_successor_both_sides_hold_under_their_own_ids_is_one_lifecycle_change(repo, tmp_path):
    """The side supersedes the redis fact by valkey (its 002); main picks that, the driver numbering valkey 003
    past main's own 002, and archives the redis fact. Merged, both sides' successor is valkey: no conflict."""
    write(repo, "facts.yaml", HEAD + REDIS)
    commit_all(repo, "start")
    git("checkout", "-q", "-b", "side", cwd=repo)
    valkey = entry("002", "the cache is valkey", "  supersedes: MEM-20261122-001\n")
    write(repo, "facts.yaml", HEAD + REDIS + "  superseded_by: MEM-20261122-002\n" + valkey)
    commit_all(repo, "side supersedes")
    git("checkout", "-q", "main", cwd=repo)
    picked_past_a_fact_of_main(repo, tmp_path, "side", "002", "003")
    archived = REDIS + "  superseded_by: MEM-20261122-003\n" + ARCHIVED
    facts = HEAD + entry("002", "a fact of main") + valkey.replace("-002", "-003")
    assert merging_after_archiving(repo, tmp_path, "side", facts, archived).conflicts == []
    git("commit", "-q", "--no-edit", cwd=repo)
    fixed = fixup(repo, "post-merge", "0")
    assert (fixed.renumbered, fixed.lifecycle, fixed.notes, fixed.files) == ({}, [], [], [])
    assert (repo / MEMORY / "archive/facts.yaml").read_text() == archived


def test_where_ours_yields_one_successor_under_each_sides_id_is_one_lifecycle_change(repo, tmp_path):
    """As above, ours yielding: feature (past alice's push) supersedes the redis fact by valkey, its 003; main
    picks it as 004 (past its own 003) and archives the redis fact. Merged, main's valkey takes feature's 003,
    main's own 003 a fresh 005, and the archived fact's successor is valkey under its new id: no conflict."""
    feature_past_alices_push(repo, tmp_path)
    git("config", "merge.grimoire.driver", "false", cwd=repo)  # configured here; run in process below
    valkey = entry("003", "the cache is valkey", "  supersedes: MEM-20261122-001\n")
    write(repo, "facts.yaml", HEAD + REDIS + "  superseded_by: MEM-20261122-003\n" + valkey)
    commit_all(repo, "feature supersedes")
    git("checkout", "-q", "main", cwd=repo)
    picked_past_a_fact_of_main(repo, tmp_path, "feature", "003", "004")
    facts = HEAD + entry("003", "a fact of main") + valkey.replace("-003", "-004")
    archive = REDIS + "  superseded_by: MEM-20261122-004\n" + ARCHIVED
    merged = merging_after_archiving(repo, tmp_path, "feature", facts, archive)
    assert (merged.side, merged.renumbered, merged.conflicts) == (
        "ours",
        {ids("003")[0]: ids("005")[0], ids("004")[0]: ids("003")[0]},
        [],
    )
    git("commit", "-q", "--no-edit", cwd=repo)
    fixed = fixup(repo, "post-merge", "0")
    assert (fixed.side, fixed.renumbered, fixed.notes) == ("ours", {}, [])
    assert (repo / FACTS).read_text() == HEAD + entry("005", "a fact of main") + valkey
    archived = REDIS + "  superseded_by: MEM-20261122-003\n" + ARCHIVED
    assert (repo / MEMORY / "archive/facts.yaml").read_text() == archived


def test_where_ours_yields_a_picked_memory_archived_on_the_other_side_is_one_archived_memory(repo, tmp_path):
    """Main picked feature's fact as its 002 and applied it; feature (past alice's push: main yields) archived it
    as its 003. The driver removes main's active copy from facts.yaml and gives feature's archived copy, under
    feature's id, main's apply."""
    feature_past_alices_push(repo, tmp_path)
    picked = entry("003", "the picked fact")
    commit_all_new(repo, "facts.yaml", HEAD + REDIS + picked)
    write(repo, "facts.yaml", HEAD + REDIS + entry("004", "another feature fact"))
    write(repo, "archive/facts.yaml", picked + ARCHIVED)
    commit_all(repo, "feature archives")
    git("checkout", "-q", "main", cwd=repo)
    applied = picked.replace("-003", "-002") + APPLIED.format(1, 1, 100, "2026-11-22T12:00:00Z")
    write(repo, "facts.yaml", HEAD + REDIS + applied)
    write(repo, "archive/facts.yaml", entry("005", "archived on main", ARCHIVED))
    commit_all(repo, "main picks, applies, archives another")
    assert subprocess.run(["git", "merge", "-q", "feature"], cwd=repo, capture_output=True).returncode == 1
    archive = (MEMORY / "archive/facts.yaml").as_posix()
    for path in (FACTS, archive):
        merged = run_driver(repo, tmp_path, path)
        assert (merged.side, merged.conflicts) == ("ours", [])
    assert (repo / FACTS).read_text() == HEAD + REDIS + entry("004", "another feature fact")
    assert archived_lifecycles(repo) == PICKED_AND_ARCHIVED


def test_the_files_this_clones_driver_merged_are_those_both_sides_changed(repo):
    side_and_main(
        repo,
        {"facts.yaml": HEAD + REDIS + entry("002", "the side fact"), "decisions.yaml": related("003", "side", "001")},
        {"facts.yaml": HEAD + REDIS + entry("002", "the fact of main"), "errors.yaml": entry("004", "e", "", "error")},
    )
    versions = (sha(repo, "side^"), sha(repo, "main"), sha(repo, "side"))
    config = Grimoire.open(repo).config
    merge = _Plan("merge", versions[1], versions, False, stage=True)
    rebase = _Plan("rebase", versions[1], None, True, stage=False, versions=versions)
    with chdir(repo.parent):
        merged = lambda found: _merged_by_driver(config, repo, found, STORAGE)
        assert merged(merge) == set()  # no driver configured here: none ran
        git("config", "merge.grimoire.driver", "mem merge-driver %O %A %B %P", cwd=repo)
        assert merged(merge) == merged(rebase) == {FACTS}
        assert merged(dataclasses.replace(merge, only_if_repeated=True)) == set()  # made elsewhere
        assert merged(dataclasses.replace(rebase, versions=None)) == set()


def test_a_file_the_driver_merged_is_not_renamed_again_where_the_mapping_chains(repo, tmp_path):
    """The side's 002 is main's 003 (picked onto main), and the side's own 003 collides: the driver maps
    002 -> 003 and 003 -> 005 and renames the side's references once. Renamed again, 003 would move on to 005."""
    picked = entry("002", "the picked fact")
    git("config", "merge.grimoire.driver", "false", cwd=repo)  # configured here; run in process below
    side_and_main(
        repo,
        {
            "facts.yaml": HEAD
            + REDIS
            + picked
            + entry("003", "the side's other fact")
            + related("004", "the side's follow-up", "002", "003", category="fact")
        },
        {"facts.yaml": HEAD + REDIS + entry("002", "the fact of main") + picked.replace("-002", "-003")},
    )
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    result = run_driver(repo, tmp_path, FACTS)
    assert result.renumbered == {ids("002")[0]: ids("003")[0], ids("003")[0]: ids("005")[0]}
    merged = (repo / FACTS).read_text()
    assert "related_memories: [MEM-20261122-003, MEM-20261122-005]" in merged
    fixed = fixup(repo, "pre-commit")
    assert (fixed.renumbered, fixed.files, fixed.notes) == ({}, [], [])
    assert (repo / FACTS).read_text() == merged


def test_where_ours_yields_the_archived_copy_adds_our_applies_to_theirs(repo, tmp_path):
    """Theirs merged origin/main's new commit (ours yields) and applied the redis fact; main applied it too,
    then archived it: the archived copy holds both applies."""
    feature_past_alices_push(repo, tmp_path)
    theirs_apply = APPLIED.format(1, 1, 100, "2026-11-22T10:00:00Z")
    commit_all_new(repo, "facts.yaml", HEAD + entry("001", "the cache is redis", theirs_apply))
    git("checkout", "-q", "main", cwd=repo)
    ours_apply = APPLIED.format(1, 0, 0, "2026-11-21T10:00:00Z")
    write(repo, "facts.yaml", HEAD)
    write(repo, "archive/facts.yaml", entry("001", "the cache is redis", ours_apply + ARCHIVED))
    commit_all(repo, "main applies and archives")
    assert subprocess.run(["git", "merge", "-q", "feature"], cwd=repo, capture_output=True).returncode == 1
    assert run_driver(repo, tmp_path, FACTS).conflicts == []
    git("commit", "-q", "--no-edit", cwd=repo)
    fixed = fixup(repo, "post-merge", "0")
    assert (fixed.side, fixed.lifecycle, fixed.notes) == ("ours", ["MEM-20261122-001"], [])
    archived = items((repo / MEMORY / "archive/facts.yaml").read_text())
    assert [(e["id"], e["effectiveness"]) for e in archived] == [
        (
            "MEM-20261122-001",
            {"applications": 2, "successes": 1, "score": 50, "last_applied": "2026-11-22T10:00:00Z"},
        )
    ]


def test_a_folded_memory_is_written_once_archived_and_removed_where_it_was_active(repo):
    keeper = started(repo)
    picked = entry("002", "the picked fact")
    applied = picked + APPLIED.format(1, 1, 100, "2026-11-22T12:00:00Z")
    write(repo, "facts.yaml", HEAD + REDIS + applied + related("003", "after it", "009", category="fact"))
    write(repo, "archive/facts.yaml", picked + ARCHIVED)
    result = FixupResult("merge")
    with chdir(repo.parent):
        out = _changes(store_of(repo), repo, STORAGE, keeper, {ids("009")[0]: ids("010")[0]}, result)
    archive = (MEMORY / "archive/facts.yaml").as_posix()
    assert sorted(out) == [archive, FACTS]
    assert out[FACTS][ids("002")[0]] is None
    assert out[FACTS][ids("003")[0]]["related_memories"] == ids("010")
    kept = out[archive][ids("002")[0]]
    assert (kept["archived"], kept["effectiveness"]["applications"]) == (True, 1)
    assert result.lifecycle == ids("002")
    assert result.notes == []  # the folded 002 is one memory: no id used twice is left for the hand
