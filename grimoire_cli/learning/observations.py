"""`mem observe` (the Persistent Memory System's observe step): execution
records appended to the local log `<storage_dir>/local/observations.jsonl`.

Raw logs are volatile state (DESIGN §6 rule 2): the log lives in the
git-ignored local folder, is never committed, and what mem learns from it
is derived. Each record is checked against `schemas/observation.schema.json`
with line numbers; a batch is appended whole or not at all (with
`skip_invalid`, the valid records are, and the rest reported). Every text a
record holds — goal, context, parameter values, errors, corrections — is
redacted by the guard before it is stored, and the redactions counted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core.errors import BadInput
from ..core.schemas import json_value
from ..storage.store import Store
from .pms_tasks import is_task

LOG = "observations.jsonl"
# The field names of a record and of its steps and corrections (the schema allows no others),
# and the fields whose values it pins to an enum or a time.
_FIXED = frozenset(
    {
        "task_id",
        "goal",
        "context",
        "agent",
        "outcome",
        "started_at",
        "duration_ms",
        "steps",
        "corrections",
        "metadata",
        "tool",
        "params",
        "status",
        "retries",
        "error",
        "field",
        "original",
        "corrected",
    }
)
_PLAIN_NAME = re.compile(r"^[A-Za-z][A-Za-z_-]{0,39}\Z")
_PINNED = frozenset({"outcome", "status", "started_at", "duration_ms", "retries"})


class Observed:
    """What one `observe` appended: records and steps, secrets redacted,
    and (with `skip_invalid`) the (line, error) of the records left out."""

    __slots__ = ("records", "redacted", "rejected", "steps")

    def __init__(self) -> None:
        self.records = 0
        self.steps = 0
        self.redacted = 0
        self.rejected: list[tuple[int, str]] = []

    def to_dict(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "steps": self.steps,
            "redacted": self.redacted,
            "rejected": [{"line": n, "error": m} for n, m in self.rejected],
        }


def log_path(store: Store) -> Path:
    return store.config.local_dir / LOG


def check(record: Any) -> None:
    """A record as the schema allows it, else bad input naming the field."""
    from ..core.schemas import first_problem

    if not isinstance(record, dict):
        raise BadInput(f"a record must be a JSON object, not {type(record).__name__}")
    # Only a correction made by hand (`mem correct`) ran nothing.
    if "steps" not in record or (record["steps"] == [] and not record.get("corrections")):
        raise BadInput("a record without steps", "give steps: [{tool, status, ...}] for what the task ran")
    problem = first_problem(record, schema_name="observation.schema.json")
    if problem is not None:
        where, message = problem
        raise BadInput(f"{where + ': ' if where else ''}{message}")
    for number, step in enumerate(record["steps"]):
        if not step["tool"].strip():
            raise BadInput(f"steps.{number}.tool: a blank tool name", "name the tool the step ran")


def task_record(task: dict[str, Any], store: Store) -> dict[str, Any]:
    """A PMS Task's record (learning/pms_tasks.py), started now unless it says when."""
    from ..core.clock import iso
    from .pms_tasks import record_of

    return record_of(task, None, iso(store.runtime.now()))


def redacted(value: Any) -> tuple[Any, int]:
    """The value with every secret in its texts (free-form keys too) replaced;
    how many there were. A value under a name is scanned as `name: value`,
    so `{"password": "hunter22x"}` is caught as an assignment is; a
    correction's values go under its field's name. The record's own field
    names and the values the schema pins (an outcome, a status, a time) cannot
    hold a secret: left out of the scan, which then reads a third less."""
    from ..guard.scan import redact_all

    texts: list[str] = []
    prefixes: list[str] = []

    def add(text: str, name: Any = None) -> None:
        # Only a plain name (letters, '_', '-') leads its value: one that could be a secret itself is scanned as a key, once.
        prefix = f"{name}: " if isinstance(name, str) and _PLAIN_NAME.match(name) else ""
        texts.append(prefix + text)
        prefixes.append(prefix)

    def walk(item: Any, fixed: bool, name: Any, visit) -> Any:
        if isinstance(item, str):
            return visit(item, name)
        if isinstance(item, list):
            return [walk(part, fixed, name, visit) for part in item]
        if isinstance(item, dict):
            field = item.get("field") if fixed and isinstance(item.get("field"), str) else None  # a correction's
            out = {}
            for key, part in item.items():
                new_key = key if (fixed and key in _FIXED) or not isinstance(key, str) else visit(key, None)
                if fixed and key in _PINNED:
                    out[new_key] = part
                else:
                    under = (
                        field
                        if key in ("original", "corrected") and field
                        else (None if fixed and key in _FIXED else key)
                    )
                    out[new_key] = walk(part, fixed and key in ("steps", "corrections"), under, visit)
            return out
        return item

    walk(value, True, None, lambda text, name: add(text, name))
    clean, count = redact_all(texts)
    if not count:
        return value, 0
    replaced = iter(zip(clean, prefixes))

    def take(_: str, __: Any) -> str:
        text, prefix = next(replaced)
        return text[len(prefix) :] if text.startswith(prefix) else text

    return walk(value, True, None, take), count


def observe(store: Store, lines: Iterable[str], *, skip_invalid: bool = False) -> Observed:
    """Check, redact and append JSON Lines records to the log (see the module)."""
    result = Observed()
    kept: list[str] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            try:
                record = json_value(line)
            except ValueError as exc:
                raise BadInput(f"not JSON ({exc.args[0]})") from None
            if is_task(record):  # a PMS Task, as its runtime has it
                record = task_record(record, store)
            check(record)
        except BadInput as exc:
            from ..guard.scan import redact

            result.rejected.append((number, redact(exc.message)[0]))  # a message may quote the value
            continue
        record, count = redacted(record)
        result.redacted += count
        result.records += 1
        result.steps += len(record["steps"])
        kept.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    if result.rejected and not skip_invalid:
        shown = "; ".join(f"line {n}: {m}" for n, m in result.rejected[:3])
        more = f" (and {len(result.rejected) - 3} more)" if len(result.rejected) > 3 else ""
        raise BadInput(
            f"{len(result.rejected)} invalid record{'' if len(result.rejected) == 1 else 's'}, nothing observed: {shown}{more}",
            "fix those lines, or use --skip-invalid to observe the rest",
        )
    if kept:
        _append(store, kept)
    return result


def _append(store: Store, records: list[str]) -> None:
    """The records at the end of the log, in one write under the grimoire lock."""
    path = log_path(store)
    data = ("\n".join(records) + "\n").encode("utf-8")
    with store.lock():
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore = path.parent / ".gitignore"
        if not ignore.exists():  # volatile state: never committed, whatever the grimoire's own ignore rules say
            ignore.write_text("# the local state of mem: never commit\n*\n", encoding="utf-8")
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a write cut short earlier: its half line stays apart
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)


HOOK_EVENTS = ("PostToolUse", "PostToolUseFailure")


def from_claude_hook(payload: Any) -> dict[str, Any] | None:
    """A Claude Code `PostToolUse` payload (the tool succeeded) or
    `PostToolUseFailure` (it failed: a top-level `error`) as a one-step
    record; None for another event. A PostToolUse response that says it
    errored (`is_error`, `error`, `success: false`) is a failure too."""
    if not isinstance(payload, dict) or not isinstance(payload.get("tool_name"), str) or not payload["tool_name"]:
        raise BadInput(
            "not a PostToolUse payload: no tool_name", "pipe in the JSON Claude Code gives a PostToolUse hook"
        )
    event = payload.get("hook_event_name", "PostToolUse")
    if event not in HOOK_EVENTS:
        return None
    error = None
    if event == "PostToolUseFailure":
        error = str(payload.get("error") or "the tool failed")[:4000]
    response = payload.get("tool_response")
    if error is None and isinstance(response, dict):
        if response.get("is_error") or response.get("success") is False or response.get("error"):
            error = str(response.get("error") or response.get("stderr") or "the tool reported an error")[:4000]
    session = str(payload.get("session_id") or "claude-code")
    use = (
        payload.get("tool_use_id")
        or hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:12]
    )
    step = {
        "tool": payload["tool_name"],
        "params": payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {},
        "status": "failed" if error else "completed",
        "retries": 0,
        "error": error,
    }
    return {
        "task_id": f"{session}:{use}"[:200],
        "agent": "claude-code",
        "context": (payload.get("cwd") and Path(str(payload["cwd"])).name) or "claude-code",
        "outcome": "failure" if error else "success",
        "steps": [step],
    }
