"""Which charts each page draws from its data (`pages`), as SVG text (`svg`),
and how the templates write a stored value that is not plain text."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from . import svg

CARD = svg.CARD  # the width of a chart in a card of a page's grid
LINES = 4  # tools drawn over time: more lines than colours do not read


def pretty(value: Any) -> str:
    """A field's value for the page: text as it is, anything else as indented JSON (escaped by the template)."""
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)


def of(page: str, data: Any) -> dict[str, str]:
    """The charts of `page`, by name."""
    drawn = _DRAWN.get(page)
    return drawn(data) if drawn else {}


def _overview(data: dict[str, Any]) -> dict[str, str]:
    stats = data["stats"]
    states: Counter[str] = Counter()
    for per_state in stats["categories"].values():
        states.update(per_state)
    return {
        "categories": svg.bars(
            [(name, sum(per_state.values())) for name, per_state in sorted(stats["categories"].items())],
            "entries per category",
            width=CARD,
        ),
        "states": svg.bars(sorted(states.items()), "entries per state", width=CARD),
        "tiers": svg.bars(sorted(stats["tiers"].items()), "entries per effectiveness tier", width=CARD),
        "memory": svg.bars(
            [("hot", stats["split"]["hot"]), ("long-term", stats["split"]["long"])], "hot and long-term", width=CARD
        ),
        "scopes": svg.bars([(s["scope"], s["active"]) for s in data["scopes"]], "active entries per scope", width=CARD),
    }


def _entry(data: dict[str, Any]) -> dict[str, str]:
    return {"chain": svg.timeline(data["chain"], data["entry"]["id"], "supersede chain, oldest first")}


def _tiers(data: dict[str, Any]) -> dict[str, str]:
    age, decay = data["age"], data["decay"]
    return {
        "split": svg.bars([("hot", age["hot"]), ("long-term", age["long"])], "hot and long-term memory"),
        "decay": svg.curves(
            {f"importance {name}": values for name, values in decay["curves"].items()},
            "effective importance by age",
            x_label="days",
            y_label="importance",
        ),
    }


def _learning(data: dict[str, Any]) -> dict[str, str]:
    tools = data["tools"]
    return {
        **_over_time(data["days"]),
        "success": svg.bars(
            [(t["tool"], round(100 * t["success_rate"], 1)) for t in tools],
            "success rate per tool",
            unit="%",
            most=100,
            width=CARD,
        ),
        "runs": svg.bars([(t["tool"], t["executions"]) for t in tools], "runs per tool", width=CARD),
        "durations": svg.paired_bars(
            [(t["tool"], t["duration_ms"]["p50"], t["duration_ms"]["p95"]) for t in tools],
            "duration per tool",
            ("p50", "p95"),
            width=CARD,
        ),
    }


def _over_time(days: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    """Success rate and p95 duration per day of the most used tools, on one day axis (a day without runs: a gap)."""
    drawn = dict(list(days.items())[:LINES])
    axis = sorted({row["day"] for rows in drawn.values() for row in rows})
    ends = (axis[0], axis[-1]) if axis else None

    def series(field: str, scale: float = 1) -> dict[str, list[float | None]]:
        out = {}
        for tool, rows in drawn.items():
            by_day = {row["day"]: row[field] for row in rows}
            out[tool] = [None if by_day.get(day) is None else round(by_day[day] * scale, 1) for day in axis]
        return out

    return {
        "days_drawn": _drawn_sentence(list(drawn), len(days)),
        "success_days": svg.curves(
            series("success_rate", 100),
            "success rate per day",
            x_label="day",
            y_label="%",
            x_ends=ends,
            most=100,
            width=CARD,
        ),
        "p95_days": svg.curves(
            series("p95_ms"), "p95 duration per day", x_label="day", y_label="ms", x_ends=ends, width=CARD
        ),
    }


def _drawn_sentence(drawn: list[str], tools: int) -> str:
    """Which tools the per-day lines are of (plain text, escaped by the template): it said "the 4 most used" of 4 drawn and 5 listed."""
    if not drawn:
        return "No tool has run yet."
    if len(drawn) < tools:
        which = f"the {len(drawn)} most used of {tools} tools"
    else:
        which = f"all {tools} tools" if tools > 1 else "its one tool"
    return f"Per day (UTC), {which}: {', '.join(drawn)}."


_DRAWN = {"overview": _overview, "entry": _entry, "tiers": _tiers, "learning": _learning}
