"""The merge's id mapping, worked out once for all the files of one merge.

Git runs the driver once per file both sides changed, each in its own
process, and each needs the same renumbering of the whole merge
(`merge.global_mapping`): at 10k entries that was half of each run. The
first run keeps what it worked out in the git dir, keyed by everything it
depends on (the three commits, the scope, a rebase's earlier renames and
the branch it replays); a later run with the same key reads it. Commits
never change, so a key never goes stale: one file, overwritten by the next
merge. Derived state: deleting it costs only the time to work it out again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

NAME = "grimoire-merge-mapping.json"


def key_of(*parts: Any) -> str:
    """A key for the mapping from what it depends on (JSON-able values)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def load(git_dir: Path, key: str) -> dict[str, Any] | None:
    """The fields kept under `key`, or None (none kept, another merge's, or unreadable)."""
    try:
        kept = json.loads((git_dir / NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != key or not isinstance(kept.get("fields"), dict):
        return None
    return kept["fields"]


def save(git_dir: Path, key: str, fields: dict[str, Any]) -> None:
    """Keep `fields` under `key` (best effort: a run that cannot write works it out again next time)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=git_dir, prefix=".grimoire-mapping-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"key": key, "fields": fields}, out)
        os.replace(tmp, git_dir / NAME)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def restored(fields: dict[str, Any]) -> dict[str, Any]:
    """`merge.Renames` fields as kept (JSON made their tuples lists) back in their shapes."""
    return {
        "mapping": fields["mapping"],
        "yields": fields["yields"],
        "same": {entry_id: tuple(pair) for entry_id, pair in fields["same"].items()},
        "moved": tuple(fields["moved"]),
        "echoed": {key: tuple(counts) for key, counts in fields["echoed"].items()},
    }
