"""The Persistent Memory System's API (the the Persistent Memory System design's calls) over a `Grimoire`:
the Python equivalents of its TypeScript calls, with the same camelCase
names and result shapes (docs/adapters.md).

A Task's execution history becomes one record of the observation log
(`mem observe`); tool memory, patterns and insights are what mem derives
from that log (`mem tools`, `mem patterns`, `mem learn`). An object input
may be given as a mapping or as an object with those attributes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput
from ..learning.insights import applies_in, is_learned, rule_id
from ..learning.pms_tasks import field, record_of, time_of

if TYPE_CHECKING:
    from ..api import Grimoire

MEMORY_TYPES = {"patterns": "patterns", "tool_memory": "tools", "insights": "insights", "preferences": "preferences"}
_CAPITALS = re.compile(r"\b[A-Z]{2,}\b", re.ASCII)
_NUMBERS = re.compile(r"\b\d+\b", re.ASCII)
_EMAILS = re.compile(r"\b[\w-]+@[\w-]+\.\w+\b", re.ASCII)
_SPACES = re.compile(r"\s+", re.ASCII)


def extractQueryPattern(query: str) -> str:
    """The query with capitals-only words, numbers and e-mails as `*`, lowercased, spaces as `_`."""
    for pattern in (_CAPITALS, _NUMBERS, _EMAILS):
        query = pattern.sub("*", query)
    return _SPACES.sub("_", query.lower())


def extractPlanPattern(plan: Any) -> list[str]:
    """The plan's actions, in order."""
    return [str(field(step, "action")) for step in field(plan, "steps") or []]


def extractToolSequence(plan: Any) -> str:
    """The plan's actions joined by ` → `."""
    return " → ".join(extractPlanPattern(plan))


class PersistentMemory:
    """PMS's calls over one grimoire (`mem init --preset pms` adds the insight category)."""

    def __init__(self, grimoire: Grimoire):
        self.grimoire = grimoire

    extractQueryPattern = staticmethod(extractQueryPattern)
    extractPlanPattern = staticmethod(extractPlanPattern)
    extractToolSequence = staticmethod(extractToolSequence)

    # -- observing -------------------------------------------------------------

    async def observeTaskExecution(self, task: Any, plan: Any = None, thought: Any = None) -> None:
        """Record the task's execution: tool performance, and the patterns and
        insights mem derives from the log (`thought` is not kept)."""
        await self.updateToolPerformance(task, plan)

    async def updateToolPerformance(self, task: Any, plan: Any = None) -> None:
        """One observation record of the task: each executed step a tool run,
        at the task's `startedAt` (else now: it is observed after it ran)."""
        from ..core.clock import iso

        self.grimoire.learning.observe([record_of(task, plan, iso(self.grimoire.now()))])

    # -- remembering -----------------------------------------------------------

    async def remember(self, pattern: str, context: str) -> dict[str, list[dict[str, Any]]]:
        """`{patterns, toolMemory, insights}` about `pattern` in `context`."""
        found = self.query_memory(pattern, ["patterns", "tool_memory", "insights"], context)
        return {name: found[name] for name in ("patterns", "toolMemory", "insights")}

    async def getToolRecommendations(self, context: str, requiredAction: str) -> list[dict[str, Any]]:
        """ToolRecommendation items `{toolName, successRate, recommendation}`, best first."""
        answer = self.grimoire.learning.recommend(requiredAction, context=context)
        return [
            {"toolName": r.tool, "successRate": round(r.success_rate, 4), "recommendation": r.reason}
            for r in answer.tools
        ]

    async def analyzeCommonErrors(self) -> list[dict[str, Any]]:
        """Each tool's common errors: `{error, solution, contexts, frequency, evidence}`, most frequent first."""
        out = []
        for memory in self.grimoire.learning.tools():
            solution = next(iter(memory.known_solutions), None)
            for error in memory.errors:
                out.append(
                    {
                        "tool": memory.tool,
                        "error": error["error"],
                        "solution": solution,
                        "contexts": error["contexts"],
                        "frequency": error["count"],
                        "evidence": error["evidence"],
                    }
                )
        return sorted(out, key=lambda item: -item["frequency"])

    async def learnFromCorrection(self, userContext: str, original: Any, corrected: Any, context: str) -> None:
        """A correction: in `userContext`, what `context` names should have been `corrected`."""
        self.grimoire.learning.correct(context, corrected, original=original, context=userContext)

    # -- learning ----------------------------------------------------------------

    async def learn(self) -> None:
        """Patterns, tool memory, insights: derived from the log, insights written."""
        self.grimoire.learning.learn()

    async def generateInsights(self) -> None:
        self.grimoire.learning.learn()

    # -- the agent's query tools ---------------------------------------------------

    def query_memory(
        self,
        query: str | dict[str, Any],
        memoryTypes: list[str] | None = None,
        context: str | None = None,
        limit: int | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """`{patterns, toolMemory, insights, preferences}` about `query`; with
        `context`, the patterns tasks in it showed, tool memory over its runs
        and the insights that apply there (`appliesTo.contexts` naming it, or none)."""
        if isinstance(query, dict):
            return self.query_memory(**query)
        chosen = list(MEMORY_TYPES) if memoryTypes is None else memoryTypes
        unknown = [t for t in chosen if t not in MEMORY_TYPES]
        if unknown:
            raise BadInput(f"unknown memory type {unknown[0]!r}", f"use some of {', '.join(MEMORY_TYPES)}")
        found = self.grimoire.learning.recall_all(
            query, types=[MEMORY_TYPES[t] for t in chosen], limit=limit or 5, context=context
        )
        out: dict[str, list[dict[str, Any]]] = {"patterns": [], "toolMemory": [], "insights": [], "preferences": []}
        out["patterns"] = [_pattern(p) for p in found.get("patterns", [])]
        out["toolMemory"] = [_tool(t) for t in found.get("tools", [])]
        error_contexts = cache(self._error_contexts)  # read from tool memory once, for every warning among them
        insights = [_insight(i, error_contexts) for i in found.get("insights", [])]
        # What mem learned applies as PMS says (a warning in its error's contexts), not everywhere as mem reads the text.
        out["insights"] = [i for i in insights if applies_in(i["appliesTo"], context)]
        out["preferences"] = found.get("preferences", [])
        return out

    def _error_contexts(self) -> dict[str, list[str]]:
        """The contexts each learned warning's error was seen in, by its rule id (as `mem learn` names it)."""
        return {
            rule_id("warn-", memory.tool, error["error"]): list(error["contexts"])
            for memory in self.grimoire.learning.tools()
            for error in memory.errors
        }

    def get_memory_pattern(
        self, patternType: str | dict[str, Any], pattern: str | None = None
    ) -> dict[str, Any] | None:
        """The MemoryPattern of that type and text, or None."""
        if isinstance(patternType, dict):
            return self.get_memory_pattern(**patternType)
        for found in self.grimoire.learning.patterns(patternType):
            if found.pattern == pattern:
                return _pattern(found.to_dict())
        return None

    def store_insight(
        self,
        insight: str | dict[str, Any],
        insightType: str | None = None,
        appliesTo: dict[str, Any] | None = None,
        evidence: list[dict[str, Any]] | None = None,
        confidence: float | None = None,
    ) -> dict[str, Any]:
        """A LearnedInsight written by hand: `appliesTo` ({agents, contexts,
        conditions}) kept as it is given (none: it applies to all), each
        evidence item as {task_id, description, timestamp}."""
        if isinstance(insight, dict):
            return self.store_insight(**insight)
        if appliesTo is not None and not isinstance(appliesTo, dict):
            raise BadInput(
                f"appliesTo is a {type(appliesTo).__name__}",
                'give {"agents": [...], "contexts": [...], "conditions": {...}}',
            )
        applies = {name: value for name, value in (appliesTo or {}).items() if value not in (None, [], {})}
        entry = self.grimoire.learning.add_insight(
            insight,
            insight_type=insightType or "rule",
            applies_to=applies or "all",
            evidence=[_evidence_in(item) for item in evidence or []],
            confidence=confidence,
        )
        return _insight(entry.to_dict(), self._error_contexts)


def _pattern(found: dict[str, Any]) -> dict[str, Any]:
    return {
        "patternId": f"{found['type']}:{found['pattern']}",
        "patternType": found["type"],
        "pattern": found["pattern"],
        "successMetrics": {
            "successRate": found["success_rate"],
            "avgExecutionTime": found["mean_duration_ms"],
            "avgSteps": found["mean_steps"],
            "reliability": found["reliability"],
        },
        "usageCount": found["usage"],
        "lastUsed": found["last_seen"],
        "firstSeen": found["first_seen"],
        "evidence": [{"taskId": task_id} for task_id in found["evidence"]],
        "confidence": found["reliability"],
    }


def _tool(found: dict[str, Any]) -> dict[str, Any]:
    return {
        "toolName": found["tool"],
        "performance": {
            "totalExecutions": found["executions"],
            "successCount": found["successes"],
            "failureCount": found["failures"],
            "successRate": found["success_rate"],
            "avgDuration": found["duration_ms"]["mean"],
            "avgRetries": found["mean_retries"],
        },
        "optimalContexts": [
            {"context": name, "successRate": c["success_rate"], "usageCount": c["executions"]}
            for name, c in found["contexts"].items()
        ],
        "commonErrors": [
            {"error": e["error"], "frequency": e["count"], "percentage": e["share"], "contexts": e["contexts"]}
            for e in found["errors"]
        ],
    }


def _evidence_in(item: Any) -> dict[str, Any]:
    """A PMS evidence item ({taskId, description?, timestamp?}) as an insight keeps it."""
    from datetime import datetime

    task_id = field(item, "taskId")
    if not task_id:
        raise BadInput(f"evidence {item!r} has no taskId", 'give {"taskId": "...", "description": "..."}')
    out: dict[str, Any] = {"task_id": str(task_id)}
    if field(item, "description"):
        out["description"] = str(field(item, "description"))
    when = field(item, "timestamp")
    if when is not None:
        out["timestamp"] = time_of(when if isinstance(when, datetime) else str(when))
    return out


def _evidence_out(item: Any) -> dict[str, Any]:
    """An insight's evidence item (a task id, or {task_id, description?, timestamp?}) as PMS's."""
    if not isinstance(item, dict):
        return {"taskId": item}
    names = {"task_id": "taskId", "description": "description", "timestamp": "timestamp"}
    return {names[name]: value for name, value in item.items() if name in names}


def _applies_out(data: dict[str, Any], error_contexts: Callable[[], dict[str, list[str]]]) -> dict[str, Any]:
    """An insight's applies_to as PMS's appliesTo. A mapping as kept. What `mem learn`
    wrote (a text naming what the insight is about) as PMS's generateInsights says: a
    warning in the contexts its error was seen in, a preference in its context, a best
    practice everywhere (mem's patterns span contexts). Any other text, written by hand,
    as its comma-separated contexts."""
    applies_to, rule = data.get("applies_to"), str(data.get("rule_id") or "")
    if isinstance(applies_to, dict):
        return dict(applies_to)
    if rule.startswith("warn-"):
        contexts = error_contexts().get(rule, [])
    elif rule.startswith("pref-"):
        contexts = [c for c in [str(applies_to).split(":", 1)[0]] if c != "*"]
    elif is_learned(rule):
        contexts = []
    else:
        contexts = [s.strip() for s in str(applies_to or "").split(",") if s.strip()]
    return {"contexts": contexts} if contexts else {}


def _insight(data: dict[str, Any], error_contexts: Callable[[], dict[str, list[str]]]) -> dict[str, Any]:
    return {
        "insightId": data["id"],
        "insightType": data.get("insight_type"),
        "insight": data["content"],
        "rule": data.get("rule_id"),
        "appliesTo": _applies_out(data, error_contexts),
        "evidence": [_evidence_out(item) for item in data.get("evidence") or []],
        "confidence": data.get("confidence"),
        "validated": bool(data.get("validated")),
        "createdAt": data.get("timestamp") or (data.get("source") or {}).get("timestamp"),
    }
