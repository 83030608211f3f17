import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import examples, git, mem, mem_process
from hypothesis import given, settings
from hypothesis import strategies as st

FACTS = Path("grimoires/loa/memory/facts.yaml")
DECISIONS = Path("grimoires/loa/memory/decisions.yaml")


def add_json(*args, input=None):
    result = mem("add", *args, "--json", input=input)
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_add_prints_id_and_writes_a_valid_entry(repo):
    result = mem("add", "-c", "fact", "The API listens on port 8080")
    assert result.code == 0, result.err
    assert result.out.strip() == "MEM-20261122-001"
    shown = json.loads(mem("show", "MEM-20261122-001", "--json").out)
    assert shown["content"] == "The API listens on port 8080"
    assert shown["category"] == "fact"
    assert shown["confidence"] == 0.8  # the fact floor is the default
    assert shown["ttl"] == "permanent" and "expires_at" not in shown
    assert shown["source"] == {"session_id": "test-session", "timestamp": "2026-11-22T10:00:00Z"}
    assert mem("validate").code == 0


def test_every_option_lands_in_the_entry(repo):
    (repo / "src").mkdir()
    (repo / "src/app.py").write_text("x = 1\n")
    first = add_json("-c", "fact", "The cache lives in .git")
    entry = add_json(
        "-c",
        "learning",
        "Retry the flaky upload step twice",
        "-s",
        "Retry uploads",
        "--confidence",
        "0.95",
        "-t",
        "CI Flaky",
        "-t",
        "ci_flaky",
        "-t",
        "uploads",
        "--ttl",
        "10d",
        "--importance",
        "8",
        "--related",
        first["id"],
        "--file",
        "src/app.py",
        "--lines",
        "3-9",
        "--session-id",
        "s-42",
        "--agent",
        "claude",
        "--phase",
        "implement",
        "--key",
        "ci.retries",
    )
    assert entry["summary"] == "Retry uploads"
    assert entry["confidence"] == 0.95
    assert entry["tags"] == ["ci-flaky", "uploads"]
    assert entry["ttl"] == "10d" and entry["expires_at"] == "2026-12-02T10:00:00Z"
    assert entry["importance"] == 8
    assert entry["related_memories"] == [first["id"]]
    assert entry["key"] == "ci.retries"
    assert entry["source"] == {
        "session_id": "s-42",
        "timestamp": "2026-11-22T10:00:00Z",
        "agent": "claude",
        "phase": "implement",
        "file_path": "src/app.py",
        "line_range": "3-9",
    }
    assert mem("validate").code == 0


def test_source_from_environment(repo):
    result = mem(
        "add",
        "-c",
        "fact",
        "Deploys go through staging",
        "--json",
        env={"MEM_AGENT": "bot", "MEM_PHASE": "review", "MEM_SESSION_ID": "env-ses"},
    )
    entry = json.loads(result.out)
    assert entry["source"]["agent"] == "bot"
    assert entry["source"]["phase"] == "review"
    assert entry["source"]["session_id"] == "env-ses"


def test_session_id_generated_when_none(repo):
    result = mem("add", "-c", "fact", "Logs are kept for 30 days", "--json", env={"MEM_SESSION_ID": None})
    assert json.loads(result.out)["source"]["session_id"].startswith("ses-")


def test_stdin_multiline_is_byte_exact_block_scalar(repo):
    text = "Steps to reproduce:\n  1. run make\n  2. see the error: boom\n\n# not a comment\n"
    result = mem("add", "-c", "error", "-", input=text.encode())
    assert result.code == 0, result.err
    raw = (repo / "grimoires/loa/memory/errors.yaml").read_text()
    assert "content: |" in raw
    shown = json.loads(mem("show", result.out.strip(), "--json").out)
    assert shown["content"] == text


def test_summary_derived_one_line_max_120(repo):
    long = "This is a deliberately long first sentence " + "with many words " * 12 + ". Second sentence."
    entry = add_json("-c", "fact", long)
    assert "\n" not in entry["summary"]
    assert len(entry["summary"]) <= 120
    assert long.startswith(entry["summary"].rstrip("…")[:40])


def test_category_inferred_and_announced(repo):
    result = mem("add", "We decided to use Postgres instead of MySQL", "--confidence", "0.95")
    assert result.code == 0, result.err
    assert "category inferred: decision" in result.err
    assert "We decided" in DECISIONS.read_text()
    result = mem("add", "The upload step failed with a timeout error")
    assert "category inferred: error" in result.err


def test_ids_unique_across_categories_and_archive_and_per_day(repo):
    ids = [
        mem("add", "-c", c, f"memory number {i} about {c}", "--confidence", "1").out.strip()
        for i, c in enumerate(["fact", "decision", "fact", "error"])
    ]
    assert ids == [f"MEM-20261122-00{n}" for n in range(1, 5)]
    archive = repo / "grimoires/loa/memory/archive/facts.yaml"
    archive.write_text(
        "- id: MEM-20261122-041\n  category: fact\n  summary: old\n  content: old\n  confidence: 0.9\n  ttl: permanent\n"
        "  source: {session_id: s, timestamp: '2026-11-22T09:00:00Z'}\n  archived: true\n  archived_at: '2026-11-22T09:30:00Z'\n  archive_reason: manual\n"
    )
    assert mem("add", "-c", "fact", "next memory after the archive").out.strip() == "MEM-20261122-042"
    next_day = mem("add", "-c", "fact", "a memory on the next day", env={"MEM_NOW": "2026-11-23T00:00:01Z"})
    assert next_day.out.strip() == "MEM-20261123-001"


def test_exact_duplicate_refused_naming_it(repo):
    first = mem("add", "-c", "fact", "The  build uses   Make").out.strip()
    result = mem("add", "-c", "fact", "the build uses make")
    assert result.code == 2
    assert first in result.err and result.err.startswith("error:")
    assert FACTS.read_text().count("- id:") == 1


def test_near_duplicate_written_with_warning(repo):
    first = mem("add", "-c", "fact", "The staging database is restored from backup every night at 2am").out.strip()
    result = mem("add", "-c", "fact", "The staging database is restored from backups every night at 2am")
    assert result.code == 0
    assert "warning: near duplicate of " + first in result.err
    assert f"--supersedes {first}" in result.err


def test_confidence_floor_and_range(repo):
    result = mem("add", "-c", "decision", "Use tabs", "--confidence", "0.5")
    assert result.code == 2 and "below the decision floor of 0.9" in result.err
    assert mem("add", "-c", "fact", "x y z", "--confidence", "1.5").code == 2
    assert mem("add", "-c", "fact", "x y z", "--confidence", "-0.1").code == 2
    assert "- id:" not in DECISIONS.read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["-c", "nope", "text"], "unknown category 'nope'"),
        (["-c", "fact", "   "], "content is empty"),
        (["-c", "fact", "x" * 2001], "over the limit of 2000"),
        (["-c", "fact", "text", "--ttl", "soon"], "bad ttl"),
        (["-c", "fact", "text", "--ttl", "0d"], "bad ttl"),
        (["-c", "fact", "text", "--supersedes", "MEM-20200101-001"], "no memory MEM-20200101-001"),
        (["-c", "fact", "text", "--related", "MEM-20200101-001"], "does not exist"),
        (["-c", "fact", "text", "--lines", "1-2"], "--lines needs --file"),
        (["-c", "fact", "text", "--file", "/etc/passwd"], "outside the repository"),
        (["-c", "fact", "text", "--importance", "11"], "importance"),
        (["-c", "fact", "text", "--key", "Bad Key"], "bad key"),
        (["-c", "fact", "null\x00byte"], "control character"),
    ],
)
def test_bad_input_one_line_error_exit_2(repo, args, message):
    before = {p: p.read_bytes() for p in (repo / "grimoires/loa/memory").glob("*.yaml")}
    result = mem("add", *args)
    assert result.code == 2 if "no memory" not in message and "does not exist" not in message else result.code == 1
    assert result.err.startswith("error:") and result.err.count("\n") == 1, result.err
    assert message in result.err
    assert "Traceback" not in result.err
    if "unknown category" in message:
        assert "fact, decision, learning, error, preference" in result.err
    assert {p: p.read_bytes() for p in (repo / "grimoires/loa/memory").glob("*.yaml")} == before


@pytest.mark.git
def test_append_keeps_comments_and_changes_no_existing_line(repo):
    git("add", "-A", cwd=repo)
    mem("add", "-c", "fact", "first fact about the system")
    text = FACTS.read_text().replace("- id:", "# a human comment\n- id:", 1)
    text = text.replace("  confidence: 0.8", "  confidence: 0.8   # I am sure", 1)
    FACTS.write_text(text)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "base", cwd=repo)
    assert mem("add", "-c", "fact", "second fact, unrelated to the first").code == 0
    diff = git("diff", "--unified=0", "--", str(FACTS), cwd=repo)
    changed = [
        line for line in diff.splitlines() if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    ]
    assert changed and all(line.startswith("+") for line in changed)
    assert "# a human comment" in FACTS.read_text() and "# I am sure" in FACTS.read_text()


def test_supersede_writes_both_ends_and_chain(repo):
    old = mem("add", "-c", "decision", "Use REST for the public API", "--confidence", "0.9").out.strip()
    new = json.loads(mem("supersede", old, "Use GraphQL for the public API", "--json").out)
    assert new["category"] == "decision" and new["supersedes"] == old
    assert json.loads(mem("show", old, "--json").out)["superseded_by"] == new["id"]
    chain = json.loads(mem("show", new["id"], "--chain", "--json").out)
    assert [e["id"] for e in chain] == [old, new["id"]]
    listed = [e["id"] for e in json.loads(mem("list", "--json").out)]
    assert old not in listed and new["id"] in listed
    assert old in [e["id"] for e in json.loads(mem("list", "--superseded", "--json").out)]
    again = mem("supersede", old, "Use gRPC")
    assert again.code == 2 and new["id"] in again.err
    assert mem("validate").code == 0


def test_supersede_inherits_what_the_old_entry_carried_unless_given(repo):
    old = mem(
        "add",
        "-c",
        "learning",
        "redis listens on port 6379 here",
        "-t",
        "redis",
        "--ttl",
        "10d",
        "--importance",
        "8",
        "--confidence",
        "0.9",
    ).out.strip()
    new = json.loads(mem("supersede", old, "redis listens on port 6380 here", "--json").out)
    assert (new["tags"], new["ttl"], new["importance"], new["confidence"]) == (["redis"], "10d", 8, 0.9)
    assert new["expires_at"] == "2026-12-02T10:00:00Z"  # the ttl counts from the new entry
    assert [e["id"] for e in json.loads(mem("list", "-t", "redis", "--json").out)] == [new["id"]]
    # What the command gives wins.
    newer = json.loads(
        mem(
            "supersede",
            new["id"],
            "redis listens on port 6381 here",
            "-t",
            "cache",
            "--ttl",
            "30d",
            "--importance",
            "3",
            "--confidence",
            "0.75",
            "--json",
        ).out
    )
    assert (newer["tags"], newer["ttl"], newer["importance"], newer["confidence"]) == (["cache"], "30d", 3, 0.75)


def test_supersede_of_a_keyed_fact_keeps_its_key_and_recall_gives_the_new_value(repo):
    assert mem("remember", "svc.port", "6379", "-c", "fact").code == 0
    old = json.loads(mem("facts", "--json").out)[0]["id"]
    new = json.loads(mem("supersede", old, "6380", "--json").out)
    assert new["summary"] == "svc.port = 6380"  # as `remember` writes a fact's summary
    recalled = mem("recall", "svc.port")
    assert recalled.code == 0 and recalled.out == "6380\n"
    assert [f["key"] for f in json.loads(mem("facts", "--json").out)] == ["svc.port"]


def test_a_superseded_typed_value_is_not_carried_over(grimoire):
    first = grimoire.facts.remember("db.rows", {"rows": 12}, category="fact").entry
    grimoire.add_many([{"content": "twelve rows", "supersedes": first.id}])
    assert grimoire.facts.recall("db.rows") == "twelve rows"


def test_supersede_keeps_metadata_but_a_new_one_wins(grimoire):
    old = grimoire.add(
        "Deploys go through the blue-green switch", "decision", confidence=0.95, metadata={"adr": "ADR-7"}
    )
    assert grimoire.supersede(old.id, "Deploys go through the canary switch").data["metadata"] == {"adr": "ADR-7"}


def test_metadata_is_merged_key_by_key_and_a_typed_value_replaced(grimoire):
    """Found by the model test: a typed value remembered over a keyed entry with metadata dropped the rest of it."""
    grimoire.add("the pool holds five", "fact", key="db.pool", metadata={"adr": "ADR-7", "value": 5})
    entry = grimoire.facts.remember("db.pool", {"size": 2}, category="fact").entry
    assert entry.data["metadata"] == {"adr": "ADR-7", "value": {"size": 2}}
    assert grimoire.facts.remember("db.pool", "six", category="fact").entry.data["metadata"] == {"adr": "ADR-7"}
    assert grimoire.facts.recall("db.pool") == "six"


def test_supersede_does_not_carry_what_the_new_category_refuses(repo):
    assert mem("init", "--preset", "sabre").code == 0
    old = mem(
        "add", "-c", "semantic", "the cache warms in ten minutes", "--ttl", "12h", "--confidence", "0.6"
    ).out.strip()
    new = json.loads(mem("add", "the cache warms in five minutes", "-c", "fact", "--supersedes", old, "--json").out)
    # Loa's fact takes days only, and its floor is 0.8: its own defaults apply.
    assert (new["ttl"], new["confidence"]) == ("permanent", 0.8)


def test_supersede_of_a_task_keeps_its_trigger_and_takes_the_new_text(sabre):
    old = mem("task", "add", "renew the cert", "--due", "+1h", "--context", "team=ops").out.strip()
    new = json.loads(mem("supersede", old, "renew the cert and its key", "--json").out)
    assert (new["task"], new["trigger"], new["status"], new["context"]) == (
        "renew the cert and its key",
        "time:2026-11-22T11:00:00Z",
        "pending",
        {"team": "ops"},
    )
    due = json.loads(mem("due", "--json", env={"MEM_NOW": "2026-11-22T12:00:00Z"}).out)
    assert [t["id"] for t in due] == [new["id"]]
    assert mem("validate").code == 0


@pytest.mark.parametrize("kind_of", ["episode", "procedure"])
def test_a_record_kind_is_not_superseded_by_a_text_and_the_hint_says_what_works(sabre, kind_of):
    if kind_of == "episode":
        old = mem("episode", "deploy", "--outcome", "success").out.strip()
    else:
        old = json.loads(
            mem("procedure", "add", "-", "--json", input='{"name": "deploy", "steps": [{"name": "build"}]}').out
        )["id"]
    result = mem("supersede", old, "something else")
    assert result.code == 2 and result.err.startswith("error:") and f"{old} is a" in result.err
    assert ("mem episode" if kind_of == "episode" else "mem procedure add") in result.err


@pytest.mark.git
def test_supersede_edit_touches_only_added_lines(repo):
    old = mem("add", "-c", "fact", "The queue is RabbitMQ").out.strip()
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "base", cwd=repo)
    mem("supersede", old, "The queue is Redis streams")
    diff = git("diff", "--unified=0", "--", str(FACTS), cwd=repo)
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed == []
    assert "+  superseded_by: " in diff


def test_the_bad_ttl_hint_offers_only_what_the_category_takes(repo):
    fact = mem("add", "-c", "fact", "text", "--ttl", "soon")
    assert fact.code == 2 and "'30d'" in fact.err and "12h" not in fact.err and "10m" not in fact.err, fact.err
    assert mem("add", "-c", "fact", "text", "--ttl", "30d").code == 0  # what the hint offers is taken
    assert mem("init", "--preset", "sabre").code == 0
    own = mem("add", "-c", "semantic", "text", "--ttl", "soon")  # not one of Loa's five: hours and minutes too
    assert own.code == 2 and "'12h'" in own.err and "'10m'" in own.err, own.err
    assert mem("add", "-c", "semantic", "other text", "--ttl", "12h").code == 0


def test_a_ttl_in_seconds_expires_after_those_seconds(repo):
    assert mem("init", "--preset", "sabre").code == 0
    added = mem("add", "-c", "semantic", "The build cache is warm", "--ttl", "30s", "--json")
    assert added.code == 0, added.err
    assert json.loads(added.out)["expires_at"] == "2026-11-22T10:00:30Z"
    assert mem("validate").code == 0
    # Loa's five categories keep days only, so their entries stay valid against Loa's schema.
    loa = mem("add", "-c", "fact", "The queue is Redis", "--ttl", "30s")
    assert loa.code == 2 and "'30d'" in loa.err, loa.err


def test_key_supersedes_active_keyed_entry_and_get(repo):
    first = mem("add", "-c", "fact", "The database is Postgres 15", "--key", "db.engine").out.strip()
    assert mem("get", "db.engine").out == "The database is Postgres 15\n"
    second = json.loads(mem("add", "-c", "fact", "The database is Postgres 16", "--key", "db.engine", "--json").out)
    assert second["supersedes"] == first
    assert mem("get", "db.engine").out == "The database is Postgres 16\n"
    missing = mem("get", "db.missing")
    assert missing.code == 1 and missing.err.startswith("error:")
    assert "`mem facts`" in missing.err and "mem list --json" not in missing.err  # the command that lists keys
    assert "db.engine" in mem("facts").out


def test_list_filters_and_order(repo):
    a = mem("add", "-c", "fact", "alpha fact", "-t", "one").out.strip()
    b = mem(
        "add", "-c", "error", "beta error happened", "-t", "two", env={"MEM_NOW": "2026-11-22T11:00:00Z"}
    ).out.strip()
    c = mem("add", "-c", "fact", "gamma fact", "-t", "two", env={"MEM_NOW": "2026-11-22T12:00:00Z"}).out.strip()
    ids = lambda *args: [e["id"] for e in json.loads(mem("list", *args, "--json").out)]
    assert ids() == [c, b, a]
    assert ids("-c", "fact") == [c, a]
    assert ids("-t", "two") == [c, b]
    assert ids("--recent", "1") == [c]
    # 40 days later the 30d error has expired.
    later = {"MEM_NOW": "2027-01-05T00:00:00Z"}
    assert [e["id"] for e in json.loads(mem("list", "--json", env=later).out)] == [c, a]
    assert b in [e["id"] for e in json.loads(mem("list", "--expired", "--json", env=later).out)]
    assert mem("show", b, env=later).code == 0


def test_show_unknown_id_exit_1(repo):
    result = mem("show", "MEM-20200101-001")
    assert result.code == 1 and result.err.startswith("error: no memory")


def test_damaged_file_blocks_only_its_category(repo):
    errors = repo / "grimoires/loa/memory/errors.yaml"
    errors.write_text("- id: MEM-1\n  content: [unclosed\n")
    before = errors.read_bytes()
    result = mem("add", "-c", "error", "the deploy failed again")
    assert result.code == 3
    assert "errors.yaml:" in result.err and result.err.startswith("error:")
    assert errors.read_bytes() == before
    validate = mem("validate")
    assert validate.code == 3 and "errors.yaml" in validate.out


def test_ids_in_a_damaged_file_are_never_reused(repo):
    # Issue 21.1: a broken facts.yaml was skipped, so its id was handed out
    # again and restoring the file gave a duplicate-id.
    assert mem("add", "-c", "fact", "The API gateway is Kong 3.4").out.strip() == "MEM-20261122-001"
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "fact", cwd=repo)
    text = FACTS.read_text()
    FACTS.write_text(text.replace("  summary: The API", '  summary: "The API'))
    added = mem("add", "-c", "decision", "We keep Kong config in git", "--confidence", "0.95")
    assert added.code == 0, added.err
    assert added.out.strip() == "MEM-20261122-002"
    assert "facts.yaml" in added.err  # the skipped file is named
    FACTS.write_text(text)
    assert mem("validate").code == 0
    # an explicit id held by the damaged file is refused too
    FACTS.write_text(text.replace("  summary: The API", '  summary: "The API'))
    line = json.dumps(
        {
            "id": "MEM-20261122-001",
            "category": "decision",
            "content": "Imported decision about Kong",
            "confidence": 0.9,
            "source": {"session_id": "s", "timestamp": "2026-11-22T09:00:00Z"},
        }
    )
    imported = mem("import", "-", input=line + "\n")
    assert imported.code == 2 and "MEM-20261122-001" in imported.err


def test_a_damaged_file_that_cannot_be_read_stops_new_ids(repo):
    # Not UTF-8 is read for its ids all the same; outside the repository is not
    # read at all, so no id can be called free: exit 3 naming the file.
    mem("add", "-c", "fact", "The API gateway is Kong 3.4")
    FACTS.write_bytes(FACTS.read_bytes().replace(b"Kong", b"K\xffng"))
    assert (
        mem("add", "-c", "decision", "We keep Kong config in git", "--confidence", "0.95").out.strip()
        == "MEM-20261122-002"
    )
    outside = repo.parent / "outside.yaml"
    outside.write_text("- id: MEM-20261122-003\n")
    FACTS.unlink()
    FACTS.symlink_to(outside)
    before = DECISIONS.read_bytes()
    result = mem("add", "-c", "decision", "We pin Kong plugins", "--confidence", "0.95")
    assert result.code == 3 and "facts.yaml" in result.err and "cannot be read for the ids" in result.err
    assert DECISIONS.read_bytes() == before


@pytest.mark.parametrize(
    "command",
    [("supersede", "{id}", "The cache lives in valkey now"), ("apply", "{id}", "--success"), ("archive", "{id}")],
)
def test_writes_to_an_id_two_entries_share_are_refused(repo, command):
    # Issue 21.2: supersede and apply edited whichever copy came first.
    entry_id = mem("add", "-c", "fact", "The cache lives in redis").out.strip()
    copy = FACTS.read_text()[FACTS.read_text().index("- id:") :]
    learnings = repo / "grimoires/loa/memory/learnings.yaml"
    learnings.write_text(learnings.read_text() + copy)
    before = {path: path.read_bytes() for path in (FACTS, learnings)}
    result = mem(*[part.format(id=entry_id) for part in command])
    assert result.code == 3, result.out + result.err
    assert result.err.count("\n") == 1 and "facts.yaml:4" in result.err and "learnings.yaml:4" in result.err
    assert "mem validate" in result.err
    assert {path: path.read_bytes() for path in before} == before


def test_bad_config_exit_3(repo):
    config = repo / ".loa.config.yaml"
    config.write_text("memory_schema:\n  storage_dir: [oops\n")
    result = mem("list")
    assert result.code == 3 and ".loa.config.yaml:" in result.err and result.err.count("\n") == 1
    config.write_text("memory_schema:\n  retrieval: {max_per_query: lots}\n")
    result = mem("list")
    assert result.code == 3 and "max_per_query" in result.err
    config.write_text("memory_schema:\n  storage_dir: ../../elsewhere\n")
    result = mem("list")
    assert result.code == 3 and "outside the repository" in result.err


def test_custom_category_from_config(repo):
    config = repo / ".loa.config.yaml"
    config.write_text(
        config.read_text().replace(
            "    preference:",
            "    runbook:    {storage_file: runbooks.yaml, ttl: permanent, confidence_required: 0.5}\n    preference:",
        )
    )
    result = mem("add", "-c", "runbook", "Restart the worker with systemctl restart worker")
    assert result.code == 0, result.err
    assert (repo / "grimoires/loa/memory/runbooks.yaml").read_text().count("- id:") == 1
    assert mem("validate").code == 0


def test_concurrent_adds_all_succeed_with_distinct_ids(repo):
    procs = [
        subprocess.Popen(
            [
                str(Path(sys.executable).parent / "mem"),
                "add",
                "-c",
                "fact",
                f"parallel fact number {i} with distinct words {i * 7919}",
            ],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(12)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 12, [o[1] for o in outs]
    ids = {o[0].decode().strip() for o in outs}
    assert len(ids) == 12
    listed = {e["id"] for e in json.loads(mem("list", "--json").out)}
    assert listed == ids
    assert mem("validate").code == 0


def test_an_id_once_issued_is_never_issued_again(repo):
    """Issue 33.7: after `git checkout --` discarded a new entry, its id went
    to the next memory, three times in a row. The clone remembers the ids it
    issued (local, git-ignored state): a discarded id, a deleted catalog, a
    discarded supersede never bring one back; a clone without the record
    numbers from the files."""
    ignore = repo / "grimoires/loa/memory/.gitignore"
    ignore.write_text(ignore.read_text().replace("local/", ""))  # a grimoire from before `local/` was ignored
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init", cwd=repo)
    discard = lambda: git("checkout", "-q", "--", "grimoires", cwd=repo)
    issued = []
    for text in ("The parser reads tabs as four spaces", "The lexer keeps comments", "The tokenizer splits on dots"):
        issued.append(mem("add", "-c", "fact", text).out.strip())
        discard()
    assert issued == ["MEM-20261122-001", "MEM-20261122-002", "MEM-20261122-003"]
    shutil.rmtree(repo / "grimoires/loa/memory/.cache")  # the catalog is derived: losing it changes nothing
    kept = mem("add", "-c", "fact", "The cache is rebuilt from the files").out.strip()
    assert kept == "MEM-20261122-004"
    git("commit", "-qam", "a fact", cwd=repo)
    assert mem("supersede", kept, "The cache is rebuilt from the files, file by file").out.strip() == "MEM-20261122-005"
    discard()
    assert mem("supersede", kept, "The cache is rebuilt from the changed files only").out.strip() == "MEM-20261122-006"
    # Restoring a discarded memory with its own id is not issuing it: accepted.
    line = json.dumps(
        {
            "id": "MEM-20261122-002",
            "category": "fact",
            "content": "The lexer keeps comments",
            "confidence": 0.9,
            "source": {"session_id": "s", "timestamp": "2026-11-22T09:00:00Z"},
        }
    )
    assert mem("import", "-", input=line + "\n").code == 0
    # The record is git-ignored
    assert git("status", "--porcelain", "--untracked-files=all", cwd=repo) == " M grimoires/loa/memory/facts.yaml\n"
    # Without the record (a fresh clone), the files decide, as before.
    (repo / "grimoires/loa/memory/local/issued-ids.json").unlink()
    discard()
    assert mem("add", "-c", "fact", "A fresh clone numbers from the files").out.strip() == "MEM-20261122-005"


def test_concurrent_writers_never_issue_an_id_twice_across_discards(repo):
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init", cwd=repo)
    ids = []
    for round in range(2):
        procs = [
            subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "mem"),
                    "add",
                    "-c",
                    "fact",
                    f"round {round} fact {i} words {i * 7919}",
                ],
                cwd=repo,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for i in range(6)
        ]
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0] * 6, [o[1] for o in outs]
        ids += [o[0].decode().strip() for o in outs]
        git("checkout", "-q", "--", "grimoires", cwd=repo)
    assert sorted(ids) == [f"MEM-20261122-{n:03d}" for n in range(1, 13)]


def test_python_m_entry_point(repo):
    result = subprocess.run(
        [sys.executable, "-m", "grimoire_cli", "add", "-c", "fact", "python -m works"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0 and result.stdout.strip().startswith("MEM-")
    result = mem_process("show", "MEM-20200101-001", cwd=repo)
    assert result.returncode == 1 and result.stderr.decode().startswith("error:") and b"Traceback" not in result.stderr


@settings(max_examples=examples(300), deadline=None)
@given(
    st.text(min_size=1, max_size=120),
    st.lists(st.tuples(st.integers(0, 200), st.sampled_from(["insert", "delete"]), st.characters()), max_size=30),
)
def test_near_duplicates_are_within_the_lengths_the_check_reads(text, edits):
    """A single `add` reads only entries of a length that could be 90 % alike;
    no text that alike may fall outside that window."""
    from rapidfuzz import fuzz

    from grimoire_cli.memory.duplicates import NEAR, alike_lengths

    other = text
    for place, kind, char in edits:
        place %= len(other) + 1
        other = other[:place] + char + other[place:] if kind == "insert" else other[:place] + other[place + 1 :]
    if fuzz.ratio(text, other) >= NEAR:
        low, high = alike_lengths(len(text))
        assert low <= len(other) <= high


_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "pa", "de", "gu"]


@settings(max_examples=examples(200), deadline=None)
@given(
    st.randoms(use_true_random=False),
    st.lists(
        st.tuples(
            st.integers(0, 10**6),
            st.lists(
                st.tuples(
                    st.integers(0, 10**6), st.sampled_from(["insert", "delete", "replace"]), st.sampled_from("abz ")
                ),
                max_size=3,
            ),
        ),
        min_size=1,
        max_size=10,
    ),
)
def test_a_bulk_writes_lookup_finds_the_near_duplicate_a_full_scan_finds(rng, queries):
    """A bulk write (`Duplicates(indexed=True)`) compares an item only with the entries sharing the most of its
    rarest words and word pairs: for a text up to 3 edits from an entry it must answer as comparing with every
    entry of a like length does (a `mem add`). 80 entries of 8-14 words, so each lookup's window passes TOP."""
    from grimoire_cli.core.model import normalize_text
    from grimoire_cli.memory.duplicates import Duplicates

    words = sorted({"".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3))) for _ in range(150)})
    stored = list(dict.fromkeys(" ".join(rng.choice(words) for _ in range(rng.randint(8, 14))) for _ in range(80)))
    pairs = [(f"id{n}", text) for n, text in enumerate(stored)]
    scanning, indexed = Duplicates(pairs), Duplicates(pairs, indexed=True)
    for which, edits in queries:
        text = stored[which % len(stored)]
        for place, kind, char in edits:
            place %= len(text) + 1
            if kind == "insert":
                text = text[:place] + char + text[place:]
            else:
                text = text[:place] + (char if kind == "replace" else "") + text[place + 1 :]
        item = {"content": normalize_text(text) or "empty"}
        assert indexed.of(item) == scanning.of(item), item
