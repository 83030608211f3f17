"""Published contracts: exit codes, and `--json` carrying everything the text shows."""

from __future__ import annotations

import fcntl
import json
import time

import pytest
from conftest import git, mem, mem_process

from grimoire_cli import Grimoire
from grimoire_cli.core.errors import DAMAGED, Damaged

LATER = {"MEM_NOW": "2027-03-01T00:00:00Z"}


def test_lock_timeout_exits_3_with_one_line_and_writes_nothing(repo):
    facts = repo / "grimoires/loa/memory/facts.yaml"
    before = facts.read_bytes()
    cache = repo / "grimoires/loa/memory/.cache"
    cache.mkdir(exist_ok=True)
    with open(cache / "write.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        result = mem_process(
            "add", "-c", "fact", "The lock is held by another process", cwd=repo, env={"MEM_LOCK_TIMEOUT": "0.2"}
        )
        waited = time.monotonic() - started
    # It waited for the lock (0.2 s), and not the default 30 s: MEM_LOCK_TIMEOUT is honoured.
    assert 0.2 <= waited < 10, waited
    err = result.stderr.decode()
    assert result.returncode == DAMAGED == 3
    assert (
        err.startswith("error: another mem process has held the grimoire lock")
        and err.count("\n") == 1
        and "retry" in err
    )
    assert facts.read_bytes() == before


@pytest.mark.parametrize(
    "name, value, args",
    [
        ("MEM_LOCK_TIMEOUT", "abc", ("add", "-c", "fact", "The lock waits for a while")),
        ("MEM_LOCK_TIMEOUT", "-1", ("add", "-c", "fact", "The lock waits for a while")),
        ("MEM_LOCK_TIMEOUT", "nan", ("list",)),
        ("MEM_PARSE_WORKERS", "abc", ("list",)),
        ("MEM_PARSE_WORKERS", "0", ("validate",)),
        ("MEM_NOW", "yesterday", ("list",)),
        ("MEM_SCOPE", "../elsewhere", ("list",)),
        ("MEM_LOCK_TIMEOUT", "abc", ("merge-file", "/nonexistent", "a", "b")),  # a command that opens no grimoire
    ],
)
def test_a_bad_environment_variable_is_bad_input_naming_it(repo, name, value, args):
    """Every MEM_* variable with a form is checked before the command does
    anything: one `error:` line naming it and the form wanted, exit 2, nothing written."""
    from grimoire_cli.core.errors import BAD_INPUT

    facts = repo / "grimoires/loa/memory/facts.yaml"
    before = facts.read_bytes()
    result = mem_process(*args, cwd=repo, env={name: value})
    err = result.stderr.decode()
    assert result.returncode == BAD_INPUT == 2, err
    assert (
        err.startswith(f"error: {name} is not ")
        and f"{value!r}" in err
        and f"write it like {name}=" in err
        and err.count("\n") == 1
    ), err
    assert facts.read_bytes() == before and result.stdout == b""


def test_good_environment_values_are_used(repo):
    assert (
        mem("add", "-c", "fact", "A lock timeout in seconds may be a fraction", env={"MEM_LOCK_TIMEOUT": "2.5"}).code
        == 0
    )
    assert mem("list", env={"MEM_PARSE_WORKERS": "1", "MEM_LOCK_TIMEOUT": " "}).code == 0  # blank: as if unset
    assert mem("add", "--help", env={"MEM_NOW": "yesterday"}).code == 0  # help never needs the environment


def test_every_environment_variable_is_checked_in_one_place_and_documented():
    """The MEM_* variables the package reads are the ones runtime.ENVIRONMENT
    knows, and docs/reference.md lists each."""
    import re
    from pathlib import Path

    from grimoire_cli.core.runtime import ENVIRONMENT

    package = Path(__file__).resolve().parent.parent / "grimoire_cli"
    read = {name for path in package.rglob("*.py") for name in re.findall(r"\bMEM_[A-Z_]+\b", path.read_text())}
    known = {variable.name for variable in ENVIRONMENT}
    assert read == known
    reference = (package.parent / "docs" / "reference.md").read_text()
    assert [name for name in sorted(known) if f"`{name}`" not in reference] == []


def test_validate_json_is_format_json(repo):
    mem("add", "-c", "fact", "The API runs on port 8080")
    assert json.loads(mem("validate", "--json").out) == json.loads(mem("validate", "--format", "json").out)
    both = mem("validate", "--json", "--format", "github")
    assert both.code == 2 and both.err.startswith("error: --json and --format github")


@pytest.mark.git
def test_archive_json_carries_reasons_dry_run_and_notes(repo):
    kept = mem("add", "-c", "fact", "Releases are cut on Tuesdays").out.strip()
    old = mem("add", "-c", "error", "The nightly build timed out on the cache step").out.strip()
    dry = json.loads(mem("archive", "--dry-run", "--json", env=LATER).out)
    assert dry == {"archived": [old], "commit": None, "reasons": {old: "expired"}, "dry_run": True, "notes": []}
    # The commit holds the move applied to HEAD's files: without a HEAD, no commit.
    first = json.loads(mem("archive", old, "--reason", "manual", "--json").out)
    assert first["commit"] is None and first["notes"] == ["archived without a commit: the repository has no commit yet"]
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "memories", cwd=repo)
    done = json.loads(mem("archive", kept, "--reason", "manual", "--json").out)
    assert (
        done["reasons"] == {kept: "manual"}
        and done["dry_run"] is False
        and len(done["commit"]) == 40
        and done["notes"] == []
    )


@pytest.mark.git
def test_check_json_carries_the_commit_and_notes(repo):
    old = mem("add", "-c", "error", "Flaky test in the payments suite").out.strip()
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "memories", cwd=repo)
    result = json.loads(mem("check", "--json", env=LATER).out)
    assert result["archived"] == [old] and result["expired"] == [old]
    assert len(result["commit"]) == 40 and result["notes"] == []


def test_review_json_carries_sections_and_near_duplicate_pairs(repo):
    first = mem("add", "-c", "learning", "Retry the flaky payments test once before failing the build").out.strip()
    second = mem("add", "-c", "learning", "Retry the flaky payments test once before failing the builds").out.strip()
    weak = mem("add", "-c", "fact", "The staging cluster has three nodes").out.strip()
    for outcome in ("--failure", "--failure", "--success"):
        mem("apply", weak, outcome)
    items = {item["id"]: item for item in json.loads(mem("review", "--json").out)}
    assert items[weak]["review"] == {"sections": ["low"], "near_duplicates": []}
    pair = items[second]["review"]
    assert (
        pair["sections"] == ["near-duplicate"]
        and pair["near_duplicates"][0]["id"] == first
        and pair["near_duplicates"][0]["score"] >= 90
    )
    assert items[second]["content"].endswith("builds")  # still the entry object docs/reference.md's JSON shapes promise


def test_add_json_carries_the_near_duplicate_warning(repo):
    first = json.loads(mem("add", "-c", "fact", "The build cache lives in the ci-cache bucket", "--json").out)
    assert first["near_duplicate"] is None and first["notes"] == []
    second = mem("add", "-c", "fact", "The build cache lives in the ci-cache buckets", "--json")
    data = json.loads(second.out)
    assert data["near_duplicate"]["id"] == first["id"] and data["near_duplicate"]["score"] >= 90
    assert data["notes"] == [line[len("warning: ") :] for line in second.err.splitlines()]
    inferred = json.loads(mem("add", "We decided to pin the runner image", "--json").out)
    assert inferred["category"] == "decision" and inferred["notes"] == [
        "category inferred: decision (use -c to choose)"
    ]
    newer = json.loads(mem("supersede", first["id"], "The build cache moved to the ci-cache-v2 bucket", "--json").out)
    assert newer["supersedes"] == first["id"] and newer["near_duplicate"] is None


def test_stats_prints_json_or_readable_text(repo):
    mem("add", "-c", "fact", "The API runs on port 8080")
    mem("add", "-c", "decision", "We use Postgres for the ledger")
    data = json.loads(mem("stats", "--json").out)
    assert data["entries"] == 2 and data["categories"] == {"fact": {"active": 1}, "decision": {"active": 1}}
    text = mem("stats").out
    assert "{" not in text and "'" not in text
    assert text.splitlines()[0].startswith("2 entries,") and any(
        line.split() == ["decision", "1", "active"] for line in text.splitlines()
    )


@pytest.mark.parametrize(
    "text, line, kind",
    [
        ("- id: MEM-20261122-001\n  content: [unclosed\n", 3, "yaml"),  # where the parser notices it
        ("- id: MEM-20261122-001\n  content: ok\n- \xff\n", 3, "encoding"),
    ],
)
def test_damaged_carries_path_line_and_kind(repo, text, line, kind):
    path = repo / "grimoires/loa/memory/facts.yaml"
    path.write_bytes(text.encode("utf-8", "surrogateescape") if kind == "yaml" else text.encode("latin-1"))
    with pytest.raises(Damaged) as caught:
        Grimoire.open(repo).store.entries()
    assert (caught.value.path, caught.value.line, caught.value.kind) == ("grimoires/loa/memory/facts.yaml", line, kind)
    assert str(caught.value).startswith(f"grimoires/loa/memory/facts.yaml:{line}: ")
    problems = json.loads(mem("validate", "--json").out)["problems"]
    assert [(p["file"], p["line"], p["rule"]) for p in problems] == [("grimoires/loa/memory/facts.yaml", line, kind)]


def test_damaged_survives_pickling():
    # It crosses validate's worker processes and must come back whole.
    import pickle

    error = Damaged("grimoires/loa/memory/facts.yaml", 7, "not valid YAML: x", "fix it", "yaml")
    again = pickle.loads(pickle.dumps(error))
    assert (again.path, again.line, again.problem, again.hint, again.kind, str(again)) == (
        error.path,
        error.line,
        error.problem,
        error.hint,
        error.kind,
        str(error),
    )


def test_a_filter_on_lengths_is_refused_where_the_table_lacks_them(grimoire):
    from grimoire_cli.storage.catalog.queries import Filter

    grimoire.add("The API runs on port 8080", category="fact")
    chosen = Filter(at=grimoire.now().timestamp(), lengths=(1, 100))
    assert grimoire.store.ask(lambda catalog, paths: catalog.normalized(paths, chosen)) == [
        ("MEM-20261122-001", "the api runs on port 8080")
    ]
    with pytest.raises(ValueError):
        grimoire.store.ask(lambda catalog, paths: catalog.ids(paths, chosen))
    assert not grimoire.store.catalog.in_memory  # a caller's mistake is not a database failure


@pytest.mark.parametrize("id_line", ["- id: MEM-20261122-001\r", "- id: MEM-20261122-001  # kept by bob"])
def test_validate_names_the_entry_of_a_conflict_with_odd_id_lines(repo, id_line):
    path = repo / "grimoires/loa/memory/facts.yaml"
    path.write_text(
        f"<<<<<<< ours\n{id_line}\n  content: a\n=======\n- id: MEM-20261122-002\n  content: b\n>>>>>>> theirs\n"
    )
    problems = json.loads(mem("validate", "--json").out)["problems"]
    assert [(p["rule"], p["id"]) for p in problems] == [("merge-conflict", "MEM-20261122-001")]


# Every command that searches or lists (docs/reference.md, Exit codes), as a fresh grimoire with every kind of category answers it.
SEARCHES = [
    ["query", "postgres"],
    ["list"],
    ["episodes"],
    ["episodes", "postgres"],
    ["facts"],
    ["tasks"],
    ["due"],
    ["procedures"],
    ["insights"],
    ["patterns"],
    ["tools"],
    ["tools", "psql"],
    ["recall-all", "postgres"],
    ["recommend", "restore the db"],
    ["chat", "recent"],
]


def test_a_search_that_finds_nothing_exits_1_and_json_still_prints_the_empty_answer(repo):
    for preset in ("sabre", "pms", "protea"):
        assert mem("init", "--preset", preset).code == 0
    for words in SEARCHES:
        text, as_json = mem(*words), mem(*words, "--json")
        assert (text.code, text.out, as_json.code) == (1, "", 1), (words, text, as_json)
        answer = json.loads(as_json.out)
        assert answer == [] or not any(
            answer.get(k) for k in ("patterns", "tools", "insights", "preferences", "recommendations")
        ), words
    mem("add", "-c", "fact", "We restore postgres from the nightly dump", "--key", "db.restore")
    mem("episode", "db-restored", "--learned", "postgres restores take ten minutes", "--outcome", "success")
    mem(
        "observe",
        "-",
        input=json.dumps(
            {
                "task_id": "t1",
                "goal": "restore the db",
                "outcome": "success",
                "steps": [{"tool": "psql", "status": "completed"}],
            }
        )
        + "\n",
    )
    mem("chat", "add", "user", "Restore postgres, please")
    for words in (
        ["query", "postgres"],
        ["list"],
        ["episodes", "postgres"],
        ["facts"],
        ["tools", "psql"],
        ["recommend", "restore the db"],
        ["chat", "recent"],
    ):
        result = mem(*words)
        assert result.code == 0 and result.out, (words, result)
