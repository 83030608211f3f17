"""Rendering results: JSON (stable keys) or human text, from the same objects."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.model import Entry


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def entry_line(entry: Entry, moment: datetime) -> str:
    from ..core.model import age_label  # here: `mem --help` never loads the model

    state = entry.state(moment)
    flag = "" if state == "active" else f" [{state}]"
    return f"{entry.id}  {entry.category:<10} {age_label(entry, moment):>5}  {entry.summary}{flag}"


def entry_text(entry: Entry, moment: datetime, heat: dict[str, Any] | None = None, tiers: bool = False) -> str:
    """`mem show`'s text; `heat` (g.lifecycle.heat) adds what is computed: the
    memory tier (named only when `tiers` are on: otherwise nothing uses it),
    and the effective importance beside the stored one. The effectiveness
    tier is named once the memory was applied."""
    data = entry.to_dict()
    heat = heat or {}
    where = {"hot": ", hot", "long": ", long-term"}.get(heat.get("memory_tier") or "", "") if tiers else ""
    rated = f", effectiveness {entry.tier}" if entry.data.get("effectiveness") else ""
    lines = [f"{entry.id}  ({entry.category}, {entry.state(moment)}{where}{rated})"]
    effective = heat.get("effective_importance")
    if effective is not None and effective != entry.importance:
        data["importance"] = f"{entry.importance} (effective {effective})"
    for key, value in data.items():
        if key in ("id", "category"):
            continue
        if key == "content":
            lines.append("content:")
            lines.extend("  " + line for line in str(value).split("\n"))
        elif isinstance(value, dict):
            lines.append(f"{key}: " + ", ".join(f"{k}={v}" for k, v in value.items()))
        elif isinstance(value, list):
            lines.append(f"{key}: " + ", ".join(str(v) for v in value))
        else:
            lines.append(f"{key}: {value}")
    if entry.file:
        lines.append(f"file: {entry.file}:{entry.line}")
    return "\n".join(lines)


def kept(result: Any, json: bool, moment: datetime, unchanged: str) -> None:
    """A write that may find nothing to write (`remember`, `procedure add`):
    its JSON, else the entry's id, and `unchanged` on stderr when `result.written` is false."""
    if json:
        print_json(result.to_dict(moment))
        return
    out(result.entry.id)
    if not result.written:
        note(unchanged)


def shortened(text: str, most: int = 60) -> str:
    """A text the user gave, echoed on one short line: whitespace runs made one
    space, cut to `most` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= most else line[: most - 1].rstrip() + "…"


def count(n: int, one: str, many: str) -> str:
    """`1 memory`, `2 memories`."""
    return f"{n} {one if n == 1 else many}"


def out(text: str) -> None:
    sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))


def warn(text: str) -> None:
    sys.stderr.write(f"warning: {text}\n")


def note(text: str) -> None:
    sys.stderr.write(f"{text}\n")
