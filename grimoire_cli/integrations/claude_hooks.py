"""`mem agent hook EVENT`: what each Claude Code hook does with the JSON
Claude Code gives it on stdin (`session_id`, `transcript_path`, `cwd`,
`hook_event_name`, and per event `source`, `trigger`, `reason`, `tool_name`,
`tool_input`, `tool_response`).

- session-start: `mem check` (as `lifecycle.check_on_session_start` says),
  `mem age` when tiers are on, then the context block (due tasks first) as
  the hook's `additionalContext`.
- pre-compact, session-end: `mem consolidate TRANSCRIPT` started detached,
  its output logged under the grimoire's `.cache/agent/`; once per state of
  the transcript (its path, size and modification time), so a compaction
  followed by the session's end consolidates it once.
- post-tool-use: the call recorded as `mem observe --claude-hook` does.

The caller (the CLI) turns every failure into one line on stderr and exit
0: a hook never fails the agent's session.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput, Damaged

if TYPE_CHECKING:
    from ..api import Grimoire
    from ..core.runtime import Runtime

EVENTS = ("session-start", "pre-compact", "session-end", "post-tool-use")


def read_payload(text: str) -> dict[str, Any]:
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise BadInput(f"stdin is not JSON ({exc.args[0]})", "Claude Code pipes the hook's JSON in") from None
    if not isinstance(payload, dict):
        raise BadInput("stdin is not a JSON object", "Claude Code pipes the hook's JSON object in")
    return payload


def session_runtime(payload: dict[str, Any], runtime: Runtime) -> Runtime:
    """The runtime a hook's grimoire is opened with: Claude Code's session id as
    the session, by which a task added "for the next session" knows the one it
    was added in (kinds/tasks.py)."""
    session = payload.get("session_id")
    return runtime.but(session_id=session) if isinstance(session, str) and session else runtime


def run(event: str, payload: dict[str, Any], grimoire_of: Callable[[], Grimoire]) -> tuple[str | None, str | None]:
    """Do `event`'s work; what to print on stdout (the hook's output) and on stderr (a note), each possibly None."""
    if event not in EVENTS:
        raise BadInput(f"unknown hook {event!r}", f"use one of {', '.join(EVENTS)}")
    grimoire = grimoire_of()
    if not grimoire.config.enabled:  # Loa's switch: no memory in, none out, said once
        from ..lifecycle.archiving import OFF

        if event != "session-start":
            return (
                None,
                f"memory is off (memory_schema.enabled: false): nothing {'recorded' if event == 'post-tool-use' else 'consolidated'}",
            )
        return json.dumps(
            {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": f"mem: {OFF}"}}
        ), None
    if event == "session-start":
        return json.dumps(
            {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": session_start(grimoire)}}
        ), None
    if event == "post-tool-use":
        return None, post_tool_use(grimoire, payload)
    return None, consolidate_detached(grimoire, payload)


def session_start(grimoire: Grimoire) -> str:
    """What the agent starts with: what `mem check` has to say, then the context block."""
    lines = []
    if grimoire.config.lifecycle["check_on_session_start"]:
        try:
            checked = grimoire.check()
        except Damaged as exc:  # a check writes, so it stops at a damaged file; the context block passes over it
            lines.append(f"mem: nothing archived, a file is damaged: {exc} (run `mem validate`)")
        else:
            for ids, what in (
                (checked.archived, "archived (expired)"),
                (checked.expiring, "expire soon"),
                (checked.review, "to review (`mem review`)"),
                (checked.unarchived, "expired (`mem archive`)"),
            ):
                if ids:
                    lines.append(f"mem: {len(ids)} {'memory' if len(ids) == 1 else 'memories'} {what}: {_some(ids)}")
    if grimoire.config.settings.tiers.enabled:
        grimoire.lifecycle.age()  # the split recorded, so the next `mem age` says what moved since this session began
    block = grimoire.context().text
    return "\n".join(lines) + ("\n\n" if lines and block else "") + block


def _some(ids: list[str], most: int = 5) -> str:
    """A few ids, not hundreds: the lines go into the agent's context."""
    return ", ".join(ids[:most]) + (f" and {len(ids) - most} more" if len(ids) > most else "")


def post_tool_use(grimoire: Grimoire, payload: dict[str, Any]) -> str | None:
    from ..learning.observations import from_claude_hook

    record = from_claude_hook(payload)
    if record is not None:
        grimoire.learning.observe([json.dumps(record)])
    return None


def consolidate_detached(grimoire: Grimoire, payload: dict[str, Any]) -> str | None:
    """Start `mem consolidate` on the transcript in its own session and
    return at once; a note when there is nothing to start."""
    given = payload.get("transcript_path")
    if not isinstance(given, str) or not given:
        raise BadInput(
            "the hook's JSON has no transcript_path", "Claude Code gives one to PreCompact and SessionEnd hooks"
        )
    from ..lifecycle.transcripts import agent_transcript

    # `mem consolidate` reads any file it is given: only a transcript of this project
    path = agent_transcript(given, grimoire.config.root, grimoire.runtime.claude_config_dir)
    try:
        info = path.stat()
    except OSError as exc:
        raise BadInput(
            f"cannot read the transcript {given}: {exc.strerror}", "check the transcript_path Claude Code gave"
        ) from None
    if not grimoire.config.settings.consolidate.command:
        return "no summarizer configured (memory_schema.consolidate.command): nothing consolidated"
    state = hashlib.sha256(f"{path.resolve()}\0{info.st_size}\0{info.st_mtime_ns}".encode()).hexdigest()[:16]
    folder = grimoire.store.cache / "agent"
    folder.mkdir(parents=True, exist_ok=True)
    try:  # claimed before starting: two hooks at once start one consolidation
        os.close(os.open(folder / f"consolidated-{state}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return None  # this state of the transcript was consolidated (or is being)
    command = [sys.executable, "-m", "grimoire_cli", "consolidate", str(path)]
    if grimoire.config.scope is not None:  # None: a storage_dir outside grimoires/<scope>/memory
        command[3:3] = ["--scope", grimoire.config.scope]
    if grimoire.config.path is not None:
        command[3:3] = ["--config", str(grimoire.config.path)]
    session = payload.get("session_id")
    if isinstance(session, str) and session:
        command += ["--session-id", session]
    with open(folder / f"consolidate-{state}.log", "ab") as log:
        log.write(f"$ {' '.join(command)}\n".encode())
        log.flush()
        subprocess.Popen(
            command,
            cwd=grimoire.config.root,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return None
