"""The catalog's copy of what the observation log says of each tool
(docs/learning.md), and how far into the log it has read.

The log only grows; each sync adds the lines past the offset kept here, in
one transaction that first checks no other process added them meanwhile.
A log that shrank or was replaced (another inode) is read again from the
start. What is kept are running totals per tool and context (runs,
successes, durations, retries), error counts by shape, and durations per
whole millisecond: a warm `mem tools` reads a few hundred rows whatever the
size of the log.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .connection import Connection

_TABLES = (
    "tool_stats",
    "tool_errors",
    "tool_durations",
    "tool_params",
    "tool_params_wide",
    "patterns",
    "pattern_contexts",
    "pattern_tools",
    "corrections",
)
EVIDENCE = 5  # task ids kept per row: the first that showed it
WIDE = 50  # values of one parameter past which it is an id, not a choice
_SEP = "\x1f"


class Step(NamedTuple):
    tool: str
    ok: int
    duration: float | None
    retries: int
    error: str | None  # normalised (execution_log.normalise_error)
    example: str | None  # the error as logged (redacted)
    params: tuple[tuple[str, str], ...]  # (name, value as JSON text) of the scalar parameters


class Task(NamedTuple):
    task_id: str
    context: str
    ok: int
    duration: float | None
    started: str | None  # UTC, ISO 8601 with Z
    steps: list[Step]
    patterns: tuple[tuple[str, str], ...]  # (type, pattern)
    query: str | None  # the query pattern, for the tools it used
    corrections: tuple[tuple[str, str, str], ...]  # (field, original, corrected) as JSON texts


def _note(ids: list[str], task_id: str) -> None:
    """Keep `task_id` as evidence while there is room (the first ones stay)."""
    if len(ids) < EVIDENCE and task_id not in ids:
        ids.append(task_id)


def _evidence(old: str | None, new: list[str]) -> str:
    """The evidence kept (joined) with a batch's added after it."""
    ids = old.split(_SEP) if old else []
    for task_id in new:
        _note(ids, task_id)
    return _SEP.join(ids)


class Batch:
    """Running totals of a slice of the log, summed in Python so that the
    transaction writes one row per key, not one per step."""

    def __init__(self) -> None:
        self.stats: dict[tuple[str, str], list[float]] = {}
        self.errors: dict[tuple[str, str, str], list[Any]] = {}  # count, example, evidence
        self.durations: dict[tuple[str, str, int], int] = {}
        self.params: dict[tuple[str, str, str], list[int]] = {}
        self.patterns: dict[tuple[str, str], list[Any]] = {}  # usage, ok, timed, duration, steps, first, last, evidence
        self.pattern_contexts: dict[tuple[str, str, str], list[int]] = {}  # (type, pattern, context): usage, ok
        self.pattern_tools: dict[tuple[str, str, str], list[int]] = {}
        self.corrections: dict[tuple[str, str, str], list[Any]] = {}  # n, original, evidence

    def add(self, task: Task) -> None:
        context = task.context
        for step in task.steps:
            totals = self.stats.setdefault((step.tool, context), [0, 0, 0, 0.0, 0])
            totals[0] += 1
            totals[1] += step.ok
            totals[4] += step.retries
            if step.duration is not None:
                totals[2] += 1
                totals[3] += step.duration
                key = (step.tool, context, round(step.duration))
                self.durations[key] = self.durations.get(key, 0) + 1
            if step.error is not None:
                error = self.errors.setdefault((step.tool, context, step.error), [0, "", []])
                error[0] += 1
                error[1] = step.example or ""
                _note(error[2], task.task_id)
            for name, value in step.params:
                runs = self.params.setdefault((step.tool, name, value), [0, 0])
                runs[0] += 1
                runs[1] += step.ok
            if task.query is not None:
                runs = self.pattern_tools.setdefault((task.query, step.tool, context), [0, 0])
                runs[0] += 1
                runs[1] += step.ok
        for kind, pattern in task.patterns:
            row = self.patterns.setdefault((kind, pattern), [0, 0, 0, 0.0, 0, None, None, []])
            row[0] += 1
            row[1] += task.ok
            row[4] += len(task.steps)
            if task.duration is not None:
                row[2] += 1
                row[3] += task.duration
            if task.started is not None:
                row[5] = task.started if row[5] is None else min(row[5], task.started)
                row[6] = task.started if row[6] is None else max(row[6], task.started)
            if task.ok or kind == "error_pattern":  # an error's evidence is where it happened
                _note(row[7], task.task_id)
            here = self.pattern_contexts.setdefault((kind, pattern, context), [0, 0])
            here[0] += 1
            here[1] += task.ok
        for field, original, corrected in task.corrections:
            row = self.corrections.setdefault((context, field, corrected), [0, original, []])
            row[0] += 1
            row[1] = original
            _note(row[2], task.task_id)


class Executions(Connection):
    """Reads and writes of the tables derived from the observation log."""

    def log_mark(self) -> tuple[int, int, bytes]:
        """(inode, byte offset, first bytes) of the log as last read; (0, 0, b"") when never."""
        rows = dict(self.read("SELECT key, value FROM meta WHERE key IN ('obs_ino', 'obs_offset', 'obs_head')"))
        return int(rows.get("obs_ino", 0)), int(rows.get("obs_offset", 0)), bytes.fromhex(rows.get("obs_head", ""))

    def add_batch(self, batch: Batch, ino: int, start: int, end: int, head: bytes = b"") -> bool:
        """Add what bytes [start, end) of the log with inode `ino` hold
        (start 0: what was kept is dropped first); False when another
        process moved the mark meanwhile (nothing is added)."""
        with self.transaction() as db:
            rows = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('obs_ino', 'obs_offset')").fetchall())
            mark = (int(rows.get("obs_ino", 0)), int(rows.get("obs_offset", 0)))
            if start and mark != (ino, start):
                return False
            if not start:
                for table in _TABLES:
                    db.execute(f"DELETE FROM {table}")
            db.executemany(
                "INSERT INTO tool_stats VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(tool, context) DO UPDATE SET "
                "runs = runs + excluded.runs, ok = ok + excluded.ok, timed = timed + excluded.timed, "
                "duration = duration + excluded.duration, retries = retries + excluded.retries",
                [(tool, context, *totals) for (tool, context), totals in batch.stats.items()],
            )
            db.executemany(
                "INSERT INTO tool_durations VALUES (?, ?, ?, ?) ON CONFLICT(tool, context, ms) DO UPDATE SET n = n + excluded.n",
                [(*key, n) for key, n in batch.durations.items()],
            )
            self._add_errors(db, batch)
            self._add_params(db, batch)
            self._add_patterns(db, batch)
            db.executemany(
                "INSERT INTO pattern_contexts VALUES (?, ?, ?, ?, ?) ON CONFLICT(context, type, pattern) DO UPDATE SET "
                "usage = usage + excluded.usage, ok = ok + excluded.ok",
                [(*key, *counts) for key, counts in batch.pattern_contexts.items()],
            )
            db.executemany(
                "INSERT INTO pattern_tools VALUES (?, ?, ?, ?, ?) ON CONFLICT(pattern, tool, context) DO UPDATE SET "
                "runs = runs + excluded.runs, ok = ok + excluded.ok",
                [(*key, *runs) for key, runs in batch.pattern_tools.items()],
            )
            old = {
                tuple(row[:3]): row[3]
                for row in _rows_of(
                    db, "corrections", ("context", "field", "corrected", "evidence"), 3, batch.corrections
                )
            }
            db.executemany(
                "INSERT INTO corrections VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(context, field, corrected) DO UPDATE SET "
                "n = n + excluded.n, original = excluded.original, evidence = excluded.evidence",
                [
                    (*key, n, original, _evidence(old.get(key), ids))
                    for key, (n, original, ids) in batch.corrections.items()
                ],
            )
            db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [("obs_ino", str(ino)), ("obs_offset", str(end)), ("obs_head", head.hex())],
            )
        return True

    @staticmethod
    def _add_errors(db: Any, batch: Batch) -> None:
        old = {
            tuple(row[:3]): row[3]
            for row in _rows_of(db, "tool_errors", ("tool", "context", "error", "evidence"), 3, batch.errors)
        }
        db.executemany(
            "INSERT INTO tool_errors VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(tool, context, error) DO UPDATE SET "
            "count = count + excluded.count, example = excluded.example, evidence = excluded.evidence",
            [
                (*key, count, example, _evidence(old.get(key), ids))
                for key, (count, example, ids) in batch.errors.items()
            ],
        )

    @staticmethod
    def _add_params(db: Any, batch: Batch) -> None:
        wide = set(db.execute("SELECT tool, param FROM tool_params_wide").fetchall())
        db.executemany(
            "INSERT INTO tool_params VALUES (?, ?, ?, ?, ?) ON CONFLICT(tool, param, value) DO UPDATE SET "
            "runs = runs + excluded.runs, ok = ok + excluded.ok",
            [(*key, *runs) for key, runs in batch.params.items() if key[:2] not in wide],
        )
        grown = db.execute(
            f"SELECT tool, param FROM tool_params GROUP BY tool, param HAVING count(*) > {WIDE}"
        ).fetchall()
        db.executemany("INSERT OR IGNORE INTO tool_params_wide VALUES (?, ?)", grown)
        db.executemany("DELETE FROM tool_params WHERE tool = ? AND param = ?", grown)

    @staticmethod
    def _add_patterns(db: Any, batch: Batch) -> None:
        old = {
            tuple(row[:2]): row[2:]
            for row in _rows_of(
                db, "patterns", ("type", "pattern", "first_seen", "last_seen", "evidence"), 2, batch.patterns
            )
        }
        rows = []
        for key, (usage, ok, timed, duration, steps, first, last, ids) in batch.patterns.items():
            was_first, was_last, evidence = old.get(key, (None, None, None))
            first = min(filter(None, (first, was_first)), default=None)
            last = max(filter(None, (last, was_last)), default=None)
            rows.append((*key, usage, ok, timed, duration, steps, first, last, _evidence(evidence, ids)))
        db.executemany(
            "INSERT INTO patterns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(type, pattern) DO UPDATE SET "
            "usage = usage + excluded.usage, ok = ok + excluded.ok, timed = timed + excluded.timed, "
            "duration = duration + excluded.duration, steps = steps + excluded.steps, first_seen = excluded.first_seen, "
            "last_seen = excluded.last_seen, evidence = excluded.evidence",
            rows,
        )

    def tool_rows(self, tool: str | None, context: str | None) -> list[tuple[Any, ...]]:
        """(tool, runs, successes, mean duration, mean retries) per tool, most used first."""
        where, params = _where(tool, context)
        return self.read(
            f"SELECT tool, sum(runs), sum(ok), sum(duration) / nullif(sum(timed), 0), sum(retries) * 1.0 / sum(runs) "
            f"FROM tool_stats {where} GROUP BY tool ORDER BY sum(runs) DESC, tool",
            params,
        )

    def durations(self, tool: str, context: str | None) -> list[tuple[int, int]]:
        """(whole milliseconds, how many runs took them) of a tool, shortest first."""
        where, params = _where(tool, context)
        return self.read(f"SELECT ms, sum(n) FROM tool_durations {where} GROUP BY ms ORDER BY ms", params)

    def per_context(self, tool: str, context: str | None = None) -> list[tuple[str, int, int]]:
        where, params = _where(tool, context)
        return self.read(f"SELECT context, runs, ok FROM tool_stats {where} ORDER BY runs DESC, context", params)

    def errors(self, tool: str, context: str | None, limit: int) -> list[tuple[str, int, str, str, str]]:
        """(error shape, count, contexts joined by U+001F, an example, evidence task ids joined by U+001F) most frequent first
        (one row per tool, context and error: the contexts are distinct)."""
        where, params = _where(tool, context)
        return self.read(
            f"SELECT error, sum(count), group_concat(context, char(31)), max(example), group_concat(evidence, char(31)) "
            f"FROM tool_errors {where} GROUP BY error "
            f"ORDER BY sum(count) DESC, error LIMIT {int(limit)}",
            params,
        )


def _rows_of(db: Any, table: str, columns: tuple[str, ...], width: int, keys: Any) -> list[tuple[Any, ...]]:
    """The kept rows of a table for the keys a batch touches (the first
    `width` columns are its whole key), looked up by key, 300 at a time."""
    keys = list(keys)
    out: list[tuple[Any, ...]] = []
    # A join on a VALUES list searches the primary key; `(a, b) IN (VALUES ...)` would scan the table.
    on = " AND ".join(f"t.{name} = k.column{n}" for n, name in enumerate(columns[:width], 1))
    row = "(" + ", ".join("?" * width) + ")"
    for start in range(0, len(keys), 300):
        chunk = keys[start : start + 300]
        out += db.execute(
            f"SELECT {', '.join('t.' + c for c in columns)} FROM (VALUES {', '.join([row] * len(chunk))}) AS k "
            f"JOIN {table} AS t ON {on}",
            [part for key in chunk for part in key],
        ).fetchall()
    return out


def _where(tool: str | None, context: str | None) -> tuple[str, list[Any]]:
    parts, params = [], []
    if tool is not None:
        parts.append("tool = ?")
        params.append(tool)
    if context is not None:
        parts.append("context = ?")
        params.append(context)
    return ("WHERE " + " AND ".join(parts)) if parts else "", params
