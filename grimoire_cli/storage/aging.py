"""The aging `mem age --older-than` makes for good (Samaritan's
`age_to_longterm`: a row moved to the long-term table stays there).

Tiers are derived state, computed at read time, so a run that only
tightened the split for itself would see its moves undone by the next read.
What it did is kept as one cut: nothing created before it stays hot by age
(an important entry still does, as `tiers.pin_importance` says). An aging
capped at a number of moves (Samaritan's `max_rows`) keeps instead the ids
it moved, each long-term for good. The record is an agent's bookkeeping,
not reviewed knowledge, and no file derives it, so it is volatile local
state: `<storage_dir>/local/aged.json`, git-ignored, never committed or
merged; not the catalog, which may be deleted at any time. Without it (a
fresh clone) the tiers are the config's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .issued import IGNORE
from .journal import write_atomic

FILE = "aged.json"


def _recorded(path: Path | None) -> dict[str, Any]:
    """The record as it is on disk; {} when there is none (or it cannot be read: the config's tiers)."""
    if path is None:
        return {}
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def read(path: Path | None) -> tuple[float | None, list[str]]:
    """The cut and the ids moved one by one, read once (a tier read asks both)."""
    record = _recorded(path)
    return _cut(record), _moved(record)


def cut(path: Path | None) -> float | None:
    """The POSIX time before which nothing stays hot by age; None when no
    aging was recorded."""
    return _cut(_recorded(path))


def moved(path: Path | None) -> list[str]:
    """The ids a capped aging moved, each long-term for good whenever it was born."""
    return _moved(_recorded(path))


def _cut(record: dict[str, Any]) -> float | None:
    value = record.get("before")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _moved(record: dict[str, Any]) -> list[str]:
    ids = record.get("ids")
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def record(local_dir: Path, before: float, at: str) -> float:
    """Move the cut to `before` (never back: an aging is not undone by a
    looser one), noting when (`at`); the cut now. Call under the grimoire lock."""
    path = local_dir / FILE
    known = cut(path)
    if known is not None and known >= before:
        return known
    _write(local_dir, {**_recorded(path), "before": before, "at": at})
    return before


def record_ids(local_dir: Path, ids: list[str], at: str) -> None:
    """Add the ids a capped aging moved, noting when (`at`). Call under the grimoire lock."""
    path = local_dir / FILE
    known = moved(path)
    _write(local_dir, {**_recorded(path), "ids": known + sorted(set(ids) - set(known)), "at": at})


def _write(local_dir: Path, record: dict[str, Any]) -> None:
    local_dir.mkdir(parents=True, exist_ok=True)
    ignore = local_dir / ".gitignore"
    if not ignore.exists():  # never committed, whatever the grimoire's own ignore rules say
        ignore.write_text(IGNORE, encoding="utf-8")
    write_atomic(local_dir / FILE, (json.dumps(record) + "\n").encode("utf-8"))
