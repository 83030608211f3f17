"""The aging `mem age --older-than` makes for good (Samaritan's
`age_to_longterm`: a row moved to the long-term table stays there).

Tiers are derived state, computed at read time, so a run that only
tightened the split for itself would see its moves undone by the next read.
What it did is kept as one cut: nothing created before it stays hot by age
(an important entry still does, as `tiers.pin_importance` says). The cut is
an agent's bookkeeping, not reviewed knowledge, and no file derives it, so it
is volatile local state: `<storage_dir>/local/aged.json`,
git-ignored, never committed or merged; not the catalog, which may be
deleted at any time. Without it (a fresh clone) the tiers are the config's.
"""

from __future__ import annotations

import json
from pathlib import Path

from .issued import IGNORE
from .journal import write_atomic

FILE = "aged.json"


def cut(path: Path | None) -> float | None:
    """The POSIX time before which nothing stays hot by age; None when no
    aging was recorded (or its record cannot be read: the config's tiers)."""
    if path is None:
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))["before"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def record(local_dir: Path, before: float, at: str) -> float:
    """Move the cut to `before` (never back: an aging is not undone by a
    looser one), noting when (`at`); the cut now. Call under the grimoire lock."""
    path = local_dir / FILE
    known = cut(path)
    if known is not None and known >= before:
        return known
    local_dir.mkdir(parents=True, exist_ok=True)
    ignore = local_dir / ".gitignore"
    if not ignore.exists():  # never committed, whatever the grimoire's own ignore rules say
        ignore.write_text(IGNORE, encoding="utf-8")
    write_atomic(path, (json.dumps({"before": before, "at": at}) + "\n").encode("utf-8"))
    return before
