"""Reads of what the catalog derived from the observation log beyond tool
statistics: parameter values, patterns, the tools of each query pattern,
corrections (README: Learning from executions). Written by
`executions.Executions.add_batch`.
"""

from __future__ import annotations

from typing import Any

from .connection import Connection


class Learned(Connection):
    def param_rows(self, tool: str) -> list[tuple[str, str, int, int]]:
        """(parameter, value as JSON text, runs, successes) of a tool's parameters with few values."""
        return self.read("SELECT param, value, runs, ok FROM tool_params WHERE tool = ? ORDER BY param, value", (tool,))

    def pattern_rows(self, kind: str | None, min_usage: int) -> list[tuple[Any, ...]]:
        """(type, pattern, usage, successes, timed, total duration, total steps, first seen, last seen, evidence), most used first."""
        where, params = "WHERE usage >= ?", [min_usage]
        if kind is not None:
            where += " AND type = ?"
            params.append(kind)
        return self.read(f"SELECT type, pattern, usage, ok, timed, duration, steps, first_seen, last_seen, evidence FROM patterns {where} "
                         "ORDER BY usage DESC, type, pattern", params)

    def pattern_tools(self, patterns: list[str], context: str | None) -> list[tuple[str, int, int]]:
        """(tool, runs, successes) of the tools the tasks of these query patterns ran (in `context`)."""
        if not patterns:
            return []
        marks = ", ".join("?" * len(patterns))
        where, params = f"WHERE pattern IN ({marks})", list(patterns)
        if context is not None:
            where += " AND context = ?"
            params.append(context)
        return self.read(f"SELECT tool, sum(runs), sum(ok) FROM pattern_tools {where} GROUP BY tool", params)

    def correction_rows(self) -> list[tuple[str, str, str, int, str, str]]:
        """(context, field, corrected, count, last original, evidence) of every correction kept."""
        return self.read("SELECT context, field, corrected, n, original, evidence FROM corrections ORDER BY context, field, corrected")

    def error_rows(self) -> list[tuple[str, str, int, str, str]]:
        """(tool, error shape, count, an example, evidence joined by U+001F) over all contexts."""
        return self.read("SELECT tool, error, sum(count), max(example), group_concat(evidence, char(31)) FROM tool_errors "
                         "GROUP BY tool, error ORDER BY tool, sum(count) DESC, error")
