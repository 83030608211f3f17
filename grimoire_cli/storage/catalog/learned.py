"""Reads of what the catalog derived from the observation log beyond tool
statistics: parameter values, patterns, the tools of each query pattern,
corrections, errors over all contexts (docs/learning.md).
Written by `executions.Executions.add_batch`; each read gives named rows.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .connection import Connection


class PatternRow(NamedTuple):
    type: str
    pattern: str
    usage: int
    ok: int
    timed: int  # tasks with a duration
    duration: float  # their total, ms
    steps: int  # total over the tasks
    first_seen: str | None
    last_seen: str | None
    evidence: str  # task ids joined by U+001F


class CorrectionRow(NamedTuple):
    context: str
    field: str
    corrected: str  # JSON text
    count: int  # type: ignore[assignment]  # a field named as the SQL column; tuple.count is not used
    original: str  # JSON text, the last one seen
    evidence: str


class ErrorRow(NamedTuple):
    tool: str
    error: str  # its shape
    count: int  # type: ignore[assignment]  # as above
    example: str
    evidence: str


class LogReads(Connection):
    def param_rows(self, tool: str) -> list[tuple[str, str, int, int]]:
        """(parameter, value as JSON text, runs, successes) of a tool's parameters with few values."""
        return self.read("SELECT param, value, runs, ok FROM tool_params WHERE tool = ? ORDER BY param, value", (tool,))

    def pattern_rows(self, kind: str | None, min_usage: int) -> list[PatternRow]:
        """The patterns (of one type) used at least `min_usage` times, most used first."""
        where = "WHERE usage >= ?"
        params: list[Any] = [min_usage]
        if kind is not None:
            where += " AND type = ?"
            params.append(kind)
        return [
            PatternRow(*row)
            for row in self.read(
                f"SELECT type, pattern, usage, ok, timed, duration, steps, first_seen, last_seen, evidence FROM patterns {where} "
                "ORDER BY usage DESC, type, pattern",
                params,
            )
        ]

    def patterns_in(self, context: str) -> set[tuple[str, str]]:
        """(type, pattern) of the patterns tasks in `context` showed."""
        return {
            tuple(row) for row in self.read("SELECT type, pattern FROM pattern_contexts WHERE context = ?", (context,))
        }

    def pattern_tools(self, patterns: list[str], context: str | None) -> list[tuple[str, str, int, int]]:
        """(query pattern, tool, runs, successes) of the tools the tasks of these patterns ran (in `context`)."""
        out: list[tuple[str, str, int, int]] = []
        for start in range(0, len(patterns), 500):
            chunk = patterns[start : start + 500]
            where, params = f"WHERE pattern IN ({', '.join('?' * len(chunk))})", list(chunk)
            if context is not None:
                where += " AND context = ?"
                params.append(context)
            out += self.read(
                f"SELECT pattern, tool, sum(runs), sum(ok) FROM pattern_tools {where} GROUP BY pattern, tool", params
            )
        return out

    def correction_rows(self) -> list[CorrectionRow]:
        """Every correction kept, by context, field and value."""
        return [
            CorrectionRow(*row)
            for row in self.read(
                "SELECT context, field, corrected, n, original, evidence FROM corrections ORDER BY context, field, corrected"
            )
        ]

    def error_rows(self) -> list[ErrorRow]:
        """Each tool's errors by shape over all contexts, most frequent first."""
        return [
            ErrorRow(*row)
            for row in self.read(
                "SELECT tool, error, sum(count), max(example), group_concat(evidence, char(31)) FROM tool_errors "
                "GROUP BY tool, error ORDER BY tool, sum(count) DESC, error"
            )
        ]
