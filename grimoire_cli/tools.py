"""Tool memory (the Persistent Memory System): per tool, how its runs went,
derived from the observation log (`observations.py`) and kept in the
catalog, which reads only what the log gained since it last looked.

Durations are kept per whole millisecond: p50 and p95 are nearest-rank
percentiles at that resolution. Errors are grouped by their shape: numbers, ids, paths, quoted values and
e-mail addresses are wildcarded, so `timeout after 30s on /srv/a/1.json`
and `timeout after 12s on /srv/b/7.json` are one error,
`timeout after <n>s on <path>`.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import TYPE_CHECKING, Any

from .errors import BadInput
from .observations import log_path
from .storage.catalog.executions import Step
from .storage.store import Store

if TYPE_CHECKING:
    from .storage.catalog.catalog import Catalog

_SHAPES = (
    (re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+"), "<email>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[0-9a-f]{8,}\b", re.I), "<id>"),
    (re.compile(r"(?:\b[A-Za-z]:)?(?:[/\\][\w.@%+-]+){2,}[/\\]?|(?:\./|\.\./)[\w./-]+"), "<path>"),
    # A quote opens after a non-word character: "can't" and "won't" are words, not values.
    (re.compile(r"(?<!\w)'[^']*'|(?<!\w)\"[^\"]*\""), "<value>"),
    (re.compile(r"(?<![A-Za-z_])\d+(\.\d+)?"), "<n>"),
)
TOP_ERRORS = 5


def normalise_error(text: str) -> str:
    """An error's shape: what varies between two occurrences wildcarded."""
    shape = " ".join(text.split())[:500]
    for pattern, mark in _SHAPES:
        shape = pattern.sub(mark, shape)
    return shape


def _steps(record: dict[str, Any]) -> list[Step]:
    """A logged record's steps; a line mem did not write may hold anything:
    what cannot be one is left out (the line, by the caller)."""
    context = str(record.get("context") or "")
    out = []
    for step in record["steps"]:
        error = step.get("error") if isinstance(step.get("error"), str) and step["error"].strip() else None
        ok = int(step["status"] == "completed")
        duration = step.get("duration_ms")
        duration = float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) and 0 <= duration <= 1e12 else None
        retries = step.get("retries")
        retries = retries if isinstance(retries, int) and not isinstance(retries, bool) and 0 <= retries <= 10 ** 6 else 0
        # The error of a failed step: one a completed step mentions did not make it fail.
        shape = normalise_error(error) if error and not ok else None
        out.append(Step(str(step["tool"]), context, ok, duration, retries, shape, error[:300] if shape else None))
    return out


_HEAD = 256  # bytes of the log's start kept as its fingerprint


def sync(store: Store, catalog: "Catalog") -> None:
    """Bring the catalog's tool tables up to the log: only the lines it gained."""
    path = log_path(store)
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        if catalog.log_mark()[:2] != (0, 0):
            catalog.add_steps([], 0, 0, 0)
        return
    ino, offset, head = catalog.log_mark()
    with open(path, "rb") as handle:
        start = handle.read(_HEAD)
        if ino != stat.st_ino or stat.st_size < offset or start[: len(head)] != head:
            offset = 0  # replaced, cut or rewritten: read again from the start
        if stat.st_size == offset:
            return
        handle.seek(offset)
        data = handle.read(stat.st_size - offset)
    end = data.rfind(b"\n") + 1  # whole lines only: an append may be under way
    steps: list[Step] = []
    for line in data[:end].split(b"\n"):
        if not line.strip():
            continue
        try:
            steps.extend(_steps(json.loads(line)))
        except Exception:  # noqa: BLE001 - a line mem did not write (a half line a crash left, a hand edit): not a record
            continue
    if end:
        catalog.add_steps(steps, stat.st_ino, offset, offset + end, start)


def percentiles(counts: list[tuple[int, int]], shares: tuple[float, ...]) -> tuple[float | None, ...]:
    """Nearest-rank percentiles of durations given as (ms, runs), shortest first."""
    total = sum(n for _, n in counts)
    if not total:
        return tuple(None for _ in shares)
    out = []
    for share in shares:
        rank, seen = max(1, math.ceil(share * total)), 0
        for ms, n in counts:
            seen += n
            if seen >= rank:
                out.append(float(ms))
                break
    return tuple(out)


class ToolMemory:
    """What the log says of one tool (in one context, when asked)."""

    __slots__ = ("tool", "executions", "successes", "mean_ms", "p50_ms", "p95_ms", "mean_retries", "contexts", "errors")

    def __init__(self, tool: str, executions: int, successes: int, mean_ms: float | None, mean_retries: float):
        self.tool, self.executions, self.successes = tool, executions, successes
        self.mean_ms, self.mean_retries = mean_ms, mean_retries
        self.p50_ms: float | None = None
        self.p95_ms: float | None = None
        self.contexts: dict[str, dict[str, Any]] = {}
        self.errors: list[dict[str, Any]] = []

    @property
    def failures(self) -> int:
        return self.executions - self.successes

    @property
    def success_rate(self) -> float:
        return self.successes / self.executions if self.executions else 0.0

    def to_dict(self) -> dict[str, Any]:
        def r(value: float | None, digits: int = 1) -> float | None:
            return round(value, digits) if value is not None else None

        return {"tool": self.tool, "executions": self.executions, "successes": self.successes, "failures": self.failures,
                "success_rate": round(self.success_rate, 4), "duration_ms": {"mean": r(self.mean_ms), "p50": r(self.p50_ms), "p95": r(self.p95_ms)},
                "mean_retries": round(self.mean_retries, 3), "contexts": self.contexts, "errors": self.errors}


def tool_memory(store: Store, name: str | None = None, context: str | None = None) -> list[ToolMemory]:
    """Tool memory of every tool (or `name`), over all runs (or those in `context`), most used first."""
    return store.derived(lambda catalog: _tool_memory(store, catalog, name, context))


def _tool_memory(store: Store, catalog: "Catalog", name: str | None, context: str | None) -> list[ToolMemory]:
    sync(store, catalog)
    rows = catalog.tool_rows(name, context)
    if (name is not None or context is not None) and not rows:
        raise BadInput(f"no runs of {name or 'any tool'!r} observed" + (f" in {context!r}" if context is not None else ""),
                       "see the tools and contexts with `mem tools`")
    out = []
    for tool, runs, successes, mean, retries in rows:
        memory = ToolMemory(tool, runs, int(successes or 0), mean, float(retries or 0))
        memory.p50_ms, memory.p95_ms = percentiles(catalog.durations(tool, context), (0.5, 0.95))
        memory.contexts = {c: {"executions": n, "successes": ok, "success_rate": round(ok / n, 4)} for c, n, ok in catalog.per_context(tool, context)}
        failures = memory.failures
        memory.errors = [{"error": shape, "count": count, "share": round(count / failures, 4) if failures else 0.0,
                          "contexts": sorted((contexts or "").split("\x1f")), "example": example}
                         for shape, count, contexts, example in catalog.errors(tool, context, TOP_ERRORS)]
        out.append(memory)
    return out
