"""A rebase that flattens a merge, in process (git/flattened.py): `git pull
--rebase` drops a merge this clone made and replays both its lines, and mem's
hook commit after that merge with them. Real histories built with git, the
driver and the hooks called in process as git calls them (test_merge_pinned's
way); the two scenarios of tests/test_merge.py that found issue 42, with
hand-written entries. Pinned: what `strays` and `origins` answer, and the
files the post-rewrite fixup writes. Then the merge's kept mapping
(git/mapping_cache.py) and one key remembered on both sides (git/chains.py),
called directly. What `make mutation` runs for these three modules
(test_merge.py runs the scenarios through `mem` processes, which import the
unmutated package)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import chdir, contextmanager
from pathlib import Path

import pytest
from conftest import git
from test_merge_pinned import HEAD, MEMORY, commit_all, entry, fixup, items, run_driver, write

from grimoire_cli import Grimoire
from grimoire_cli.git import flattened, mapping_cache
from grimoire_cli.git.chains import keyed_successors
from grimoire_cli.git.merge import Renames
from grimoire_cli.git.numbering import memory_of
from grimoire_cli.git.renumber import plan
from grimoire_cli.git.trees import prior_renames

LEARNINGS = (MEMORY / "learnings.yaml").as_posix()
ERRORS = (MEMORY / "errors.yaml").as_posix()
DECISIONS = (MEMORY / "decisions.yaml").as_posix()
ARCHIVE = (MEMORY / "archive/learnings.yaml").as_posix()
STORAGE = MEMORY.as_posix()
SUPERSEDED = '  archived: true\n  archived_at: "2026-11-22T11:00:00Z"\n  archive_reason: superseded\n'


def learning(number: str, text: str, after: str = "") -> str:
    return entry(number, text, after, "learning")


def archived(number: str, text: str, by: str) -> str:
    """A learning a compaction archived, superseded by the condensed entry `by`."""
    return learning(number, text, f"  superseded_by: MEM-20261122-{by}\n" + SUPERSEDED)


def condensed(number: str, *named: str) -> str:
    listed = ", ".join(f"MEM-20261122-{n}" for n in named)
    return learning(number, "the condensed learnings", f"  related_memories: [{listed}]\n")


def sha(repo: Path, rev: str) -> str:
    return git("rev-parse", rev, cwd=repo).strip()


def team_repo(repo: Path, tmp_path: Path, start: dict[str, str]) -> None:
    """`start` committed and pushed to a bare origin as main, with the driver and hook of `in_process`."""
    for name, text in start.items():
        write(repo, name, text)
    commit_all(repo, "start")
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    git("remote", "add", "origin", str(remote), cwd=repo)
    git("push", "-q", "origin", "HEAD:main", cwd=repo)
    git("fetch", "-q", "origin", cwd=repo)
    git("remote", "set-head", "origin", "main", cwd=repo)
    in_process(repo)


def in_process(repo: Path) -> None:
    """Every file both sides change stops as a conflict (the driver configured but failing), for the driver
    to be run in process; and a post-rewrite hook that keeps what mem's hook is given (the list on stdin, the
    rebase's state, which git removes right after the hook) for the fixup to be run in process."""
    git("config", "merge.grimoire.driver", "false", cwd=repo)
    hook = repo / ".git" / "hooks" / "post-rewrite"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(
        '#!/bin/sh\ngit_dir=$(git rev-parse --git-dir)\ncat > "$git_dir/kept-rewritten"\n'
        'rm -rf "$git_dir/kept-rebase-merge"\ncp -r "$git_dir/rebase-merge" "$git_dir/kept-rebase-merge"\n'
    )
    hook.chmod(0o755)


def alice_pushes(repo: Path, files: dict[str, str], message: str) -> None:
    """Alice's commit on origin's main (the branch `alice` here), fetched."""
    exists = subprocess.run(["git", "rev-parse", "-q", "--verify", "alice"], cwd=repo, capture_output=True)
    git("checkout", "-q", *(("alice",) if exists.returncode == 0 else ("-b", "alice", "origin/main")), cwd=repo)
    for name, text in files.items():
        write(repo, name, text)
    commit_all(repo, message)
    git("push", "-q", "origin", "HEAD:main", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    git("fetch", "-q", "origin", cwd=repo)


def settle(repo: Path, tmp_path: Path, command: list[str]) -> None:
    """Run a git merge or rebase, the driver in process for every file it stops on, until it is done."""
    done = subprocess.run(["git", *command], cwd=repo, capture_output=True, text=True)
    while done.returncode != 0:
        conflicted = git("diff", "--name-only", "--diff-filter=U", cwd=repo).split()
        assert conflicted, done.stderr
        for path in conflicted:
            assert run_driver(repo, tmp_path, path).conflicts == []
        if not (repo / ".git" / "rebase-merge").is_dir():
            git("commit", "-q", "--no-edit", cwd=repo)
            return
        done = subprocess.run(
            ["git", "-c", "core.editor=true", "rebase", "--continue"], cwd=repo, capture_output=True, text=True
        )


@contextmanager
def as_the_hook_saw_it(repo: Path) -> Iterator[str]:
    """The rebase's state back where mem's post-rewrite hook found it, and the list it was given (stdin);
    run from outside the repository, as `fixup` is: git run where the working directory is the repository
    would hide a call that lost the root it was given."""
    git_dir = repo / ".git"
    shutil.copytree(git_dir / "kept-rebase-merge", git_dir / "rebase-merge")
    try:
        with chdir(repo.parent):
            yield (git_dir / "kept-rewritten").read_text()
    finally:
        shutil.rmtree(git_dir / "rebase-merge")


def text(repo: Path, path: str) -> str:
    return (repo / path).read_text()


def files_at(repo: Path, rev: str) -> list[str]:
    return git("ls-tree", "-r", "--name-only", rev, "--", STORAGE, cwd=repo).split()


def flattened_compaction(repo: Path, tmp_path: Path, hook_subject: str | None = None) -> dict[str, str]:
    """Issue 42's first seam (test_merge.py: ..._keeps_a_compaction_and_the_memories_it_names): bob compacts
    two learnings of his own, merges alice's first round (his unpushed ids yield: the driver renumbers
    learnings.yaml, mem's post-merge hook the archive in a commit of its own), then rebases onto her
    second round. Returns the commits by name (`hook_subject`: that commit reworded)."""
    base = HEAD + learning("001", "the seed's learning")
    team_repo(repo, tmp_path, {"learnings.yaml": base})
    write(repo, "learnings.yaml", base + learning("002", "redis is the cache") + learning("003", "kafka bills"))
    commit_all(repo, "bob learns")
    write(repo, "learnings.yaml", base + condensed("004", "002", "003"))
    write(
        repo,
        "archive/learnings.yaml",
        archived("002", "redis is the cache", "004") + archived("003", "kafka bills", "004"),
    )
    commit_all(repo, "bob compacts")
    round_one = base + "".join(learning(n, f"alice note {n}") for n in ("002", "003", "004", "005"))
    alice_pushes(repo, {"learnings.yaml": round_one}, "alice round 1")
    settle(repo, tmp_path, ["merge", "-q", "--no-edit", "origin/main"])
    merged = fixup(repo, "post-merge", "0")
    assert (merged.renumbered, merged.files) == (
        {"MEM-20261122-002": "MEM-20261122-006", "MEM-20261122-003": "MEM-20261122-007"},
        [ARCHIVE],
    )
    assert text(repo, ARCHIVE) == archived("006", "redis is the cache", "008") + archived("007", "kafka bills", "008")
    if hook_subject is not None:
        git("commit", "-q", "--amend", "-m", hook_subject, cwd=repo)
    round_two = round_one + "".join(learning(n, f"alice note {n}") for n in ("006", "007", "008", "009"))
    alice_pushes(repo, {"learnings.yaml": round_two}, "alice round 2")
    names = {"learns": "HEAD~3", "compacts": "HEAD~2", "merge": "HEAD~1", "hook": "HEAD", "round one": "origin/main~1"}
    shas = {name: sha(repo, rev) for name, rev in names.items()}
    shas["round two"], shas["tip"] = sha(repo, "origin/main"), shas["hook"]
    settle(repo, tmp_path, ["rebase", "-q", "origin/main"])
    assert (text(repo, LEARNINGS), text(repo, ARCHIVE)) == (
        round_two + condensed("012", "010", "011"),
        # mem's commit after the dropped merge, replayed: the merge's ids, now alice's second round's.
        archived("006", "redis is the cache", "008") + archived("007", "kafka bills", "008"),
    )
    return shas


@pytest.mark.git
@pytest.mark.parametrize("subject", [None, "mem: merge archived memories' lifecycle in the merge"])
def test_a_rebase_that_flattens_a_merge_renames_the_hooks_archive_back_to_the_picks_ids(repo, tmp_path, subject):
    shas = flattened_compaction(repo, tmp_path, subject)
    replayed = (shas["learns"], shas["compacts"], shas["hook"])  # not the merge: it is flattened
    with as_the_hook_saw_it(repo) as stdin:
        found = plan(repo, repo / ".git", "post-rewrite", ["rebase"], stdin)
        assert found is not None
        assert (found.versions, found.replayed) == ((shas["round one"], shas["round two"], shas["tip"]), replayed)
        records = prior_renames(repo / ".git", repo / MEMORY)
        bobs = [learning("002", "redis is the cache"), learning("003", "kafka bills"), condensed("004", "002", "003")]
        assert records == [
            (old, memory_of(block.rstrip("\n")), new)
            for old, block, new in zip(("MEM-20261122-002", "MEM-20261122-003", "MEM-20261122-004"), bobs, IDS[10:])
        ]
        strays = lambda records, replayed=replayed, versions=found.versions: flattened.strays(
            repo, STORAGE, records, *versions, replayed
        )
        # The merge gave bob's memories 006, 007, 008; the picks 010, 011, 012.
        assert strays(records) == dict(zip(IDS[6:9], IDS[10:]))
        # No pick renamed them: back to the ids they had before the merge.
        assert strays([]) == dict(zip(IDS[6:9], IDS[2:5]))
        # A pick that gave one the merge's id: nothing to undo for that one.
        assert strays([(records[0][0], records[0][1], IDS[6])]) == dict(zip(IDS[7:9], IDS[3:5]))
        # `git rebase --rebase-merges` replays the merge; a range with no merge: nothing flattened.
        assert strays(records, (*replayed, shas["merge"])) == {}
        assert strays(records, versions=(shas["round one"], shas["round two"], shas["learns"])) == {}
        # Renames that chain (a later pick renamed the id an earlier one gave): the last one.
        assert strays([*records, (IDS[10], records[0][1], IDS[13])])[IDS[6]] == IDS[13]
        # The same change in a commit of bob's own after the merge settles nothing (mem's subject after a tab
        # is not mem's subject): the merge's own tree gave the condensed entry 008 (its archived memories it
        # still held under their ids).
        own = git("commit-tree", f"{shas['hook']}^{{tree}}", "-p", shas["merge"], "-m", "bob\t" + HOOK, cwd=repo)
        versions = (shas["round one"], shas["round two"], own.strip())
        assert strays(records, (*replayed[:2], own.strip()), versions) == {IDS[8]: IDS[12]}
        # A merge whose subject holds a tab is a merge all the same.
        merge = git(
            "commit-tree",
            f"{shas['merge']}^{{tree}}",
            "-p",
            shas["compacts"],
            "-p",
            shas["round one"],
            "-m",
            "Merge\tround one",
            cwd=repo,
        ).strip()
        hook = git("commit-tree", f"{shas['hook']}^{{tree}}", "-p", merge, "-m", HOOK, cwd=repo).strip()
        versions = (shas["round one"], shas["round two"], hook)
        assert strays(records, (*replayed[:2], hook), versions) == dict(zip(IDS[6:9], IDS[10:]))
        # Every file HEAD holds as a replayed commit held it, from the last that did: mem's hook commit.
        assert flattened.origins(repo, STORAGE, replayed) == {
            path: shas["hook"]
            for path in files_at(repo, "HEAD")
            if path != LEARNINGS  # the driver merged it
        }
        fixed = fixup(repo, "post-rewrite", "rebase", stdin=stdin)
    assert fixed.to_dict() == {
        "operation": "rebase",
        "renumbered": dict(zip(IDS[6:8], IDS[10:12])),
        "side": "theirs",
        "lifecycle": [],
        "files": [ARCHIVE],
        "commit": sha(repo, "HEAD"),
        "staged": False,
        "notes": [],
    }
    assert text(repo, ARCHIVE) == archived("010", "redis is the cache", "012") + archived("011", "kafka bills", "012")
    assert git("log", "-1", "--format=%s", cwd=repo) == "mem: renumber memory ids that collided in the rebase\n"
    assert git("status", "--porcelain", cwd=repo) == ""
    assert Grimoire.open(repo).validate().ok


IDS = [f"MEM-20261122-{n:03d}" for n in range(20)]
HOOK = "mem: renumber memory ids that collided in the merge"


@pytest.mark.git
def test_a_rebase_keeps_a_reference_to_upstreams_memory_under_the_id_a_pick_renamed_away(repo, tmp_path):
    """Issue 42's third seam (test_merge.py: ..._under_an_id_an_earlier_pick_gave_up): bob's unpushed error and
    alice's learning both took 002; bob merged her work (his error yields: 005), condensed her learning, then
    rebased onto her decision (005): the pick renumbers his error 002 -> 007, and the condensed entry, in a file
    git took whole from the compaction, still names her learning 002."""
    seed = HEAD + entry("001", "the seed's error", "", "error")
    team_repo(repo, tmp_path, {"errors.yaml": seed, "learnings.yaml": HEAD})
    error = entry("002", "the deploy failed on a stale lock", "", "error")
    write(repo, "errors.yaml", seed + error)
    commit_all(repo, "bob's error")
    queue = learning("002", "the queue drains at night")
    alice_pushes(
        repo,
        {
            "errors.yaml": seed + entry("003", "alice saw the disk fill up", "", "error"),
            "learnings.yaml": HEAD + queue + learning("004", "the cache warms slowly"),
        },
        "alice's learnings",
    )
    settle(repo, tmp_path, ["merge", "-q", "--no-edit", "origin/main"])
    merged = fixup(repo, "post-merge", "0")
    assert (merged.renumbered, merged.commit) == ({}, None)  # the driver renumbered the error: no hook commit
    compacted = HEAD + learning("004", "the cache warms slowly") + condensed("006", "002")
    write(repo, "learnings.yaml", compacted)
    write(repo, "archive/learnings.yaml", archived("002", "the queue drains at night", "006"))
    commit_all(repo, "bob compacts")
    alice_pushes(repo, {"decisions.yaml": entry("005", "pin the queue version", "", "decision")}, "alice decides")
    shas = {
        name: sha(repo, rev)
        for name, rev in (("error", "HEAD~1^1"), ("compacts", "HEAD"), ("round one", "origin/main~1"))
    }
    shas["merge"], shas["round two"] = sha(repo, "HEAD~1"), sha(repo, "origin/main")
    settle(repo, tmp_path, ["rebase", "-q", "origin/main"])
    replayed = (shas["error"], shas["compacts"])
    with as_the_hook_saw_it(repo) as stdin:
        found = plan(repo, repo / ".git", "post-rewrite", ["rebase"], stdin)
        assert found is not None
        assert (found.versions, found.replayed) == ((shas["round one"], shas["round two"], shas["compacts"]), replayed)
        records = prior_renames(repo / ".git", repo / MEMORY)
        assert records == [(IDS[2], memory_of(error.rstrip("\n")), IDS[7])]
        # The merge's 005 for bob's error is the pick's 007.
        assert flattened.strays(repo, STORAGE, records, *found.versions, found.replayed) == {IDS[5]: IDS[7]}
        # Git took learnings.yaml (and the archive) whole from the compaction: 002 there is alice's learning.
        assert flattened.origins(repo, STORAGE, replayed) == {
            path: shas["compacts"] for path in files_at(repo, "HEAD") if path not in (ERRORS, DECISIONS)
        }
        head = sha(repo, "HEAD")
        fixed = fixup(repo, "post-rewrite", "rebase", stdin=stdin)
    assert (fixed.operation, fixed.renumbered, fixed.files, fixed.commit, fixed.notes) == ("rebase", {}, [], None, [])
    assert (sha(repo, "HEAD"), text(repo, LEARNINGS)) == (head, compacted)
    assert [(e["id"], e["content"]) for e in items(text(repo, ERRORS))] == [
        (IDS[1], "the seed's error"),
        (IDS[3], "alice saw the disk fill up"),
        (IDS[7], "the deploy failed on a stale lock"),
    ]
    assert git("status", "--porcelain", cwd=repo) == ""
    assert Grimoire.open(repo).validate().ok


# -- the merge's mapping kept for the driver run of every other file (git/mapping_cache.py) ----------


RENAMES = Renames(
    mapping={IDS[2]: IDS[4]},
    yields=True,
    same={IDS[3]: ("- id: ours' block", "- id: theirs' block")},
    moved=({IDS[5]: IDS[6]}, {}),
    echoed={"0123456789abcdef": (2, 1)},
)


def test_a_kept_mapping_is_read_back_in_its_shapes_under_its_own_key_only(tmp_path):
    parts = ("grimoires/loa/memory", ["base", "ours", "theirs"], [(IDS[2], "key", IDS[4])], None)
    key = mapping_cache.key_of(*parts)
    assert key == mapping_cache.key_of(*parts) and len(key) == 64 and int(key, 16) >= 0
    assert key != mapping_cache.key_of(*parts[:3], "a rebase's tip")
    # A part's dict gives one key whatever the order of its items.
    assert mapping_cache.key_of({"a": 1, "b": 2}) == mapping_cache.key_of({"b": 2, "a": 1})
    assert mapping_cache.load(tmp_path, key) is None  # none kept yet
    mapping_cache.save(tmp_path, key, RENAMES._asdict())
    assert [path.name for path in tmp_path.iterdir()] == ["grimoire-merge-mapping.json"]  # no temp file left
    as_json = json.loads(json.dumps(RENAMES._asdict()))
    assert json.loads((tmp_path / mapping_cache.NAME).read_text()) == {"key": key, "fields": as_json}
    kept = mapping_cache.load(tmp_path, key)
    assert kept == as_json
    assert Renames(**mapping_cache.restored(kept)) == RENAMES
    assert mapping_cache.load(tmp_path, mapping_cache.key_of("another merge")) is None
    mapping_cache.save(tmp_path, "another merge", {"mapping": {}})  # the next merge's overwrites it
    assert mapping_cache.load(tmp_path, key) is None and mapping_cache.load(tmp_path, "another merge") == {
        "mapping": {}
    }


@pytest.mark.parametrize(
    "kept",
    [b"{not json", b"\xff\xfe", b"[1, 2]", b'{"fields": {}}', b'{"key": "K", "fields": [1]}', b'{"key": "K"}'],
)
def test_a_kept_mapping_that_cannot_be_read_is_worked_out_again(tmp_path, kept):
    (tmp_path / mapping_cache.NAME).write_bytes(kept)
    assert mapping_cache.load(tmp_path, "K") is None


def test_a_mapping_that_cannot_be_kept_is_no_error(tmp_path):
    mapping_cache.save(tmp_path / "no such git dir", "K", {"mapping": {}})
    assert not (tmp_path / "no such git dir").exists()
    (tmp_path / mapping_cache.NAME).mkdir()  # where the file goes, a folder: the rename fails
    mapping_cache.save(tmp_path, "K", {"mapping": {}})
    assert mapping_cache.load(tmp_path, "K") is None


def test_a_mapping_that_cannot_be_kept_leaves_no_temp_file(tmp_path):
    (tmp_path / mapping_cache.NAME).mkdir()
    mapping_cache.save(tmp_path, "K", {"mapping": {}})
    assert [path.name for path in tmp_path.iterdir()] == [mapping_cache.NAME]


# -- one key remembered on both sides, chained by time (git/chains.py) -------------------------------


def keyed(number: str, value: str, at: str | None = None, **links: str) -> dict:
    """A keyed entry as the driver parses it (`at`: HH:MM of its source's time)."""
    found = {"id": f"MEM-20261122-{number}", "key": "db.pool", "content": value, **links}
    if at is not None:
        found["source"] = {"session_id": "s", "timestamp": f"2026-11-22T{at}:00Z"}
    return found


def two_sides(ours_new: dict, theirs_new: dict, old: dict | None = None):
    """Base holds the old entry (001); each side supersedes it by its own new entry."""
    old = old or keyed("001", "small", "10:00")
    by = lambda new: {**old, "superseded_by": new["id"]}
    return (
        {old["id"]: old},
        {old["id"]: by(ours_new), ours_new["id"]: ours_new},
        {old["id"]: by(theirs_new), theirs_new["id"]: theirs_new},
    )


def test_one_key_superseded_on_both_sides_is_chained_by_the_time_each_value_was_written():
    ours_new = keyed("002", "large", "10:05", supersedes=IDS[1])
    theirs_new = keyed("003", "medium", "10:03", supersedes=IDS[1])
    chained = {IDS[1]: {"superseded_by": IDS[3]}, IDS[3]: {"superseded_by": IDS[2]}, IDS[2]: {"supersedes": IDS[3]}}
    assert keyed_successors(*two_sides(ours_new, theirs_new)) == chained
    assert keyed_successors(*two_sides(theirs_new, ours_new)) == chained  # whichever side wrote which
    # One time: by id. No source (or no time in it): before any time.
    same_time = keyed("003", "medium", "10:05", supersedes=IDS[1])
    by_id = {IDS[1]: {"superseded_by": IDS[2]}, IDS[2]: {"superseded_by": IDS[3]}, IDS[3]: {"supersedes": IDS[2]}}
    assert keyed_successors(*two_sides(ours_new, same_time)) == by_id
    assert keyed_successors(*two_sides(same_time, ours_new)) == by_id
    untimed = keyed("003", "medium", None, supersedes=IDS[1])
    assert keyed_successors(*two_sides(ours_new, untimed)) == chained
    no_time = {**ours_new, "source": {"session_id": "s"}}
    assert keyed_successors(*two_sides(no_time, theirs_new)) == by_id
    odd_source = {**ours_new, "source": "a string"}
    assert keyed_successors(*two_sides(odd_source, theirs_new)) == by_id


def test_what_is_no_keyed_revision_on_both_sides_is_left_to_the_field_merge():
    ours_new = keyed("002", "large", "10:05", supersedes=IDS[1])
    theirs_new = keyed("003", "medium", "10:03", supersedes=IDS[1])
    unkeyed = {key: value for key, value in keyed("001", "small", "10:00").items() if key != "key"}
    assert keyed_successors(*two_sides(ours_new, theirs_new, unkeyed)) == {}
    old, ours, theirs = two_sides(ours_new, theirs_new)
    assert keyed_successors(old, {}, theirs) == {} and keyed_successors(old, ours, {}) == {}  # gone on one side
    assert keyed_successors(old, ours, ours) == {}  # one successor on both sides
    # Base already named one of them: one side's supersede.
    assert keyed_successors({IDS[1]: {**old[IDS[1]], "superseded_by": IDS[2]}}, ours, theirs) == {}
    assert keyed_successors({IDS[1]: {**old[IDS[1]], "superseded_by": IDS[3]}}, ours, theirs) == {}
    # A successor missing from its side.
    assert keyed_successors(old, {IDS[1]: ours[IDS[1]]}, theirs) == {}
    assert keyed_successors(old, ours, {IDS[1]: theirs[IDS[1]]}) == {}
    # A successor that is no new revision of this key: another key, superseding another entry, superseded
    # itself, or an entry base already held.
    for changed in ({"key": "db.size"}, {"supersedes": IDS[9]}, {"superseded_by": IDS[9]}):
        assert keyed_successors(*two_sides(ours_new, {**theirs_new, **changed})) == {}, changed
    assert keyed_successors({**old, IDS[3]: theirs_new}, ours, theirs) == {}
    # Each of them skipped, the next entry of base is still chained.
    skipped_old = {IDS[8]: {"id": IDS[8]}, IDS[9]: keyed("009", "x"), IDS[10]: keyed("010", "y")}
    ours_skip = {IDS[9]: keyed("009", "x", superseded_by=IDS[11]), IDS[10]: keyed("010", "y", superseded_by=IDS[12])}
    theirs_skip = {**ours_skip, IDS[10]: keyed("010", "y", superseded_by=IDS[13])}
    unkeyed_news = {IDS[12]: {"id": IDS[12]}, IDS[13]: {"id": IDS[13]}}
    chain = keyed_successors(old, ours, theirs)
    assert (
        chain
        and keyed_successors(
            {**skipped_old, **old}, {**ours_skip, **unkeyed_news, **ours}, {**theirs_skip, **unkeyed_news, **theirs}
        )
        == chain
    )


@pytest.mark.git
@pytest.mark.parametrize("upstream_first", [False, True], ids=["merged-in", "merged-into"])
def test_the_upstream_line_of_a_flattened_merge_keeps_its_ids(repo, tmp_path, upstream_first):
    """Two local branches took 002 each; one merged the other (a tie: the side merged in yields, 002 -> 003),
    then the one that was `other` became upstream and moved on, and the merge's branch is rebased onto it.
    Its line is upstream's: a merge that renamed its ids is not undone there (merged-in: nothing to undo);
    the branch's line is (merged-into: the branch's 002 the merge made 003, the pick 005)."""
    seed = HEAD + learning("001", "the seed's learning")
    write(repo, "learnings.yaml", seed)
    commit_all(repo, "start")
    in_process(repo)
    # No apostrophe in a text the merge renumbers: the driver writes it quoted, and a memory is known by its lines.
    for branch, learned in (("other", "the upstream learning"), ("feat", "the branch learning")):
        git("checkout", "-q", "-b", branch, "main", cwd=repo)
        write(repo, "learnings.yaml", seed + learning("002", learned))
        commit_all(repo, f"{branch} learns")
    git("checkout", "-q", "-b", "work", "other" if upstream_first else "feat", cwd=repo)
    settle(repo, tmp_path, ["merge", "-q", "--no-edit", "feat" if upstream_first else "other"])
    git("checkout", "-q", "other", cwd=repo)
    write(repo, "decisions.yaml", entry("004", "upstream decides", "", "decision"))
    commit_all(repo, "upstream moves on")
    git("checkout", "-q", "work", cwd=repo)
    settle(repo, tmp_path, ["rebase", "-q", "other"])
    with as_the_hook_saw_it(repo) as stdin:
        found = plan(repo, repo / ".git", "post-rewrite", ["rebase"], stdin)
        assert found is not None and found.versions is not None
        records = prior_renames(repo / ".git", repo / MEMORY)
        assert [(old, new) for old, _, new in records] == [(IDS[2], IDS[5])]
        strays = flattened.strays(repo, STORAGE, records, *found.versions, found.replayed)
        assert strays == ({IDS[3]: IDS[5]} if upstream_first else {})
        fixed = fixup(repo, "post-rewrite", "rebase", stdin=stdin)
    assert (fixed.renumbered, fixed.files) == ({}, [])
    assert [(e["id"], e["content"]) for e in items(text(repo, LEARNINGS))] == [
        (IDS[1], "the seed's learning"),
        (IDS[2], "the upstream learning"),
        (IDS[5], "the branch learning"),
    ]
    assert Grimoire.open(repo).validate().ok


def two_flattened_merges(repo: Path, tmp_path: Path, named_later: str = "") -> str:
    """Bob's first merge renumbers his learning 002 -> 003; he drops that learning, and his second merge gives
    003 to another memory, one alice holds under it (picked onto her line as 003, his 004; his preference
    names it); `named_later`: an entry a commit of his after that merge writes. Then he rebases onto alice's
    next commit. Returns his preference as he wrote it."""
    seed = HEAD + learning("001", "the seed learning")
    team_repo(repo, tmp_path, {"learnings.yaml": seed})
    write(repo, "learnings.yaml", seed + learning("002", "the dropped learning"))
    commit_all(repo, "bob learns")
    alice = seed + learning("002", "the alice learning")
    alice_pushes(repo, {"learnings.yaml": alice}, "alice learns")
    settle(repo, tmp_path, ["merge", "-q", "--no-edit", "origin/main"])
    assert [e["id"] for e in items(text(repo, LEARNINGS))] == [IDS[1], IDS[3], IDS[2]]
    write(repo, "learnings.yaml", alice + learning("004", "the picked learning"))
    preference = entry("006", "prefer the picked learning", "  related_memories: [MEM-20261122-004]\n", "preference")
    write(repo, "preferences.yaml", preference)
    commit_all(repo, "bob drops one, learns another")
    alice_pushes(repo, {"learnings.yaml": alice + learning("003", "the picked learning")}, "alice picks")
    settle(repo, tmp_path, ["merge", "-q", "--no-edit", "origin/main"])
    assert text(repo, LEARNINGS) == alice + learning("003", "the picked learning")
    if named_later:
        write(repo, "errors.yaml", named_later)
        commit_all(repo, "bob names the picked learning")
    alice_pushes(repo, {"decisions.yaml": entry("004", "alice decides", "", "decision")}, "alice decides")
    settle(repo, tmp_path, ["rebase", "-q", "origin/main"])
    return preference


@pytest.mark.git
def test_an_id_two_flattened_merges_gave_two_memories_is_left_alone(repo, tmp_path):
    """Undone with no pick's rename, 003 would go back to 002 by the first merge and to 004 by the second:
    left alone."""
    preference = two_flattened_merges(repo, tmp_path)
    with as_the_hook_saw_it(repo) as stdin:
        found = plan(repo, repo / ".git", "post-rewrite", ["rebase"], stdin)
        assert found is not None and found.versions is not None
        records = prior_renames(repo / ".git", repo / MEMORY)
        assert [(old, new) for old, _, new in records] == [(IDS[2], IDS[7]), (IDS[4], IDS[3])]
        strays = lambda records: flattened.strays(repo, STORAGE, records, *found.versions, found.replayed)
        assert strays([]) == {}
        # The pick that kept alice's 003 for the picked learning: the first merge gave 003 to another memory,
        # the second kept it for this one; which one a reference means, no merge can say.
        assert strays(records[1:]) == {}
        fixed = fixup(repo, "post-rewrite", "rebase", stdin=stdin)
    # Bob's preference, in a file git took whole from his commit, names the picked learning by alice's id.
    assert (fixed.renumbered, fixed.files) == ({}, [(MEMORY / "preferences.yaml").as_posix()])
    assert text(repo, (MEMORY / "preferences.yaml").as_posix()) == preference.replace("-004]", "-003]")
    assert Grimoire.open(repo).validate().ok


@pytest.mark.git
def test_a_reference_to_an_id_the_second_flattened_merge_gave_keeps_naming_that_memory(repo, tmp_path):
    """Bob's commit after his second merge names the picked learning by the id that merge gave it, 003, which
    the rebase keeps: it still does after the rebase."""
    later = entry("008", "the picked learning holds", "  related_memories: [MEM-20261122-003]\n", "error")
    two_flattened_merges(repo, tmp_path, later)
    with as_the_hook_saw_it(repo) as stdin:
        fixup(repo, "post-rewrite", "rebase", stdin=stdin)
    assert text(repo, ERRORS) == later
    assert Grimoire.open(repo).validate().ok


@pytest.mark.git
def test_a_memory_upstream_holds_under_the_id_a_flattened_merge_gave_it_keeps_that_id(repo, tmp_path):
    """Bob's topic branch learns 002; a teammate picked that commit onto main, where it took 003 (alice's 002
    was there), and pushed. Bob pulls main into his main, then merges his topic (the picked learning is one
    memory: main's 003 stays), and rebases onto alice's next commit. The merge of his topic renamed 002 -> 003,
    but upstream holds the learning under 003: published, it stays (the soak's seed 8 moved it back to 002,
    alice's learning, and a supersede link followed)."""
    seed = HEAD + learning("001", "the seed learning")
    team_repo(repo, tmp_path, {"learnings.yaml": seed})
    git("checkout", "-q", "-b", "topic", cwd=repo)
    write(repo, "learnings.yaml", seed + learning("002", "the picked learning"))
    commit_all(repo, "bob learns on his topic")
    git("checkout", "-q", "main", cwd=repo)
    upstream = seed + learning("002", "the alice learning") + learning("003", "the picked learning")
    alice_pushes(repo, {"learnings.yaml": upstream}, "alice learns and picks bob's")
    write(repo, "decisions.yaml", entry("004", "bob decides", "", "decision"))
    commit_all(repo, "bob decides")
    settle(repo, tmp_path, ["merge", "-q", "--no-edit", "origin/main"])
    settle(repo, tmp_path, ["merge", "-q", "--no-edit", "topic"])
    assert text(repo, LEARNINGS) == upstream
    revision = learning("005", "the picked learning, revised", "  supersedes: MEM-20261122-003\n")
    revised = learning("003", "the picked learning", "  superseded_by: MEM-20261122-005\n")
    write(repo, "learnings.yaml", upstream.replace(learning("003", "the picked learning"), revised) + revision)
    commit_all(repo, "bob revises the picked learning")
    alice_pushes(repo, {"preferences.yaml": entry("006", "alice prefers", "", "preference")}, "alice prefers")
    settle(repo, tmp_path, ["rebase", "-q", "origin/main"])
    with as_the_hook_saw_it(repo) as stdin:
        found = plan(repo, repo / ".git", "post-rewrite", ["rebase"], stdin)
        assert found is not None and found.versions is not None
        records = prior_renames(repo / ".git", repo / MEMORY)
        assert flattened.strays(repo, STORAGE, [], *found.versions, found.replayed) == {}
        assert flattened.strays(repo, STORAGE, records, *found.versions, found.replayed) == {}
        fixup(repo, "post-rewrite", "rebase", stdin=stdin)
    learned = {e["content"]: e for e in items(text(repo, LEARNINGS))}
    assert learned["the picked learning"]["id"] == IDS[3]
    assert learned["the alice learning"]["id"] == IDS[2]
    assert learned["the picked learning, revised"]["supersedes"] == IDS[3]
    assert Grimoire.open(repo).validate().ok
