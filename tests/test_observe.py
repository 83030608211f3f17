"""`mem observe`: execution records into the local log, checked, redacted,
all or nothing (docs/learning.md)."""

import json
import sys
from pathlib import Path

import pytest
from conftest import ROOT, git, mem

sys.path.insert(0, str(ROOT / "benchmarks"))
from executions import generate

LOG = Path("grimoires/loa/memory/local/observations.jsonl")
TOKEN = "ghp_" + "a1" * 18  # split: no secret in this file


def _lines(records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def test_generated_runs_are_appended_whole_with_personal_data_redacted(repo, tmp_path):
    records = generate(300, seed=3)
    path = tmp_path / "runs.jsonl"
    path.write_text(_lines(records))
    result = mem("observe", path, "--json")
    assert result.code == 0, result.err
    emails = sum("@example.com" in r["goal"] for r in records)
    assert json.loads(result.out) == {
        "records": 300,
        "steps": sum(len(r["steps"]) for r in records),
        "redacted": emails,
        "rejected": [],
    }
    stored = [json.loads(line) for line in LOG.read_text().splitlines()]
    assert len(stored) == 300
    for kept, given in zip(stored, records):
        assert kept["steps"] == given["steps"] and kept["task_id"] == given["task_id"]
        assert ("[redacted:" in kept["goal"]) == ("@example.com" in given["goal"])
    assert mem("observe", path).out.startswith(
        f"observed 300 records ({sum(len(r['steps']) for r in records)} steps), {emails} redacted"
    )
    assert len(LOG.read_text().splitlines()) == 600  # appended, never rewritten
    assert git("status", "--porcelain", "--untracked-files=all", "grimoires", cwd=repo).count("observations") == 0


def test_a_secret_in_params_or_an_error_is_stored_redacted(repo):
    record = {
        "task_id": "t1",
        "outcome": "failure",
        "context": "shipping",
        "steps": [
            {
                "tool": "deploy",
                "status": "failed",
                "params": {"token": TOKEN, "nested": [f"Bearer {TOKEN}"]},
                "error": f"auth failed for {TOKEN}",
            }
        ],
        "corrections": [{"field": "carrier", "original": TOKEN, "corrected": "dhl"}],
        "metadata": {TOKEN: "a key as a key"},
    }
    result = mem("observe", "-", "--json", input=json.dumps(record) + "\n")
    assert json.loads(result.out)["redacted"] == 5
    stored = LOG.read_text()
    assert TOKEN not in stored and stored.count("[redacted:") == 5
    kept = json.loads(stored)
    assert set(kept) == set(record) and set(kept["steps"][0]) == set(record["steps"][0])  # field names untouched


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", "line 2: not JSON"),
        ('{"task_id": "t", "outcome": "success"}', "line 2: a record without steps"),
        (
            '{"task_id": "t", "outcome": "success", "steps": [{"tool": "a", "status": "completed", "duration_ms": -5}]}',
            "line 2: steps.0.duration_ms: -5 is less than the minimum of 0",
        ),
        (
            '{"task_id": "t", "outcome": "partial", "steps": [{"tool": "a", "status": "completed"}]}',
            "line 2: outcome: 'partial' is not one of ['success', 'failure']",
        ),
        ('{"task_id": "t", "outcome": "success", "steps": []}', "line 2: a record without steps"),
    ],
)
def test_bad_records_are_one_line_and_nothing_is_appended(repo, line, message):
    good = json.dumps(generate(1)[0])
    result = mem("observe", "-", input=f"{good}\n{line}\n")
    assert result.code == 2 and message in result.err and "nothing observed" in result.err, result.err
    assert len(result.err.splitlines()) == 1 and not LOG.exists()


def test_skip_invalid_appends_the_rest_and_reports(repo):
    good = [json.dumps(r) for r in generate(3)]
    result = mem("observe", "-", "--skip-invalid", input="\n".join([good[0], "[]", good[1], "{", good[2]]) + "\n")
    assert result.code == 1 and result.out.startswith("observed 3 records")
    assert (
        "warning: line 2: a record must be a JSON object, not list" in result.err
        and "warning: line 4: not JSON" in result.err
    )
    assert len(LOG.read_text().splitlines()) == 3


def test_a_claude_code_post_tool_use_payload_is_a_one_step_record(repo):
    base = {
        "session_id": "s-1",
        "transcript_path": "/tmp/t.jsonl",
        "hook_event_name": "PostToolUse",
        "cwd": str(repo),
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -q", "description": "run tests"},
    }
    ok = mem(
        "observe",
        "--claude-hook",
        input=json.dumps({**base, "tool_response": {"stdout": "1 passed", "stderr": "", "interrupted": False}}),
    )
    bad = mem(
        "observe",
        "--claude-hook",
        input=json.dumps(
            {
                **base,
                "tool_name": "Edit",
                "tool_use_id": "toolu_1",
                "tool_response": {"is_error": True, "error": "old_string not found"},
            }
        ),
    )
    assert ok.code == 0 and bad.code == 0, (ok.err, bad.err)
    first, second = [json.loads(line) for line in LOG.read_text().splitlines()]
    assert first["outcome"] == "success" and first["steps"] == [
        {"tool": "Bash", "params": base["tool_input"], "status": "completed", "retries": 0, "error": None}
    ]
    assert first["task_id"].startswith("s-1:") and first["context"] == "repo" and first["agent"] == "claude-code"
    assert (second["task_id"], second["outcome"], second["steps"][0]["error"]) == (
        "s-1:toolu_1",
        "failure",
        "old_string not found",
    )
    wrong = mem("observe", "--claude-hook", input='{"hook_event_name": "PostToolUse"}')
    # A hook never fails the session
    assert wrong.code == 0 and "no tool_name" in wrong.err and len(LOG.read_text().splitlines()) == 2


def test_the_python_api_observes_mappings(grimoire):
    result = grimoire.learning.observe(generate(5, seed=1))
    assert (result.records, result.rejected) == (5, [])


def test_a_value_under_a_secret_name_is_redacted_and_a_refusal_quotes_no_secret(repo):
    record = {
        "task_id": "t",
        "outcome": "success",
        "steps": [
            {
                "tool": "login",
                "status": "completed",
                "params": {"password": "Tr0ub4dor&3xyz", "headers": {"Authorization": "Bearer 0123456789abcdefXYZ"}},
            }
        ],
        "corrections": [{"field": "password", "original": "OldPassw0rd!x", "corrected": "hunter2hunter2"}],
    }
    result = mem("observe", "-", "--json", input=json.dumps(record) + "\n")
    stored = LOG.read_text()
    for secret in ("Tr0ub4dor&3xyz", "0123456789abcdefXYZ", "OldPassw0rd!x", "hunter2hunter2"):
        assert secret not in stored, secret
    assert json.loads(result.out)["redacted"] >= 4
    kept = json.loads(stored)
    assert set(kept["steps"][0]["params"]) == {"password", "headers"}  # the names stay
    bad = {
        "task_id": "x",
        "outcome": "success",
        "steps": [{"tool": "a", "status": "failed", "error": {"token": TOKEN}}],
    }
    refused = mem("observe", "-", input=json.dumps(bad) + "\n")
    assert refused.code == 2 and TOKEN not in refused.err and "[redacted:" in refused.err


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e300"])
def test_numbers_no_statistic_can_hold_are_refused(repo, number):
    line = f'{{"task_id": "t", "outcome": "success", "steps": [{{"tool": "a", "status": "completed", "duration_ms": {number}}}]}}'
    result = mem("observe", "-", input=line + "\n")
    assert result.code == 2 and len(result.err.splitlines()) == 1 and not LOG.exists()


def test_a_line_separator_inside_a_string_is_not_a_line_end(repo):
    record = {
        "task_id": "t",
        "outcome": "failure",
        "steps": [{"tool": "a", "status": "failed", "error": "one\u2028two\x85three"}],
    }
    result = mem("observe", "-", input=json.dumps(record, ensure_ascii=False) + "\n")
    assert result.code == 0 and json.loads(LOG.read_text())["steps"][0]["error"] == "one\u2028two\x85three"


def test_the_log_is_ignored_even_without_the_grimoires_ignore_rules(repo):
    Path("grimoires/loa/memory/.gitignore").unlink()
    assert mem("observe", "-", input=json.dumps(generate(1)[0]) + "\n").code == 0
    assert "observations" not in git("status", "--porcelain", "--untracked-files=all", cwd=repo)


def test_claude_code_failures_and_other_events(repo):
    base = {
        "session_id": "s-2",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(repo),
        "tool_name": "Bash",
        "tool_input": {"command": "false"},
    }
    failed = mem(
        "observe",
        "--claude-hook",
        input=json.dumps(
            {
                **base,
                "hook_event_name": "PostToolUseFailure",
                "tool_use_id": "toolu_9",
                "error": "Command exited with non-zero status code 1",
                "is_interrupt": False,
            }
        ),
    )
    other = mem("observe", "--claude-hook", input=json.dumps({**base, "hook_event_name": "PreToolUse"}))
    assert failed.code == 0 and other.code == 0 and other.out == ""
    (record,) = [json.loads(line) for line in LOG.read_text().splitlines()]
    assert (record["outcome"], record["steps"][0]["status"], record["steps"][0]["error"]) == (
        "failure",
        "failed",
        "Command exited with non-zero status code 1",
    )
    broken = mem("observe", "--claude-hook", input="{not json")
    assert broken.code == 0 and broken.err.startswith("warning: mem observe --claude-hook: stdin is not JSON")


def test_a_half_line_a_crash_left_stays_apart_from_the_next_append(repo):
    _ = mem("observe", "-", input=json.dumps(generate(1)[0]) + "\n")
    with open(LOG, "a") as handle:
        handle.write('{"task_id": "cut sh')
    assert mem("observe", "-", input=json.dumps(generate(2, seed=5)[1]) + "\n").code == 0
    lines = LOG.read_text().split("\n")
    assert lines[1] == '{"task_id": "cut sh' and json.loads(lines[2])["task_id"] == "task-000001" and lines[3] == ""
