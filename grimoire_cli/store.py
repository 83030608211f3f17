"""Grimoire files on disk: read (through the cache), append, splice, lock.

Writes are text operations: a new entry is emitted and appended; a
lifecycle edit rewrites only the lines of the fields it changes inside the
entry's line span. Every write goes through a temp file, fsync and
`os.replace`, under an exclusive lock on the grimoire, so readers never see
a half-written file and concurrent writers never lose an entry.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .cache import Cache, content_hash
from .config import Config
from .errors import BadInput, Damaged, LockTimeout
from .model import Entry
from .yamlio import emit_entry, emit_fields, parse_entries

LOCK_TIMEOUT = float(os.environ.get("MEM_LOCK_TIMEOUT", "30"))
HEADER = """\
# grimoire: {category} memories, kept by `mem`.
# A YAML list of entries validated by `mem validate`. Add with `mem add -c {category}`;
# never edit content in place: `mem supersede ID "new text"` keeps the history.
"""


@dataclass
class FileData:
    """One parsed grimoire file."""

    path: Path
    entries: list[Any]
    spans: list[tuple[int, int]]
    archived: bool


class Store:
    def __init__(self, config: Config):
        self.config = config
        self.cache = Cache(config.storage_dir / ".cache")
        self._memo: dict[Path, FileData] = {}
        self.skipped: list[Damaged] = []  # files passed over by entries(skip_damaged=True)

    # -- paths ---------------------------------------------------------------

    def category_path(self, category: str, archived: bool = False) -> Path:
        folder = self.config.archive_dir if archived else self.config.storage_dir
        return folder / self.config.category(category).storage_file

    def category_files(self) -> list[tuple[str, Path, bool]]:
        """(category, path, is_archive) for every configured file, existing or not."""
        out = []
        for archived in (False, True):
            for name in self.config.categories:
                out.append((name, self.category_path(name, archived), archived))
        return out

    def _check_inside(self, path: Path) -> None:
        root = self.config.root
        real = path.resolve()
        if real != root and root not in real.parents:
            raise Damaged(f"{self.config.relative(path)}: resolves outside the repository ({real})", "replace the symlink with a regular file")

    # -- reading -------------------------------------------------------------

    def read(self, path: Path) -> FileData:
        """Entries and spans of one file (empty when it does not exist)."""
        if path in self._memo:
            return self._memo[path]
        archived = path.parent == self.config.archive_dir
        try:
            stat = path.stat()
        except FileNotFoundError:
            return FileData(path, [], [], archived)
        except OSError as exc:
            raise Damaged(f"{self.config.relative(path)}:1: cannot read: {exc.strerror}", "check the file's permissions") from None
        self._check_inside(path)
        key = self.config.relative(path)
        raw: list[bytes] = []

        def read_bytes() -> bytes:
            if not raw:
                raw.append(self._read_bytes(path))
            return raw[0]

        cached = self.cache.lookup(key, stat, read_bytes)
        if cached is not None:
            data = FileData(path, cached[0], cached[1], archived)
        else:
            entries, spans = self._parse(path, read_bytes())
            self.cache.store(key, stat, content_hash(read_bytes()), entries, spans)
            data = FileData(path, entries, spans, archived)
        self._memo[path] = data
        return data

    def _read_bytes(self, path: Path) -> bytes:
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise Damaged(f"{self.config.relative(path)}:1: cannot read: {exc.strerror}", "check the file's permissions") from None

    def _decode(self, path: Path, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise Damaged(f"{self.config.relative(path)}:{line}: not UTF-8 text", "re-save the file as UTF-8") from None

    def _parse(self, path: Path, data: bytes) -> tuple[list[Any], list[tuple[int, int]]]:
        return parse_entries(self._decode(path, data), self.config.relative(path))

    def entries(self, include_archive: bool = True, skip_damaged: bool = False) -> Iterator[Entry]:
        """Every entry of every configured file (archive last)."""
        for _, path, archived in self.category_files():
            if archived and not include_archive:
                continue
            try:
                data = self.read(path)
            except Damaged as exc:
                if skip_damaged:
                    self.skipped.append(exc)
                    continue
                raise
            rel = self.config.relative(path)
            for item, span in zip(data.entries, data.spans):
                if isinstance(item, dict):
                    yield Entry(item, rel, span[0], archived)

    def invalidate(self, path: Path) -> None:
        self._memo.pop(path, None)

    # -- locking -------------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive lock on the whole grimoire for a read-modify-write."""
        import fcntl

        folder = self.config.storage_dir / ".cache"
        folder.mkdir(parents=True, exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# derived cache of mem: never commit\n*\n")
        handle = open(folder / "write.lock", "a+")
        try:
            deadline = time.monotonic() + LOCK_TIMEOUT
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise LockTimeout(
                            f"another mem process has held the grimoire lock for {LOCK_TIMEOUT:.0f}s",
                            "retry, or look for a stuck mem process",
                        ) from None
                    time.sleep(0.01)
            # Other processes may have written since we last looked.
            self._memo.clear()
            yield
        finally:
            handle.close()

    # -- writing -------------------------------------------------------------

    def _write_atomic(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = None
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            pass
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        try:
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError:
            pass

    def _commit_text(self, path: Path, text: str, entries: list[Any], spans: list[tuple[int, int]]) -> None:
        """Write a file and record what we know of it in the cache."""
        self._write_atomic(path, text)
        data = text.encode("utf-8")
        self.cache.store(self.config.relative(path), path.stat(), content_hash(data), entries, spans)
        self._memo[path] = FileData(path, entries, spans, path.parent == self.config.archive_dir)

    def ensure_file(self, category: str, archived: bool = False) -> Path:
        path = self.category_path(category, archived)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            self._check_inside(path.parent)
            label = f"archived {category}" if archived else category
            self._write_atomic(path, HEADER.format(category=label))
        return path

    def append(self, path: Path, new: list[dict[str, Any]]) -> None:
        """Append entries as text at the end of a file; no existing line changes."""
        current = self.read(path)
        text = self._decode(path, self._read_bytes(path)) if path.exists() else ""
        if current.entries == [] and re.search(r"^\s*\[\s*\]\s*$", text, re.M):
            # An empty flow list `[]` cannot be appended to; drop it.
            text = re.sub(r"^\s*\[\s*\]\s*$\n?", "", text, flags=re.M)
        if text and not text.endswith("\n"):
            text += "\n"
        line_count = text.count("\n")
        entries = list(current.entries)
        spans = list(current.spans)
        chunks = []
        for item in new:
            chunk = emit_entry(item)
            lines = chunk.count("\n")
            spans.append((line_count + 1, line_count + lines))
            line_count += lines
            entries.append(item)
            chunks.append(chunk)
        self._commit_text(path, text + "".join(chunks), entries, spans)

    def splice(self, path: Path, changes: dict[str, dict[str, Any] | None]) -> None:
        """Rewrite or remove (value None) entries by id, touching only their lines."""
        current = self.read(path)
        lines = self._decode(path, self._read_bytes(path)).split("\n")
        entries = list(current.entries)
        spans = list(current.spans)
        index_of = {item.get("id"): i for i, item in enumerate(entries) if isinstance(item, dict)}
        missing = [key for key in changes if key not in index_of]
        if missing:
            raise BadInput(f"{', '.join(missing)} not found in {self.config.relative(path)}")
        # Work bottom-up so earlier spans stay valid while we splice.
        for entry_id in sorted(changes, key=lambda k: index_of[k], reverse=True):
            i = index_of[entry_id]
            start, stop = spans[i]
            old_block = lines[start - 1 : stop]
            new_data = changes[entry_id]
            if new_data is None:
                replacement: list[str] = []
            else:
                replacement = edit_block(old_block, entries[i], new_data)
            lines[start - 1 : stop] = replacement
            delta = len(replacement) - len(old_block)
            if new_data is None:
                # Also drop the blank line that separated it, if any.
                del entries[i]
                del spans[i]
                if start - 1 < len(lines) and lines[start - 1] == "" and start - 1 < len(lines) - 1:
                    del lines[start - 1]
                    delta -= 1
                spans[i:] = [(a + delta, b + delta) for a, b in spans[i:]]
            else:
                entries[i] = new_data
                spans[i] = (start, stop + delta)
                spans[i + 1 :] = [(a + delta, b + delta) for a, b in spans[i + 1 :]]
        self._commit_text(path, "\n".join(lines), entries, spans)


_FIELD_RE = re.compile(r"^( *)([A-Za-z_][A-Za-z0-9_-]*):(?: |$)")


def edit_block(block: list[str], old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The lines of one entry with only its changed top-level fields rewritten.

    Comments and formatting of untouched fields stay byte-identical. When the
    entry is not in the usual block layout, it is emitted afresh instead.
    """
    first = re.match(r"^-( +)", block[0]) if block else None
    if first is None:
        return emit_entry(new).rstrip("\n").split("\n")
    indent = 1 + len(first.group(1))
    starts: dict[str, int] = {}
    order: list[int] = []
    for number, line in enumerate(block):
        probe = " " * indent + line[indent:] if number == 0 else line
        match = _FIELD_RE.match(probe)
        if match and len(match.group(1)) == indent:
            starts[match.group(2)] = number
            order.append(number)

    def extent(key: str) -> tuple[int, int]:
        begin = starts[key]
        later = [n for n in order if n > begin]
        end = (later[0] if later else len(block)) - 1
        while end > begin and (not block[end].strip() or block[end].lstrip().startswith("#")):
            end -= 1
        return begin, end

    changed = [k for k in set(old) | set(new) if old.get(k, _MISSING) != new.get(k, _MISSING)]
    if any(starts.get(k) == 0 for k in changed):
        return emit_entry(new).rstrip("\n").split("\n")
    result = list(block)
    edits = []
    for key in changed:
        fresh = emit_fields({key: new[key]}, indent) if key in new else []
        if key in starts:
            begin, end = extent(key)
            edits.append((begin, end, fresh))
        else:
            tail = max(extent(k)[1] for k in starts) if starts else len(block) - 1
            edits.append((tail + 1, tail, fresh))
    for begin, end, fresh in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        result[begin : end + 1] = fresh
    parsed, _ = parse_entries("\n".join(result) + "\n", "<edit>")
    if parsed != [new]:
        return emit_entry(new).rstrip("\n").split("\n")
    return result


_MISSING = object()
