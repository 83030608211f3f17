"""The reading half of storage/issued.py: the highest id number this clone
issued per day. Apart from the writer (which goes through the journal) so
that the merge driver can read it without loading the storage engine."""

from __future__ import annotations

import json
from pathlib import Path

from ..core.model import format_id, parse_id

FILE = "issued-ids.json"


def highest(local_dir: Path) -> dict[str, int]:
    """Day (`YYYYMMDD`) -> the highest number issued that day; empty when
    there is no record or it cannot be read (then the files decide, as in a fresh clone)."""
    try:
        raw = json.loads((local_dir / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    return {
        day: n
        for day, n in raw.items()
        if isinstance(n, int) and not isinstance(n, bool) and parse_id(f"MEM-{day}-{n:03d}")
    }


def in_use(marks: dict[str, int], day: str) -> set[str]:
    """The highest id issued on `day` (from `highest`), to count among the ids in use: numbering goes past it."""
    return {format_id(day, marks[day])} if marks.get(day) else set()
