"""The catalog's copy of what the observation log says of each tool (README:
Learning from executions), and how far into the log it has read.

The log only grows; each sync adds the lines past the offset kept here, in
one transaction that first checks no other process added them meanwhile.
A log that shrank or was replaced (another inode) is read again from the
start. What is kept are running totals per tool and context (runs,
successes, durations, retries), error counts by shape, and durations per
whole millisecond: a warm `mem tools` reads a few hundred rows whatever the
size of the log.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

from .connection import Connection

_TABLES = ("tool_stats", "tool_errors", "tool_durations")


class Step(NamedTuple):
    tool: str
    context: str
    ok: int
    duration: float | None
    retries: int
    error: str | None  # normalised (tools.normalise_error)
    example: str | None  # the error as logged (redacted)


class Executions(Connection):
    """Reads and writes of the tool tables."""

    def log_mark(self) -> tuple[int, int, bytes]:
        """(inode, byte offset, first bytes) of the log as last read; (0, 0, b"") when never."""
        rows = dict(self.read("SELECT key, value FROM meta WHERE key IN ('obs_ino', 'obs_offset', 'obs_head')"))
        return int(rows.get("obs_ino", 0)), int(rows.get("obs_offset", 0)), bytes.fromhex(rows.get("obs_head", ""))

    def add_steps(self, steps: list[Step], ino: int, start: int, end: int, head: bytes = b"") -> bool:
        """Add the steps read from bytes [start, end) of the log with inode
        `ino` (start 0: what was kept is dropped first); False when another
        process moved the mark meanwhile (nothing is added)."""
        stats: dict[tuple[str, str], list[float]] = {}
        errors: Counter[tuple[str, str, str]] = Counter()
        examples: dict[tuple[str, str, str], str] = {}
        durations: Counter[tuple[str, str, int]] = Counter()
        for step in steps:
            totals = stats.setdefault((step.tool, step.context), [0, 0, 0, 0.0, 0])
            totals[0] += 1
            totals[1] += step.ok
            totals[4] += step.retries
            if step.duration is not None:
                totals[2] += 1
                totals[3] += step.duration
                durations[step.tool, step.context, int(round(step.duration))] += 1
            if step.error is not None:
                errors[step.tool, step.context, step.error] += 1
                examples[step.tool, step.context, step.error] = step.example or ""
        with self.transaction() as db:
            rows = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('obs_ino', 'obs_offset')").fetchall())
            mark = (int(rows.get("obs_ino", 0)), int(rows.get("obs_offset", 0)))
            if start and mark != (ino, start):
                return False
            if not start:
                for table in _TABLES:
                    db.execute(f"DELETE FROM {table}")
            db.executemany("INSERT INTO tool_stats VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(tool, context) DO UPDATE SET "
                           "runs = runs + excluded.runs, ok = ok + excluded.ok, timed = timed + excluded.timed, "
                           "duration = duration + excluded.duration, retries = retries + excluded.retries",
                           [(tool, context, *totals) for (tool, context), totals in stats.items()])
            db.executemany("INSERT INTO tool_errors VALUES (?, ?, ?, ?, ?) ON CONFLICT(tool, context, error) DO UPDATE SET "
                           "count = count + excluded.count, example = excluded.example",
                           [(*key, count, examples[key]) for key, count in errors.items()])
            db.executemany("INSERT INTO tool_durations VALUES (?, ?, ?, ?) ON CONFLICT(tool, context, ms) DO UPDATE SET n = n + excluded.n",
                           [(*key, n) for key, n in durations.items()])
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [("obs_ino", str(ino)), ("obs_offset", str(end)),
                                                                          ("obs_head", head.hex())])
        return True

    def tool_rows(self, tool: str | None, context: str | None) -> list[tuple[Any, ...]]:
        """(tool, runs, successes, mean duration, mean retries) per tool, most used first."""
        where, params = _where(tool, context)
        return self.read(f"SELECT tool, sum(runs), sum(ok), sum(duration) / nullif(sum(timed), 0), sum(retries) * 1.0 / sum(runs) "
                         f"FROM tool_stats {where} GROUP BY tool ORDER BY sum(runs) DESC, tool", params)

    def durations(self, tool: str, context: str | None) -> list[tuple[int, int]]:
        """(whole milliseconds, how many runs took them) of a tool, shortest first."""
        where, params = _where(tool, context)
        return self.read(f"SELECT ms, sum(n) FROM tool_durations {where} GROUP BY ms ORDER BY ms", params)

    def per_context(self, tool: str, context: str | None = None) -> list[tuple[str, int, int]]:
        where, params = _where(tool, context)
        return self.read(f"SELECT context, runs, ok FROM tool_stats {where} ORDER BY runs DESC, context", params)

    def errors(self, tool: str, context: str | None, limit: int) -> list[tuple[str, int, str, str]]:
        """(error shape, count, contexts joined by U+001F, an example) most frequent first
    (one row per tool, context and error: the contexts are distinct)."""
        where, params = _where(tool, context)
        return self.read(f"SELECT error, sum(count), group_concat(context, char(31)), max(example) FROM tool_errors {where} GROUP BY error "
                         f"ORDER BY sum(count) DESC, error LIMIT {int(limit)}", params)


def _where(tool: str | None, context: str | None) -> tuple[str, list[Any]]:
    parts, params = [], []
    if tool is not None:
        parts.append("tool = ?")
        params.append(tool)
    if context is not None:
        parts.append("context = ?")
        params.append(context)
    return ("WHERE " + " AND ".join(parts)) if parts else "", params
