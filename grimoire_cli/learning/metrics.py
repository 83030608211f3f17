"""Success metrics over time (the Persistent Memory System's): per UTC day
or ISO week, how many tasks ran, how many succeeded, how many reused a plan
an earlier task had run (the reuse rate: memory paying off), and how many
of their steps failed (the error rate); and over the whole log, how much
the error rate fell from the first period to the last (error reduction).

Read from the observation log, each record as the catalog reads it
(`execution_log.task_of`), in the order the tasks started; a record without
a start time is left out, as the web view's charts leave it out, and so is a
correction's (no steps: no task ran).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Any

from ..core.errors import BadInput
from ..storage.catalog.executions import Task
from ..storage.store import Store
from .tool_days import dated_tasks

PERIODS = ("day", "week")


class Period:
    """The counts of one day or week."""

    __slots__ = ("failed_steps", "name", "reused", "steps", "successes", "tasks")

    def __init__(self, name: str):
        self.name = name
        self.tasks = self.successes = self.reused = self.steps = self.failed_steps = 0

    def add(self, task: Task, reused: bool) -> None:
        self.tasks += 1
        self.successes += task.ok
        self.reused += reused
        self.steps += len(task.steps)
        self.failed_steps += sum(1 for step in task.steps if not step.ok)

    @property
    def error_rate(self) -> float:
        return self.failed_steps / self.steps if self.steps else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "period": self.name,
            "tasks": self.tasks,
            "success_rate": round(self.successes / self.tasks, 4),
            "reuse_rate": round(self.reused / self.tasks, 4),
            "steps": self.steps,
            "failed_steps": self.failed_steps,
            "error_rate": round(self.error_rate, 4),
        }


def period_of(started: str, by: str) -> str:
    """`2026-11-22` for a day; `2026-W47` for its ISO week."""
    if by == "day":
        return started[:10]
    year, week, _ = date.fromisoformat(started[:10]).isocalendar()
    return f"{year}-W{week:02d}"


def success_metrics(store: Store, by: str = "week") -> dict[str, Any]:
    """`{"by", "periods": [...], "tasks", "success_rate", "reuse_rate",
    "error_rate_first", "error_rate_last", "error_reduction"}`; the
    reduction is the share by which the error rate fell from the first
    period to the last (negative: it rose), None with fewer than two
    periods or none failing in the first."""
    if by not in PERIODS:
        raise BadInput(f"cannot count by {by!r}", f"use one of {', '.join(PERIODS)}")
    return metrics_of(sorted(dated_tasks(store), key=lambda task: task.started or ""), by)


def metrics_of(tasks: Iterable[Task], by: str) -> dict[str, Any]:
    periods: dict[str, Period] = {}
    seen_plans: set[str] = set()
    for task in tasks:
        if not task.steps and task.corrections:
            continue  # a correction recorded (`mem correct`, PMS's learnFromCorrection), not a task that ran
        plan = next((pattern for kind, pattern in task.patterns if kind == "plan_pattern"), None)
        name = period_of(task.started or "", by)
        periods.setdefault(name, Period(name)).add(task, plan in seen_plans)
        if plan is not None:
            seen_plans.add(plan)
    listed = [periods[name] for name in sorted(periods)]
    total = sum(p.tasks for p in listed)
    first, last = (listed[0], listed[-1]) if listed else (None, None)
    reduction = None
    if first is not None and last is not None and first is not last and first.error_rate:
        reduction = round((first.error_rate - last.error_rate) / first.error_rate, 4)
    return {
        "by": by,
        "periods": [p.to_dict() for p in listed],
        "tasks": total,
        "success_rate": round(sum(p.successes for p in listed) / total, 4) if total else None,
        "reuse_rate": round(sum(p.reused for p in listed) / total, 4) if total else None,
        "error_rate_first": round(first.error_rate, 4) if first else None,
        "error_rate_last": round(last.error_rate, 4) if last else None,
        "error_reduction": reduction,
    }
