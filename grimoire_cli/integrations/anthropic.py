"""Anthropic's memory tool (`memory_20250818`) over a grimoire: the SDK's
abstract memory tool implemented so that Claude's `/memories` directory is
the grimoire (the optional extra `grimoire-cli[anthropic]`).

    /memories/                  one folder per category of the config
    /memories/decision/db.md    one file per active entry of that category

Nothing on disk is a file of `/memories`: a path only names a category and an
entry, so `..`, absolute paths elsewhere and symlinks have nothing to reach,
and are refused as the SDK's own backend refuses them. A file's name is the
one it was created under (kept in the entry's `metadata.memory_path`, and
by every entry that supersedes it), else `<id>.md`. Its text is the entry's
content. Memories stay immutable:

- `create` adds an entry (`mem add`: validation, the guard, duplicates);
- `str_replace` and `insert` write the edited text as a new entry that
  supersedes the old one (the chain keeps the audit);
- `delete` archives the entry (reason `manual`, committed as `mem archive`);
- `rename` to another folder re-categorises by supersede; to a new name in
  the same folder, supersedes under the new name.

Only categories of kind `note` take writes: episodes, tasks and the other
kinds have fields of their own, written by their commands.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
except ImportError:  # pragma: no cover - the extra is installed wherever this module is tested
    raise ImportError("grimoire_cli.integrations.anthropic needs the Anthropic SDK: pip install 'grimoire-cli[anthropic]'") from None

from ..errors import GrimoireError

if TYPE_CHECKING:
    from ..api import Grimoire
    from ..model import Entry

ROOT = "/memories"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")
_WIDTH = 6  # line numbers as the SDK's own backend writes them
VIEW_LIMIT = 16_000  # characters of a folder listing; the rest is counted, not shown


class GrimoireMemoryTool(BetaAbstractMemoryTool):
    """The memory tool with a grimoire behind it. `agent` fills each new
    entry's `source.agent`; every command first looks at the files again, so
    what other processes wrote since is seen."""

    def __init__(self, grimoire: "Grimoire", *, agent: str = "claude", view_limit: int = VIEW_LIMIT, **options: Any) -> None:
        super().__init__(**options)
        self.grimoire = grimoire
        self.agent = agent
        self.view_limit = view_limit

    # -- the SDK's commands --------------------------------------------------

    def view(self, command: Any) -> str:
        category, name = self._path(command.path)
        if category is None:
            return self._folders()
        if name is None:
            return self._listing(category)
        entry = self._entry(category, name, command.path)
        lines = entry.content.split("\n")
        start = 1
        if command.view_range and len(command.view_range) == 2:
            first, last = command.view_range
            start = max(1, first)
            lines = lines[start - 1:None if last == -1 else last]
        numbered = "\n".join(f"{str(n).rjust(_WIDTH)}\t{line}" for n, line in enumerate(lines, start))
        return f"Here's the content of {command.path} with line numbers:\n{numbered}"

    def create(self, command: Any) -> str:
        category, name = self._file_path(command.path, writing=True)
        if name in self._files(category):
            raise ToolError(f"File {command.path} already exists")
        entry = self._write(lambda g: g.add(command.file_text, category, metadata={"memory_path": name}, agent=self.agent))
        return f"File created successfully at: {command.path} ({entry.id}){_notes(entry)}"

    def str_replace(self, command: Any) -> str:
        category, name = self._file_path(command.path)
        entry = self._entry(category, name, command.path)
        content = entry.content
        count = content.count(command.old_str)
        if count == 0:
            raise ToolError(f"No replacement was performed, old_str `{command.old_str}` did not appear verbatim in {command.path}.")
        if count > 1:
            starts = [m.start() for m in re.finditer(re.escape(command.old_str), content)]
            where = ", ".join(str(content[:s].count("\n") + 1) for s in starts)
            raise ToolError(f"No replacement was performed. Multiple occurrences of old_str `{command.old_str}` in lines: {where}. "
                            "Please ensure it is unique")
        changed = content[:content.find(command.old_str)].count("\n")
        new = self._supersede(entry, content.replace(command.old_str, command.new_str), category, name)
        lines = new.content.split("\n")
        snippet = "\n".join(f"{str(n + 1).rjust(_WIDTH)}\t{lines[n]}" for n in range(max(0, changed - 2), min(len(lines), changed + 3)))
        return (f"The memory file has been edited ({entry.id} superseded by {new.id}). Here is the snippet showing the change "
                f"(with line numbers):\n{snippet}")

    def insert(self, command: Any) -> str:
        category, name = self._file_path(command.path)
        entry = self._entry(category, name, command.path)
        lines = entry.content.split("\n")
        if not 0 <= command.insert_line <= len(lines):
            raise ToolError(f"Invalid `insert_line` parameter: {command.insert_line}. It should be within the range [0, {len(lines)}].")
        lines.insert(command.insert_line, command.insert_text.rstrip("\n"))
        new = self._supersede(entry, "\n".join(lines), category, name)
        return f"The file {command.path} has been edited ({entry.id} superseded by {new.id})."

    def delete(self, command: Any) -> str:
        category, name = self._path(command.path)
        if name is None:
            raise ToolError(f"Cannot delete {command.path}: the folders are the grimoire's categories (its config); delete memories one by one")
        entry = self._entry(category, name, command.path)
        done = self._write(lambda g: g.archive([entry.id], reason="manual"))
        commit = f", commit {done.commit[:12]}" if done.commit else ""
        return f"Successfully deleted {command.path} ({entry.id} archived, reason manual{commit})" + "".join(f"\nnote: {n}" for n in done.notes)

    def rename(self, command: Any) -> str:
        category, name = self._file_path(command.old_path)
        entry = self._entry(category, name, command.old_path)
        target, new_name = self._file_path(command.new_path, writing=True)
        if new_name in self._files(target):
            raise ToolError(f"The destination {command.new_path} already exists")
        new = self._supersede(entry, entry.content, target, new_name)
        return f"Successfully renamed {command.old_path} to {command.new_path} ({entry.id} superseded by {new.id})"

    # -- paths and entries ---------------------------------------------------

    def _path(self, path: Any) -> tuple[str | None, str | None]:
        """(category, file name) a path names; None for what it does not reach."""
        if not isinstance(path, str) or not (path == ROOT or path.startswith(ROOT + "/")):
            raise ToolError(f"Path must start with {ROOT}, got: {path}")
        parts = [part for part in path[len(ROOT):].split("/") if part]
        if any(part in (".", "..") or "\\" in part or "\0" in part for part in parts):
            raise ToolError(f"Path {path} would escape {ROOT} directory")
        if len(parts) > 2:
            raise ToolError(f"The path {path} does not exist: {ROOT}/CATEGORY/NAME is as deep as memories go")
        self.grimoire.store.refresh()  # another process may have written since the last command
        category = parts[0] if parts else None
        if category is not None and category not in self.grimoire.config.categories:
            raise ToolError(f"The path {path} does not exist: no category {category!r} (the folders are {', '.join(self._categories())})")
        return category, parts[1] if len(parts) == 2 else None

    def _file_path(self, path: Any, *, writing: bool = False) -> tuple[str, str]:
        category, name = self._path(path)
        if category is None or name is None:
            raise ToolError(f"The path {path} is not a file: memories are {ROOT}/CATEGORY/NAME")
        if writing:
            if not _NAME.match(name):
                raise ToolError(f"Bad file name {name!r}: letters, digits, '.', '_' and '-', at most 100, not starting with '.'")
            kind = self.grimoire.config.category(category).kind
            if kind != "note":
                raise ToolError(f"{ROOT}/{category} holds {kind} entries, which have fields of their own: the memory tool writes "
                                f"to {', '.join(self._categories(writable=True))}")
        return category, name

    def _categories(self, writable: bool = False) -> list[str]:
        return [name for name, spec in self.grimoire.config.categories.items() if not writable or spec.kind == "note"]

    def _files(self, category: str) -> dict[str, "Entry"]:
        """The category's active entries by file name, newest first."""
        files: dict[str, "Entry"] = {}
        for entry in self.grimoire.list(categories=[category]):
            given = (entry.data.get("metadata") or {}).get("memory_path")
            name = given if isinstance(given, str) and _NAME.match(given) and given not in files else f"{entry.id}.md"
            files.setdefault(name, entry)
        return files

    def _entry(self, category: str | None, name: str | None, path: str) -> "Entry":
        found = self._files(category).get(name) if category is not None and name is not None else None
        if found is None:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        return found

    def _supersede(self, old: "Entry", content: str, category: str, name: str) -> "Entry":
        # The rest (tags, importance, the metadata besides the file name) is carried over as by any supersede.
        return self._write(lambda g: g.add(content, category, supersedes=old.id, metadata={"memory_path": name}, agent=self.agent))

    def _write(self, work: Any) -> Any:
        try:
            return work(self.grimoire)
        except GrimoireError as exc:
            raise ToolError(f"error: {exc}") from None

    # -- listings ------------------------------------------------------------

    def _folders(self) -> str:
        counts = self.grimoire.stats().to_dict()["categories"]
        active = {name: counts.get(name, {}).get("active", 0) for name in self._categories()}
        lines = [f"{ROOT}/{name}/\t{n} memor{'y' if n == 1 else 'ies'}" for name, n in active.items()]
        return f"Here're the folders in {ROOT}, one per category (files in them are memories):\n" + "\n".join(lines)

    def _listing(self, category: str) -> str:
        from ..model import age_label

        moment = self.grimoire.now()
        files = self._files(category)
        lines, size = [], 0
        for name, entry in files.items():
            line = f"{ROOT}/{category}/{name}\t{entry.id}, {age_label(entry, moment)}: {entry.summary}"
            if size + len(line) > self.view_limit:
                lines.append(f"... and {len(files) - len(lines)} more (view a file by its path, or ask `mem query`)")
                break
            lines.append(line)
            size += len(line) + 1
        header = f"Here're the memories in {ROOT}/{category}, newest first (file, id, age: summary):"
        return header + ("\n" + "\n".join(lines) if lines else "\n(none yet)")


def _notes(entry: "Entry") -> str:
    return "".join(f"\nnote: {note}" for note in entry.notes)
