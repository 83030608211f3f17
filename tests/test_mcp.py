"""`mem mcp`: the real server process driven over stdio by the MCP SDK's own
client session, checked against what `mem … --json` prints for the same
call (docs/agents.md)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from conftest import git, mem, mem_process, wal_pinned, with_preset
from jsonschema import Draft202012Validator

from grimoire_cli.integrations.calls import CALLS, invoke

pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters, stdio_client

MEM = str(Path(sys.executable).parent / "mem")


@asynccontextmanager
async def session(cwd: Path, *args: str):
    """A client session with `mem [args] mcp` started in `cwd`, this test's environment passed on (MEM_NOW)."""
    params = StdioServerParameters(command=MEM, args=[*args, "mcp"], cwd=str(cwd), env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as client:
            await client.initialize()
            yield client


async def answer_of(client: ClientSession, name: str, arguments: dict | None = None):
    """A tool's result parsed from its text (the `--json` shape); an error's text as a string."""
    result = await client.call_tool(name, arguments or {})
    text = result.content[0].text
    return ("error", text, (result.meta or {}).get("exit_code")) if result.is_error else json.loads(text)


def cli_json(*args: str):
    run = mem(*args, "--json")
    assert run.code in (0, 1), run.err
    return json.loads(run.out)


def cli_error(*args: str) -> tuple[str, int]:
    run = mem(*args)
    assert run.code not in (0,), run.out
    return run.err.strip(), run.code


@pytest.fixture
def everything(repo) -> Path:
    """A grimoire with every kind of category (sabre, protea, pms), a few memories of each."""
    for preset in ("sabre", "protea", "samaritan"):
        assert mem("init", "--preset", preset).code == 0
    with_preset(repo, "pms")
    assert (
        mem(
            "add", "-c", "decision", "--confidence", "0.9", "-t", "db", "We use PostgreSQL 16 for the orders database"
        ).code
        == 0
    )
    assert (
        mem(
            "add",
            "-c",
            "learning",
            "Run the migrations before the API tests or they fail",
            "-t",
            "tests",
            "--importance",
            "7",
        ).code
        == 0
    )
    assert mem("remember", "db.port", "5432").code == 0
    assert (
        mem(
            "episode",
            "deploy-failed",
            "--context",
            "service=api",
            "--learned",
            "the cache needs a warm-up",
            "--outcome",
            "failure",
        ).code
        == 0
    )
    assert (
        mem(
            "procedure",
            "add",
            "-",
            input="name: deploy\ndescription: ship it\nsteps:\n  - name: build\n    run: make build\n"
            "  - name: release {service}\n",
        ).code
        == 0
    )
    assert mem("task", "add", "--next-session", "check the nightly backup").code == 0
    assert (
        mem(
            "observe",
            "-",
            input=json.dumps(
                {
                    "task_id": "t1",
                    "goal": "create shipment 7",
                    "outcome": "success",
                    "steps": [
                        {
                            "tool": "create_shipment",
                            "params": {"carrier": "ups"},
                            "status": "completed",
                            "duration_ms": 120,
                        }
                    ],
                }
            ),
        ).code
        == 0
    )
    return repo


def test_every_read_answers_exactly_as_the_cli_json(everything):
    """Each read-only tool returns what `mem … --json` prints for the same call, in the same state."""
    decision = cli_json("list", "-c", "decision")[0]["id"]
    reads = [
        ("query", {"text": "database"}, ["query", "database"]),
        ("query", {"text": "migrations", "explain": True, "limit": 1}, ["query", "migrations", "--explain", "-n", "1"]),
        ("context", {}, ["context"]),
        ("context", {"query": "database", "budget": 100}, ["context", "database", "--budget", "100"]),
        ("show", {"id": decision, "chain": True}, ["show", decision, "--chain"]),
        ("list", {"categories": ["decision", "learning"]}, ["list", "-c", "decision", "-c", "learning"]),
        ("get", {"key": "db.port"}, ["get", "db.port"]),
        ("stats", {}, ["stats"]),
        ("recall", {"key": "db.port"}, ["recall", "db.port"]),
        ("facts", {"pattern": "db.*"}, ["facts", "db.*"]),
        ("episodes", {"query": "deploy"}, ["episodes", "deploy"]),
        (
            "procedure",
            {"name": "deploy", "params": {"service": "api"}},
            ["procedure", "show", "deploy", "--param", "service=api"],
        ),
        ("procedures", {}, ["procedures"]),
        ("tasks_pending", {}, ["tasks"]),
        ("tasks_due", {}, ["due"]),
        ("chat_recent", {}, ["chat", "recent"]),
        ("tools", {}, ["tools"]),
        ("recommend", {"action": "create shipment"}, ["recommend", "create shipment"]),
        ("patterns", {}, ["patterns"]),
        ("metrics", {"by": "day"}, ["metrics", "--by", "day"]),
        ("recall_all", {"query": "shipment"}, ["recall-all", "shipment"]),
        ("insights", {}, ["insights"]),
    ]
    assert {name for name, _, _ in reads} == {c.name for c in CALLS.values() if c.read_only}

    async def run():
        async with session(everything) as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == list(CALLS)
            for tool in listed:
                Draft202012Validator.check_schema(tool.input_schema)
                assert len(tool.description) > 40 and tool.annotations.read_only_hint == CALLS[tool.name].read_only
            for name, arguments, argv in reads:
                expected = cli_json(*argv)  # (show records no access; query and context record theirs in both)
                got = await answer_of(client, name, arguments)
                assert got == cli_json(*argv) or got == expected, name

    anyio.run(run)


def test_writes_go_through_the_library_and_answer_in_the_cli_shape(everything):
    """Each writing tool writes what the command would, and its answer has the keys `mem … --json` gives."""
    old = cli_json("list", "-c", "learning")[0]["id"]
    task = cli_json("tasks")[0]["id"]

    async def run():
        async with session(everything) as client:
            saved = await answer_of(
                client,
                "save",
                {
                    "content": "Deploys go out on Tuesdays",
                    "category": "decision",
                    "confidence": 0.95,
                    "tags": ["deploy"],
                },
            )
            assert set(saved) == set(
                cli_json("add", "-c", "decision", "--confidence", "0.9", "-t", "review", "Reviews need two approvals")
            )
            assert cli_json("show", saved["id"])["content"] == "Deploys go out on Tuesdays"
            newer = await answer_of(
                client, "supersede", {"id": old, "content": "Run the migrations before any test suite"}
            )
            assert cli_json("show", old)["superseded_by"] == newer["id"]
            assert (newer["tags"], newer["importance"]) == (["tests"], 7)  # carried over, as `mem supersede` does
            applied = await answer_of(client, "apply", {"id": saved["id"], "success": True})
            assert applied["effectiveness"]["applications"] == 1
            kept = await answer_of(client, "remember", {"key": "db.pool", "value": {"size": 20}})
            assert cli_json("recall", "db.pool")["value"] == {"size": 20} and kept["written"] is True
            assert (await answer_of(client, "remember", {"key": "db.pool", "value": {"size": 20}}))["written"] is False
            episode = await answer_of(
                client, "episode", {"event": "db.migration", "outcome": "success", "context": {"table": "users"}}
            )
            assert cli_json("show", episode["id"])["event"] == "db.migration"
            runbook = {
                "name": "rollback",
                "description": "undo a release",
                "steps": [{"name": "revert", "run": "git revert HEAD"}],
            }
            assert (await answer_of(client, "procedure_add", {"document": runbook}))["written"] is True
            assert cli_json("procedure", "show", "rollback")["steps"][0]["run"] == "git revert HEAD"
            scheduled = await answer_of(client, "task_schedule", {"text": "rotate the logs", "on": "deploy"})
            assert (await answer_of(client, "event", {"name": "deploy"})) == {
                "event": "deploy",
                "due": [scheduled["id"]],
            }
            assert (await answer_of(client, "task_done", {"id": task}))["status"] == "done"
            assert (await answer_of(client, "task_cancel", {"id": scheduled["id"]}))["status"] == "cancelled"
            assert (await answer_of(client, "chat_add", {"role": "user", "text": "hello there"}))["role"] == "user"
            record = {
                "task_id": "t2",
                "goal": "create shipment 8",
                "outcome": "failure",
                "steps": [{"tool": "create_shipment", "status": "failed", "error": "carrier timeout"}],
            }
            assert (await answer_of(client, "observe", {"records": [record]}))["records"] == 1
            assert cli_json("tools", "create_shipment")[0]["executions"] == 2
            correction = await answer_of(client, "correct", {"field": "carrier", "value": "fedex", "context": "eu"})
            assert set(correction) == set(cli_json("correct", "carrier", "dhl", "--context", "us"))
            learned = await answer_of(client, "learn", {"dry_run": True})
            assert set(learned) == set(cli_json("learn", "--dry-run"))

    anyio.run(run)
    assert "Deploys go out on Tuesdays" in (everything / "grimoires/loa/memory/decisions.yaml").read_text()


def test_consolidate_runs_the_configured_summarizer_only(everything, tmp_path):
    """consolidate takes a transcript by text or path and runs consolidate.command; no tool argument chooses a command."""
    script = tmp_path / "summarize.py"
    answer = {
        "decisions": [{"content": "The team ships on Fridays", "importance": 6}],
        "summary": "Shipping days.",
        "model": "m-1",
    }
    script.write_text(f"import sys, json\nsys.stdin.read()\nprint(json.dumps({answer!r}))\n")
    config = everything / ".loa.config.yaml"
    command = json.dumps(f"{sys.executable} {script}")
    config.write_text(
        config.read_text().replace("memory_schema:\n", f"memory_schema:\n  consolidate: {{command: {command}}}\n", 1)
    )
    transcript = _chat(everything / "chat.jsonl")

    async def run():
        async with session(everything) as client:
            both = await answer_of(client, "consolidate", {"transcript": "x", "path": str(transcript)})
            assert both[0] == "error" and "one of them" in both[1] and both[2] == 2
            chosen = await answer_of(client, "consolidate", {"path": str(transcript), "with": "touch /tmp/owned"})
            assert chosen[0] == "error" and "'with' was unexpected" in chosen[1]
            result = await answer_of(client, "consolidate", {"path": str(transcript), "session_id": "s-42"})
            assert [entry["content"] for entry in result["saved"]] == ["The team ships on Fridays"]

    anyio.run(run)
    assert cli_json("query", "Fridays")[0]["source"]["session_id"] == "s-42"


def _chat(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "\n".join(
            json.dumps({"role": r, "content": f"message {i} about shipping days"})
            for i, r in enumerate(["user", "assistant"] * 3)
        )
        + "\n"
    )
    return path


def _summarizing(repo: Path, folder: Path) -> None:
    """consolidate.command: a script that answers one decision, and records that it ran."""
    script = folder / "summarize.py"
    answer = {
        "decisions": [{"content": "The team ships on Fridays", "importance": 6}],
        "summary": "Shipping days.",
        "model": "m-1",
    }
    script.write_text(
        f"import sys, json\nopen({str(folder / 'ran')!r}, 'a').write(sys.stdin.read())\nprint(json.dumps({answer!r}))\n"
    )
    config = repo / ".loa.config.yaml"
    command = json.dumps(f"{sys.executable} {script}")
    config.write_text(
        config.read_text().replace("memory_schema:\n", f"memory_schema:\n  consolidate: {{command: {command}}}\n", 1)
    )


def _outside_paths(repo: Path, tmp_path: Path) -> list[str]:
    """Paths a prompt-injected model may name: a system file, a file beside the repository (as given, relative,
    and through a link inside the repository), another project's Claude Code transcripts."""
    outside = _chat(tmp_path / "private" / "notes.jsonl")
    (repo / "innocent.jsonl").symlink_to(outside)
    other = _chat(Path.home() / ".claude/projects/-elsewhere/s.jsonl")
    return ["/etc/passwd", str(outside), "../private/notes.jsonl", str(repo / "innocent.jsonl"), str(other)]


def test_consolidate_reads_only_the_repository_and_this_projects_claude_transcripts(everything, tmp_path):
    """Issue 41.1: a path from a tool call is read only when it resolves inside the repository or Claude Code's
    transcripts of this project; anything else is one error line (exit code 2), nothing summarised, nothing stored."""
    _summarizing(everything, tmp_path)
    before = git("status", "--porcelain", cwd=everything)
    mine = _chat(
        Path.home() / ".claude/projects" / re.sub(r"[^A-Za-z0-9]", "-", str(everything.resolve())) / "sess.jsonl"
    )

    async def run():
        async with session(everything) as client:
            for given in _outside_paths(everything, tmp_path):
                refused = await answer_of(client, "consolidate", {"path": given})
                assert refused[0] == "error" and refused[2] == 2, (given, refused)
                assert refused[1] == (
                    f"error: the transcript path {given!r} is outside the repository and Claude Code's transcripts of "
                    "this project (hint: give a transcript inside the repository, or its text)"
                )
            assert (
                not (tmp_path / "ran").exists()
                and git("status", "--porcelain", cwd=everything) == before + "?? innocent.jsonl\n"
            )
            result = await answer_of(client, "consolidate", {"path": str(mine)})
            assert [entry["content"] for entry in result["saved"]] == ["The team ships on Fridays"]

    anyio.run(run)
    assert "message 0 about shipping days" in (tmp_path / "ran").read_text()


def test_the_call_layer_refuses_paths_outside_but_the_cli_reads_what_a_person_names(everything, tmp_path):
    from grimoire_cli import Grimoire
    from grimoire_cli.core.errors import BadInput

    _summarizing(everything, tmp_path)
    for given in _outside_paths(everything, tmp_path):
        with pytest.raises(BadInput, match="outside the repository and Claude Code's transcripts of this project"):
            invoke(lambda: Grimoire.open(everything), "consolidate", {"path": given, "dry_run": True})
    assert not (tmp_path / "ran").exists()
    run = mem("consolidate", str(tmp_path / "private" / "notes.jsonl"), "--dry-run")
    assert run.code == 0 and (tmp_path / "ran").exists(), run.err  # a person at the CLI names any file


def test_errors_are_tool_errors_with_the_cli_line_and_exit_code(everything):
    """A library error is the tool's error: the `error:` line mem prints, its exit code in _meta; the session goes on."""
    secret = "the deploy key is " + "AKIA" + "IOSFODNN7EXAMPLE"  # split: this file holds no secret a scanner would flag

    async def run():
        async with session(everything) as client:
            assert await answer_of(client, "show", {"id": "MEM-20990101-001"}) == (
                "error",
                *cli_error("show", "MEM-20990101-001"),
            )
            assert await answer_of(client, "save", {"content": secret, "category": "fact"}) == (
                "error",
                *cli_error("add", "-c", "fact", secret),
            )
            assert await answer_of(client, "recall", {"key": "no.such"}) == ("error", *cli_error("recall", "no.such"))
            bad = await answer_of(client, "query", {"text": "x", "limit": 0})
            assert bad[0] == "error" and bad[1].startswith("error: bad arguments for query: limit:") and bad[2] == 2
            extra = await answer_of(client, "query", {"text": "x", "colour": "red"})
            assert extra[0] == "error" and "'colour' was unexpected" in extra[1]
            unknown = await client.call_tool("no_such_tool", {})
            assert unknown.is_error and "unknown tool 'no_such_tool'" in unknown.content[0].text
            assert (await answer_of(client, "stats", {}))["entries"] >= 1  # still serving

    anyio.run(run)


def test_the_server_sees_writes_of_other_processes_and_serves_resources(everything):
    """One server process: a memory another process adds between two calls is found by the next, and in the resources."""

    async def run():
        async with session(everything) as client:
            assert await answer_of(client, "query", {"text": "kubernetes"}) == []
            added = mem_process("add", "-c", "fact", "The staging cluster runs Kubernetes 1.31", cwd=everything)
            assert added.returncode == 0, added.stderr
            new_id = added.stdout.decode().strip()
            assert [hit["id"] for hit in await answer_of(client, "query", {"text": "kubernetes"})] == [new_id]
            resources = (await client.list_resources()).resources
            assert [str(r.uri) for r in resources] == ["grimoire://context"]
            block = (await client.read_resource("grimoire://context?query=kubernetes&budget=200")).contents[0].text
            assert block == mem("context", "kubernetes", "--budget", "200").out and new_id in block
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["grimoire://entry/{id}"]
            entry = json.loads((await client.read_resource(f"grimoire://entry/{new_id}")).contents[0].text)
            assert entry == cli_json("show", new_id)
            with pytest.raises(Exception, match="no memory with id MEM-20990101-001"):
                await client.read_resource("grimoire://entry/MEM-20990101-001")
            with pytest.raises(Exception, match="bad budget"):
                await client.read_resource("grimoire://context?budget=lots")

    anyio.run(run)


def test_without_the_extra_or_a_grimoire_mem_mcp_says_what_to_do(tmp_path, repo):
    """No MCP SDK: exit 2 and the install hint. No grimoire: the usual error before serving."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    # As if the extra were not installed
    (blocker / "mcp.py").write_text("raise ImportError(\"No module named 'mcp'\")\n")
    run = mem_process("mcp", cwd=repo, env={"PYTHONPATH": str(blocker)}, input=b"")
    assert run.returncode == 2
    assert (
        run.stderr.decode()
        == "error: mem mcp needs the MCP SDK, which is not installed (hint: install the extra: pip install 'grimoire-cli[mcp]')\n"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    git("init", "-q", cwd=empty)
    run = mem_process("mcp", cwd=empty, input=b"")
    assert run.returncode != 0 and run.stderr.decode().startswith("error: ") and run.stderr.decode().count("\n") == 1


def test_the_call_table_matches_its_functions():
    """Every schema property is a parameter of the function that runs it and every parameter has a schema; required ones have no default."""
    import inspect

    for call in CALLS.values():
        signature = inspect.signature(call.run)
        params = [p for p in list(signature.parameters.values())[1:] if p.kind is not p.VAR_KEYWORD]
        takes_more = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
        properties = call.schema["properties"]
        assert {p.name for p in params} <= set(properties), call.name
        assert takes_more or set(properties) == {p.name for p in params}, call.name
        for p in params:
            assert (p.default is p.empty) == (p.name in call.schema["required"]), (call.name, p.name)


def test_invoke_checks_arguments_before_opening_the_grimoire():
    """Bad arguments are refused before anything is opened (no grimoire is needed to say so)."""
    from grimoire_cli.core.errors import BadInput

    def never():
        raise AssertionError("opened")

    with pytest.raises(BadInput, match="bad arguments for save: 'content' is a required property"):
        invoke(never, "save", {})
    with pytest.raises(BadInput, match="unknown tool 'drop_all'"):
        invoke(never, "drop_all", {})


def started_server(cwd: Path) -> subprocess.Popen:
    """`mem mcp` in a real process, the initialize handshake done over its stdin and stdout."""
    server = subprocess.Popen(
        [MEM, "mcp"],
        cwd=cwd,
        env=dict(os.environ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    send(
        server,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
    )
    assert json.loads(server.stdout.readline())["id"] == 1
    send(server, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return server


def send(server: subprocess.Popen, message: dict) -> None:
    server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()


def seconds_to_end(server: subprocess.Popen, signal_number: int) -> tuple[float, int]:
    """How long the server took to exit after the signal, and its exit code (killed after 5 s)."""
    started = time.monotonic()
    server.send_signal(signal_number)
    try:
        code = server.wait(timeout=5)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
        code = None
    return time.monotonic() - started, code


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_an_idle_server_at_once(everything, signal_number):
    """Issue 41.8: SIGINT or SIGTERM while waiting for a request ends `mem mcp` within a second, exit 0 (the client ended the session)."""
    server = started_server(everything)
    time.sleep(0.2)  # idle, blocked reading stdin
    took, code = seconds_to_end(server, signal_number)
    assert (code, server.stderr.read().decode()) == (0, "") and took < 1.0, took


def test_a_signal_mid_call_stops_the_summarizer_and_writes_nothing(everything, tmp_path):
    """Issue 41.8: a signal during consolidate kills its summarizer (and what it started) and ends the server within a second; nothing is written."""
    started = tmp_path / "summarizer.pid"
    script = tmp_path / "slow.py"
    script.write_text(
        f"import os, sys, time\nsys.stdin.read()\nopen({str(started)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    )
    config = everything / ".loa.config.yaml"
    command = json.dumps(f"{sys.executable} {script}")
    config.write_text(
        config.read_text().replace("memory_schema:\n", f"memory_schema:\n  consolidate: {{command: {command}}}\n", 1)
    )
    before = mem("list", "--json").out
    server = started_server(everything)
    transcript = "\n".join(
        json.dumps({"role": r, "content": f"message {i} about shipping days"})
        for i, r in enumerate(["user", "assistant"] * 3)
    )
    send(
        server,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "consolidate", "arguments": {"transcript": transcript}},
        },
    )
    deadline = time.monotonic() + 30
    while not started.exists() or not started.read_text():
        assert time.monotonic() < deadline and server.poll() is None
        time.sleep(0.05)
    took, code = seconds_to_end(server, signal.SIGINT)
    assert code == 0 and took < 1.0, took
    summarizer = int(started.read_text())
    while time.monotonic() < deadline and _alive(summarizer):
        time.sleep(0.05)
    assert not _alive(summarizer)
    assert mem("list", "--json").out == before and mem("validate").code == 0


def test_a_signal_right_after_a_write_leaves_it_whole_or_absent(everything):
    """Issue 41.8: SIGTERM while a save may be writing: the server ends at once and the grimoire validates, the entry there or not."""
    server = started_server(everything)
    send(
        server,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "save",
                "arguments": {"content": "The cache is warmed before each deploy", "category": "learning"},
            },
        },
    )
    took, code = seconds_to_end(server, signal.SIGTERM)
    assert code == 0 and took < 1.0, took
    assert mem("validate").code == 0
    assert (
        len([hit for hit in cli_json("query", "cache warmed deploy") if "warmed before each deploy" in hit["content"]])
        <= 1
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_tool_annotations_say_which_tools_retire_memories_or_reach_outside(repo):
    """Issue 41.9: learn, apply, supersede and remember retire or archive memories (destructive); save only adds; consolidate runs
    an external command (open world) and supersedes by key; reads are read-only and idempotent; nothing else reaches outside."""

    async def run():
        async with session(repo) as client:
            return {tool.name: tool.annotations for tool in (await client.list_tools()).tools}

    hints = anyio.run(run)
    destructive = {name for name, a in hints.items() if a.destructive_hint}
    assert {
        "learn",
        "apply",
        "supersede",
        "remember",
        "procedure_add",
        "consolidate",
        "task_done",
        "task_cancel",
    } <= destructive
    assert not destructive & {"save", "episode", "task_schedule", "observe", "correct", "chat_add", "query", "context"}
    assert [name for name, a in hints.items() if a.open_world_hint] == ["consolidate"]
    assert all(
        a.read_only_hint and a.idempotent_hint and not a.destructive_hint
        for name, a in hints.items()
        if name in ("query", "show", "insights")
    )
    assert (
        hints["remember"].idempotent_hint
        and hints["procedure_add"].idempotent_hint
        and not hints["save"].idempotent_hint
    )
    assert not any(a.read_only_hint for name, a in hints.items() if name in ("learn", "save", "consolidate", "apply"))


def test_mem_mcp_starts_without_the_sdks_client_and_decorator_server(repo):
    """Start-up (issue 41): the server answers initialize without importing the SDK's client, MCPServer or httpx, which the
    packages' __init__ would pull in (docs/agents.md); imports as Python's -X importtime lists them on stderr."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
    }
    run = mem_process(
        "mcp", cwd=repo, env={"PYTHONPROFILEIMPORTTIME": "1"}, input=json.dumps(initialize).encode() + b"\n"
    )
    assert run.returncode == 0 and json.loads(run.stdout)["result"]["serverInfo"]["name"] == "grimoire"
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in run.stderr.decode().splitlines() if line.startswith("import time:")
    }
    assert {"mcp_types", "mcp.server.lowlevel.server", "mcp.server.stdio"} <= imported
    assert not {name for name in imported if name.startswith(("mcp.client", "mcp.server.mcpserver", "httpx"))}


def test_the_sdk_parts_come_from_the_full_packages_when_a_client_imported_them():
    """In a process that imported the SDK in full (this one: its client), the same parts are the packages' own."""
    import mcp.server

    from grimoire_cli.integrations.mcp_sdk import server_parts

    parts = server_parts()
    assert parts.Server is mcp.server.Server and parts.stdio_server is mcp.server.stdio.stdio_server


def test_tools_are_listed_memory_first():
    # tools/list gives the calls in registration order (integrations/calls.py
    # imports memory_calls first): an agent sees save, query and context before
    # the kinds' and learning's tools (a sorted import would put them last).
    from grimoire_cli.integrations.calls import CALLS

    assert list(CALLS)[:4] == ["save", "supersede", "query", "context"]


def test_a_server_waiting_for_the_next_call_holds_no_snapshot_of_the_catalog(everything):
    """A query's reads see one snapshot of the catalog; it ends with the call, so the server holds none while it
    waits (the WAL other processes write to is checkpointed meanwhile, as after a `mem` process ends)."""

    async def run() -> None:
        async with session(everything) as client:
            assert await answer_of(client, "query", {"text": "PostgreSQL"})
            assert not wal_pinned(everything)

    anyio.run(run)
