"""`mem compact` (Protea): past the newest N, one condensed entry replaces the
older ones, which are archived superseded by it, in one commit (docs/tiers-and-consolidation.md)."""

import json
import sys
from pathlib import Path

import pytest
from conftest import git, mem

MEMORY = Path("grimoires/loa/memory")


@pytest.fixture
def generations(repo):
    """The protea preset, committed; then 8 observations and 3 directives (uncommitted) and one keyed observation."""
    assert mem("init", "--preset", "protea").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "start", cwd=repo)
    ids = []
    for n in range(1, 9):
        result = mem(
            "add",
            "-c",
            "observation",
            f"Generation {n} scored {n * 7} on the maze",
            "-t",
            "maze",
            "--importance",
            str(n % 10 + 1),
            env={"MEM_NOW": f"2026-11-{n:02d}T10:00:00Z"},
        )
        ids.append(result.out.strip())
    keyed = mem(
        "add",
        "-c",
        "observation",
        "--key",
        "maze.best",
        "Generation 8 is the best",
        env={"MEM_NOW": "2026-10-01T10:00:00Z"},
    )
    for n in range(3):
        mem(
            "add",
            "-c",
            "directive",
            f"Directive {n}: keep mutations small",
            env={"MEM_NOW": f"2026-10-0{n + 1}T10:00:00Z"},
        )
    return ids, keyed.out.strip()


def _head(repo: Path) -> str:
    return git("rev-parse", "HEAD", cwd=repo).strip()


def test_no_summary_compaction_is_one_commit_of_grimoire_paths(generations, repo):
    ids, keyed = generations
    (repo / "notes.txt").write_text("unrelated work in progress\n")
    before = _head(repo)
    result = mem("compact", "--keep", "3", "--no-summary", "--json")
    assert result.code == 0, result.err
    done = json.loads(result.out)
    assert list(done["categories"]) == ["observation"]  # directives: compaction.categories says all
    condensed = done["categories"]["observation"]["condensed"]
    assert done["categories"]["observation"]["replaced"] == ids[:5]  # oldest first; the keyed one stays
    assert condensed["related_memories"] == ids[:5] and condensed["tags"] == ["maze"]
    assert condensed["content"].startswith(
        "5 observation memories from 2026-11-01 to 2026-11-05, condensed: Generation 1 scored 7"
    )
    assert condensed["importance"] == 6  # the highest of those it replaces
    assert git("rev-list", "--count", f"{before}..HEAD", cwd=repo).strip() == "1"
    assert git("show", "--name-only", "--format=", "HEAD", cwd=repo).split() == [
        "grimoires/loa/memory/archive/observations.yaml",
        "grimoires/loa/memory/observations.yaml",
    ]
    assert git("log", "-1", "--format=%s", cwd=repo).strip() == "mem compact: 5 memories condensed into 1"
    archived = {e["id"]: e for e in map(json.loads, mem("export", "--archived").out.splitlines()) if e.get("archived")}
    assert set(archived) == set(ids[:5])
    assert all(e["superseded_by"] == condensed["id"] and e["archive_reason"] == "superseded" for e in archived.values())
    assert mem("validate").code == 0
    # the commit alone is whole: a clone of it validates
    clone = repo.parent / "clone"
    git("clone", "-q", str(repo), str(clone), cwd=repo.parent)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(clone)
        assert mem("validate").code == 0
    assert "notes.txt" in git("status", "--porcelain", cwd=repo)  # the user's file: never in the commit
    kept = [e["id"] for e in json.loads(mem("list", "-c", "observation", "--json").out)]
    assert set(kept) == {condensed["id"], *ids[5:], keyed}


def test_a_summarizer_condenses_them(generations, repo, tmp_path):
    ids, _ = generations
    prompt = tmp_path / "prompt.txt"
    script = tmp_path / "condense.py"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\nprompt = sys.stdin.read()\nopen({str(prompt)!r}, 'w').write(prompt)\n"
        "print(json.dumps({'content': 'Scores rose by 7 a generation.', 'summary': 'Scores rose steadily', 'importance': 7}))\n"
    )
    script.chmod(0o755)
    result = mem("compact", "-c", "observation", "--keep", "6", "--with", str(script))
    assert result.code == 0, result.err
    assert result.out.startswith(
        "condensed 2 observation memories into MEM-20261122-001: Scores rose steadily\ncommitted "
    )
    sent = prompt.read_text()
    assert sent.startswith("You are the memory") and f"- {ids[0]} (2026-11-01): Generation 1 scored 7" in sent
    assert sent.index(ids[0]) < sent.index(ids[1]) and ids[2] not in sent
    shown = json.loads(mem("show", "MEM-20261122-001", "--json").out)
    assert (shown["content"], shown["importance"]) == ("Scores rose by 7 a generation.", 7)


def test_dry_run_and_bad_input_write_nothing(generations, repo, tmp_path):
    files = {p: p.read_bytes() for p in (repo / MEMORY).rglob("*.yaml")}
    head = _head(repo)
    dry = mem("compact", "--keep", "3", "--no-summary", "--dry-run")
    assert dry.code == 0 and dry.out.startswith("would condense 5 observation memories into ")
    failing = tmp_path / "fail.py"
    failing.write_text(f"#!{sys.executable}\nimport sys\nsys.stdin.read()\nsys.exit(1)\n")
    failing.chmod(0o755)
    cases = [
        (["--keep", "0", "--no-summary"], 2, "--keep must be a whole number from 1 to 1000000, not 0"),
        (["--keep-total", "0", "--no-summary"], 2, "--keep-total must be a whole number from 1 to 1000000, not 0"),
        (["-c", "directive", "--no-summary"], 2, "directive is never compacted (compaction.categories says all)"),
        (
            ["-c", "task", "--no-summary"],
            2,
            "task is never compacted (compaction.categories says all)",
        ),  # Protea's records
        (["--keep", "3"], 2, "no summarizer command configured"),
        (["--keep", "3", "--with", "no-such-condenser"], 2, "command not found: no-such-condenser"),
        (["--keep", "3", "--with", str(failing)], 5, "exited with 1"),
        (["--keep", "3", "--with", str(failing), "--no-summary"], 2, "--with and --no-summary ask for two things"),
    ]
    for args, code, message in cases:
        result = mem("compact", *args)
        assert result.code == code and message in result.err and len(result.err.splitlines()) == 1, (args, result.err)
    assert {p: p.read_bytes() for p in (repo / MEMORY).rglob("*.yaml")} == files and _head(repo) == head


def test_an_unknown_category_is_named_before_a_missing_summarizer(generations, repo):
    result = mem("compact", "-c", "nosuch")
    assert result.code == 2 and len(result.err.splitlines()) == 1, result.err
    assert (
        result.err.startswith("error: unknown category 'nosuch' (hint: use one of: fact, decision, ")
        and "observation" in result.err
    )


def test_a_dry_run_runs_no_summarizer(generations, repo, tmp_path):
    files = {p: p.read_bytes() for p in (repo / MEMORY).rglob("*.yaml")}
    dry = mem("compact", "--keep", "3", "--dry-run")  # no command configured: none is needed to list
    assert dry.code == 0, dry.err
    assert dry.out.startswith("would condense 5 observation memories into ") and "no summarizer was run" in dry.err
    ran = tmp_path / "ran"
    script = tmp_path / "condense.py"
    script.write_text(f"#!{sys.executable}\nopen({str(ran)!r}, 'w').write('ran')\nprint('{{}}')\n")
    script.chmod(0o755)
    listed = json.loads(mem("compact", "--keep", "3", "--dry-run", "--with", str(script), "--json").out)
    assert listed["dry_run"] and len(listed["categories"]["observation"]["replaced"]) == 5 and not ran.exists()
    assert {p: p.read_bytes() for p in (repo / MEMORY).rglob("*.yaml")} == files


def test_a_staged_change_blocks_the_commit_and_nothing_is_written(generations, repo):
    git("add", str(MEMORY / "observations.yaml"), cwd=repo)
    files = {p: p.read_bytes() for p in (repo / MEMORY).rglob("*.yaml")}
    result = mem("compact", "--keep", "3", "--no-summary")
    assert result.code == 4 and "cannot commit a compaction now" in result.err and "staged changes" in result.err
    assert {p: p.read_bytes() for p in (repo / MEMORY).rglob("*.yaml")} == files


def test_nothing_to_compact(generations):
    result = mem("compact", "--keep", "100", "--no-summary")
    assert result.code == 0 and result.out == "nothing to compact\n"


def test_validate_still_flags_a_superseded_by_nothing_names(repo):
    first = mem("add", "-c", "fact", "The build runs on two cores").out.strip()
    other = mem("add", "-c", "fact", "The build runs on four cores").out.strip()
    facts = Path(MEMORY / "facts.yaml")
    text = facts.read_text()
    facts.write_text(text.replace(f"- id: {first}\n", f"- id: {first}\n  superseded_by: {other}\n", 1))
    result = mem("validate")
    assert result.code == 1 and "supersede-link" in result.out


def test_several_categories_in_one_run_get_their_own_ids(generations, repo):
    for n in range(4):
        mem(
            "add",
            "-c",
            "crash_log",
            f"Generation {n} crashed in mutate number {n}",
            env={"MEM_NOW": f"2026-11-0{n + 1}T11:00:00Z"},
        )
    result = mem("compact", "--keep", "2", "--no-summary", "--json")
    assert result.code == 0, result.err
    done = json.loads(result.out)["categories"]
    assert set(done) == {"observation", "crash_log"}
    assert len({c["condensed"]["id"] for c in done.values()}) == 2
    assert mem("validate").code == 0
    assert git("log", "-1", "--format=%s", cwd=repo).strip() == "mem compact: 8 memories condensed into 2"


def test_a_total_keep_counts_the_whole_grimoire(generations, repo):
    """Protea's keep_recent (issue 37): the newest N of every category together stay (directives count, and are
    never compacted); per category, then, only --keep or compaction.categories; with --keep too, either keeps one."""
    ids, keyed = generations
    total = json.loads(mem("compact", "--keep-total", "5", "--no-summary", "--dry-run", "--json").out)
    assert total["categories"]["observation"]["replaced"] == ids[:3]  # the newest five are observations 4..8
    both = json.loads(mem("compact", "--keep-total", "5", "--keep", "6", "--no-summary", "--dry-run", "--json").out)
    assert both["categories"]["observation"]["replaced"] == ids[:2]
    kept = json.loads(mem("compact", "--keep-total", "7", "--no-summary", "--json").out)
    assert kept["categories"] == {}  # one observation past the seven: nothing to condense it with
    done = json.loads(mem("compact", "--keep-total", "6", "--no-summary", "--json").out)
    assert done["categories"]["observation"]["replaced"] == ids[:2] and done["commit"]
    listed = {entry["id"] for entry in json.loads(mem("list", "--json").out)}
    assert set(ids[2:]) | {keyed} <= listed and not set(ids[:2]) & listed
