"""`mem context`: the best active memories as a markdown block within a token budget.

Tokens are estimated as ceil(characters / 4), the usual rule of thumb for
English text with BPE tokenizers (tiktoken is not a dependency); the
estimate is applied to every line, header and footer included.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Callable, Iterable

from .model import Entry
from .search import TIER_BONUS

HEADER = "## Active Memory"


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


# Without a query: decisions and preferences first, then importance,
# effectiveness tier, confidence and recency (unknown age last); as SQL
# over the catalog's columns.
PRIORITY_ORDER = (
    "CASE category WHEN 'decision' THEN 0 WHEN 'preference' THEN 1 ELSE 2 END, importance DESC, "
    "CASE tier " + " ".join(f"WHEN '{name}' THEN {-bonus!r}" for name, bonus in TIER_BONUS.items()) + " ELSE 0.0 END, "
    "confidence DESC, born IS NULL, born DESC, id, rowid"
)


class Context:
    """The rendered block and what went into it."""

    __slots__ = ("text", "included", "left_out", "tokens", "budget")

    def __init__(self, text: str, included: list[str] | None = None, left_out: int = 0, tokens: int = 0, budget: int = 0):
        self.text = text
        self.included = [] if included is None else included
        self.left_out = left_out
        self.tokens = tokens
        self.budget = budget

    def __repr__(self) -> str:
        return f"Context(included={self.included!r}, left_out={self.left_out!r}, tokens={self.tokens!r}, budget={self.budget!r})"

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "included": self.included, "left_out": self.left_out, "tokens": self.tokens, "budget": self.budget}


# No line is shorter than "- MEM-YYYYMMDD-NNN (c, ?): x" (27 characters).
SHORTEST_LINE = tokens("- MEM-YYYYMMDD-NNN (c, ?): x") + 1
MAX_MISSES = 64


def render(entries: Iterable[Entry], total: int, budget: int, moment: datetime, safe: Callable[[Entry], bool] = lambda e: True) -> Context:
    """Lines best first until the budget is spent; always ends with a count line.

    `entries` is consumed lazily: it stops when no line could fit, or after
    MAX_MISSES entries in a row that did not fit once the budget is nearly
    spent, so a large grimoire is not read to its end for a few tokens left.
    An entry whose line would fit is left out if `safe` says no.
    """
    lines = [HEADER]
    used = tokens(HEADER) + 1
    included: list[str] = []
    # Reserve room for the longest footer this call could print.
    footer = tokens(_footer(total)) + 1
    misses = 0
    for entry in entries:
        if budget - used - footer < SHORTEST_LINE or misses >= MAX_MISSES:
            break
        head = f"- {entry.id} ({entry.category}, {age(entry, moment)}): "
        body = " ".join(entry.content.split())
        candidates = [head + body, head + entry.summary] if body != entry.summary else [head + body]
        chosen = next((c for c in candidates if used + tokens(c) + 1 + footer <= budget), None)
        if chosen is None:
            misses += 1
            continue
        if not safe(entry):
            continue
        misses = 0
        lines.append(chosen)
        used += tokens(chosen) + 1
        included.append(entry.id)
    left_out = total - len(included)
    footer = _footer(left_out)
    lines.append(footer)
    text = "\n".join(lines) + "\n"
    return Context(text, included, left_out, tokens(text), budget)


def _footer(left_out: int) -> str:
    return f"_{left_out} more memor{'y' if left_out == 1 else 'ies'} left out (`mem query` finds them)_" if left_out else "_all active memories shown_"


def age(entry: Entry, moment: datetime) -> str:
    """A short age label: today, 12d, 5mo, 2y."""
    exact = entry.age_days(moment)
    if exact is None:
        return "?"
    days = math.floor(exact)
    if days < 1:
        return "today"
    if days < 60:
        return f"{days}d"
    if days < 730:
        return f"{days // 30}mo"
    return f"{days // 365}y"
