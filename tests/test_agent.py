"""`mem agent install|uninstall|status claude` and `mem agent hook EVENT`:
Claude Code's settings merged and unmerged, and the hooks fed payloads
shaped as Claude Code documents them (docs/agents.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git, mem, mem_process, with_preset

SETTINGS = Path(".claude/settings.json")
THEIRS = {
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "ruff format"}]}]},
    "model": "opus",
}


def payload(event: str, **more) -> bytes:
    base = {
        "session_id": "sess-7",
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(Path.cwd()),
        "hook_event_name": event,
    }
    return json.dumps({**base, **more}).encode()


def test_install_merges_only_its_own_and_uninstall_removes_exactly_that(repo):
    (repo / ".claude").mkdir()
    original = json.dumps(THEIRS, indent=2) + "\n"
    (repo / SETTINGS).write_text(original)
    assert json.loads(mem("agent", "status", "claude", "--json").out)["status"] == {
        "SessionStart": "missing",
        "PreCompact": "missing",
        "SessionEnd": "missing",
        "PostToolUse": "missing",
        "PostToolUseFailure": "missing",
        "mcp: grimoire": "missing",
    }

    done = mem("agent", "install", "claude")
    assert done.code == 0, done.err
    settings = json.loads((repo / SETTINGS).read_text())
    assert {k: v for k, v in settings.items() if k != "hooks"} == {k: v for k, v in THEIRS.items() if k != "hooks"}
    assert settings["hooks"]["PostToolUse"][0] == THEIRS["hooks"]["PostToolUse"][0]  # theirs first, untouched
    assert settings["hooks"]["PostToolUse"][1] == {
        "matcher": "*",
        "hooks": [{"type": "command", "command": "mem agent hook post-tool-use", "timeout": 10}],
    }
    assert settings["hooks"]["PostToolUseFailure"] == [
        {"matcher": "*", "hooks": [{"type": "command", "command": "mem agent hook post-tool-use", "timeout": 10}]}
    ]
    assert settings["hooks"]["SessionStart"] == [
        {"hooks": [{"type": "command", "command": "mem agent hook session-start", "timeout": 30}]}
    ]
    assert json.loads((repo / ".mcp.json").read_text()) == {
        "mcpServers": {"grimoire": {"command": "mem", "args": ["mcp"], "env": {"MEM_AGENT": "claude"}}}
    }
    assert set(json.loads(mem("agent", "status", "claude", "--json").out)["status"].values()) == {"installed"}

    installed = (repo / SETTINGS).read_bytes()
    again = mem("agent", "install", "claude", "--json")
    assert json.loads(again.out)["changed"] == [] and (repo / SETTINGS).read_bytes() == installed  # idempotent

    gone = mem("agent", "uninstall", "claude", "--json")
    assert len(json.loads(gone.out)["changed"]) == 6
    assert (repo / SETTINGS).read_text() == original  # exactly what was there before
    assert not (repo / ".mcp.json").exists()  # install created it; nothing else was in it
    assert mem("agent", "uninstall", "claude").err == "nothing of mem's was installed\n"


def test_an_mcp_file_of_other_servers_keeps_them(repo):
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"docs": {"command": "docs-server"}}}))
    assert mem("agent", "install", "claude").code == 0
    assert set(json.loads((repo / ".mcp.json").read_text())["mcpServers"]) == {"docs", "grimoire"}
    assert mem("agent", "uninstall", "claude").code == 0
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"docs": {"command": "docs-server"}}}
    assert not (repo / SETTINGS).exists()


def test_a_malformed_settings_file_is_refused_with_its_line_and_left_alone(repo):
    (repo / ".claude").mkdir()
    broken = '{\n  "model": "opus",\n  "hooks": {,\n}\n'
    (repo / SETTINGS).write_text(broken)
    run = mem("agent", "install", "claude")
    assert run.code == 3 and run.err.startswith("error: ") and ".claude/settings.json:3: not JSON" in run.err
    assert run.err.count("\n") == 1
    assert (repo / SETTINGS).read_text() == broken and not (repo / ".mcp.json").exists()
    (repo / SETTINGS).write_text('{"hooks": {"SessionStart": "mem"}}')
    assert mem("agent", "install", "claude").code == 3


def test_odd_but_valid_groups_are_kept_and_a_linked_settings_file_stays_a_link(repo, tmp_path):
    """Groups that are not what mem writes (no hooks list, a hook without a command) are left alone; a symlink is followed."""
    shared = tmp_path / "shared-settings.json"
    odd = {
        "hooks": {
            "SessionStart": ["not a group", {"matcher": "x"}, {"hooks": [{"type": "prompt", "prompt": "hi"}, "x"]}]
        }
    }
    shared.write_text(json.dumps(odd, indent=2) + "\n")
    (repo / ".claude").mkdir()
    (repo / SETTINGS).symlink_to(shared)
    assert mem("agent", "install", "claude").code == 0
    assert (repo / SETTINGS).is_symlink() and json.loads(shared.read_text())["hooks"]["SessionStart"][:3] == odd[
        "hooks"
    ]["SessionStart"]
    assert mem("agent", "uninstall", "claude").code == 0
    assert json.loads(shared.read_text()) == odd and (repo / SETTINGS).is_symlink()
    assert mem("agent", "install", "cursor").code == 2


def test_session_start_gives_the_context_block_with_due_tasks(repo):
    with_preset(repo, "sabre")
    assert mem("add", "-c", "decision", "--confidence", "0.9", "We deploy with blue-green switches").code == 0
    assert mem("task", "add", "--next-session", "rotate the staging keys", env={"MEM_SESSION_ID": "sess-6"}).code == 0
    run = mem_process("agent", "hook", "session-start", cwd=repo, input=payload("SessionStart", source="startup"))
    assert run.returncode == 0 and run.stderr == b"", run.stderr
    out = json.loads(run.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("## Active Memory") and "blue-green" in context
    assert context.index("rotate the staging keys") < context.index("blue-green")  # due first
    assert context == mem("context", env={"MEM_SESSION_ID": "sess-7"}).out


@pytest.mark.parametrize("variable", ["MEM_NOW", "MEM_PARSE_WORKERS", "MEM_LOCK_TIMEOUT"])
def test_a_bad_environment_variable_is_a_hooks_warning_never_a_failed_session(repo, variable):
    """Found by a fresh-clone tour: `mem` checks MEM_* before any command (exit 2),
    but an agent's hook never fails its session: one warning, exit 0."""
    bad = {variable: "x"}
    for args, event in (
        (("agent", "hook", "session-start"), "SessionStart"),
        (("agent", "hook", "post-tool-use"), "PostToolUse"),
        (("observe", "--claude-hook"), "PostToolUse"),
    ):
        run = mem_process(
            *args, cwd=repo, input=payload(event, tool_name="Bash", tool_input={}, tool_response={}), env=bad
        )
        assert run.returncode == 0 and run.stderr.decode().count("warning:") <= 1, (args, run.stderr)
    assert mem_process("list", cwd=repo, env=bad).returncode == 2  # any other command still refuses it


def test_session_start_with_a_damaged_file_still_gives_the_context_block(repo):
    """Found by a fresh-clone tour: `mem check` stops at a damaged file, and the
    hook gave no context at all, though `mem context` passes over the file."""
    assert mem("add", "-c", "fact", "We deploy with blue-green switches").code == 0
    (repo / "grimoires/loa/memory/decisions.yaml").write_text("- id: [broken\n")
    run = mem_process("agent", "hook", "session-start", cwd=repo, input=payload("SessionStart"))
    assert run.returncode == 0, run.stderr
    context = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    assert (
        context.startswith("mem: nothing archived, a file is damaged: grimoires/loa/memory/decisions.yaml")
        and "blue-green" in context
    )


def test_session_start_archives_what_expired_as_check_does(repo):
    assert mem("add", "-c", "fact", "--ttl", "1d", "The demo server is up until Friday").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "start", cwd=repo)
    later = {"MEM_NOW": "2026-11-30T10:00:00Z"}
    run = mem_process("agent", "hook", "session-start", cwd=repo, input=payload("SessionStart"), env=later)
    context = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("mem: 1 memory archived (expired): MEM-20261122-001")
    assert "archive" in git("log", "-1", "--format=%s", cwd=repo)


def _summarizer(folder: Path, answer: dict) -> str:
    script = folder / "summarize.py"
    script.write_text(f"import json, sys\nsys.stdin.read()\nprint(json.dumps({answer!r}))\n")
    return f"{sys.executable} {script}"


def _transcript(path: Path, turns: int) -> Path:
    lines = [
        {"type": role, "sessionId": "sess-7", "message": {"role": role, "content": f"turn {n} about the release train"}}
        for n in range(turns)
        for role in ("user", "assistant")
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def _claude_folder(repo: Path) -> Path:
    """Claude Code's transcripts folder for sessions started in `repo` (under this test's $HOME)."""
    folder = Path.home() / ".claude/projects" / re.sub(r"[^A-Za-z0-9]", "-", str(repo.resolve()))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _wait_for(predicate, seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < end, "the detached consolidation did not finish"
        time.sleep(0.1)


def test_pre_compact_and_session_end_consolidate_once_per_transcript_state(repo, tmp_path):
    with_preset(repo, "samaritan")
    command = _summarizer(
        tmp_path,
        {
            "decisions": [{"content": "Releases leave on the Tuesday train", "importance": 7}],
            "summary": "Release talk.",
        },
    )
    config = repo / ".loa.config.yaml"
    config.write_text(
        config.read_text().replace(
            "memory_schema:\n", f"memory_schema:\n  consolidate: {{command: {json.dumps(command)}}}\n", 1
        )
    )
    transcript = _transcript(_claude_folder(repo) / "sess-7.jsonl", 3)  # where Claude Code keeps it
    logs = repo / "grimoires/loa/memory/.cache/agent"

    started = time.monotonic()
    run = mem_process(
        "agent",
        "hook",
        "pre-compact",
        cwd=repo,
        input=payload("PreCompact", transcript_path=str(transcript), trigger="auto"),
    )
    assert run.returncode == 0 and run.stdout == b"" and run.stderr == b"", run.stderr
    assert time.monotonic() - started < 10
    _wait_for(lambda: any("Summarized" in p.read_text() for p in logs.glob("consolidate-*.log")))
    found = json.loads(mem("query", "Tuesday train", "--json").out)
    assert [h["content"] for h in found] == ["Releases leave on the Tuesday train"] and found[0]["source"][
        "session_id"
    ] == "sess-7"

    again = mem_process(
        "agent",
        "hook",
        "session-end",
        cwd=repo,
        input=payload("SessionEnd", transcript_path=str(transcript), reason="exit"),
    )
    assert again.returncode == 0 and len(list(logs.glob("consolidate-*.log"))) == 1  # the same state: not twice

    _transcript(transcript, 4)  # the session went on
    grown = mem_process(
        "agent",
        "hook",
        "session-end",
        cwd=repo,
        input=payload("SessionEnd", transcript_path=str(transcript), reason="exit"),
    )
    assert grown.returncode == 0
    _wait_for(
        lambda: (
            len(list(logs.glob("consolidate-*.log"))) == 2
            and all("Summarized" in p.read_text() for p in logs.glob("*.log"))
        )
    )
    assert git("status", "--porcelain", "--", "grimoires/loa/memory/.cache", cwd=repo) == ""  # logs stay out of git


def test_a_transcript_path_outside_the_project_is_not_consolidated(repo, tmp_path):
    """Issue 41.1: the hook hands transcript_path to `mem consolidate`, which reads any file; only the
    repository and Claude Code's transcripts of this project are read (a link out of them is followed first)."""
    with_preset(repo, "samaritan")
    command = _summarizer(tmp_path, {"decisions": [{"content": "Never read this", "importance": 7}], "summary": "x"})
    config = repo / ".loa.config.yaml"
    config.write_text(
        config.read_text().replace(
            "memory_schema:\n", f"memory_schema:\n  consolidate: {{command: {json.dumps(command)}}}\n", 1
        )
    )
    outside = _transcript(tmp_path / "elsewhere.jsonl", 3)
    (_claude_folder(repo) / "linked.jsonl").symlink_to(outside)
    other_project = Path.home() / ".claude/projects/-some-other-project"
    other_project.mkdir(parents=True)
    _transcript(other_project / "s.jsonl", 3)
    for given in (
        outside,
        _claude_folder(repo) / "linked.jsonl",
        other_project / "s.jsonl",
        _claude_folder(repo) / "../-some-other-project/s.jsonl",
    ):
        run = mem_process(
            "agent",
            "hook",
            "session-end",
            cwd=repo,
            input=payload("SessionEnd", transcript_path=str(given), reason="exit"),
        )
        err = run.stderr.decode()
        assert (
            run.returncode == 0
            and err.count("\n") == 1
            and "outside the repository and Claude Code's transcripts of this project" in err
        ), err
    assert not (repo / "grimoires/loa/memory/.cache/agent").exists()  # nothing started


def test_post_tool_use_records_the_call(repo):
    response = {"stdout": "3 passed", "stderr": "", "interrupted": False}
    run = mem_process(
        "agent",
        "hook",
        "post-tool-use",
        cwd=repo,
        input=payload(
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": "pytest -q"},
            tool_response=response,
            tool_use_id="toolu_1",
        ),
    )
    assert run.returncode == 0 and run.stdout == b"" and run.stderr == b"", run.stderr
    tools = json.loads(mem("tools", "--json").out)
    assert [(t["tool"], t["executions"], t["success_rate"]) for t in tools] == [("Bash", 1, 1.0)]


@pytest.mark.parametrize(
    "event, stdin, says",
    [
        ("session-start", b"not json", "stdin is not JSON"),
        ("post-tool-use", b"[1, 2]", "stdin is not a JSON object"),
        ("pre-compact", b"{}", "no transcript_path"),
        ("session-end", payload("SessionEnd", transcript_path="no/such/file.jsonl"), "cannot read the transcript"),
        (
            "session-end",
            payload("SessionEnd", transcript_path="/etc/passwd"),
            "outside the repository and Claude Code's transcripts",
        ),
        ("stop", b"{}", "unknown hook 'stop'"),
    ],
)
def test_a_hook_never_fails_the_session(repo, event, stdin, says):
    run = mem_process("agent", "hook", event, cwd=repo, input=stdin)
    err = run.stderr.decode()
    assert run.returncode == 0 and run.stdout == b""
    assert err.startswith(f"warning: mem agent hook {event}: ") and says in err and err.count("\n") == 1


def test_a_hook_outside_a_grimoire_says_so_and_exits_0(tmp_path):
    run = mem_process("agent", "hook", "session-start", cwd=tmp_path, input=payload("SessionStart"))
    assert run.returncode == 0 and run.stderr.decode().startswith("warning: mem agent hook session-start: ")


def test_without_mem_on_path_install_warns_and_local_keeps_the_path_to_this_clone(repo):
    here = str(Path(sys.executable).parent / "mem")
    bare = {"PATH": "/usr/bin:/bin"}  # git, but no mem
    shared = mem_process("agent", "install", "claude", cwd=repo, env=bare)
    err = shared.stderr.decode()
    assert shared.returncode == 0 and err.startswith(
        f"warning: mem is not on PATH: the shared .claude/settings.json and .mcp.json call {here}"
    )
    assert "mem agent install claude --local" in err
    assert (
        json.loads((repo / SETTINGS).read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        == f"{here} agent hook session-start"
    )
    assert mem_process("agent", "uninstall", "claude", cwd=repo, env=bare).returncode == 0
    assert not (repo / SETTINGS).exists() and not (repo / ".mcp.json").exists()

    local = repo / ".claude/settings.local.json"
    local.parent.mkdir(exist_ok=True)
    local.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]}}, indent=2) + "\n")
    before = local.read_text()
    done = mem_process("agent", "install", "claude", "--local", cwd=repo, env=bare)
    err = done.stderr.decode()
    assert done.returncode == 0 and "warning" not in err and "added .claude/settings.local.json to .gitignore" in err
    assert f"claude mcp add --scope local grimoire -e MEM_AGENT=claude -- {here} mcp" in err
    hooks = json.loads(local.read_text())["hooks"]
    assert hooks["PostToolUse"] == [
        {"matcher": "*", "hooks": [{"type": "command", "command": f"{here} agent hook post-tool-use", "timeout": 10}]}
    ]
    assert not (repo / SETTINGS).exists() and not (repo / ".mcp.json").exists()  # nothing shared is touched
    assert (repo / ".gitignore").read_text().splitlines()[-1] == ".claude/settings.local.json"
    assert ".claude" not in git("status", "--porcelain", "--untracked-files=all", cwd=repo)
    assert set(json.loads(mem("agent", "status", "claude", "--local", "--json").out)["status"].values()) == {
        "installed"
    }
    assert set(json.loads(mem("agent", "status", "claude", "--json").out)["status"].values()) == {"missing"}

    again = mem_process("agent", "install", "claude", "--local", cwd=repo, env=bare)
    assert again.returncode == 0 and (repo / ".gitignore").read_text().count("settings.local.json") == 1
    gone = mem("agent", "uninstall", "claude", "--local", "--json")
    assert gone.code == 0 and len(json.loads(gone.out)["changed"]) == 5
    assert local.read_text() == before  # exactly what was there before


def _installed_command(repo: Path, event: str, settings: Path = SETTINGS) -> str:
    return json.loads((repo / settings).read_text())["hooks"][event][-1]["hooks"][0]["command"]


def _run_hook(command: str, stdin: bytes, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """The hook's command as Claude Code runs it: through the shell, the payload on stdin."""
    return subprocess.run(
        ["sh", "-c", command], cwd=cwd, input=stdin, capture_output=True, env={**os.environ, **(env or {})}, timeout=60
    )


def test_a_failed_tool_call_reaches_the_log_through_the_installed_post_tool_use_failure_hook(repo):
    """Claude Code sends a failed call to PostToolUseFailure (its `error` and
    `is_interrupt` at the top level, no tool_response), never to PostToolUse."""
    assert mem("agent", "install", "claude").code == 0
    assert (
        _installed_command(repo, "PostToolUse")
        == _installed_command(repo, "PostToolUseFailure")
        == "mem agent hook post-tool-use"
    )
    success = payload(
        "PostToolUse",
        permission_mode="default",
        tool_name="Bash",
        tool_input={"command": "npm test"},
        tool_response={"stdout": "ok", "stderr": "", "interrupted": False},
        tool_use_id="toolu_01",
    )
    failure = payload(
        "PostToolUseFailure",
        permission_mode="default",
        tool_name="Bash",
        tool_input={"command": "npm test"},
        tool_use_id="toolu_02",
        error="Command exited with non-zero status code 1",
        is_interrupt=False,
    )
    for event, stdin in (("PostToolUse", success), ("PostToolUseFailure", failure)):
        run = _run_hook(_installed_command(repo, event), stdin, repo)
        assert run.returncode == 0 and run.stdout == b"" and run.stderr == b"", (event, run.stderr)
    tools = json.loads(mem("tools", "--json").out)
    assert [(t["tool"], t["executions"], t["success_rate"]) for t in tools] == [("Bash", 2, 0.5)]
    assert "Command exited with non-zero status code" in mem("tools", "Bash").out


def test_hooks_of_a_mem_at_a_path_with_a_space_run_and_are_recognised(repo, tmp_path):
    """Found by a real Claude Code: the unquoted path made every hook exit 127,
    status said missing, a second install doubled them and uninstall left them."""
    spaced = tmp_path / "my tools" / "mem"
    spaced.parent.mkdir()
    shutil.copy2(Path(sys.executable).parent / "mem", spaced)  # a copy: a link would resolve to the venv's path
    bare = {"PATH": "/usr/bin:/bin"}  # git, but no mem: the hooks call the path
    done = subprocess.run(
        [str(spaced), "agent", "install", "claude"], cwd=repo, capture_output=True, env={**os.environ, **bare}
    )
    assert done.returncode == 0, done.stderr
    quoted = f"'{spaced}' agent hook session-start"
    assert _installed_command(repo, "SessionStart") == quoted

    transcript = _transcript(tmp_path / "t.jsonl", 1)
    payloads = {
        "SessionStart": payload("SessionStart", source="startup"),
        "PreCompact": payload("PreCompact", transcript_path=str(transcript), trigger="auto"),
        "SessionEnd": payload("SessionEnd", transcript_path=str(transcript), reason="exit"),
        "PostToolUse": payload("PostToolUse", tool_name="Read", tool_input={}, tool_response={}),
        "PostToolUseFailure": payload("PostToolUseFailure", tool_name="Read", tool_input={}, error="no such file"),
    }
    for event, stdin in payloads.items():
        run = _run_hook(_installed_command(repo, event), stdin, repo, env=bare)
        assert run.returncode == 0 and b"not found" not in run.stderr, (event, run.stderr)
    assert "additionalContext" in _run_hook(quoted, payloads["SessionStart"], repo, env=bare).stdout.decode()
    assert [(t["tool"], t["executions"]) for t in json.loads(mem("tools", "--json").out)] == [("Read", 2)]

    assert set(json.loads(mem("agent", "status", "claude", "--json").out)["status"].values()) == {"installed"}
    installed = (repo / SETTINGS).read_bytes()
    again = subprocess.run(
        [str(spaced), "agent", "install", "claude", "--json"], cwd=repo, capture_output=True, env={**os.environ, **bare}
    )
    assert json.loads(again.stdout)["changed"] == [] and (repo / SETTINGS).read_bytes() == installed
    gone = mem("agent", "uninstall", "claude", "--json")
    assert (
        len(json.loads(gone.out)["changed"]) == 6
        and not (repo / SETTINGS).exists()
        and not (repo / ".mcp.json").exists()
    )


def test_hooks_an_older_install_left_unquoted_are_broken_and_the_next_install_replaces_them(repo, tmp_path):
    old = str(tmp_path / "my tools" / "mem")
    (repo / ".claude").mkdir()
    theirs = {"type": "command", "command": "ruff format"}
    hooks = {
        event: [{"hooks": [{"type": "command", "command": f"{old} agent hook {word}", "timeout": 10}]}] * 2
        for event, word in (
            ("SessionStart", "session-start"),
            ("PreCompact", "pre-compact"),
            ("SessionEnd", "session-end"),
        )
    }
    hooks["PostToolUse"] = [
        {"matcher": "*", "hooks": [theirs, {"type": "command", "command": f"{old} agent hook post-tool-use"}]}
    ]
    wrapped = {
        "type": "command",
        "command": f"/usr/bin/env MEM_SCOPE=x {old} agent hook post-tool-use",
    }  # the user's own: it runs
    hooks["PostToolUseFailure"] = [{"hooks": [wrapped]}]
    (repo / SETTINGS).write_text(json.dumps({"hooks": hooks}))
    status = json.loads(mem("agent", "status", "claude", "--local", "--json").out)["status"]
    assert json.loads(mem("agent", "status", "claude", "--json").out)["status"] == {
        "SessionStart": "broken",
        "PreCompact": "broken",
        "SessionEnd": "broken",
        "PostToolUse": "broken",
        "PostToolUseFailure": "missing",
        "mcp: grimoire": "missing",
    } and set(status.values()) == {"missing"}

    done = mem("agent", "install", "claude")
    assert done.code == 0 and "replaced 7 hooks an older install wrote with the path unquoted" in done.err
    settings = json.loads((repo / SETTINGS).read_text())["hooks"]
    assert {event: _commands_of(groups) for event, groups in settings.items()} == {
        "SessionStart": ["mem agent hook session-start"],
        "PreCompact": ["mem agent hook pre-compact"],
        "SessionEnd": ["mem agent hook session-end"],
        "PostToolUse": ["ruff format", "mem agent hook post-tool-use"],
        "PostToolUseFailure": [wrapped["command"], "mem agent hook post-tool-use"],
    }
    assert set(json.loads(mem("agent", "status", "claude", "--json").out)["status"].values()) == {"installed"}


def _commands_of(groups: list) -> list[str]:
    return [hook["command"] for group in groups for hook in group["hooks"]]


@pytest.mark.parametrize("local", [False, True])
@pytest.mark.parametrize(
    "original", ['{\n  "model": "opus",\n  "hooks": {}\n}\n', '{\n  "hooks": {}\n}\n', '{\n  "model": "opus"\n}\n']
)
def test_uninstall_gives_back_the_hooks_object_as_the_user_had_it(repo, original, local):
    settings = repo / (".claude/settings.local.json" if local else SETTINGS)
    settings.parent.mkdir()
    settings.write_text(original)
    option = ("--local",) if local else ()
    assert mem("agent", "install", "claude", *option).code == 0
    assert json.loads(settings.read_text())["hooks"]["SessionStart"]
    assert mem("agent", "install", "claude", *option).code == 0  # a second install, nothing to add, forgets nothing
    assert mem("agent", "uninstall", "claude", *option).code == 0
    assert settings.read_text() == original


def test_files_install_creates_follow_the_umask_and_existing_ones_keep_their_mode(repo):
    (repo / ".claude").mkdir()
    (repo / SETTINGS).write_text("{}\n")
    (repo / SETTINGS).chmod(0o600)
    previous = os.umask(0o002)
    try:
        assert mem("agent", "install", "claude").code == 0
    finally:
        os.umask(previous)
    assert (repo / SETTINGS).stat().st_mode & 0o777 == 0o600  # the user's choice for their file
    assert (repo / ".mcp.json").stat().st_mode & 0o777 == 0o664  # as any file the user creates under umask 002
    local = repo / ".claude/settings.local.json"
    previous = os.umask(0o077)
    try:
        assert mem("agent", "install", "claude", "--local").code == 0
    finally:
        os.umask(previous)
    assert local.stat().st_mode & 0o777 == 0o600


def test_an_older_install_s_server_gets_mem_agent_and_entries_it_saves_are_claude_s(repo):
    """docs/agents.md's `.mcp.json` example sets MEM_AGENT=claude: what Claude Code saves through the server says so (source.agent)."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"grimoire": {"command": "mem", "args": ["mcp"], "env": {"X": "1"}}}})
    )
    done = json.loads(mem("agent", "install", "claude", "--json").out)
    assert "mcp: grimoire env MEM_AGENT" in done["changed"]
    server = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["grimoire"]
    assert server == {"command": "mem", "args": ["mcp"], "env": {"X": "1", "MEM_AGENT": "claude"}}
    assert json.loads(mem("agent", "install", "claude", "--json").out)["changed"] == []

    async def save() -> str:  # the server started as Claude Code starts it: command, args, and the env over its own
        params = StdioServerParameters(
            command=server["command"], args=server["args"], cwd=str(repo), env={**os.environ, **server["env"]}
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                result = await client.call_tool(
                    "save", {"content": "Deploys go out on Tuesdays", "category": "decision"}
                )
                return json.loads(result.content[0].text)["id"]

    saved = anyio.run(save)
    assert json.loads(mem("show", saved, "--json").out)["source"]["agent"] == "claude"


def test_consolidation_from_a_hook_works_with_a_storage_dir_outside_grimoires(repo, tmp_path):
    # Such a grimoire has no scope name: the detached `mem consolidate` is started without --scope.
    with_preset(repo, "samaritan")
    command = _summarizer(
        tmp_path, {"decisions": [{"content": "Deploys wait for the green board", "importance": 7}], "summary": "x"}
    )
    config = repo / ".loa.config.yaml"
    config.write_text(
        config.read_text()
        .replace("storage_dir: grimoires/loa/memory", "storage_dir: project-memory")
        .replace("memory_schema:\n", f"memory_schema:\n  consolidate: {{command: {json.dumps(command)}}}\n", 1)
    )
    assert mem("init").code == 0
    transcript = _transcript(_claude_folder(repo) / "sess-7.jsonl", 2)
    run = mem_process(
        "agent", "hook", "pre-compact", cwd=repo, input=payload("PreCompact", transcript_path=str(transcript))
    )
    assert run.returncode == 0 and run.stderr == b"", run.stderr
    logs = repo / "project-memory/.cache/agent"
    _wait_for(lambda: any("Summarized" in p.read_text() for p in logs.glob("consolidate-*.log")))
    assert [h["content"] for h in json.loads(mem("query", "green board", "--json").out)] == [
        "Deploys wait for the green board"
    ]


def test_a_hook_in_a_session_still_warns_about_a_damaged_file(repo):
    # The hook opens the grimoire with the session's runtime: the command's own read, warned about like any.
    mem("add", "-c", "fact", "The API runs on port 8080")
    (repo / "grimoires/loa/memory/learnings.yaml").write_text("- id: [broken\n")
    run = mem_process("agent", "hook", "session-start", cwd=repo, input=payload("SessionStart", session_id="s-1"))
    assert run.returncode == 0 and "8080" in run.stdout.decode()
    assert (
        "warning: skipped a damaged file (run `mem validate`): grimoires/loa/memory/learnings.yaml"
        in run.stderr.decode()
    )
