"""Tool memory (the Persistent Memory System): per tool, how its runs went,
derived from the observation log (`observations.py`) and kept in the
catalog, which reads only what the log gained since it last looked.

Durations are kept per whole millisecond: p50 and p95 are nearest-rank
percentiles at that resolution. Errors are grouped by their shape
(`execution_log.normalise_error`). A parameter insight names, for a
parameter with a few values each seen at least `MIN_RUNS` times, the value
that went with success most often and the one that went with it least. The
known solutions of a tool are the active entries of the `error` category
tagged with the tool's name: what the team wrote down about its failures.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..storage.store import Store
from .execution_log import derived

if TYPE_CHECKING:
    from ..storage.catalog.catalog import Catalog

TOP_ERRORS = 5
MIN_RUNS = 5  # runs of a parameter value before it says anything
SOLUTIONS = "error"  # the category whose entries tagged with a tool are its known solutions


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

    __slots__ = (
        "contexts",
        "errors",
        "executions",
        "known_solutions",
        "mean_ms",
        "mean_retries",
        "p50_ms",
        "p95_ms",
        "parameters",
        "successes",
        "tool",
    )

    def __init__(self, tool: str, executions: int, successes: int, mean_ms: float | None, mean_retries: float):
        self.tool, self.executions, self.successes = tool, executions, successes
        self.mean_ms, self.mean_retries = mean_ms, mean_retries
        self.p50_ms: float | None = None
        self.p95_ms: float | None = None
        self.contexts: dict[str, dict[str, Any]] = {}
        self.errors: list[dict[str, Any]] = []
        self.parameters: list[dict[str, Any]] = []
        self.known_solutions: list[dict[str, str]] = []

    @property
    def failures(self) -> int:
        return self.executions - self.successes

    @property
    def success_rate(self) -> float:
        return self.successes / self.executions if self.executions else 0.0

    def to_dict(self) -> dict[str, Any]:
        def r(value: float | None, digits: int = 1) -> float | None:
            return round(value, digits) if value is not None else None

        return {
            "tool": self.tool,
            "executions": self.executions,
            "successes": self.successes,
            "failures": self.failures,
            "success_rate": round(self.success_rate, 4),
            "duration_ms": {"mean": r(self.mean_ms), "p50": r(self.p50_ms), "p95": r(self.p95_ms)},
            "mean_retries": round(self.mean_retries, 3),
            "contexts": self.contexts,
            "errors": self.errors,
            "parameters": self.parameters,
            "known_solutions": self.known_solutions,
        }


def tool_memory(store: Store, name: str | None = None, context: str | None = None) -> list[ToolMemory]:
    """Tool memory of every tool (or `name`), over all runs (or those in `context`), most used first."""
    return derived(store, lambda catalog: _tool_memory(store, catalog, name, context))


def _tool_memory(store: Store, catalog: Catalog, name: str | None, context: str | None) -> list[ToolMemory]:
    rows = catalog.tool_rows(name, context)
    solutions = known_solutions(store, [row[0] for row in rows])
    out = []
    for tool, runs, successes, mean, retries in rows:
        memory = ToolMemory(tool, runs, int(successes or 0), mean, float(retries or 0))
        memory.p50_ms, memory.p95_ms = percentiles(catalog.durations(tool, context), (0.5, 0.95))
        memory.contexts = {
            c: {"executions": n, "successes": ok, "success_rate": round(ok / n, 4)}
            for c, n, ok in catalog.per_context(tool, context)
        }
        failures = memory.failures
        memory.errors = [
            {
                "error": shape,
                "count": count,
                "share": round(count / failures, 4) if failures else 0.0,
                "rate": round(count / runs, 4),
                "contexts": sorted((contexts or "").split("\x1f")),
                "example": example,
                "evidence": evidence_of(evidence),
            }
            for shape, count, contexts, example, evidence in catalog.errors(tool, context, TOP_ERRORS)
        ]
        memory.parameters = parameter_insights(catalog.param_rows(tool))
        memory.known_solutions = solutions.get(tool, [])
        out.append(memory)
    return out


def evidence_of(joined: str | None, most: int = 5) -> list[str]:
    """Task ids kept joined by U+001F (several rows' at once), distinct, sorted, at most `most`."""
    return sorted({task for task in (joined or "").split("\x1f") if task})[:most]


def parameter_insights(rows: list[tuple[str, str, int, int]]) -> list[dict[str, Any]]:
    """Per parameter with two or more values seen `MIN_RUNS` times: the value
    most associated with success and the one least, when they differ."""
    import json

    by_param: dict[str, list[tuple[float, int, str]]] = {}
    for param, value, runs, ok in rows:
        if runs >= MIN_RUNS:
            by_param.setdefault(param, []).append((ok / runs, runs, value))
    out = []
    for param, values in by_param.items():
        if len(values) < 2:
            continue
        values.sort(key=lambda v: (-v[0], -v[1], v[2]))
        best, worst = values[0], values[-1]
        if best[0] == worst[0]:
            continue

        def shown(v: tuple[float, int, str]) -> dict[str, Any]:
            return {"value": json.loads(v[2]), "runs": v[1], "success_rate": round(v[0], 4)}

        out.append({"param": param, "best": shown(best), "worst": shown(worst), "values": len(values)})
    return out


def known_solutions(store: Store, tools: list[str]) -> dict[str, list[dict[str, str]]]:
    """Per tool, the active `error` entries tagged with its name: {id, summary}."""
    from ..core.model import tool_tag
    from ..storage.catalog.queries import Filter

    if SOLUTIONS not in store.config.categories or not tools:
        return {}
    tags: dict[str, str] = {}
    for tool in tools:
        try:
            tags[tool_tag(tool)] = tool
        except Exception:
            continue
    chosen = Filter(at=store.runtime.now().timestamp(), categories=[SOLUTIONS])
    with store.reading():  # the rows and their load read one state (storage/handed.py)
        wanted = [light for light in store.reads.lights(chosen) if any(tag in tags for tag in light.tags)]
        loaded = store.load([light.rowid for light in wanted]) if wanted else {}
    out: dict[str, list[dict[str, str]]] = {}
    for light in sorted(wanted, key=lambda light: light.id):
        entry = loaded.get(light.rowid)
        if entry is None:
            continue
        for tag in light.tags:
            if tag in tags:
                out.setdefault(tags[tag], []).append({"id": entry.id, "summary": entry.summary})
    return out
