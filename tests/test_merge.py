"""Teams on git: two clones of one remote add, supersede, apply and archive on
the same day, then push and pull; the merge driver leaves both identical."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, mem_process

pytestmark = [pytest.mark.slow, pytest.mark.git]  # clones of one remote pushing, pulling, rebasing: ~100 s

MEMORY = "grimoires/loa/memory"
CATEGORIES = ["fact", "decision", "learning", "error", "preference"]


def run_mem(clone: Path, *args: str, code: int = 0) -> str:
    done = mem_process(*args, cwd=clone)
    assert done.returncode == code, (args, done.stdout, done.stderr)
    return done.stdout.decode().strip()


def as_another_clone(clone: Path) -> None:
    """What the clone adds next is numbered as another clone would number it:
    one clone never issues an id twice, on any branch (storage/issued.py), so
    its record of issued ids goes."""
    (clone / MEMORY / "local" / "issued-ids.json").unlink()


def export(clone: Path) -> dict[str, dict]:
    return {item["id"]: item for item in map(json.loads, run_mem(clone, "export", "--archived").splitlines())}


def files(clone: Path) -> dict[str, str]:
    return {p.relative_to(clone).as_posix(): p.read_text() for p in sorted((clone / MEMORY).rglob("*.yaml"))}


def assert_clean(*clones: Path) -> None:
    """Each clone's grimoire validates and its work tree has nothing left to commit."""
    for clone in clones:
        assert mem_process("validate", cwd=clone).returncode == 0
        assert git("status", "--porcelain", cwd=clone) == ""


def remote_and_clones(tmp_path: Path, seed_with) -> tuple[Path, Path, object]:
    """A bare remote seeded by `seed_with(seed clone)` (committed and pushed),
    and two clones, alice's and bob's, with mem's hooks and driver; and what
    `seed_with` returned."""
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    seed = tmp_path / "seed"
    git("clone", "-q", str(remote), str(seed), cwd=tmp_path)
    seeded = seed_with(seed)
    git("add", "-A", cwd=seed)
    git("commit", "-qm", "seed grimoire", cwd=seed)
    git("push", "-q", "origin", "HEAD:main", cwd=seed)
    clones = []
    for name in ("alice", "bob"):
        clone = tmp_path / name
        git("clone", "-q", str(remote), str(clone), cwd=tmp_path)
        run_mem(clone, "hooks", "install")
        clones.append(clone)
    return clones[0], clones[1], seeded


@pytest.fixture
def team(tmp_path):
    """A bare remote with a seeded grimoire, and two clones with mem's hooks and driver."""

    def seed_with(seed: Path) -> list[str]:
        run_mem(seed, "init")
        return [
            run_mem(seed, "add", "-c", CATEGORIES[i % 5], f"base memory {i} on subject {i * 17}") for i in range(10)
        ]

    return remote_and_clones(tmp_path, seed_with)


def work(
    clone: Path, who: str, base: list[str], supersede: list[str], apply: list[str], archive: list[str] = ()
) -> None:
    for i in range(20):
        run_mem(clone, "add", "-c", CATEGORIES[i % 5], "-t", who, f"{who} learned thing {i} about module {who}-{i * 7}")
    for entry_id in supersede:
        run_mem(clone, "supersede", entry_id, f"{who} revised {entry_id}")
    for entry_id in apply:
        # Each side applies at its own moment: identical effectiveness on both
        # sides (same last_applied) is taken as one change seen twice (a cherry-pick).
        done = mem_process(
            "apply",
            entry_id,
            "--success",
            cwd=clone,
            env={"MEM_NOW": f"2026-11-22T1{1 if who == 'alice' else 2}:00:00Z"},
        )
        assert done.returncode == 0, done.stderr
    git("add", "-A", cwd=clone)
    git("commit", "-qm", f"{who}'s memories", cwd=clone)
    if archive:
        run_mem(clone, "archive", *archive, "--reason", "manual")  # its own commit


@pytest.mark.parametrize("pull", [["pull", "--no-rebase", "-q"], ["pull", "--rebase", "-q"]], ids=["merge", "rebase"])
def test_two_clones_same_day_end_identical(team, pull):
    alice, bob, base = team
    work(alice, "alice", base, supersede=[base[0], base[1]], apply=[base[2], base[3]])
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    work(bob, "bob", base, supersede=[base[5], base[6]], apply=[base[3], base[4]], archive=[base[8], base[9]])
    # Both minted MEM-20261122-001...: bob's pull merges through the driver.
    git(*pull, cwd=bob)
    git("push", "-q", "origin", "HEAD:main", cwd=bob)
    git("pull", "-q", "--no-rebase", cwd=alice)

    assert files(alice) == files(bob)
    entries = export(bob)
    contents = [e["content"] for e in entries.values()]
    for who in ("alice", "bob"):
        for i in range(20):
            assert f"{who} learned thing {i} about module {who}-{i * 7}" in contents
    assert len(entries) == 10 + 40 + 4  # base, new, supersedes
    # Chains: both sides' supersedes resolve both ways.
    for entry_id in (base[0], base[1], base[5], base[6]):
        new = entries[entry_id]["superseded_by"]
        assert entries[new]["supersedes"] == entry_id
    # Effectiveness: base[3] applied once on each side.
    assert entries[base[3]]["effectiveness"]["applications"] == 2
    assert entries[base[2]]["effectiveness"]["applications"] == 1
    assert entries[base[8]]["archived"] and entries[base[9]]["archived"]
    # Every file with a collision went through the driver: the hooks had nothing left to commit.
    assert "mem: renumber" not in git("log", "--format=%s", cwd=bob)
    assert_clean(alice, bob)


def test_cherry_pick_renumbers_colliding_ids(team):
    alice, _bob, _base = team
    git("checkout", "-q", "-b", "side", cwd=alice)
    first = run_mem(alice, "add", "-c", "fact", "side branch fact about caching")
    run_mem(alice, "supersede", first, "side branch fact about caching, revised")
    git("commit", "-qam", "side facts", cwd=alice)
    git("checkout", "-q", "main", cwd=alice)
    as_another_clone(alice)
    mine = run_mem(alice, "add", "-c", "fact", "main branch fact about queues")
    git("commit", "-qam", "main fact", cwd=alice)
    assert mine == first  # the same id minted on both branches
    git("cherry-pick", "side", cwd=alice)
    entries = export(alice)
    assert entries[mine]["content"] == "main branch fact about queues"
    picked = [e for e in entries.values() if e["content"].startswith("side branch fact")]
    assert len(picked) == 2 and all(e["id"] not in (mine,) for e in picked)
    old = next(e for e in picked if "revised" not in e["content"])
    new = next(e for e in picked if "revised" in e["content"])
    assert old["superseded_by"] == new["id"] and new["supersedes"] == old["id"]
    assert mem_process("validate", cwd=alice).returncode == 0


def test_substance_conflict_is_marked_named_and_resolvable(team):
    alice, bob, base = team
    target = base[0]
    for clone, words in ((alice, "alice says the cache is redis"), (bob, "bob says the cache is memcached")):
        path = clone / MEMORY / "facts.yaml"
        text = path.read_text()
        path.write_text(text.replace("content: base memory 0 on subject 0", f"content: {words}"))
        git("commit", "-qam", f"hand edit by {clone.name}", cwd=clone)
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    done = subprocess.run(["git", "pull", "--no-rebase", "-q"], cwd=bob, capture_output=True, text=True)
    assert done.returncode != 0  # the merge stops on the conflict
    facts = (bob / MEMORY / "facts.yaml").read_text()
    assert "<<<<<<< ours" in facts and ">>>>>>> theirs" in facts
    assert "alice says" in facts and "bob says" in facts
    result = mem_process("validate", "--format", "json", cwd=bob)
    assert result.returncode == 3
    problem = json.loads(result.stdout)["problems"][0]
    assert problem["rule"] == "merge-conflict" and problem["id"] == target
    # Resolve: keep ours (bob's), drop the markers and theirs' block.
    lines = facts.split("\n")
    start, middle, end = lines.index("<<<<<<< ours"), lines.index("======="), lines.index(">>>>>>> theirs")
    resolved = "\n".join(lines[:start] + lines[start + 1 : middle] + lines[end + 1 :])
    (bob / MEMORY / "facts.yaml").write_text(resolved)
    assert mem_process("validate", cwd=bob).returncode == 0
    git("commit", "-qam", "resolve", cwd=bob)
    assert export(bob)[target]["content"] == "bob says the cache is memcached"


def test_hooks_install_configures_the_driver_and_uninstall_removes_it(team):
    alice, _, _ = team
    driver = git("config", "--get", "merge.grimoire.driver", cwd=alice).strip()
    assert driver.endswith("merge-file %O %A %B %P")
    assert "merge=grimoire" in (alice / ".gitattributes").read_text()
    assert "merge driver: installed" in run_mem(alice, "hooks", "status")
    run_mem(alice, "hooks", "uninstall")
    assert subprocess.run(["git", "config", "--get", "merge.grimoire.driver"], cwd=alice).returncode == 1


def test_merge_texts_keeps_ours_text_and_adds_effectiveness():
    from grimoire_cli.git.merge import merge_texts

    base = "# comment kept\n- id: MEM-20260101-001\n  content: x\n  effectiveness: {applications: 2, successes: 1, score: 50}\n"
    ours = base.replace("applications: 2, successes: 1, score: 50", "applications: 3, successes: 2, score: 67")
    theirs = base.replace("applications: 2, successes: 1, score: 50", "applications: 4, successes: 2, score: 50")
    result = merge_texts(base, ours, theirs, "facts.yaml")
    assert not result.conflicts
    assert result.text.startswith("# comment kept\n")
    from grimoire_cli.storage.yamlio import parse_entries

    merged = parse_entries(result.text, "x")[0][0]
    assert merged["effectiveness"]["applications"] == 5 and merged["effectiveness"]["successes"] == 3
    assert merged["effectiveness"]["score"] == 60


def test_merge_file_with_a_missing_or_unreadable_version_is_bad_usage(tmp_path):
    """Git always passes three files; a missing one is a call by hand: one
    `error:` line naming it, exit 2 (not 1, a conflict), ours untouched."""
    ours = tmp_path / "ours.yaml"
    ours.write_text("- id: MEM-20261122-001\n  content: ours\n")
    for args, label in [
        (["/nonexistent", str(ours), str(ours)], "BASE /nonexistent"),
        ([str(ours), str(ours), str(tmp_path / "gone.yaml")], "THEIRS"),
        ([str(ours), str(tmp_path), str(ours)], "OURS"),
    ]:
        done = mem_process("merge-file", *args, "facts.yaml", cwd=tmp_path)
        err = done.stderr.decode()
        assert done.returncode == 2, err
        assert (
            err.startswith(f"error: merge-file cannot read {label}") and err.count("\n") == 1 and "Traceback" not in err
        ), err
        assert ours.read_text() == "- id: MEM-20261122-001\n  content: ours\n"


def test_merge_file_of_bytes_that_are_not_utf8_falls_back_to_a_line_merge(tmp_path):
    git("init", "-q", cwd=tmp_path)
    base, ours, theirs = (tmp_path / name for name in ("base", "ours", "theirs"))
    base.write_bytes(b"one\n")
    ours.write_bytes(b"one\n")
    theirs.write_bytes(b"one\n\xff\xfe two\n")
    done = mem_process("merge-file", str(base), str(ours), str(theirs), "facts.yaml", cwd=tmp_path)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert ours.read_bytes() == b"one\n\xff\xfe two\n"


def test_ci_recipe(tmp_path):
    """The workflow's exact command, on a clean and a broken example grimoire."""
    import re
    import shlex
    import shutil

    root = Path(__file__).resolve().parent.parent
    recipe = (root / "docs" / "ci.md").read_text()
    command = re.search(r"- name: Validate the grimoire\n\s+run: (.+)\n", recipe).group(1)
    assert command == "mem validate --format github"
    argv = shlex.split(command)
    argv[0] = str(Path(sys.executable).parent / argv[0])
    outcomes = {}
    for name in ("good", "bad"):
        folder = tmp_path / name
        shutil.copytree(root / "tests" / "examples" / name, folder)
        done = subprocess.run(argv, cwd=folder, capture_output=True, text=True)
        outcomes[name] = (done.returncode, done.stdout.splitlines())
    assert outcomes["good"] == (0, [])
    code, lines = outcomes["bad"]
    assert code == 1
    expected = {
        ("grimoires/loa/memory/decisions.yaml", 6, "confidence-floor"),
        ("grimoires/loa/memory/decisions.yaml", 11, "duplicate-id"),
        ("grimoires/loa/memory/decisions.yaml", 20, "dangling-reference"),
        ("grimoires/loa/memory/facts.yaml", 2, "id-format"),
        ("grimoires/loa/memory/facts.yaml", 2, "schema"),
    }
    found = set()
    for line in lines:
        match = re.fullmatch(r"::error file=([^,]+),line=(\d+)::\[([a-z-]+)\] .+", line)
        assert match, line
        found.add((match.group(1), int(match.group(2)), match.group(3)))
    assert found == expected


def test_rebase_of_several_commits_keeps_renames_across_picks(team):
    alice, bob, _base = team
    mine = run_mem(alice, "add", "-c", "fact", "alice's fact about the scheduler")
    git("commit", "-qam", "alice fact", cwd=alice)
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    first = run_mem(bob, "add", "-c", "fact", "bob's fact about the cache")
    git("commit", "-qam", "bob fact", cwd=bob)
    assert first == mine
    second = run_mem(bob, "supersede", first, "bob's fact about the cache, corrected")
    run_mem(bob, "apply", second, "--success")
    git("commit", "-qam", "bob supersedes his fact", cwd=bob)
    git("pull", "--rebase", "-q", cwd=bob)
    entries = export(bob)
    assert entries[mine]["content"] == "alice's fact about the scheduler"
    assert "superseded_by" not in entries[mine]
    old = next(e for e in entries.values() if e["content"] == "bob's fact about the cache")
    new = next(e for e in entries.values() if e["content"] == "bob's fact about the cache, corrected")
    assert old["id"] != mine and new["id"] != mine
    assert old["superseded_by"] == new["id"] and new["supersedes"] == old["id"]
    assert new["effectiveness"]["applications"] == 1
    assert mem_process("validate", cwd=bob).returncode == 0


def test_a_rebase_that_flattens_a_merge_keeps_a_compaction_and_the_memories_it_names(team):
    """`git pull --rebase` drops a merge that renumbered a compaction's archived memories and its condensed
    entry; mem's own commit after that merge is replayed and renames them again in the archive git takes
    whole. The condensed entry and the memories it names still name each other, under the ids the rebase
    gave them (issue 42: the model test found it; without the fix validate names a dangling reference)."""
    alice, bob, _base = team
    learned = ["redis is the cache of the api", "kafka carries the billing events", "vacuum postgres nightly"]
    for text in learned:
        run_mem(bob, "add", "-c", "learning", text)
    git("add", "-A", cwd=bob)
    git("commit", "-qm", "bob's learnings", cwd=bob)
    run_mem(bob, "compact", "-c", "learning", "--keep", "1", "--no-summary")
    for round, count in ((1, 4), (2, 4)):
        for i in range(count):
            run_mem(alice, "add", "-c", "learning", f"alice round {round} note {i}: {'xyzw'[i] * (i + round)} queue")
        git("add", "-A", cwd=alice)
        git("commit", "-qm", f"alice round {round}", cwd=alice)
        git("push", "-q", "origin", "HEAD:main", cwd=alice)
        # Bob merges alice's first round (he yields his unpushed ids: the hook commits the archive's), then
        # replays his work onto her second, which she wrote without his.
        git("pull", "-q", "--no-rebase" if round == 1 else "--rebase", cwd=bob)

    assert_clean(bob)
    entries = export(bob)
    condensed = next(e for e in entries.values() if "condensed:" in e["content"])
    named = [entries[entry_id] for entry_id in condensed["related_memories"]]
    assert set(learned[:2]) <= {e["content"] for e in named}  # with the seed's two learnings
    assert all(e["superseded_by"] == condensed["id"] and e.get("archived") for e in named)
    assert len(entries) == 10 + 3 + 1 + 8


def test_a_rebase_keeps_a_reference_to_upstreams_memory_under_an_id_an_earlier_pick_gave_up(team):
    """Bob's unpushed error and alice's learning both took one id; bob merged her work, then condensed her
    learning. His `git pull --rebase` onto her next commit renumbers his error away from the id, and the
    condensed entry (in a file git takes whole from the compaction) still names her learning by it
    (issue 42: the model test found the hook renaming that reference to the error)."""
    alice, bob, _base = team
    error = run_mem(bob, "add", "-c", "error", "the deploy failed on a stale lock")
    git("add", "-A", cwd=bob)
    git("commit", "-qm", "bob's error", cwd=bob)
    learning = run_mem(alice, "add", "-c", "learning", "alice learned the queue drains at night")
    run_mem(alice, "add", "-c", "error", "alice saw the disk fill up")  # errors.yaml: the driver's, both changed it
    run_mem(alice, "add", "-c", "learning", "alice learned the cache warms slowly")
    assert learning == error
    git("add", "-A", cwd=alice)
    git("commit", "-qm", "alice's learnings", cwd=alice)
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("pull", "-q", "--no-rebase", cwd=bob)
    run_mem(bob, "compact", "-c", "learning", "--keep", "1", "--no-summary")
    run_mem(alice, "add", "-c", "decision", "alice decided to pin the queue version")
    git("add", "-A", cwd=alice)
    git("commit", "-qm", "alice's decision", cwd=alice)
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("pull", "-q", "--rebase", cwd=bob)

    assert_clean(bob)
    entries = export(bob)
    assert entries[learning]["content"] == "alice learned the queue drains at night"
    condensed = next(e for e in entries.values() if "condensed:" in e["content"])
    assert learning in condensed["related_memories"]
    assert entries[learning]["superseded_by"] == condensed["id"]
    mine = next(e for e in entries.values() if e["content"] == "the deploy failed on a stale lock")
    assert mine["id"] != learning


def two_successors(alice: Path, bob: Path, target: str) -> str:
    """Alice (at 11:00) and bob (at 12:00) each supersede `target`; bob pulls: the merge stops on `target`.
    Returns the facts file's text as the driver left it."""
    for clone, text, at in ((alice, "the cache is valkey", "11"), (bob, "the cache is memcached", "12")):
        done = mem_process("supersede", target, text, cwd=clone, env={"MEM_NOW": f"2026-11-22T{at}:00:00Z"})
        assert done.returncode == 0, done.stderr
        git("commit", "-qam", f"{clone.name} supersedes", cwd=clone)
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    assert subprocess.run(["git", "pull", "-q", "--no-rebase"], cwd=bob, capture_output=True).returncode == 1
    return (bob / MEMORY / "facts.yaml").read_text()


def id_of(text: str, content: str) -> str:
    """The id of the entry holding `content`, read off a file that conflict markers keep mem from reading."""
    found = re.search(rf"- id: (MEM-[0-9-]+)\n(?:  .*\n)*?  content: {content}\n", text)
    assert found, content
    return found.group(1)


def test_two_successors_of_a_memory_are_settled_in_the_order_written_and_the_merge_concludes(team):
    alice, bob, base = team
    target = base[0]
    conflicted = two_successors(alice, bob, target)
    valkey, memcached = id_of(conflicted, "the cache is valkey"), id_of(conflicted, "the cache is memcached")
    # Each side of the conflict names its successor as the merge numbered it (bob's yielded).
    assert f"superseded_by: {memcached}" in conflicted and f"superseded_by: {valkey}" in conflicted
    assert "[merge-conflict]" in mem_process("validate", cwd=bob).stdout.decode()

    assert json.loads(run_mem(bob, "settle", target, "--json")) == {
        "file": f"{MEMORY}/facts.yaml",
        "chain": [target, valkey, memcached],
        "staged": True,
    }
    git("commit", "-q", "--no-edit", cwd=bob)  # pre-commit's mem validate passes
    assert_clean(bob)
    entries = export(bob)
    assert entries[target]["superseded_by"] == valkey
    assert (entries[valkey]["supersedes"], entries[valkey]["superseded_by"]) == (target, memcached)
    assert entries[memcached]["supersedes"] == valkey and "superseded_by" not in entries[memcached]


def test_a_rebase_that_flattens_a_settled_merge_stops_again_and_is_settled_again(team):
    """The settlement lives in the merge commit: a `git pull --rebase` onto alice's next commit replays bob's
    revision onto hers and stops on the same memory (as git does for any merge resolved by hand). Settled
    again mid-rebase, `git rebase --continue` finishes, and the hook's renumbering after it leaves the chain
    as settled: a link the settlement wrote under the rebase's own ids is not renamed again."""
    alice, bob, base = team
    target = base[0]
    two_successors(alice, bob, target)
    run_mem(bob, "settle", target)
    git("commit", "-q", "--no-edit", cwd=bob)
    run_mem(alice, "add", "-c", "decision", "alice decides to pin the cache version")
    git("commit", "-qam", "alice decides", cwd=alice)
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    assert subprocess.run(["git", "pull", "-q", "--rebase"], cwd=bob, capture_output=True).returncode == 1
    run_mem(bob, "settle", target)
    done = subprocess.run(
        ["git", "rebase", "--continue"], cwd=bob, capture_output=True, env={**os.environ, "GIT_EDITOR": "true"}
    )
    assert done.returncode == 0, done.stderr
    assert_clean(bob)
    entries = export(bob)
    by_text = {e["content"]: e for e in entries.values()}
    valkey, memcached = by_text["the cache is valkey"], by_text["the cache is memcached"]
    assert entries[target]["superseded_by"] == valkey["id"]
    assert (valkey["superseded_by"], memcached["supersedes"]) == (memcached["id"], valkey["id"])


def test_settle_keeps_the_successor_asked_for_first_and_refuses_what_it_cannot_settle(team):
    alice, bob, base = team
    target = base[0]
    conflicted = two_successors(alice, bob, target)
    facts = bob / MEMORY / "facts.yaml"
    done = mem_process("settle", base[1], cwd=bob)
    assert done.returncode == 2 and done.stderr.decode().startswith(f"error: no merge conflict on {base[1]}")
    done = mem_process("settle", target, "--keep", base[1], cwd=bob)
    assert done.returncode == 2 and f"{base[1]} is not a successor of {target}" in done.stderr.decode()
    assert facts.read_text() == conflicted  # nothing written

    valkey, memcached = id_of(conflicted, "the cache is valkey"), id_of(conflicted, "the cache is memcached")
    run_mem(bob, "settle", target, "--keep", memcached)
    entries = export(bob)
    assert entries[target]["superseded_by"] == memcached
    assert entries[memcached]["superseded_by"] == valkey and entries[valkey]["supersedes"] == memcached
    assert mem_process("validate", cwd=bob).returncode == 0


# -- files only one side changed: git takes them whole, the hooks renumber ----


def cross_file_work(clone: Path, who: str) -> dict[str, str]:
    """Four new memories, each side in files the other never touches (but
    facts.yaml, which both do), linked across files; returns role -> content."""
    contents = {
        role: f"{who}'s {role} about component {who}-{role}" for role in ("fact", "other", "linked", "replacement")
    }
    other = "decision" if who == "alice" else "preference"
    linked = "learning" if who == "alice" else "preference"
    replacement = "error" if who == "alice" else "preference"
    fact = run_mem(clone, "add", "-c", "fact", contents["fact"])
    second = run_mem(clone, "add", "-c", other, contents["other"])
    run_mem(clone, "add", "-c", linked, "--related", second, "--related", fact, contents["linked"])
    # alice supersedes her fact from errors.yaml (a cross-file chain); bob his preference.
    run_mem(
        clone, "add", "-c", replacement, "--supersedes", fact if who == "alice" else second, contents["replacement"]
    )
    git("add", "-A", cwd=clone)
    git("commit", "-qm", f"{who}'s linked memories", cwd=clone)
    return contents


def check_links(entries: dict[str, dict], contents: dict[str, str], who: str) -> None:
    by_content = {e["content"]: e for e in entries.values()}
    fact, other, linked, replacement = (by_content[contents[r]] for r in ("fact", "other", "linked", "replacement"))
    assert linked["related_memories"] == [other["id"], fact["id"]], who
    old = fact if who == "alice" else other
    assert replacement["supersedes"] == old["id"] and old["superseded_by"] == replacement["id"], who


@pytest.mark.parametrize("pull", [["pull", "--no-rebase", "-q"], ["pull", "--rebase", "-q"]], ids=["merge", "rebase"])
def test_files_only_one_side_changed_are_renumbered_with_their_references(team, pull):
    alice, bob, _base = team
    alices = cross_file_work(alice, "alice")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    bobs = cross_file_work(bob, "bob")
    # Bob archives his own new, colliding entry: archive/preferences.yaml is his alone.
    archived = next(e["id"] for e in export(bob).values() if e["content"] == bobs["other"])
    run_mem(bob, "archive", archived, "--reason", "manual")
    done = subprocess.run(["git", *pull], cwd=bob, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "renumbered" in done.stderr
    git("push", "-q", "origin", "HEAD:main", cwd=bob)
    git("pull", "-q", "--no-rebase", cwd=alice)

    assert files(alice) == files(bob)
    entries = export(bob)
    assert len(entries) == 10 + 8
    check_links(entries, alices, "alice")
    check_links(entries, bobs, "bob")
    assert next(e for e in entries.values() if e["content"] == bobs["other"])["archived"]
    # Alice's ids were published (pushed) first: bob's yield whether he merges or rebases (issue 42).
    assert {entries[f"MEM-20261122-{n:03d}"]["content"] for n in range(11, 15)} == set(alices.values())
    log = git("log", "--format=%s", "-3", cwd=bob)
    assert log.splitlines()[0].startswith(
        "mem: renumber memory ids that collided in the " + ("merge" if pull[1] == "--no-rebase" else "rebase")
    )
    assert_clean(alice, bob)


def test_cherry_pick_of_files_main_never_touched_is_renumbered(team):
    alice, _, _ = team
    git("checkout", "-q", "-b", "side", cwd=alice)
    contents = cross_file_work(alice, "alice")
    git("checkout", "-q", "main", cwd=alice)
    as_another_clone(alice)
    for i in range(4):
        run_mem(alice, "add", "-c", "preference", f"main's own preference number {i} about tabs")
    git("commit", "-qam", "main's preferences", cwd=alice)
    done = subprocess.run(["git", "cherry-pick", "side"], cwd=alice, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    entries = export(alice)
    assert len({e["id"] for e in entries.values()}) == len(entries) == 10 + 8
    check_links(entries, contents, "alice")
    assert all(
        entries[e]["content"].startswith("main's own preference") for e in ("MEM-20261122-011", "MEM-20261122-014")
    )
    assert git("log", "--format=%s", "-1", cwd=alice).startswith(
        "mem: renumber memory ids that collided in the cherry-pick"
    )
    assert_clean(alice)


def test_concluding_a_conflicted_merge_stages_the_renumbering_into_it(team):
    alice, bob, _base = team
    for clone, words in ((alice, "alice says the cache is redis"), (bob, "bob says the cache is memcached")):
        path = clone / MEMORY / "facts.yaml"
        path.write_text(path.read_text().replace("content: base memory 0 on subject 0", f"content: {words}"))
        git("commit", "-qam", f"hand edit by {clone.name}", cwd=clone)
    contents = cross_file_work(alice, "alice")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    bobs = [run_mem(bob, "add", "-c", "preference", f"bob's preference {i} on naming") for i in range(4)]
    git("commit", "-qam", "bob's preferences", cwd=bob)
    assert subprocess.run(["git", "pull", "--no-rebase", "-q"], cwd=bob, capture_output=True).returncode != 0
    facts = (bob / MEMORY / "facts.yaml").read_text()
    lines = facts.split("\n")
    start, middle, end = lines.index("<<<<<<< ours"), lines.index("======="), lines.index(">>>>>>> theirs")
    (bob / MEMORY / "facts.yaml").write_text("\n".join(lines[:start] + lines[start + 1 : middle] + lines[end + 1 :]))
    done = subprocess.run(["git", "commit", "-qam", "resolve"], cwd=bob, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # One merge commit holds the resolution and the renumbering.
    assert len(git("rev-parse", "HEAD^@", cwd=bob).split()) == 2
    entries = export(bob)
    assert len({e["id"] for e in entries.values()}) == len(entries) == 10 + 8
    # Alice's ids were pushed first: bob's unpushed preferences yield theirs (issue 42), and keep their content.
    contents_now = {e["content"] for e in entries.values()}
    assert {f"bob's preference {i} on naming" for i in range(4)} <= contents_now
    assert [entries[i]["content"] for i in bobs] != [f"bob's preference {i} on naming" for i in range(4)]
    check_links(entries, contents, "alice")
    assert_clean(bob)


def test_merge_fixup_refuses_an_unknown_hook_and_is_quiet_outside_a_merge(team):
    alice, _, _ = team
    done = mem_process("merge-fixup", "post-checkout", cwd=alice)
    assert done.returncode == 2
    assert (
        done.stderr.decode().startswith("error: unknown hook 'post-checkout'") and done.stderr.decode().count("\n") == 1
    )
    done = mem_process("merge-fixup", "post-merge", "0", "--json", cwd=alice)  # HEAD is no merge commit
    assert done.returncode == 0 and json.loads(done.stdout)["operation"] is None


@pytest.mark.parametrize("pull", [["pull", "--no-rebase", "-q"], ["pull", "--rebase", "-q"]], ids=["merge", "rebase"])
def test_archive_on_one_side_keeps_the_other_sides_supersede_and_applications(team, pull):
    alice, bob, base = team
    replacement = run_mem(alice, "supersede", base[7], "alice's revision of base memory 7")
    run_mem(alice, "apply", base[8], "--success")
    git("commit", "-qam", "alice supersedes 7 and applies 8", cwd=alice)
    run_mem(alice, "archive", base[4], "--reason", "manual")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    run_mem(bob, "archive", base[7], base[8], "--reason", "manual")
    run_mem(bob, "apply", base[4], "--success")
    bobs = run_mem(bob, "supersede", base[4], "bob's revision of base memory 4")
    git("commit", "-qam", "bob supersedes and applies 4", cwd=bob)
    done = subprocess.run(["git", *pull], cwd=bob, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    git("push", "-q", "origin", "HEAD:main", cwd=bob)
    git("pull", "-q", "--no-rebase", cwd=alice)

    assert files(alice) == files(bob)
    entries = export(bob)
    by_content = {e["content"]: e for e in entries.values()}
    alices, bobs_entry = by_content["alice's revision of base memory 7"], by_content["bob's revision of base memory 4"]
    assert replacement == bobs  # both minted the same id: one was renumbered
    assert alices["id"] != bobs_entry["id"]
    # Archived by bob, superseded and applied by alice: all of it survives.
    assert (
        entries[base[7]]["archived"]
        and entries[base[7]]["superseded_by"] == alices["id"]
        and alices["supersedes"] == base[7]
    )
    assert entries[base[8]]["archived"] and entries[base[8]]["effectiveness"]["applications"] == 1
    # Archived by alice, superseded and applied by bob: likewise.
    assert (
        entries[base[4]]["archived"]
        and entries[base[4]]["superseded_by"] == bobs_entry["id"]
        and bobs_entry["supersedes"] == base[4]
    )
    assert entries[base[4]]["effectiveness"]["applications"] == 1
    assert_clean(alice, bob)


def test_two_scopes_merged_on_two_branches_keep_both_valid(tmp_path):
    """Ids are unique per scope: the driver renumbers a scope's collisions
    from that scope's files, not from the default scope's."""

    def seed_with(seed: Path) -> None:
        run_mem(seed, "init")
        run_mem(seed, "--scope", "coder", "init")
        run_mem(seed, "--scope", "coder", "add", "-c", "fact", "the coder scope starts with one memory")
        run_mem(seed, "add", "-c", "fact", "the default scope starts with one memory")

    alice, bob, _ = remote_and_clones(tmp_path, seed_with)
    for who, clone in (("alice", alice), ("bob", bob)):
        for i in range(3):  # the same day on both sides: the same new ids in the coder scope
            run_mem(clone, "--scope", "coder", "add", "-c", "fact", f"{who} coder note {i} about module {who}-{i * 7}")
        run_mem(clone, "add", "-c", "fact", f"{who} default-scope note")
        git("add", "-A", cwd=clone)
        git("commit", "-qm", f"{who}'s memories", cwd=clone)
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("pull", "--no-rebase", "-q", cwd=bob)
    for scope in ("coder", "loa"):
        assert mem_process("--scope", scope, "validate", cwd=bob).returncode == 0, scope
    coder = {item["content"] for item in map(json.loads, run_mem(bob, "--scope", "coder", "export").splitlines())}
    assert coder == {"the coder scope starts with one memory"} | {
        f"{who} coder note {i} about module {who}-{i * 7}" for who in ("alice", "bob") for i in range(3)
    }
    ids = [item["id"] for item in map(json.loads, run_mem(bob, "--scope", "coder", "export").splitlines())]
    assert len(ids) == len(set(ids)) == 7


def test_merge_fixup_renumbers_every_scope_in_one_commit(tmp_path):
    """Files only one side changed never reach the driver; the post-merge
    hook renumbers the side that yields in each scope (ids are per scope), in one commit."""

    def seed_with(seed: Path) -> None:
        run_mem(seed, "init")
        run_mem(seed, "--scope", "coder", "init")

    alice, bob, _ = remote_and_clones(tmp_path, seed_with)
    for clone, category in ((alice, "fact"), (bob, "decision")):  # other files per side: git takes each whole
        for scope in ("loa", "coder"):
            run_mem(
                clone,
                "--scope",
                scope,
                "add",
                "-c",
                category,
                "--confidence",
                "0.95",
                f"{clone.name} says {scope} needs {category}s",
            )
        git("add", "-A", cwd=clone)
        git("commit", "-qm", f"{clone.name}'s memories", cwd=clone)
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("pull", "--no-rebase", "-q", cwd=bob)
    for scope in ("loa", "coder"):
        assert mem_process("--scope", scope, "validate", cwd=bob).returncode == 0, scope
        ids = {
            item["content"]: item["id"]
            for item in map(json.loads, run_mem(bob, "--scope", scope, "export").splitlines())
        }
        # alice pushed first: her ids are published and stay; bob's yield (issue 42)
        assert ids == {
            f"alice says {scope} needs facts": "MEM-20261122-001",
            f"bob says {scope} needs decisions": "MEM-20261122-002",
        }
    log = git("log", "-1", "--format=%B", cwd=bob)
    assert log.startswith("mem: renumber memory ids that collided in the merge")
    assert "MEM-20261122-001 -> MEM-20261122-002" in log and "coder:MEM-20261122-001 -> coder:MEM-20261122-002" in log
    assert git("status", "--porcelain", cwd=bob) == ""


def _sabre(seed: Path) -> None:
    """A seed with SABRE's preset: a local `cache` category beside the tracked ones."""
    run_mem(seed, "init", "--preset", "sabre")


def test_a_pulled_tracked_id_moves_the_local_entry_that_had_it(tmp_path):
    """Local ids are never seen by other clones: when a pull brings a tracked
    entry with the id of one of ours, the local entry takes a fresh id (the
    session hook's check, or the next write without hooks)."""
    alice, bob, _ = remote_and_clones(tmp_path, _sabre)
    mine = run_mem(alice, "remember", "build.status", "green", "-c", "cache")
    older = run_mem(alice, "remember", "build.status", "red", "-c", "cache")  # supersedes mine: a local link
    theirs = run_mem(bob, "add", "-c", "fact", "--confidence", "0.9", "The build runs on two runners")
    assert (mine, theirs) == ("MEM-20261122-001", "MEM-20261122-001")
    git("add", "-A", cwd=bob)
    git("commit", "-qm", "bob's fact", cwd=bob)
    git("push", "-q", "origin", "HEAD:main", cwd=bob)
    done = subprocess.run(["git", "pull", "-q", "--no-rebase"], cwd=alice, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "local MEM-20261122-001 is now MEM-20261122-003" in done.stdout + done.stderr  # the post-merge hook's check
    assert_clean(alice)
    assert run_mem(alice, "recall", "build.status") == "red"
    local = {e["id"]: e for e in map(json.loads, run_mem(alice, "export").splitlines()) if e["category"] == "cache"}
    assert local["MEM-20261122-003"]["superseded_by"] == older and local[older]["supersedes"] == "MEM-20261122-003"
    assert json.loads(run_mem(alice, "show", theirs, "--json"))["content"] == "The build runs on two runners"
    # The catalog knows the new id where the entry sits: it can be edited there.
    assert run_mem(alice, "apply", "MEM-20261122-003", "--success").startswith("MEM-20261122-003: 1/1")
    assert_clean(alice)


def test_no_local_entry_is_renamed_while_a_rebase_replays_ours(tmp_path):
    """During `pull --rebase`, the checkout of theirs lacks our own tracked ids
    still to be replayed: renaming a local entry then could take one of them."""
    alice, bob, _ = remote_and_clones(tmp_path, _sabre)
    run_mem(alice, "remember", "build.status", "green", "-c", "cache")  # local 001
    ours = run_mem(alice, "add", "-c", "fact", "--confidence", "0.9", "Alice's runners are arm64")  # tracked 002
    git("add", "-A", cwd=alice)
    git("commit", "-qm", "alice's fact", cwd=alice)
    run_mem(bob, "add", "-c", "fact", "--confidence", "0.9", "Bob's runners are x86")  # tracked 001
    git("add", "-A", cwd=bob)
    git("commit", "-qm", "bob's fact", cwd=bob)
    git("push", "-q", "origin", "HEAD:main", cwd=bob)
    git("pull", "-q", "--rebase", cwd=alice)
    assert ours == "MEM-20261122-002"
    result = json.loads(run_mem(alice, "check", "--json"))
    assert result["renamed"] == {"MEM-20261122-001": "MEM-20261122-003"}  # past ours, replayed by now
    assert_clean(alice)
    assert run_mem(alice, "recall", "build.status") == "green"


def test_without_hooks_the_next_write_moves_the_local_entry(tmp_path):
    alice, bob, _ = remote_and_clones(tmp_path, _sabre)
    run_mem(alice, "hooks", "uninstall")
    run_mem(alice, "remember", "build.status", "green", "-c", "cache")
    run_mem(bob, "add", "-c", "fact", "--confidence", "0.9", "The build runs on two runners")
    git("add", "-A", cwd=bob)
    git("commit", "-qm", "bob's fact", cwd=bob)
    git("push", "-q", "origin", "HEAD:main", cwd=bob)
    git("pull", "-q", "--no-rebase", cwd=alice)
    assert mem_process("validate", cwd=alice).returncode == 1  # the clash, until something settles it
    new = run_mem(alice, "add", "-c", "fact", "--confidence", "0.9", "The cache lives for an hour")
    assert new == "MEM-20261122-003"  # after the local entry took 002
    assert mem_process("validate", cwd=alice).returncode == 0
    assert run_mem(alice, "recall", "build.status") == "green"


def test_an_id_that_arrived_by_a_pull_and_was_deleted_by_hand_is_not_issued_again(tmp_path):
    """Found by the model test's merge rule (issue 34): a teammate's entry arrives by a pull, a person deletes it from
    the file, and this clone's next add took its id: the id named two different memories across the team. The
    session start after the pull (mem's post-merge hook: mem check) counts the ids that arrived as issued."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    git("init", "-q", cwd=ours)
    run_mem(ours, "init")
    git("add", "-A", cwd=ours)
    git("commit", "-qm", "init", cwd=ours)
    git("clone", "-q", str(ours), str(theirs), cwd=tmp_path)
    run_mem(ours, "hooks", "install")
    their_id = run_mem(theirs, "add", "-c", "fact", "the teammate's fact about kafka")
    git("add", "-A", cwd=theirs)
    git("commit", "-qm", "theirs", cwd=theirs)
    git("pull", "-q", str(theirs), "HEAD", cwd=ours)
    facts = ours / MEMORY / "facts.yaml"
    text = facts.read_text()
    facts.write_text(text[: text.index("- id: " + their_id)])
    assert run_mem(ours, "add", "-c", "fact", "our own fact about redis") != their_id
