"""The Persistent Memory System's Task (its `executionHistory` of
{action, status, duration, error?}) as one record of the observation log:
what PMS's observeTaskExecution records (adapters/pms.py) and what `mem
observe` takes for a line that is a Task, so a TypeScript runtime can pipe
its Tasks to mem as they are."""

from __future__ import annotations

from typing import Any, TypeGuard

from ..core.errors import BadInput


def field(thing: Any, name: str, default: Any = None) -> Any:
    """`thing.name` of a TypeScript object, given as a mapping or an object."""
    if isinstance(thing, dict):
        return thing.get(name, default)
    return getattr(thing, name, default)


def is_task(record: Any) -> TypeGuard[dict[str, Any]]:
    """A PMS Task rather than an observation record: an executionHistory, no steps."""
    return isinstance(record, dict) and "executionHistory" in record and "steps" not in record


def record_of(task: Any, plan: Any, now: str) -> dict[str, Any]:
    """The observation record of a PMS Task (its executionHistory) and Plan, started at `now` unless it says when."""
    history = field(task, "executionHistory")
    if not isinstance(history, list) or not history:
        raise BadInput(
            "a Task's executionHistory is not a list of the steps it ran",
            "give executionHistory: [{action, status, duration}], one item a step",
        )
    steps = [
        {
            "tool": str(field(step, "action")),
            "status": field(step, "status"),
            **({"duration_ms": field(step, "duration")} if field(step, "duration") is not None else {}),
            **({"error": str(field(step, "error"))} if field(step, "error") else {}),
        }
        for step in history
    ]
    record: dict[str, Any] = {
        "task_id": str(field(task, "taskId") or ""),
        "outcome": "success" if steps and all(s["status"] == "completed" for s in steps) else "failure",
        "started_at": time_of(field(task, "startedAt")) or now,
        "steps": steps,
    }
    durations = [s.get("duration_ms") for s in steps]
    if steps and all(isinstance(d, (int, float)) and not isinstance(d, bool) for d in durations):
        record["duration_ms"] = sum(durations)  # a Task times only its steps: it took their sum
    for name, key in (("goal", "goal"), ("query", "goal"), ("context", "context")):
        if field(task, name) and key not in record:
            record[key] = str(field(task, name))
    if plan is not None and field(plan, "planId"):
        record["metadata"] = {"planId": str(field(plan, "planId"))}
    return record


def time_of(value: Any) -> str | None:
    """A time (a datetime or an ISO text; naive is UTC, as parse_time takes a text without an offset) as mem keeps it."""
    from datetime import UTC, datetime

    from ..core.clock import iso, parse_time

    if isinstance(value, datetime):
        return iso(value if value.tzinfo else value.replace(tzinfo=UTC))
    return iso(parse_time(value)) if isinstance(value, str) else None
