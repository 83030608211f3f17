"""The parsed config, kept as JSON in the repository's `.git` folder beside
the exact text it came from: reading it back skips importing the YAML
parser on every command. Any difference in the text re-parses."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

CONFIG_CACHE = "grimoire-config.json"


def _config_cache(config_path: Path, root: Path) -> tuple[Path, list[Any]] | None:
    git_dir = root / ".git"
    if not git_dir.is_dir():
        return None
    try:
        text = config_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return git_dir / CONFIG_CACHE, [str(config_path), text]


def cached_config(config_path: Path, root: Path) -> Any | None:
    """The config parsed earlier from exactly this text, if kept (`root`: the work tree's)."""
    where = _config_cache(config_path, root)
    if where is None:
        return None
    try:
        kept = json.loads(where[0].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("stamp") != where[1]:
        return None
    return kept.get("data")


def keep_config(config_path: Path, root: Path, data: Any) -> None:
    """Keep the parsed config for the next command (best effort)."""
    where = _config_cache(config_path, root)
    if where is None:
        return
    try:
        text = json.dumps({"stamp": where[1], "data": data})
        fd, tmp = tempfile.mkstemp(prefix=".grimoire-config.", dir=where[0].parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, where[0])
    except (OSError, TypeError, ValueError):
        pass
