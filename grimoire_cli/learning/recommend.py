"""`mem recommend` (the Persistent Memory System's
`get_tool_recommendations`) and the matching `mem recall-all` shares: which
observed tools and patterns an action or a question is about.

An action is matched by its words (three letters or more, common words
left out): a tool matches when each word starts one of the words of its
name (`create shipment` matches `create_shipment` and `createShipment`);
a query pattern matches the same way, and brings the tools its tasks ran.
The tools the action names come first, then those its tasks ran; each
group is ranked by success rate in the asked context (ties: more runs, then
the name); when none ran in that context, over all contexts, and the
answer says so; when nothing matches, the answer says there is no evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..core.bounds import shown, text, whole
from ..core.errors import BadInput
from ..storage.store import Store
from .execution_log import derived
from .patterns import reliability

_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")  # createShipment, HTTPServer
_COMMON = frozenset(
    "the and for with from into onto that this then than via use using when what which how does".split()
)


def words(text: str) -> list[str]:
    """The words of an action or question that can match (see the module)."""
    return [w for w in dict.fromkeys(_WORD.findall(text.lower())) if len(w) >= 3 and w not in _COMMON]


def matched(asked: list[str], name: str) -> int:
    """How many of the asked words start a word of `name` (camelCase words too)."""
    have = _WORD.findall(_CAMEL.sub(" ", name).lower())
    return sum(1 for word in asked if any(h.startswith(word) for h in have))


class Recommendation:
    __slots__ = ("context", "named", "reason", "runs", "successes", "tool")

    def __init__(self, tool: str, runs: int, successes: int, context: str | None, reason: str, named: bool = False):
        self.tool, self.runs, self.successes, self.context, self.reason = tool, runs, successes, context, reason
        self.named = named  # the action names it: it ranks before the tools its tasks merely ran

    @property
    def success_rate(self) -> float:
        return self.successes / self.runs if self.runs else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "success_rate": round(self.success_rate, 4),
            "runs": self.runs,
            "reliability": round(reliability(self.successes, self.runs), 4),
            "context": self.context,
            "reason": self.reason,
        }


class Recommended:
    """The ranked tools for an action, and a note when the answer is not what was asked (a fallback, no evidence)."""

    __slots__ = ("action", "context", "note", "tools")

    def __init__(self, action: str, context: str | None):
        self.action, self.context = action, context
        self.tools: list[Recommendation] = []
        self.note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "context": self.context,
            "recommendations": [r.to_dict() for r in self.tools],
            "note": self.note,
        }


def recommend(store: Store, action: str, context: str | None = None, limit: int = 5) -> Recommended:
    whole(limit, "-n")
    text(action, "the action")
    if context is not None:
        text(context, "the context")
    asked = words(action)
    if not asked:
        raise BadInput(f"no words to match in {shown(action)}", "name the action, e.g. mem recommend 'create shipment'")
    return derived(store, lambda catalog: _recommend(catalog, action, asked, context, limit))


def _recommend(catalog: Any, action: str, asked: list[str], context: str | None, limit: int) -> Recommended:
    result = Recommended(action, context)
    reasons: dict[str, tuple[bool, str]] = {}  # tool: (the action names it, why it is here)
    for tool, *_ in catalog.tool_rows(None, None):
        if matched(asked, tool) == len(asked):
            reasons[tool] = (True, f"its name matches {action!r}")
    queries = [
        row.pattern for row in catalog.pattern_rows("query_pattern", 1) if matched(asked, row.pattern) == len(asked)
    ]
    # Each tool's reason names the matching pattern whose tasks ran it most.
    for pattern, tool, _, _ in sorted(catalog.pattern_tools(queries, None), key=lambda row: (-row[2], row[0])):
        reasons.setdefault(tool, (False, f"used by tasks like {pattern}"))
    if not reasons:
        result.note = f"no evidence for {action!r}: no observed tool or task goal matches it"
        return result
    ranked = _ranked(catalog, reasons, context)
    if context is not None and not ranked:
        result.note = f"no runs of these tools in {context!r}: success rates over all contexts"
        ranked = _ranked(catalog, reasons, None)
    result.tools = ranked[:limit]
    return result


def _ranked(catalog: Any, reasons: dict[str, tuple[bool, str]], context: str | None) -> list[Recommendation]:
    out = []
    for tool, (named, reason) in reasons.items():
        rows = catalog.per_context(tool, context)
        runs, ok = sum(r[1] for r in rows), sum(r[2] for r in rows)
        if runs:
            out.append(Recommendation(tool, runs, ok, context, reason, named))
    out.sort(key=lambda r: (not r.named, -r.success_rate, -r.runs, r.tool))
    return out


def matching_patterns(store: Store, text: str, limit: int = 5, context: str | None = None) -> list[Any]:
    """The patterns sharing most words with `text` (shown by a task in
    `context`), then the most reliable."""
    from .patterns import Pattern

    asked = words(text)

    def read(catalog: Any) -> list[Any]:
        rows = catalog.pattern_rows(None, 1)
        if context is not None:
            seen = catalog.patterns_in(context)
            rows = [row for row in rows if (row.type, row.pattern) in seen]
        scored = [(matched(asked, row.pattern), Pattern(row)) for row in rows]
        scored = [(n, p) for n, p in scored if n]
        scored.sort(key=lambda item: (-item[0], -item[1].reliability, item[1].type, item[1].pattern))
        return [p for _, p in scored[:limit]]

    return derived(store, read) if asked else []


def matching_tools(names: Iterable[str], text: str) -> list[str]:
    asked = words(text)
    return [name for name in names if asked and matched(asked, name)]
