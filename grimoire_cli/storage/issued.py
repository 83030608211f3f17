"""Ids this clone has issued: never issued again (docs/teams.md), even once the
entry that had one is gone from the files (`git checkout --`, `git reset`, a
hand edit), because people may already cite it.

Kept as the highest number issued per day (ids are numbered past the
highest, so that is all numbering needs) in `<storage_dir>/local/` — volatile
local state (DESIGN §6 rule 2): git-ignored, never committed or merged, and
not in the catalog, which is derived and may be deleted at any time (a
deleted catalog would hand the numbers out again). Read and written under
the grimoire lock, so two writers never issue the same id. A clone without
the record (a fresh one, or after `git clean -X`) numbers from what the
files hold.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ..core.model import parse_id
from .issued_marks import FILE as FILE  # the reads, for callers of this module
from .issued_marks import highest as highest
from .issued_marks import in_use as in_use
from .journal import write_atomic

IGNORE = "# the local state of mem: never commit\n*\n"


def record(local_dir: Path, ids: Iterable[str]) -> None:
    """Note these ids as issued (under the lock, before the files they go to
    land: a write that then fails only skips a number). Best effort, as a
    missing record is: the write itself never fails for it."""
    marks = highest(local_dir)
    raised = False
    for entry_id in ids:
        parsed = parse_id(entry_id) if isinstance(entry_id, str) else None
        if parsed and parsed[1] > marks.get(parsed[0], 0):
            marks[parsed[0]] = parsed[1]
            raised = True
    if not raised:
        return
    try:
        local_dir.mkdir(parents=True, exist_ok=True)
        ignore = local_dir / ".gitignore"
        if (
            not ignore.exists()
        ):  # never committed, whatever the grimoire's own ignore rules say (one made before `local/` was in them)
            ignore.write_text(IGNORE, encoding="utf-8")
        write_atomic(local_dir / FILE, (json.dumps(marks, sort_keys=True, indent=0) + "\n").encode("utf-8"))
    except OSError:
        pass
