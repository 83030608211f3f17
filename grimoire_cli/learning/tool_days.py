"""Tool memory over time: per tool and UTC day, its runs, success rate and
p50 / p95 duration, for the web view's learning charts (`mem serve`).

Read from the observation log itself, each record as the catalog reads it
(`execution_log.task_of`): the catalog keeps running totals, not days. A
record without a start time, or one mem cannot read, is left out, as the
catalog leaves out an unreadable line. The answer is kept in the catalog
(derived state, like `mem review`'s pairs) under the log's inode, size and
modification time: reading a log of 10,000 records took ~0.4 s, every load
of the web view's learning page; the log only grows, and a grown (or
replaced) log is read again.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from ..storage.catalog.executions import Task
from ..storage.store import Store
from .execution_log import task_of
from .observations import log_path

KEPT = "tool days of the observation log"  # no file's path begins so: paths begin with the storage folder
VERSION = "days-1"  # of what is kept: change it when what `_computed` returns changes


def tool_days(store: Store, most_days: int = 90) -> dict[str, list[dict[str, Any]]]:
    """Per tool (most runs first), its last `most_days` days with runs, oldest
    first: `{"day", "runs", "successes", "success_rate", "p50_ms", "p95_ms"}`."""
    try:
        seen = os.stat(log_path(store))
    except FileNotFoundError:
        return {}
    key = json.dumps([VERSION, most_days, seen.st_ino, seen.st_size, seen.st_mtime_ns])
    kept = store.reads.report(KEPT, key)
    if isinstance(kept, dict):
        return kept
    found = _computed(store, most_days)
    store.reads.keep_report(KEPT, key, found)
    return found


def _computed(store: Store, most_days: int) -> dict[str, list[dict[str, Any]]]:
    """`tool_days` read from every line of the log."""
    runs: dict[str, dict[str, list[tuple[int, float | None]]]] = defaultdict(lambda: defaultdict(list))
    for task in dated_tasks(store):
        for step in task.steps:
            runs[step.tool][(task.started or "")[:10]].append((step.ok, step.duration))
    totals = {tool: sum(len(day) for day in days.values()) for tool, days in runs.items()}
    return {
        tool: [_day(day, runs[tool][day]) for day in sorted(runs[tool])[-most_days:]]
        for tool in sorted(runs, key=lambda name: (-totals[name], name))
    }


def dated_tasks(store: Store) -> Iterator[Task]:
    """The tasks of the observation log that have a start time, in log order."""
    try:
        with open(log_path(store), "rb") as handle:
            lines = handle.readlines()
    except FileNotFoundError:
        return
    for line in lines:
        try:
            task = task_of(json.loads(line))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # not a record mem can read: the catalog leaves it out too
        if task.started:
            yield task


def _day(day: str, steps: list[tuple[int, float | None]]) -> dict[str, Any]:
    successes = sum(ok for ok, _ in steps)
    durations = sorted(int(ms) for _, ms in steps if ms is not None)
    return {
        "day": day,
        "runs": len(steps),
        "successes": successes,
        "success_rate": round(successes / len(steps), 4),
        "p50_ms": _nearest_rank(durations, 0.5),
        "p95_ms": _nearest_rank(durations, 0.95),
    }


def _nearest_rank(ordered: list[int], share: float) -> float | None:
    """The nearest-rank percentile at whole milliseconds, as `mem tools` computes it."""
    return float(ordered[max(1, math.ceil(share * len(ordered))) - 1]) if ordered else None
