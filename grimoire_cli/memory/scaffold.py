"""`mem init`: the config, folders, category files, ignore and merge rules.

Idempotent: what exists is kept and reported, never overwritten.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core.config import CONFIG_NAME, DEFAULT_CONFIG_TEXT, find_root, load_config
from ..core.runtime import Runtime
from ..storage import journal
from ..storage.store import Store

GITATTRIBUTES_LINE = "{storage}/**/*.yaml merge=grimoire"
# The config merges through the same driver (git/config_merge.py): categories both sides added are united.
CONFIG_ATTRIBUTES_LINE = f"/{CONFIG_NAME} merge=grimoire"
STORAGE_IGNORE = [
    "# derived files of mem: never commit",
    ".cache/",
    "# categories with tracked: false (volatile state): never commit",
    "local/",
]


class InitResult:
    """What `init` created and what it found already there (paths relative to
    the root); `git`: whether the root is a git work tree (outside one, mem
    never commits and has no hooks to install)."""

    __slots__ = ("categories_added", "created", "existing", "git", "notes", "root", "settings_added", "updated")

    def __init__(self, root: str, git: bool = True):
        self.root = root
        self.created: list[str] = []
        self.existing: list[str] = []
        # Existing files given the lines they lacked (a newer mem's ignore or attribute rules).
        self.updated: list[str] = []
        self.git = git
        self.categories_added: list[str] = []  # by a preset, to the config
        self.settings_added: list[str] = []  # by a preset: dotted keys under memory_schema
        self.notes: list[str] = []  # a preset's category named otherwise here, and why

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "created": self.created,
            "existing": self.existing,
            "updated": self.updated,
            "git": self.git,
            "categories_added": self.categories_added,
            "settings_added": self.settings_added,
            "notes": self.notes,
        }


def init(
    path: str | os.PathLike = ".",
    config: str | os.PathLike | None = None,
    scope: str | None = None,
    preset: str | None = None,
    runtime: Runtime | None = None,
) -> InitResult:
    """Create what a grimoire needs under the repository holding `path` (in
    `scope` when one is named), with a preset's categories added to the
    config first when one is named."""
    if preset is not None:
        from ..kinds.presets import check_preset

        check_preset(preset)  # before anything is written
    root = find_root(Path(path).resolve())
    result = InitResult(str(root), (root / ".git").exists())
    rel = lambda p: os.path.relpath(p, root)
    config_path = Path(config) if config else root / CONFIG_NAME
    if config_path.exists():
        result.existing.append(rel(config_path))
    else:
        config_path.write_text(DEFAULT_CONFIG_TEXT, encoding="utf-8")
        result.created.append(rel(config_path))
    if preset is not None:
        from ..kinds.presets import add_preset

        result.categories_added, result.settings_added, result.notes = add_preset(config_path, preset)
    conf = load_config(root, config_path, scope, must_exist=False)
    store = Store(conf, runtime)
    for folder in conf.folders():
        folder.mkdir(parents=True, exist_ok=True)
    _ensure_lines(conf.storage_dir / ".gitignore", STORAGE_IGNORE, result, rel)
    for name in conf.categories:
        path = store.category_path(name)
        if path.exists():
            result.existing.append(rel(path))
        else:
            journal.write_atomic(store.ensure_file(name), store.new_file(name))
            result.created.append(rel(path))
    if not any(conf.archive_dir.iterdir()):  # git keeps no empty folder
        (conf.archive_dir / ".gitkeep").touch()
    storage = conf.storage_dir.relative_to(conf.root).as_posix()
    attributes = [GITATTRIBUTES_LINE.format(storage=storage)]
    if config_path.resolve() == conf.root / CONFIG_NAME:
        attributes.append(CONFIG_ATTRIBUTES_LINE)
    _ensure_lines(conf.root / ".gitattributes", attributes, result, rel)
    return result


def _ensure_lines(path: Path, lines: list[str], result: InitResult, rel) -> None:
    """Append the lines a file lacks (creating it if needed)."""
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    missing = [line for line in lines if line not in current.splitlines()]
    if not missing:
        result.existing.append(rel(path))
        return
    prefix = current if not current or current.endswith("\n") else current + "\n"
    path.write_text(prefix + "\n".join(missing) + "\n", encoding="utf-8")
    (result.updated if current else result.created).append(rel(path))
