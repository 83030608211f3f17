"""The merge driver and the hooks' renumbering, in process and fast
(git/merge.py, git/renumber.py): three-way merges of real base, ours and
theirs files, and real git merges whose driver and hook are called as git
would call them. Written against the merged files, not the functions that
make them: the tests `make mutation` runs for the merge group
(tests/test_merge.py runs the same through `mem` processes and takes
minutes)."""

from __future__ import annotations

import json
import os
import subprocess
from contextlib import chdir
from pathlib import Path
from typing import cast

import pytest
from conftest import git

from grimoire_cli import Grimoire
from grimoire_cli.core.errors import BadInput
from grimoire_cli.git.merge import ids_in, mapping_between, memory_of, merge_file
from grimoire_cli.git.trees import state_file
from grimoire_cli.storage import issued
from grimoire_cli.storage.yamlio import parse_entries

MEMORY = Path("grimoires/loa/memory")
FACTS = (MEMORY / "facts.yaml").as_posix()
DECISIONS = (MEMORY / "decisions.yaml").as_posix()
SOURCE = '  source:\n    session_id: s\n    timestamp: "2026-11-22T10:00:00Z"\n'
HEAD = "# facts\n"


def entry(number: str, text: str, after: str = "", category: str = "fact") -> str:
    """An entry as the driver writes it: `after` holds the fields past its source."""
    return (
        f"- id: MEM-20261122-{number}\n  category: {category}\n  summary: {text}\n  content: {text}\n"
        f"  confidence: 0.9\n  ttl: permanent\n{SOURCE}{after}"
    )


def driven(folder: Path, base: str, ours: str, theirs: str, where: str = FACTS, config: str | None = None):
    """The driver on three versions, as git runs it (`config`: as `mem --config FILE` gives it): the result
    replaces ours."""
    paths = []
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        path = folder / f"{Path(where).name}.{name}"
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        paths.append(str(path))
    result = merge_file(*paths, where, config)
    return result, Path(paths[1]).read_text(encoding="utf-8", errors="replace")


def items(text: str) -> list[dict]:
    return parse_entries(text, "merged")[0]


def effectiveness(text: str, entry_id: str = "MEM-20261122-001") -> dict | None:
    return next(item for item in items(text) if item["id"] == entry_id).get("effectiveness")


REDIS = entry("001", "the cache is redis")
APPLIED = "  effectiveness: {{applications: {0}, successes: {1}, score: {2}, last_applied: '{3}'}}\n"


# -- three versions of one file -------------------------------------------------------


def test_a_new_id_both_sides_minted_is_renumbered_on_theirs_with_its_references(repo, tmp_path):
    ours = HEAD + REDIS + entry("002", "ours adds a fact")
    theirs = (
        HEAD
        + entry("001", "the cache is redis", "  superseded_by: MEM-20261122-003\n")
        + entry("002", "theirs adds a fact")
        + entry(
            "003",
            "the cache is valkey",
            "  supersedes: MEM-20261122-001\n  related_memories: [MEM-20261122-002, MEM-20261122-001]\n",
        )
    )
    result, merged = driven(tmp_path, HEAD + REDIS, ours, theirs)
    assert (result.conflicts, result.renumbered, result.side) == (
        [],
        {"MEM-20261122-002": "MEM-20261122-004"},
        "theirs",
    )
    assert merged == (
        HEAD
        + entry("001", "the cache is redis", "  superseded_by: MEM-20261122-003\n")
        + entry("002", "ours adds a fact")
        + entry("004", "theirs adds a fact")
        + entry(
            "003",
            "the cache is valkey",
            "  supersedes: MEM-20261122-001\n  related_memories: [MEM-20261122-004, MEM-20261122-001]\n",
        )
    )


def test_a_new_number_passes_the_ids_this_clone_issued_before(repo, tmp_path):
    """This clone issued up to 009 that day (its entries gone since, as after a `git reset`): theirs' 002 takes
    010, not 003, which someone may already cite; another day's marks change nothing."""
    issued.record(repo / MEMORY / "local", ["MEM-20261122-009", "MEM-20261121-030"])
    ours = HEAD + REDIS + entry("002", "ours adds a fact")
    theirs = HEAD + REDIS + entry("002", "theirs adds a fact")
    result, merged = driven(tmp_path, HEAD + REDIS, ours, theirs)
    assert result.renumbered == {"MEM-20261122-002": "MEM-20261122-010"}
    assert merged == ours + entry("010", "theirs adds a fact")


def test_both_sides_applications_add_up_from_the_base(repo, tmp_path):
    base = HEAD + entry("001", "the cache is redis", APPLIED.format(1, 1, 100, "2026-11-20T10:00:00Z"))
    ours = HEAD + entry("001", "the cache is redis", APPLIED.format(3, 3, 100, "2026-11-21T10:00:00Z"))
    theirs = HEAD + entry("001", "the cache is redis", APPLIED.format(2, 1, 50, "2026-11-22T10:00:00Z"))
    result, merged = driven(tmp_path, base, ours, theirs)
    assert result.conflicts == [] and result.renumbered == {}
    assert effectiveness(merged) == {
        "applications": 4,
        "successes": 3,
        "score": 75,
        "last_applied": "2026-11-22T10:00:00Z",
    }
    # One apply both sides hold (a cherry-pick): counted once.
    result, merged = driven(tmp_path, base, ours, ours)
    assert merged == ours
    # Ours' last_applied is kept when it is the later one.
    later = HEAD + entry("001", "the cache is redis", APPLIED.format(2, 2, 100, "2026-11-23T10:00:00Z"))
    assert effectiveness(driven(tmp_path, base, later, theirs)[1]) == {
        "applications": 3,
        "successes": 2,
        "score": 67,
        "last_applied": "2026-11-23T10:00:00Z",
    }
    # A count that is no whole number counts none; a side without last_applied leaves the other's.
    odd = HEAD + entry("001", "the cache is redis", "  effectiveness: {applications: true, successes: x}\n")
    assert effectiveness(driven(tmp_path, HEAD + REDIS, odd, theirs)[1]) == {
        "applications": 2,
        "successes": 1,
        "score": 50,
        "last_applied": "2026-11-22T10:00:00Z",
    }
    none_yet = HEAD + entry("001", "the cache is redis", "  effectiveness: {applications: 1, successes: 0, score: 0}\n")
    assert effectiveness(driven(tmp_path, HEAD + REDIS, none_yet, HEAD + REDIS)[1]) == {
        "applications": 1,
        "successes": 0,
        "score": 0,
    }
    assert effectiveness(driven(tmp_path, HEAD + REDIS, none_yet, theirs)[1]) == {
        "applications": 3,
        "successes": 1,
        "score": 33,
        "last_applied": "2026-11-22T10:00:00Z",
    }


def test_a_supersede_on_one_side_and_an_apply_on_the_other_both_stay(repo, tmp_path):
    superseded = entry("001", "the cache is redis", "  superseded_by: MEM-20261122-002\n")
    valkey = entry("002", "the cache is valkey", "  supersedes: MEM-20261122-001\n")
    applied = entry("001", "the cache is redis", APPLIED.format(1, 1, 100, "2026-11-22T10:00:00Z"))
    for ours, theirs in ((HEAD + superseded + valkey, HEAD + applied), (HEAD + applied, HEAD + superseded + valkey)):
        result, merged = driven(tmp_path, HEAD + REDIS, ours, theirs)
        assert result.conflicts == []
        assert [(item["id"], item.get("superseded_by"), item.get("supersedes")) for item in items(merged)] == [
            ("MEM-20261122-001", "MEM-20261122-002", None),
            ("MEM-20261122-002", None, "MEM-20261122-001"),
        ]
        assert effectiveness(merged)["applications"] == 1


def test_an_entry_one_side_archived_stays_out_whatever_the_other_did(repo, tmp_path):
    applied = HEAD + entry("001", "the cache is redis", APPLIED.format(1, 1, 1.0, "2026-11-22T10:00:00Z"))
    kept = entry("002", "the queue is rabbitmq")
    for ours, theirs in ((HEAD + kept, applied + kept), (applied + kept, HEAD + kept)):
        result, merged = driven(tmp_path, HEAD + REDIS + kept, ours, theirs)
        assert result.conflicts == [] and merged == HEAD + kept


def test_a_change_of_substance_on_both_sides_is_a_conflict_marked_in_the_file(repo, tmp_path):
    ours = HEAD + REDIS.replace("content: the cache is redis", "content: the cache is memcached") + entry("002", "x")
    theirs = HEAD + REDIS.replace("confidence: 0.9", "confidence: 0.8")
    theirs_content = HEAD + REDIS.replace("content: the cache is redis", "content: the cache is valkey")
    result, merged = driven(tmp_path, HEAD + REDIS, ours, theirs)
    assert result.conflicts == []  # different fields: both changes kept
    assert "content: the cache is memcached" in merged and "confidence: 0.8" in merged
    result, merged = driven(tmp_path, HEAD + REDIS, ours, theirs_content)
    assert result.conflicts == ["MEM-20261122-001"]
    ours_block = REDIS.replace("content: the cache is redis", "content: the cache is memcached").rstrip("\n")
    assert merged == (
        HEAD
        + "<<<<<<< ours\n"
        + ours_block
        + "\n=======\n"
        + theirs_content[len(HEAD) :]
        + ">>>>>>> theirs\n"
        + entry("002", "x")
    )
    # Two different successors are a conflict too.
    first = HEAD + entry("001", "the cache is redis", "  superseded_by: MEM-20261122-002\n")
    second = HEAD + entry("001", "the cache is redis", "  superseded_by: MEM-20261122-003\n")
    assert driven(tmp_path, HEAD + REDIS, first, second)[0].conflicts == ["MEM-20261122-001"]


def test_the_same_memory_both_sides_added_under_one_id_is_kept_once(repo, tmp_path):
    both = HEAD + REDIS + entry("002", "picked onto both")
    result, merged = driven(tmp_path, HEAD + REDIS, both, both)
    assert (result.renumbered, merged) == ({}, both)
    # Its base unknown (an empty file): kept once, no renumbering.
    result, merged = driven(tmp_path, "", both, both)
    assert (result.renumbered, merged) == ({}, both)


def test_a_side_that_is_no_grimoire_list_is_merged_by_lines(repo, tmp_path):
    result, merged = driven(tmp_path, HEAD + REDIS, HEAD + REDIS, "just: a mapping\n")
    assert merged == "just: a mapping\n" and result.conflicts == [] and result.renumbered == {}
    result, merged = driven(tmp_path, HEAD + REDIS, HEAD + REDIS + entry("002", "y"), "just: a mapping\n")
    assert result.conflicts == [f"{FACTS} (theirs):1: a grimoire file must be a YAML list of entries, found a dict"]
    assert merged.startswith("<<<<<<< ours\n" + HEAD) and merged.endswith("=======\njust: a mapping\n>>>>>>> theirs\n")
    result, merged = driven(tmp_path, HEAD + REDIS, HEAD + REDIS + entry("002", "y"), b"\xff\xfe not utf-8\n")
    assert result.conflicts == [f"{FACTS}: not UTF-8 text"] and merged.startswith("<<<<<<< ours\n" + HEAD)
    result, merged = driven(tmp_path, HEAD + REDIS, HEAD + REDIS, b"\xff\xfe not utf-8\n")
    assert result.conflicts == [] and merged == "\ufffd\ufffd not utf-8\n"
    assert result.text == merged  # what the driver returns is what it wrote


def test_a_version_that_cannot_be_read_is_bad_input_and_nothing_is_written(repo, tmp_path):
    ours = tmp_path / "ours"
    ours.write_text(HEAD + REDIS)
    with pytest.raises(BadInput, match=r"merge-file cannot read THEIRS .*missing: No such file or directory"):
        merge_file(str(ours), str(ours), str(tmp_path / "missing"), FACTS)
    assert ours.read_text() == HEAD + REDIS and not list(tmp_path.glob("*.mem-merge"))


# -- real git merges: the driver and the hook called as git calls them ---------------------


def commit_all(repo: Path, message: str) -> None:
    git("add", "-A", cwd=repo)
    git("commit", "-qm", message, cwd=repo)


def write(repo: Path, name: str, text: str) -> None:
    (repo / MEMORY / name).write_text(text)


def stages_of(repo: Path, path: str) -> list[str]:
    """The base, ours and theirs versions of a file a merge stopped on (git's index stages 1, 2, 3)."""
    return [
        subprocess.run(["git", "show", f":{n}:{path}"], cwd=repo, capture_output=True, text=True).stdout
        for n in (1, 2, 3)
    ]


def run_driver(repo: Path, tmp_path: Path, path: str) -> object:
    """What git does with a file both sides changed: the driver merges its three stages into the work tree
    (run here from a folder below the top, where git's paths are not the working directory's). In a merge,
    git names theirs to the driver in a GITHEAD_<sha> variable; a pick or a rebase's step names none."""
    merging = repo / ".git" / "MERGE_HEAD"
    named = f"GITHEAD_{merging.read_text().split()[0]}" if merging.exists() else None
    with chdir(repo / "grimoires"):
        if named:
            os.environ[named] = "theirs"
        try:
            result, merged = driven(tmp_path, *stages_of(repo, path), where=path)
        finally:
            if named:
                del os.environ[named]
    (repo / path).write_text(merged)
    git("add", path, cwd=repo)
    return result


def pushed_start(repo: Path, tmp_path: Path) -> None:
    """The repository's first grimoire commit (the redis fact), pushed to a bare `origin` as main."""
    write(repo, "facts.yaml", HEAD + REDIS)
    commit_all(repo, "start")
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    git("remote", "add", "origin", str(remote), cwd=repo)
    git("push", "-q", "origin", "HEAD:main", cwd=repo)


def tracked_start(repo: Path, tmp_path: Path) -> None:
    """`pushed_start`, with origin's default branch known here (origin/HEAD), as in a clone."""
    pushed_start(repo, tmp_path)
    git("fetch", "-q", "origin", cwd=repo)
    git("remote", "set-head", "origin", "main", cwd=repo)


def main_pushed_then_feature(repo: Path) -> str:
    """On the start: main's own -002 fact, committed and pushed; then a branch `feature` from the start,
    checked out. Returns main's commit."""
    write(repo, "facts.yaml", HEAD + REDIS + entry("002", "the fact of main"))
    commit_all(repo, "the fact of main")
    git("push", "-q", "origin", "HEAD:main", cwd=repo)
    pushed = git("rev-parse", "HEAD", cwd=repo).strip()
    git("checkout", "-q", "-b", "feature", "HEAD~1", cwd=repo)
    return pushed


def fixup(repo: Path, hook: str, *args: str, stdin: str = ""):
    """`mem merge-fixup` as a hook runs it, from outside the repository: it works on the one it is given."""
    with chdir(repo.parent):
        return Grimoire.open(repo).merge_fixup(hook, args, stdin)


def test_the_side_not_yet_pushed_yields_its_ids_and_the_hook_renames_its_references(repo, tmp_path):
    tracked_start(repo, tmp_path)
    main_pushed_then_feature(repo)
    write(repo, "facts.yaml", HEAD + REDIS + entry("002", "the fact of the feature"))
    decision = entry("003", "use the feature fact", "  related_memories: [MEM-20261122-002]\n", "decision")
    write(repo, "decisions.yaml", decision)
    commit_all(repo, "the fact of the feature and decision")
    assert subprocess.run(["git", "merge", "-q", "origin/main"], cwd=repo, capture_output=True).returncode == 1

    result = run_driver(repo, tmp_path, FACTS)
    assert (result.conflicts, result.renumbered, result.side) == ([], {"MEM-20261122-002": "MEM-20261122-004"}, "ours")
    assert (repo / FACTS).read_text() == HEAD + REDIS + entry("004", "the fact of the feature") + entry(
        "002", "the fact of main"
    )
    fixed = fixup(repo, "pre-commit")
    assert (fixed.operation, fixed.staged, fixed.side, fixed.files) == (
        "merge",
        True,
        "ours",
        [(MEMORY / "decisions.yaml").as_posix()],
    )
    assert (repo / MEMORY / "decisions.yaml").read_text() == decision.replace(
        "[MEM-20261122-002]", "[MEM-20261122-004]"
    )
    git("commit", "-qm", "merge", cwd=repo)
    assert Grimoire.open(repo).validate().ok


def test_ids_git_took_whole_files_of_are_renumbered_after_the_merge_with_their_references(repo, tmp_path):
    write(repo, "facts.yaml", HEAD + REDIS)
    commit_all(repo, "start")
    git("checkout", "-q", "-b", "side", cwd=repo)
    write(
        repo,
        "decisions.yaml",
        entry("002", "the decision of the side", "  related_memories: [MEM-20261122-002]\n", "decision"),
    )
    write(
        repo,
        "learnings.yaml",
        entry(
            "003", "the learning of the side", "  related_memories: [MEM-20261122-002, MEM-20261122-001]\n", "learning"
        ),
    )
    commit_all(repo, "side")
    git("checkout", "-q", "main", cwd=repo)
    write(repo, "preferences.yaml", entry("002", "the preference of main", "", "preference"))
    commit_all(repo, "main")
    git("merge", "-q", "--no-edit", "side", cwd=repo)

    fixed = fixup(repo, "post-merge", "0")
    assert (fixed.operation, fixed.renumbered, fixed.side, fixed.staged) == (
        "merge",
        {"MEM-20261122-002": "MEM-20261122-004"},
        "theirs",
        False,
    )
    assert fixed.to_dict() == {
        "operation": "merge",
        "renumbered": {"MEM-20261122-002": "MEM-20261122-004"},
        "side": "theirs",
        "lifecycle": [],
        "files": [(MEMORY / name).as_posix() for name in ("decisions.yaml", "learnings.yaml")],
        "commit": git("rev-parse", "HEAD", cwd=repo).strip(),
        "staged": False,
        "notes": [],
    }
    assert git("log", "-1", "--format=%B", cwd=repo) == (
        "mem: renumber memory ids that collided in the merge\n\nMEM-20261122-002 -> MEM-20261122-004\n\n"
    )
    assert (repo / MEMORY / "decisions.yaml").read_text() == entry(
        "004", "the decision of the side", "  related_memories: [MEM-20261122-004]\n", "decision"
    )
    assert "related_memories: [MEM-20261122-004, MEM-20261122-001]" in (repo / MEMORY / "learnings.yaml").read_text()
    assert (repo / MEMORY / "preferences.yaml").read_text() == entry("002", "the preference of main", "", "preference")
    assert git("status", "--porcelain", cwd=repo) == "" and Grimoire.open(repo).validate().ok
    # Nothing to fix after a commit that is no merge.
    assert fixup(repo, "post-merge", "0").operation is None


def side_and_main(repo: Path, side: dict[str, str], main: dict[str, str]) -> None:
    """Base holds one fact; branch `side` writes `side`'s files, then main writes `main`'s (each committed)."""
    write(repo, "facts.yaml", HEAD + REDIS)
    commit_all(repo, "start")
    git("checkout", "-q", "-b", "side", cwd=repo)
    for name, text in side.items():
        write(repo, name, text)
    commit_all(repo, "side")
    git("checkout", "-q", "main", cwd=repo)
    for name, text in main.items():
        write(repo, name, text)
    commit_all(repo, "main")


def test_a_memory_ours_renumbered_since_the_base_takes_theirs_change_under_its_new_id(repo, tmp_path):
    """Base holds the valkey fact as 003. Ours pulled since, and its pull renumbered valkey 004 (upstream's 003,
    published first, is another memory); theirs, a branch taken before, applied valkey as 003. Theirs' apply
    goes to ours' 004, and upstream's 003 stays as it is."""
    git("config", "merge.grimoire.driver", "false", cwd=repo)  # the driver, run in process below, not git's lines
    valkey = entry("003", "the cache is valkey")
    write(repo, "facts.yaml", HEAD + REDIS + valkey)
    commit_all(repo, "start")
    git("checkout", "-q", "-b", "side", cwd=repo)
    applied = valkey + APPLIED.format(1, 1, 100, "2026-11-22T12:00:00Z")
    write(repo, "facts.yaml", HEAD + REDIS + applied)
    commit_all(repo, "side applies valkey")
    git("checkout", "-q", "main", cwd=repo)
    upstream = entry("003", "upstream's fact")
    write(repo, "facts.yaml", HEAD + REDIS + upstream + valkey.replace("-003", "-004"))
    commit_all(repo, "main pulled")
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    result = run_driver(repo, tmp_path, FACTS)
    assert (result.conflicts, result.renumbered) == ([], {})
    merged = [("001", "the cache is redis", None), ("003", "upstream's fact", None), ("004", "the cache is valkey", 1)]
    assert [
        (e["id"][-3:], e["content"], e.get("effectiveness", {}).get("applications"))
        for e in items((repo / FACTS).read_text())
    ] == merged
    # The same versions merged by hand (`mem merge-file`, no merge under way), with a line no commit holds: the
    # file alone tells.
    git("merge", "--abort", cwd=repo)
    by_hand = "# merged by hand\n"
    versions = [
        by_hand + REDIS + valkey,
        by_hand + REDIS + upstream + valkey.replace("-003", "-004"),
        by_hand + REDIS + applied,
    ]
    result, text = driven(tmp_path, *versions)
    assert (result.conflicts, result.renumbered) == ([], {})
    assert [(e["id"][-3:], e["content"], e.get("effectiveness", {}).get("applications")) for e in items(text)] == merged


def test_the_merge_mapping_is_worked_out_once_and_read_by_the_driver_run_of_every_other_file(repo, tmp_path):
    """Git runs the driver once per file both sides changed; the first run keeps the whole merge's mapping
    in the git dir (git/mapping_cache.py) and the next reads it: a kept mapping is what the next file gets,
    and one kept for other commits is not."""
    side_and_main(
        repo,
        {"facts.yaml": HEAD + REDIS + entry("002", "the side fact"), "decisions.yaml": DECISION},
        {"facts.yaml": HEAD + REDIS + entry("002", "the main fact"), "decisions.yaml": entry("003", "main decides")},
    )
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    first = run_driver(repo, tmp_path, FACTS)
    assert first.renumbered == {"MEM-20261122-002": "MEM-20261122-004"}
    kept_path = repo / ".git" / "grimoire-merge-mapping.json"
    kept = json.loads(kept_path.read_text())
    assert kept["fields"]["mapping"] == {"MEM-20261122-002": "MEM-20261122-004", "MEM-20261122-003": "MEM-20261122-005"}
    kept["fields"]["mapping"]["MEM-20261122-003"] = "MEM-20261122-009"  # what only a read of it can give
    kept_path.write_text(json.dumps(kept))
    assert run_driver(repo, tmp_path, DECISIONS).renumbered == {"MEM-20261122-003": "MEM-20261122-009"}
    git("merge", "--abort", cwd=repo)

    kept["key"] = "another merge"
    kept_path.write_text(json.dumps(kept))
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    assert run_driver(repo, tmp_path, DECISIONS).renumbered == {"MEM-20261122-003": "MEM-20261122-005"}


def test_a_kept_mapping_serves_only_the_same_rebase_tip_and_earlier_renames(repo, tmp_path):
    """In a rebase, the mapping also passes the ids of the branch's later commits (its tip) and the new ids of
    the renames earlier picks made (kept in git's state): the same three commits with another tip, or other
    renames, work it out again rather than read the one kept."""
    side_and_main(
        repo,
        {"facts.yaml": HEAD + REDIS + entry("002", "the side fact")},
        {"facts.yaml": HEAD + REDIS + entry("002", "the main fact")},
    )
    side = git("rev-parse", "side", cwd=repo).strip()
    git("checkout", "-q", "-b", "later", "side", cwd=repo)
    write(repo, "facts.yaml", HEAD + REDIS + entry("002", "the side fact") + entry("003", "a later side fact"))
    commit_all(repo, "a later commit of the branch")
    later = git("rev-parse", "later", cwd=repo).strip()
    git("checkout", "-q", "main", cwd=repo)
    state = repo / ".git" / "rebase-merge"  # as git keeps it while it replays side's commit onto main
    state.mkdir()
    (state / "done").write_text(f"pick {side} side\n")
    kept = cast(Path, state_file(repo / ".git", repo / MEMORY))
    texts = [git("show", f"{rev}:{FACTS}", cwd=repo) for rev in ("side^", "main", "side")]

    def renumbered(tip: str, renames: list) -> dict:
        (state / "orig-head").write_text(tip + "\n")
        kept.write_text(json.dumps(renames))  # what earlier picks renamed (a run adds its own)
        with chdir(repo / "grimoires"):
            return driven(tmp_path, *texts)[0].renumbered

    assert renumbered(side, []) == {"MEM-20261122-002": "MEM-20261122-003"}
    assert renumbered(later, []) == {"MEM-20261122-002": "MEM-20261122-004"}  # the branch's tip holds 003
    assert renumbered(side, []) == {"MEM-20261122-002": "MEM-20261122-003"}
    earlier = [["MEM-20261122-007", "another memory", "MEM-20261122-003"]]  # an earlier pick's 007 is 003 now
    assert renumbered(side, earlier) == {"MEM-20261122-002": "MEM-20261122-004"}


def test_an_earlier_picks_rename_holds_where_its_memory_is_under_the_old_id(repo):
    """mapping_between on one file's three versions (no commits known), with renames earlier picks kept:
    a rename holds where theirs (else base) holds the memory it was made for under the old id, or where
    nothing holds the old id and it was renamed to one id only; theirs' own entry under the id a rename took
    yields."""
    mem_id = "MEM-20261122-{}".format
    five = {name: entry("005", name) for name in ("base's five", "theirs' five", "another five")}
    key = {name: memory_of(ids_in(block)[mem_id("005")]) for name, block in five.items()}  # as a pick kept it
    base = HEAD + REDIS + five["base's five"]

    def mapping(theirs: str, records: list, ours: str = base, base: str = base) -> dict:
        return mapping_between(repo, MEMORY.as_posix(), None, records, files=(base, ours, theirs))

    theirs = HEAD + REDIS + five["theirs' five"]
    assert mapping(theirs, [(mem_id("005"), key["theirs' five"], mem_id("009"))]) == {mem_id("005"): mem_id("009")}
    assert mapping(theirs, [(mem_id("005"), key["base's five"], mem_id("009"))]) == {}
    # Theirs holds no 005: base's does. A rename made for another memory does not hold.
    assert mapping(HEAD + REDIS, [(mem_id("005"), key["another five"], mem_id("009"))]) == {}
    assert mapping(HEAD + REDIS, [(mem_id("005"), key["base's five"], mem_id("009"))]) == {mem_id("005"): mem_id("009")}
    # No side holds 005 (a reference only): a rename to one id holds, whatever its memory; one made twice does not.
    bare = HEAD + REDIS
    once = [(mem_id("005"), key["another five"], mem_id("009"))]
    assert mapping(bare, once, bare, bare) == {mem_id("005"): mem_id("009")}
    twice = [*once, (mem_id("005"), key["theirs' five"], mem_id("010"))]
    assert mapping(bare, twice, bare, bare) == {}
    # Theirs' five was renamed 006, which theirs holds for a memory of its own: that one takes 007.
    own = theirs + entry("006", "theirs' own six")
    renamed = [(mem_id("005"), key["theirs' five"], mem_id("006"))]
    assert mapping(own, renamed) == {mem_id("005"): mem_id("006"), mem_id("006"): mem_id("007")}
    # New since a base without it, and renamed 009, theirs' five meets ours' own new 009: it takes a fresh number.
    ours = HEAD + REDIS + entry("009", "ours' own nine")
    assert mapping(theirs, [(mem_id("005"), key["theirs' five"], mem_id("009"))], ours, HEAD + REDIS) == {
        mem_id("005"): mem_id("009"),
        mem_id("009"): mem_id("010"),
    }


def test_two_pushed_feature_branches_rank_alike_and_theirs_yields(repo, tmp_path):
    """Feature x and feature y, each pushed to origin (neither is its default branch), both add 002. Each brings
    pushed commits past the base, so neither ranks above the other: theirs' 002 is renumbered, as in any merge."""
    tracked_start(repo, tmp_path)
    git("config", "merge.grimoire.driver", "false", cwd=repo)  # the driver, run in process below
    for name in ("x", "y"):
        git("checkout", "-q", "-b", name, "main", cwd=repo)
        write(repo, "facts.yaml", HEAD + REDIS + entry("002", f"the {name} fact"))
        commit_all(repo, f"feature {name}")
        git("push", "-q", "origin", name, cwd=repo)
    git("fetch", "-q", "origin", cwd=repo)
    git("checkout", "-q", "x", cwd=repo)
    assert subprocess.run(["git", "merge", "-q", "y"], cwd=repo, capture_output=True).returncode == 1
    result = run_driver(repo, tmp_path, FACTS)
    assert (result.side, result.renumbered) == ("theirs", {"MEM-20261122-002": "MEM-20261122-003"})


DECISION = entry("003", "use the side fact", "  related_memories: [MEM-20261122-002]\n", "decision")


def test_a_conflicted_cherry_pick_renumbers_the_picked_ids_and_the_hook_their_references(repo, tmp_path):
    side_and_main(
        repo,
        {"facts.yaml": HEAD + REDIS + entry("002", "the side fact"), "decisions.yaml": DECISION},
        {"facts.yaml": HEAD + REDIS + entry("002", "the fact of main")},
    )
    assert subprocess.run(["git", "cherry-pick", "side"], cwd=repo, capture_output=True).returncode == 1
    result = run_driver(repo, tmp_path, FACTS)
    assert (result.conflicts, result.renumbered, result.side) == (
        [],
        {"MEM-20261122-002": "MEM-20261122-004"},
        "theirs",
    )
    assert (repo / FACTS).read_text() == HEAD + REDIS + entry("002", "the fact of main") + entry("004", "the side fact")
    fixed = fixup(repo, "pre-commit")
    assert (fixed.operation, fixed.staged, fixed.files) == (
        "cherry-pick",
        True,
        [(MEMORY / "decisions.yaml").as_posix()],
    )
    assert (repo / MEMORY / "decisions.yaml").read_text() == DECISION.replace(
        "[MEM-20261122-002]", "[MEM-20261122-004]"
    )
    git("-c", "core.editor=true", "cherry-pick", "--continue", cwd=repo)
    assert Grimoire.open(repo).validate().ok


def test_a_rebase_renumbers_the_replayed_ids_with_their_references_after_it(repo):
    side_and_main(
        repo,
        {
            "decisions.yaml": entry("002", "the side decision", "  related_memories: [MEM-20261122-001]\n", "decision"),
            "learnings.yaml": entry("003", "the side learning", "  supersedes: MEM-20261122-002\n", "learning"),
        },
        {"preferences.yaml": entry("002", "the preference of main", "", "preference")},
    )
    git("checkout", "-q", "side", cwd=repo)
    old = git("rev-parse", "HEAD", cwd=repo).strip()
    git("rebase", "-q", "main", cwd=repo)
    new = git("rev-parse", "HEAD", cwd=repo).strip()
    assert fixup(repo, "post-rewrite", "amend", stdin=f"{old} {new}\n").operation is None
    fixed = fixup(repo, "post-rewrite", "rebase", stdin=f"{old} {new}\n")
    assert (fixed.operation, fixed.renumbered, fixed.staged) == (
        "rebase",
        {"MEM-20261122-002": "MEM-20261122-004"},
        False,
    )
    assert (repo / MEMORY / "decisions.yaml").read_text() == entry(
        "004", "the side decision", "  related_memories: [MEM-20261122-001]\n", "decision"
    )
    assert "supersedes: MEM-20261122-004" in (repo / MEMORY / "learnings.yaml").read_text()
    assert git("log", "-1", "--format=%s", cwd=repo) == "mem: renumber memory ids that collided in the rebase\n"
    assert git("status", "--porcelain", cwd=repo) == ""


ARCHIVED = '  archived: true\n  archived_at: "2026-11-22T11:00:00Z"\n  archive_reason: manual\n'


def test_an_entry_archived_on_one_side_keeps_the_supersede_and_applies_of_the_other(repo, tmp_path):
    superseded = entry(
        "001",
        "the cache is redis",
        "  superseded_by: MEM-20261122-003\n" + APPLIED.format(2, 1, 50, "2026-11-22T10:00:00Z"),
    )
    valkey = entry("003", "the cache is valkey", "  supersedes: MEM-20261122-001\n")
    side_and_main(
        repo,
        {"facts.yaml": HEAD + superseded + valkey},
        {"facts.yaml": HEAD, "archive/facts.yaml": REDIS + ARCHIVED},
    )
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    result = run_driver(repo, tmp_path, FACTS)
    assert result.conflicts == [] and (repo / FACTS).read_text() == HEAD + valkey
    fixed = fixup(repo, "pre-commit")
    assert (fixed.operation, fixed.lifecycle, fixed.renumbered, fixed.staged) == (
        "merge",
        ["MEM-20261122-001"],
        {},
        True,
    )
    archived = items((repo / MEMORY / "archive/facts.yaml").read_text())
    assert [(e["id"], e["archived"], e["superseded_by"], e["effectiveness"]) for e in archived] == [
        (
            "MEM-20261122-001",
            True,
            "MEM-20261122-003",
            {"applications": 2, "successes": 1, "score": 50, "last_applied": "2026-11-22T10:00:00Z"},
        )
    ]
    git("commit", "-qm", "merge", cwd=repo)
    assert Grimoire.open(repo).validate().ok


def test_a_memory_both_sides_hold_under_two_ids_is_merged_as_one(repo, tmp_path):
    """Picked onto main, where it took another id, then its branch merged: one memory, main's id."""
    picked = entry("002", "the picked fact")
    side_and_main(
        repo,
        {"facts.yaml": HEAD + REDIS + picked},
        {"facts.yaml": HEAD + REDIS + entry("002", "the fact of main") + picked.replace("-002", "-003")},
    )
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    result = run_driver(repo, tmp_path, FACTS)
    assert (result.conflicts, result.renumbered) == ([], {"MEM-20261122-002": "MEM-20261122-003"})
    assert (repo / FACTS).read_text() == (
        HEAD + REDIS + entry("002", "the fact of main") + picked.replace("-002", "-003")
    )
    fixed = fixup(repo, "pre-commit")
    assert (fixed.operation, fixed.files, fixed.renumbered) == ("merge", [], {})
    git("commit", "-qm", "merge", cwd=repo)
    assert Grimoire.open(repo).validate().ok


def test_the_side_a_pull_fetched_for_merging_keeps_its_ids(repo, tmp_path):
    """No remote default branch: what `git pull` fetched to merge outranks a branch only pushed
    (FETCH_HEAD's other lines, not for merging, rank nothing)."""
    pushed_start(repo, tmp_path)
    main_pushed_then_feature(repo)
    write(repo, "facts.yaml", HEAD + REDIS + entry("002", "the fact of the feature"))
    commit_all(repo, "the fact of the feature")
    git("push", "-q", "origin", "feature", cwd=repo)
    git("branch", "-q", "-u", "origin/main", cwd=repo)
    assert subprocess.run(["git", "pull", "-q", "--no-rebase"], cwd=repo, capture_output=True).returncode == 1
    assert "not-for-merge" in (repo / ".git" / "FETCH_HEAD").read_text()
    result = run_driver(repo, tmp_path, FACTS)
    assert (result.renumbered, result.side) == ({"MEM-20261122-002": "MEM-20261122-003"}, "ours")
    assert (repo / FACTS).read_text() == (
        HEAD + REDIS + entry("003", "the fact of the feature") + entry("002", "the fact of main")
    )


def test_a_single_cherry_pick_is_renumbered_past_the_ids_of_every_file(repo, tmp_path):
    """Git tells the driver of a single pick nothing (no CHERRY_PICK_HEAD yet): it finds the picked
    commit from the file's versions, and so the id ours holds in its archive."""
    side_and_main(
        repo,
        {"facts.yaml": HEAD + REDIS + entry("002", "the side fact")},
        {
            "facts.yaml": HEAD + REDIS + entry("002", "the fact of main"),
            "archive/facts.yaml": entry("003", "an archived fact", ARCHIVED),
        },
    )
    base, ours, theirs = (git("show", f"{rev}:{FACTS}", cwd=repo) for rev in ("side^", "HEAD", "side"))
    with chdir(repo / "grimoires"):
        result, merged = driven(tmp_path, base, ours, theirs)
    assert (result.renumbered, result.side) == ({"MEM-20261122-002": "MEM-20261122-004"}, "theirs")
    assert merged == HEAD + REDIS + entry("002", "the fact of main") + entry("004", "the side fact")
    # Versions no commit holds: the file alone is numbered.
    with chdir(repo / "grimoires"):
        result, _ = driven(tmp_path, base, ours, theirs.replace("the side fact", "a fact no commit holds"))
    assert result.renumbered == {"MEM-20261122-002": "MEM-20261122-003"}


def test_a_picked_memory_its_branch_archived_since_stays_archived_under_the_id_main_gave_it(repo, tmp_path):
    """Picked onto main as 003; on its branch (as 002) archived since, beside another new fact."""
    picked = entry("002", "the picked fact")
    side_and_main(
        repo,
        {
            "facts.yaml": HEAD + REDIS + entry("004", "another side fact"),
            "archive/facts.yaml": picked + ARCHIVED,
        },
        {"facts.yaml": HEAD + REDIS + picked.replace("-002", "-003")},
    )
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    result = run_driver(repo, tmp_path, FACTS)
    assert result.conflicts == [] and (repo / FACTS).read_text() == HEAD + REDIS + entry("004", "another side fact")
    fixed = fixup(repo, "pre-commit")
    assert (fixed.operation, fixed.renumbered) == ("merge", {"MEM-20261122-002": "MEM-20261122-003"})
    assert (repo / MEMORY / "archive/facts.yaml").read_text() == picked.replace("-002", "-003") + ARCHIVED
    git("commit", "-qm", "merge", cwd=repo)
    assert Grimoire.open(repo).validate().ok


# The archive after a merge: main's other archived memory, and the picked one as its branch archived it (003),
# with main's one apply.
PICKED_AND_ARCHIVED = [
    ("MEM-20261122-005", True, None),
    (
        "MEM-20261122-003",
        True,
        {"applications": 1, "successes": 1, "score": 100, "last_applied": "2026-11-22T12:00:00Z"},
    ),
]


def archived_lifecycles(repo: Path) -> list[tuple]:
    """(id, archived, effectiveness) of each entry of the facts' archive file."""
    return [
        (e["id"], e["archived"], e.get("effectiveness"))
        for e in items((repo / MEMORY / "archive/facts.yaml").read_text())
    ]


def test_a_picked_memory_archived_on_its_branch_and_applied_on_main_is_one_archived_memory(repo, tmp_path):
    picked = entry("002", "the picked fact")
    applied = picked.replace("-002", "-003") + APPLIED.format(1, 1, 100, "2026-11-22T12:00:00Z")
    other = entry("005", "archived on main", ARCHIVED)
    side_and_main(
        repo,
        {"facts.yaml": HEAD + REDIS + entry("004", "another side fact"), "archive/facts.yaml": picked + ARCHIVED},
        {"facts.yaml": HEAD + REDIS + applied, "archive/facts.yaml": other},
    )
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    archive = (MEMORY / "archive/facts.yaml").as_posix()
    for path in (FACTS, archive):
        assert run_driver(repo, tmp_path, path).conflicts == []
    assert (repo / FACTS).read_text() == HEAD + REDIS + entry("004", "another side fact")
    assert archived_lifecycles(repo) == PICKED_AND_ARCHIVED
    fixup(repo, "pre-commit")
    git("commit", "-qm", "merge", cwd=repo)
    assert Grimoire.open(repo).validate().ok


def fact(number: str, value: str, at: str, after: str = "") -> str:
    """A keyed fact as `mem remember` writes it, at `at` (HH:MM of the day)."""
    return (
        f"- id: MEM-20261122-{number}\n  category: fact\n  summary: db.pool = {value}\n  content: {value}\n"
        f"  confidence: 0.9\n  ttl: permanent\n  key: db.pool\n  source:\n    session_id: s\n"
        f'    timestamp: "2026-11-22T{at}:00Z"\n{after}'
    )


def test_one_key_remembered_on_both_sides_is_chained_in_the_order_written(repo, tmp_path):
    """Each side superseded the key's entry with a value of its own: the old entry gets the earlier value as its
    successor and that one the later, whichever side wrote which (recall gives the later); no conflict."""
    small = fact("001", "small", "10:00")
    superseded = lambda by: fact("001", "small", "10:00", f"  superseded_by: MEM-20261122-{by}\n")
    for ours_at, theirs_at in (("10:05", "10:03"), ("10:03", "10:05")):
        ours = HEAD + superseded("002") + fact("002", "large", ours_at, "  supersedes: MEM-20261122-001\n")
        theirs = HEAD + superseded("002") + fact("002", "medium", theirs_at, "  supersedes: MEM-20261122-001\n")
        result, merged = driven(tmp_path, HEAD + small, ours, theirs)
        assert result.conflicts == [] and result.renumbered == {"MEM-20261122-002": "MEM-20261122-003"}
        links = {
            e["id"][-3:]: (e["content"], e.get("supersedes", "")[-3:], e.get("superseded_by", "")[-3:])
            for e in items(merged)
        }
        if ours_at > theirs_at:  # theirs' medium (renumbered 003) came first
            assert links == {"001": ("small", "", "003"), "003": ("medium", "001", "002"), "002": ("large", "003", "")}
        else:
            assert links == {"001": ("small", "", "002"), "002": ("large", "001", "003"), "003": ("medium", "002", "")}


def test_two_successors_of_a_memory_without_a_key_are_still_a_conflict(repo, tmp_path):
    note = lambda number, text, after="": entry(number, text, after)
    ours = HEAD + note("001", "the cache is redis", "  superseded_by: MEM-20261122-002\n")
    ours += note("002", "the cache is valkey", "  supersedes: MEM-20261122-001\n")
    theirs = HEAD + note("001", "the cache is redis", "  superseded_by: MEM-20261122-002\n")
    theirs += note("002", "the cache is memcached", "  supersedes: MEM-20261122-001\n")
    result, _ = driven(tmp_path, HEAD + REDIS, ours, theirs)
    assert result.conflicts == ["MEM-20261122-001"]
