"""Prospective tasks (SABRE): task add / done / cancel, tasks, due, event; due first in check and context."""

import json
from pathlib import Path

import pytest
from conftest import fresh_repo, git, mem

MEMORY = Path("grimoires/loa/memory")
TASKS = MEMORY / "tasks.yaml"
HOUR_LATER = {"MEM_NOW": "2026-11-22T11:00:01Z"}


def _add(*args) -> str:
    result = mem("task", "add", *args)
    assert result.code == 0, result.err
    return result.out.strip()


def test_a_timed_task_becomes_due_at_its_time(sabre):
    entry_id = _add("Rotate the logs", "--due", "+1h", "--context", "host=db1")
    shown = json.loads(mem("show", entry_id, "--json").out)
    assert (shown["trigger"], shown["status"], shown["due_at"]) == (
        "time:2026-11-22T11:00:00Z",
        "pending",
        "2026-11-22T11:00:00Z",
    )
    assert shown["context"] == {"host": "db1"} and "expires_at" not in shown  # a waiting task never expires
    early = mem("due")
    assert early.code == 1 and early.out == ""
    later = mem("due", env=HOUR_LATER)
    assert later.code == 0 and later.out.startswith(entry_id) and "Rotate the logs" in later.out
    assert mem("validate").code == 0


@pytest.mark.parametrize(("due", "due_at"), [("+90s", "10:01:30"), ("+30m", "10:30:00"), ("+2h", "12:00:00")])
def test_every_relative_due_form_the_help_names_is_read(sabre, due, due_at):
    """`mem due --help` and `mem task add --help` name the forms `--due` reads, seconds included."""
    for command in (("due",), ("task", "add")):
        assert "+<n>s, +<n>m, +<n>h or +<n>d" in " ".join(mem(*command, "--help").out.split()), command
    entry_id = _add("Rotate the logs", "--due", due)
    assert json.loads(mem("show", entry_id, "--json").out)["due_at"] == f"2026-11-22T{due_at}Z"
    assert mem("due", env={"MEM_NOW": f"2026-11-22T{due_at}Z"}).out.startswith(entry_id)
    bad = mem("task", "add", "Rotate the logs", "--due", "+90x")
    assert bad.code == 2 and "give +90s, +30m, +1h, +2d" in bad.err


def test_an_event_task_is_due_once_its_event_fires(sabre):
    waiting = _add("Re-run the report", "--on", "data.loaded")
    other = _add("Tell the team", "--on", "deploy")
    assert mem("due").code == 1
    fired = json.loads(mem("event", "data.loaded", "--json").out)
    assert fired == {"event": "data.loaded", "due": [waiting]}
    assert [e["id"] for e in json.loads(mem("due", "--json").out)] == [waiting]
    assert json.loads(mem("event", "data.loaded", "--json").out)["due"] == []  # fired once
    assert "no pending task waits for nothing" in mem("event", "nothing").err
    assert other in mem("tasks").out


def test_a_next_session_task_is_due_at_check(sabre):
    entry_id = _add("Say hello to the new teammate", "--next-session")
    assert mem("due").code == 1  # not in the session that added it (MEM_SESSION_ID=test-session)
    assert json.loads(mem("check", "--json").out)["tasks"] == []
    assert mem("due", env={"MEM_SESSION_ID": ""}).code == 0  # no session named: every process is one
    monkey_next = {"MEM_SESSION_ID": "the-next-session"}
    assert mem("due", env=monkey_next).out.startswith(entry_id)
    check = json.loads(mem("check", "--json", env=monkey_next).out)
    assert check["due"][0] == entry_id
    assert check["tasks"] == [
        {"id": entry_id, "task": "Say hello to the new teammate", "trigger": "session-start", "due_at": None}
    ]
    text = mem("check", env=monkey_next).out
    assert text.splitlines()[0].startswith(f"mem: task due at session start: {entry_id}")


def test_due_tasks_come_first_in_check_and_context(sabre):
    assert mem("add", "-c", "decision", "We deploy on Tuesdays only", "--confidence", "0.95").code == 0
    assert mem("add", "-c", "learning", "Flaky tests hide behind retries", "--ttl", "3d").code == 0
    entry_id = _add("Rotate the logs", "--due", "+1h")
    later = {"MEM_NOW": "2026-11-24T11:00:01Z"}  # the learning expires within the warning window
    check = json.loads(mem("check", "--json", "--no-archive", env=later).out)
    assert check["due"][0] == entry_id and len(check["due"]) == 2
    block = mem("context", env=later).out.splitlines()
    assert block[2] == f"- {entry_id} (task, task due now): Rotate the logs"  # under the header and the data note
    queried = json.loads(mem("context", "deploy", "--json", env=later).out)
    # Shown though it does not match, counted once
    assert queried["included"][0] == entry_id and queried["left_out"] == 0
    before = mem("context", "deploy", "--json").out
    assert entry_id not in json.loads(before)["included"]  # not due yet: only what matches


def test_done_and_cancel_are_edits_in_place_then_archived_after_the_ttl(sabre):
    done = _add("Rotate the logs", "--due", "+1h")
    cancelled = _add("Re-run the report", "--on", "data.loaded")
    git("commit", "-q", "-am", "tasks", cwd=sabre)
    assert mem("task", "done", done).out == f"{done} done\n"
    diff = git("diff", "-U0", cwd=sabre)
    added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert sorted(line.split(":")[0] for line in added) == ["+  done_at", "+  expires_at", "+  status"]
    assert [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")] == [
        "-  status: pending"
    ]
    assert json.loads(mem("task", "cancel", cancelled, "--json").out)["status"] == "cancelled"
    assert mem("tasks").out == ""
    assert len(json.loads(mem("tasks", "--all", "--json").out)) == 2
    refused = mem("task", "done", done)
    assert refused.code == 2 and "not pending (it is done)" in refused.err
    assert mem("validate").code == 0
    git("commit", "-q", "-am", "ended", cwd=sabre)
    archived = json.loads(mem("archive", "--json", env={"MEM_NOW": "2026-12-23T10:00:00Z"}).out)  # 30d after done
    assert sorted(archived["archived"]) == sorted([done, cancelled]) and archived["commit"]
    assert mem("validate").code == 0


@pytest.mark.parametrize(
    "args,message",
    [
        (["task", "add", "x", "--due", "2026-11-01T00:00:00Z"], "not in the future"),
        (["task", "add", "x", "--due", "soon"], "cannot read --due"),
        (["task", "add", "x"], "exactly one trigger"),
        (["task", "add", "x", "--due", "+1h", "--next-session"], "exactly one trigger"),
        (["task", "add", "x", "--on", "Not An Event"], "bad event name"),
        (["task", "add", "x", "--on", "e", "--context", "novalue"], "bad --context"),
        (["task", "add", "x", "--on", "e", "-c", "fact"], "of kind note, not task"),
        (["event", "Bad/Event"], "bad event name"),
    ],
)
def test_bad_task_input_is_one_error_line_and_exit_2(sabre, args, message):
    before = (sabre / TASKS).read_bytes()
    result = mem(*args)
    assert result.code == 2 and result.err.startswith("error: ") and message in result.err, result.err
    assert (sabre / TASKS).read_bytes() == before


def test_finishing_what_is_not_a_task(sabre):
    fact = mem("add", "-c", "fact", "The build uses make").out.strip()
    assert mem("task", "done", fact).code == 2
    assert mem("task", "done", "MEM-20990101-001").code == 1


def test_task_commands_without_a_task_category_name_the_preset(repo):
    for args in (["tasks"], ["due"], ["event", "deploy"], ["task", "add", "x", "--next-session"]):
        result = mem(*args)
        assert result.code == 2 and "mem init --preset sabre" in result.err, args


def test_a_plain_add_to_a_task_category_is_refused(sabre):
    result = mem("add", "-c", "task", "Rotate the logs")
    assert result.code == 2 and "mem task" in result.err


def test_library_calls(sabre):
    from grimoire_cli import Grimoire

    g = Grimoire.open(sabre)
    task = g.tasks.add("Rotate the logs", due="+2h")
    waiting = g.tasks.add("Re-run the report", on="data.loaded")
    assert [t.id for t in g.tasks.list()] == [task.id, waiting.id]
    assert [t.id for t in g.tasks.fire("data.loaded")] == [waiting.id]
    assert g.tasks.end(waiting.id, "done").data["status"] == "done"
    assert g.tasks.end(task.id, "cancelled").data["status"] == "cancelled"
    assert g.tasks.list() == [] and g.tasks.due() == []


def test_private_sections_never_reach_a_task(sabre):
    entry_id = _add(
        "Call Bob <private>door code 4711</private> today",
        "--next-session",
        "--context",
        "note=<private>pin 1234</private>ok",
    )
    text = (sabre / TASKS).read_text()
    assert "4711" not in text and "1234" not in text and "<private>" not in text
    assert json.loads(mem("show", entry_id, "--json").out)["context"] == {"note": "ok"}


def test_a_finished_task_survives_export_and_import(sabre, tmp_path, monkeypatch):
    entry_id = _add("Rotate the logs", "--due", "+1h")
    assert mem("task", "done", entry_id).code == 0
    exported = mem("export").out
    fresh_repo(tmp_path / "other", monkeypatch, "sabre")
    assert mem("import", "-", input=exported).code == 0
    shown = json.loads(mem("show", entry_id, "--json").out)
    assert (shown["status"], shown["done_at"], shown["expires_at"]) == (
        "done",
        "2026-11-22T10:00:00Z",
        "2026-12-22T10:00:00Z",
    )
    assert mem("validate").code == 0


def test_a_time_trigger_without_due_at_is_due_at_its_time(sabre):
    line = {
        "category": "task",
        "content": "Pay the invoice",
        "task": "Pay the invoice",
        "trigger": "time:2026-11-22T12:00:00Z",
        "status": "pending",
    }
    assert mem("import", "-", input=json.dumps(line)).code == 0
    assert mem("due").code == 1
    later = mem("due", env={"MEM_NOW": "2026-11-22T12:00:00Z"})
    assert later.code == 0 and "due 2026-11-22T12:00:00Z" in later.out and "Pay the invoice" in later.out


def test_the_catalog_holds_tasks_as_a_rebuild_would(sabre):
    import shutil

    from conftest import catalog_dump

    done = _add("Rotate the logs", "--due", "+1h", "--context", "host=db1")
    _add("Re-run the report", "--on", "data.loaded")
    assert mem("event", "data.loaded").code == 0 and mem("task", "done", done).code == 0
    assert mem("remember", "db.port", "-", input="5432").code == 0
    mem("list")
    kept = catalog_dump(sabre)
    shutil.rmtree(sabre / MEMORY / ".cache")
    mem("list")
    assert catalog_dump(sabre) == kept


def test_query_finds_a_task_by_its_context_values(sabre):
    entry_id = _add("Rotate the logs", "--due", "+1h", "--context", "host=db1")
    assert [h["id"] for h in json.loads(mem("query", "db1", "--json").out)] == [entry_id]


def test_a_session_hook_says_a_due_task_once(sabre):
    """`mem check --hook` (what the session hooks run) names a due task the
    first time, says nothing of it the next time, and names a newly due one."""
    first = _add("Rotate the logs", "--due", "+1h")
    later = _add("Renew the certificate", "--due", "+2h")
    assert mem("check", "--hook").out == ""  # nothing due yet
    said = mem("check", "--hook", env=HOUR_LATER).out
    assert said.startswith(f"mem: task due since 2026-11-22T11:00:00Z: {first} Rotate the logs") and later not in said
    assert mem("check", "--hook", env=HOUR_LATER).out == ""  # already said
    again = mem("check", "--hook", env={"MEM_NOW": "2026-11-22T12:00:01Z"}).out
    assert later in again and first not in again
