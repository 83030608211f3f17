"""Running a configured external command (a summarizer such as `llm -m
gpt-4o-mini`): the prompt on its stdin, JSON expected on its stdout.

The command is split like a shell would (`shlex`) but run without one, in
its own process group, so a timeout kills it and anything it started. mem
asks nothing else of it: any program that reads stdin and prints JSON will
do. A single Markdown code fence around the JSON (as chat models often
print) is taken off.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from typing import Any

from ..core.errors import BadInput, CommandFailed

_FENCE_OPEN = ("```json", "```JSON", "```")
# The commands running now, so a server ending mid-call can stop them (`stop_running`).
_RUNNING: set[subprocess.Popen] = set()


def argv_of(command: str, option: str) -> list[str]:
    """The command line as arguments; an empty or unbalanced one is bad input."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise BadInput(f"cannot read {option} {command!r}: {exc}", "quote it as a shell would") from None
    if not argv:
        raise BadInput(f"{option} is empty", "give a command, like: llm -m gpt-4o-mini")
    return argv


def run_json(command: str, prompt: str, timeout: float, option: str) -> Any:
    """The JSON the command prints for `prompt`. Not found: bad input (exit 2);
    failing, timing out or printing no JSON: `CommandFailed` (exit 5)."""
    argv = argv_of(command, option)
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
    except FileNotFoundError:
        raise BadInput(f"command not found: {argv[0][:200]}", f"install it, or fix {option}") from None
    except PermissionError:
        raise BadInput(
            f"cannot run {argv[0][:200]}: permission denied", f"make it executable, or fix {option}"
        ) from None
    except OSError as exc:  # no interpreter line, a name too long, ...
        raise BadInput(f"cannot run {argv[0][:200]}: {exc.strerror or exc}", f"check {option}") from None
    _RUNNING.add(process)
    try:
        out, err = process.communicate(prompt.encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(process)
        raise CommandFailed(
            f"{argv[0]} did not answer within {timeout:g}s; nothing was written",
            "raise consolidate.timeout, or try a faster model",
        ) from None
    except BaseException:
        _kill(process)
        raise
    finally:
        _RUNNING.discard(process)
    if process.returncode != 0:
        from ..guard.scan import redact

        last = redact((err.decode("utf-8", "replace").strip().splitlines() or [""])[-1][:200])[0]  # it may quote a key
        raise CommandFailed(
            f"{argv[0]} exited with {process.returncode}{': ' + last if last else ''}; nothing was written",
            "run the command by hand to see why",
        )
    return parse_json(out.decode("utf-8", "replace"), argv[0])


def parse_json(text: str, name: str) -> Any:
    body = text.strip()
    for fence in _FENCE_OPEN:
        if body.startswith(fence) and body.endswith("```") and len(body) > len(fence) + 3:
            body = body[len(fence) : -3].strip()
            break
    try:
        return json.loads(body)
    except ValueError as exc:
        from ..guard.scan import redact

        shown = redact(" ".join(text.split())[:80])[0]  # what it printed may quote a secret
        raise CommandFailed(
            f"{name} printed no valid JSON ({exc.args[0]}): {shown!r}; nothing was written",
            "the command must print one JSON object on stdout",
        ) from None


def stop_running() -> None:
    """Kill every command running now and what it started, from any thread: the
    call waiting for one then fails (exit 5), having written nothing."""
    for process in list(_RUNNING):
        _kill_group(process)


def _kill(process: subprocess.Popen) -> None:
    """End the command and whatever it started (its process group)."""
    _kill_group(process)
    try:
        process.communicate(timeout=5)
    except (subprocess.TimeoutExpired, OSError, ValueError):
        pass


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
