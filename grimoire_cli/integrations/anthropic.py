"""Anthropic's memory tool (`memory_20250818`) over a grimoire: the SDK's
abstract memory tool implemented so that Claude's `/memories` directory is
the grimoire (the optional extra `grimoire-cli[anthropic]`).

    /memories/                  one folder per category of the config
    /memories/decision/db.md    one file per active entry of that category
    /memories/progress.md       a file at the root: an entry of the home
                                category (`root_category`, default learning)

Nothing on disk is a file of `/memories`: a path only names a category and an
entry, so symlinks have nothing to reach. `.` and `..` are resolved as the
SDK's own backend resolves them, and a path that ends up outside `/memories`
is refused as it refuses it. A file's name is the one it was created under
(kept in the entry's `metadata.memory_path`: the name in its folder, or the
whole path `/memories/NAME` at the root; every entry that supersedes it keeps
it), else `<id>.md`. Its text is the entry's content. Memories stay immutable:

- `create` adds an entry (`mem add`: validation, the guard, duplicates);
- `str_replace` and `insert` write the edited text as a new entry that
  supersedes the old one (the chain keeps the audit);
- `delete` archives the entry (reason `manual`, committed as `mem archive`);
- `rename` to another folder re-categorises by supersede; to a new name in
  the same folder, supersedes under the new name.

Whether a file name is free is checked under the write lock, so of two
processes creating the same file one is told it exists. Only categories of
kind `note` take writes: episodes, tasks and the other kinds have fields of
their own, written by their commands.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Any, NamedTuple, cast

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
except ImportError:  # pragma: no cover - the extra is installed wherever this module is tested
    raise ImportError(
        "grimoire_cli.integrations.anthropic needs the Anthropic SDK: pip install 'grimoire-cli[anthropic]'"
    ) from None

from ..core.errors import BadInput, GrimoireError

if TYPE_CHECKING:
    from ..api import Grimoire
    from ..core.config import Config
    from ..core.model import Entry
    from ..memory.request import Request

ROOT = "/memories"
ROOT_CATEGORY = "learning"  # the home of root-level files, when the config has it as a note category
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")
_WIDTH = 6  # line numbers as the SDK's own backend writes them
VIEW_LIMIT = 16_000  # characters of a folder listing; the rest is counted, not shown


class _Place(NamedTuple):
    """Where a path leads. `category` holds the file (a root-level file's is
    the home category); `name` is None for a folder; `/memories` itself is
    the root with no category."""

    category: str | None
    name: str | None = None
    at_root: bool = False

    @property
    def stored(self) -> str | None:
        """The file's name as `metadata.memory_path` keeps it."""
        return f"{ROOT}/{self.name}" if self.at_root else self.name


class GrimoireMemoryTool(BetaAbstractMemoryTool):
    """The memory tool with a grimoire behind it. `agent` fills each new
    entry's `source.agent`; files at the root of `/memories` are entries of
    `root_category` (a category of kind note; default `learning`, else the
    config's first note category). Every command first looks at the files
    again, so what other processes wrote since is seen."""

    def __init__(
        self,
        grimoire: Grimoire,
        *,
        agent: str = "claude",
        view_limit: int = VIEW_LIMIT,
        root_category: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        from .calls import Opener

        self.grimoire = grimoire
        # Another process may change the config (a category named on first use, a pull): each command reopens
        # the grimoire when it did, as a new `mem` process would, and otherwise only looks at the files again.
        self._opener = Opener(lambda: self.grimoire.in_scope(self.grimoire.config.scope), grimoire)
        self.agent = agent
        self.view_limit = view_limit
        self.root_category = _home(grimoire.config, root_category)

    # -- the SDK's commands --------------------------------------------------

    def view(self, command: Any) -> str:
        place = self._place(command.path)
        if place.name is None:
            return self._listing(place.category) if place.category is not None else self._root()
        entry = self._entry(place, command.path)
        lines = entry.content.split("\n")
        start = 1
        if command.view_range and len(command.view_range) == 2:
            first, last = command.view_range
            start = max(1, first)
            lines = lines[start - 1 : None if last == -1 else last]
        numbered = "\n".join(f"{str(n).rjust(_WIDTH)}\t{line}" for n, line in enumerate(lines, start))
        return f"Here's the content of {command.path} with line numbers:\n{numbered}"

    def create(self, command: Any) -> str:
        from ..memory.request import Request

        place = self._file_path(command.path, writing=True)
        request = Request(
            command.file_text, category=place.category, metadata={"memory_path": place.stored}, agent=self.agent
        )
        entry = self._add(request, free=(place, f"File {command.path} already exists"))
        return f"File created successfully at: {command.path} ({entry.id}){_notes(entry)}"

    def str_replace(self, command: Any) -> str:
        place = self._file_path(command.path)
        entry = self._entry(place, command.path)
        content = entry.content
        count = content.count(command.old_str)
        if count == 0:
            raise ToolError(
                f"No replacement was performed, old_str `{command.old_str}` did not appear verbatim in {command.path}."
            )
        if count > 1:
            starts = [m.start() for m in re.finditer(re.escape(command.old_str), content)]
            where = ", ".join(str(content[:s].count("\n") + 1) for s in starts)
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{command.old_str}` in lines: {where}. "
                "Please ensure it is unique"
            )
        changed = content[: content.find(command.old_str)].count("\n")
        new = self._supersede(entry, content.replace(command.old_str, command.new_str), place)
        lines = new.content.split("\n")
        snippet = "\n".join(
            f"{str(n + 1).rjust(_WIDTH)}\t{lines[n]}" for n in range(max(0, changed - 2), min(len(lines), changed + 3))
        )
        return (
            f"The memory file has been edited ({entry.id} superseded by {new.id}). Here is the snippet showing the change "
            f"(with line numbers):\n{snippet}"
        )

    def insert(self, command: Any) -> str:
        place = self._file_path(command.path)
        entry = self._entry(place, command.path)
        lines = _lines(entry.content)
        if not 0 <= command.insert_line <= len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {command.insert_line}. It should be within the range [0, {len(lines)}]."
            )
        lines.insert(command.insert_line, command.insert_text.rstrip("\n"))
        # The text keeps its own ending: a memory gains no newline its writer did not give.
        ending = "\n" if entry.content.endswith("\n") else ""
        new = self._supersede(entry, "\n".join(lines) + ending, place)
        return f"The file {command.path} has been edited ({entry.id} superseded by {new.id})."

    def delete(self, command: Any) -> str:
        place = self._place(command.path)
        if place.name is None:
            raise ToolError(
                f"Cannot delete {command.path}: the folders are the grimoire's categories (its config); delete memories one by one"
            )
        entry = self._entry(place, command.path)
        done = self._write(lambda g: g.archive([entry.id], reason="manual"))
        commit = f", commit {done.commit[:12]}" if done.commit else ""
        return f"Successfully deleted {command.path} ({entry.id} archived, reason manual{commit})" + "".join(
            f"\nnote: {n}" for n in done.notes
        )

    def rename(self, command: Any) -> str:
        place = self._file_path(command.old_path)
        entry = self._entry(place, command.old_path)
        target = self._file_path(command.new_path, writing=True)
        new = self._supersede(
            entry, entry.content, target, free=(target, f"The destination {command.new_path} already exists")
        )
        return f"Successfully renamed {command.old_path} to {command.new_path} ({entry.id} superseded by {new.id})"

    # -- paths and entries ---------------------------------------------------

    def _place(self, path: Any) -> _Place:
        """Where a path leads; a ToolError for what it does not reach."""
        if not isinstance(path, str) or not (path == ROOT or path.startswith(ROOT + "/")):
            raise ToolError(f"Path must start with {ROOT}, got: {path}")
        # `.` and `..` resolve as the SDK's backend resolves a path: only where it ends up counts.
        normal = posixpath.normpath(path)
        if "\\" in path or "\0" in path or not (normal == ROOT or normal.startswith(ROOT + "/")):
            raise ToolError(f"Path {path} would escape {ROOT} directory")
        parts = [part for part in normal[len(ROOT) :].split("/") if part]
        if len(parts) > 2:
            raise ToolError(f"The path {path} does not exist: {ROOT}/CATEGORY/NAME is as deep as memories go")
        self.grimoire = self._opener()  # another process may have written since the last command
        if not parts:
            return _Place(None, at_root=True)
        categories = self.grimoire.config.categories
        if len(parts) == 1 and parts[0] not in categories and self.root_category is not None:
            return _Place(self.root_category, parts[0], at_root=True)
        if parts[0] not in categories:
            raise ToolError(
                f"The path {path} does not exist: no category {parts[0]!r} (the folders are {', '.join(self._categories())})"
            )
        return _Place(parts[0], parts[1] if len(parts) == 2 else None)

    def _file_path(self, path: Any, *, writing: bool = False) -> _Place:
        place = self._place(path)
        if place.category is None or place.name is None:
            raise ToolError(f"The path {path} is not a file: memories are {ROOT}/CATEGORY/NAME or {ROOT}/NAME")
        if writing:
            if not _NAME.match(place.name):
                raise ToolError(
                    f"Bad file name {place.name!r}: letters, digits, '.', '_' and '-', at most 100, not starting with '.'"
                )
            kind = self.grimoire.config.category(place.category).kind
            if kind != "note":
                raise ToolError(
                    f"{ROOT}/{place.category} holds {kind} entries, which have fields of their own: the memory tool writes "
                    f"to {', '.join(self._categories(writable=True))}"
                )
        return place

    def _categories(self, writable: bool = False) -> list[str]:
        return [name for name, spec in self.grimoire.config.categories.items() if not writable or spec.kind == "note"]

    def _files(self, place: _Place) -> dict[str, Entry]:
        """The active entries of the folder `place` is in, by file name, newest
        first. The home category's entries named `/memories/NAME` are the root's
        files, the rest its folder's; a name that is bad or taken gives way to
        `<id>.md` in the entry's folder."""
        rooted: dict[str, Entry] = {}
        folder: dict[str, Entry] = {}
        home = place.category == self.root_category
        for entry in self.grimoire.list(categories=[cast(str, place.category)]):
            given = (entry.data.get("metadata") or {}).get("memory_path")
            name = given if isinstance(given, str) else ""
            at_root = name.startswith(ROOT + "/")
            if at_root:
                name = name[
                    len(ROOT) + 1 :
                ]  # in another category (re-categorised outside the tool), its name in that folder
            files = rooted if at_root and home else folder
            if _NAME.match(name) and name not in files:
                files[name] = entry
            else:
                folder.setdefault(f"{entry.id}.md", entry)
        return rooted if place.at_root else folder

    def _entry(self, place: _Place, path: str) -> Entry:
        found = self._files(place).get(place.name) if place.category is not None and place.name is not None else None
        if found is None:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        return found

    def _supersede(self, old: Entry, content: str, place: _Place, free: tuple[_Place, str] | None = None) -> Entry:
        from ..memory.request import Request

        # The rest (tags, importance, the metadata besides the file name) is carried over as by any supersede.
        request = Request(
            content,
            category=place.category,
            supersedes=old.id,
            metadata={"memory_path": place.stored},
            agent=self.agent,
        )
        return self._add(request, free=free)

    def _add(self, request: Request, *, free: tuple[_Place, str] | None = None) -> Entry:
        """`request` written; with `free` (a place, the error), refused unless
        no file holds that place's name, checked under the write lock."""
        from ..memory.adding import add_many

        def name_is_free() -> None:
            if free is not None and free[0].name in self._files(free[0]):
                raise ToolError(free[1])

        return self._write(lambda g: add_many(g.store, [request], g.now(), check=name_is_free)[0])

    def _write(self, work: Any) -> Any:
        try:
            return work(self.grimoire)
        except GrimoireError as exc:
            raise ToolError(f"error: {exc}") from None

    # -- listings ------------------------------------------------------------

    def _root(self) -> str:
        counts = self.grimoire.stats().to_dict()["categories"]
        rooted = self._files(_Place(self.root_category, at_root=True)) if self.root_category is not None else {}
        # The home category's count holds its files at the root, which its folder does not show.
        active = {
            name: counts.get(name, {}).get("active", 0) - (len(rooted) if name == self.root_category else 0)
            for name in self._categories()
        }
        lines = [f"{ROOT}/{name}/\t{n} memor{'y' if n == 1 else 'ies'}" for name, n in active.items()]
        header = f"Here're the folders in {ROOT}, one per category (files in them are memories)"
        if rooted:
            header += f", then the files at its root (memories of {self.root_category})"
        return f"{header}:\n" + "\n".join(lines + self._file_lines(ROOT, rooted))

    def _listing(self, category: str) -> str:
        files = self._files(_Place(category))
        lines = self._file_lines(f"{ROOT}/{category}", files)
        header = f"Here're the memories in {ROOT}/{category}, newest first (file, id, age: summary):"
        return header + ("\n" + "\n".join(lines) if lines else "\n(none yet)")

    def _file_lines(self, folder: str, files: dict[str, Entry]) -> list[str]:
        """A line per file (path, id, age: summary), newest first, up to `view_limit` characters."""
        from ..core.model import age_label

        moment = self.grimoire.now()
        lines: list[str] = []
        size = 0
        for name, entry in files.items():
            line = f"{folder}/{name}\t{entry.id}, {age_label(entry, moment)}: {entry.summary}"
            if size + len(line) > self.view_limit:
                lines.append(f"... and {len(files) - len(lines)} more (view a file by its path, or ask `mem query`)")
                break
            lines.append(line)
            size += len(line) + 1
        return lines


def _home(config: Config, wanted: str | None) -> str | None:
    """The category root-level files are kept in: `wanted`, else learning, else
    the first category of kind note (None when the config has none)."""
    notes = [name for name, spec in config.categories.items() if spec.kind == "note"]
    if wanted is None:
        return ROOT_CATEGORY if ROOT_CATEGORY in notes else next(iter(notes), None)
    if wanted not in notes:
        raise BadInput(
            f"root_category {wanted!r} is not a category of kind note",
            f"choose one of {', '.join(notes) or '(none configured)'}",
        )
    return wanted


def _lines(content: str) -> list[str]:
    """The text's lines as the SDK's backend splits them for `insert`: on LF
    only, without the empty tail a trailing newline leaves."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _notes(entry: Entry) -> str:
    return "".join(f"\nnote: {note}" for note in entry.notes)
