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
from pathlib import Path
from typing import Any, Iterator

from .catalog import Catalog, Light, Stale, Stamp, content_hash
from .chunks import chunk_text, data_hash, parse_chunked, text_hash
from .config import Config
from .errors import BadInput, Damaged, LockTimeout
from .model import Entry

LOCK_TIMEOUT = float(os.environ.get("MEM_LOCK_TIMEOUT", "30"))
JOURNAL = "journal.json"
# Bigger files are reported, not parsed: parsing 50 MB of YAML takes ~20 s
# and over a gigabyte. A 100k-entry grimoire's files are ~14 MB each.
MAX_FILE_BYTES = 32 * 1024 * 1024
TMP_SUFFIX = ".mem-tmp"
HEADER = """\
# grimoire: {category} memories, kept by `mem`.
# A YAML list of entries validated by `mem validate`. Add with `mem add -c {category}`;
# never edit content in place: `mem supersede ID "new text"` keeps the history.
"""


class Store:
    def __init__(self, config: Config):
        self.config = config
        self.catalog = Catalog(config.storage_dir / ".cache")
        self._fresh: set[str] = set()  # files whose catalog rows this process has checked
        self.damaged: dict[str, Damaged] = {}
        self.skipped: list[Damaged] = []  # files passed over by reads with skip_damaged=True
        self._staged: dict[Path, tuple[str, str, bytes, dict[str, Any]]] = {}  # path -> (rel, hash before, bytes, change)
        self._recovered = False

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

    def _files(self, include_archive: bool) -> list[tuple[str, Path, bool]]:
        """(relative path, path, is_archive) of the files a read covers, in order."""
        return [(self.config.relative(p), p, a) for _, p, a in self.category_files() if include_archive or not a]

    # -- keeping the catalog in step with the files --------------------------

    def sync(self, include_archive: bool = True, skip_damaged: bool = False) -> list[str]:
        """Re-read files that changed since the catalog saw them; the readable paths."""
        if not self._recovered:
            self._recovered = True
            self.recover_if_needed()
        for _ in range(2):
            try:
                return self._sync(include_archive, skip_damaged)
            except Stale:
                self._fresh.clear()  # the catalog moved to memory: everything again
        return self._sync(include_archive, skip_damaged)

    def _sync(self, include_archive: bool, skip_damaged: bool) -> list[str]:
        files = self._files(include_archive)
        records = None
        readable = []
        for rel, path, archived in files:
            if rel in self._fresh:
                readable.append(rel)
                continue
            if rel in self.damaged:
                self._damaged(self.damaged[rel], skip_damaged)
                continue
            if records is None:
                records = self.catalog.records()
            try:
                self._sync_file(rel, path, archived, records.get(rel))
            except Damaged as exc:
                self.damaged[rel] = exc
                self._damaged(exc, skip_damaged)
                continue
            self._fresh.add(rel)
            readable.append(rel)
        if records is not None:
            configured = {rel for _, p, _ in self.category_files() for rel in [self.config.relative(p)]}
            gone = [rel for rel in records if rel not in configured]
            if gone:
                self.catalog.forget(gone)
        return readable

    def _damaged(self, exc: Damaged, skip: bool) -> None:
        if not skip:
            raise exc
        if exc not in self.skipped:
            self.skipped.append(exc)

    def _sync_file(self, rel: str, path: Path, archived: bool, known) -> None:
        try:
            stat = path.stat()
        except FileNotFoundError:
            if known is not None:
                self.catalog.forget([rel])
            return
        except OSError as exc:
            raise Damaged(f"{rel}:1: cannot read: {exc.strerror}", "check the file's permissions") from None
        stamp = Stamp.of(stat)
        if known is not None and known[0] == stamp:
            return
        self._check_inside(path)
        raw, read_stamp = self._read_stamped(path)
        stamp = read_stamp or stamp  # the stamp of the bytes read, if it moved meanwhile
        digest = content_hash(raw)
        if known is not None and known[1] == digest:
            self.catalog.restamp(rel, stamp)  # touched, not changed (checkout, copy)
            return
        try:
            # Chunks the catalog holds rows for are not parsed again.
            placed = parse_chunked(self.decode(path, raw), rel, self.catalog.chunk_counts(rel) if known is not None else {})
        except Damaged:
            if known is not None:
                self.catalog.forget([rel])  # stale rows must never answer for it
            raise
        self.catalog.replace_file(rel, stamp, digest, placed, archived)

    def _retry(self, read, include_archive: bool = True, skip_damaged: bool = False):
        """Run a catalog read after a sync; once more if the catalog moved to memory."""
        for attempt in range(2):
            paths = self.sync(include_archive, skip_damaged)
            try:
                return read(paths)
            except Stale:
                self._fresh.clear()
        return read(self.sync(include_archive, skip_damaged))

    # -- reading -------------------------------------------------------------

    def decode(self, path: Path, data: bytes) -> str:
        """The text of a grimoire file, or Damaged naming the first bad line (or its size)."""
        if len(data) > MAX_FILE_BYTES:
            raise Damaged(f"{self.config.relative(path)}:1: file is {len(data) / 2**20:.0f} MB, over the {MAX_FILE_BYTES // 2**20} MB limit",
                          "split or trim it; mem never writes a file this large")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise Damaged(f"{self.config.relative(path)}:{line}: not UTF-8 text", "re-save the file as UTF-8") from None

    def _archive_paths(self) -> set[str]:
        return {self.config.relative(p) for _, p, a in self.category_files() if a}

    def entries(self, include_archive: bool = True, skip_damaged: bool = False) -> Iterator[Entry]:
        """Every entry of every configured file (archive last)."""
        def read(paths: list[str]) -> list[Entry]:
            archive = self._archive_paths()
            out = []
            for rel in paths:
                for start, data in self.catalog.file_data(rel):
                    if isinstance(data, dict):
                        out.append(Entry(data, rel, start, rel in archive))
            return out

        return iter(self._retry(read, include_archive, skip_damaged))

    def lights(self, include_archive: bool = True, skip_damaged: bool = False, where: str = "1", params: dict | None = None) -> list[Light]:
        """Filter-and-rank fields of the entries passing `where`, without decoding any JSON."""
        return self._retry(lambda paths: self.catalog.lights(paths, where, params), include_archive, skip_damaged)

    # Reads that rank or list pass over a damaged file (see `skipped`): the
    # rest of the grimoire keeps working while `mem validate` names the file.

    def ordered(self, where: str, params: dict, order: str, limit: int | None = None, include_archive: bool = True) -> list[int]:
        return self._retry(lambda paths: self.catalog.ordered(paths, where, params, order, limit), include_archive, True)

    def count(self, where: str, params: dict, include_archive: bool = True) -> int:
        return self._retry(lambda paths: self.catalog.count(paths, where, params), include_archive, True)

    def rank(self, expression: str, weights: tuple[float, ...], where: str, params: dict, epoch: float,
             recency_weight: float, tier_bonus: dict[str, float], limit: int | None, include_archive: bool) -> list[tuple]:
        return self._retry(lambda paths: self.catalog.rank(paths, expression, weights, where, params, epoch, recency_weight, tier_bonus, limit),
                           include_archive, True)

    def load(self, rowids: list[int]) -> dict[int, Entry]:
        """Entries by catalog row (call after a read that synced)."""
        try:
            found = self.catalog.load(rowids)
        except Stale:
            self._fresh.clear()
            raise Damaged("the cache failed during a read", "run the command again") from None
        archive = self._archive_paths()
        return {r: Entry(data, path, start, path in archive) for r, (path, start, data) in found.items() if isinstance(data, dict)}

    def by_id(self, ids: list[str], include_archive: bool = True, skip_damaged: bool = True) -> dict[str, Entry]:
        """Entries with these ids (the first of each, in file order)."""
        def read(paths: list[str]) -> dict[str, Entry]:
            allowed = set(paths)
            order = {rel: i for i, rel in enumerate(paths)}
            rows = sorted((r for r in self.catalog.by_ids(ids) if r[1] in allowed), key=lambda r: order[r[1]])
            archive = self._archive_paths()
            out: dict[str, Entry] = {}
            for _, path, start, data in rows:
                if isinstance(data, dict):
                    out.setdefault(data.get("id"), Entry(data, path, start, path in archive))
            return out

        return self._retry(read, include_archive, skip_damaged)

    def ids_of_day(self, day: str, skip_damaged: bool = False) -> list[str]:
        """Ids minted on one day (`MEM-<day>-...`), archive included."""
        return self._retry(lambda paths: self.catalog.ids(paths, f"MEM-{day}-"), True, skip_damaged)

    def columns(self, names: str, where: str, params: dict, include_archive: bool = False, skip_damaged: bool = False) -> list[tuple]:
        """Raw catalog columns of the entries passing `where`."""
        return self._retry(lambda paths: self.catalog.columns(paths, names, where, params), include_archive, skip_damaged)

    def knows(self, word: str) -> bool:
        return self._retry(lambda paths: self.catalog.knows(word), True, True)

    def vocabulary(self) -> list[str]:
        return self._retry(lambda paths: self.catalog.vocabulary(), True, True)

    # -- locking -------------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive lock on the whole grimoire for a read-modify-write.

        Writes made inside are staged and land together when the block ends
        without an error (see `commit`); an error discards them all.
        """
        import fcntl

        folder = self._cache_folder()
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
            self._recover()
            self._recovered = True
            # Other processes may have written since we last looked.
            self._fresh.clear()
            self.damaged.clear()
            self._staged = {}
            try:
                yield
                self.commit()
            finally:
                self._staged = {}
        finally:
            handle.close()

    def _cache_folder(self) -> Path:
        folder = self.config.storage_dir / ".cache"
        folder.mkdir(parents=True, exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# derived cache of mem: never commit\n*\n")
        return folder

    # -- writing: staged, then committed all together -------------------------
    #
    # A command's writes to several files (an import, a supersede, an
    # archive) must land all or not at all. Each new file text goes to a
    # temp file beside its target; then a journal naming every (temp, target)
    # pair is written atomically: that is the commit point. Then each temp
    # replaces its target and the journal is removed. A crash before the
    # journal exists leaves only temp files, which the next writer deletes;
    # a crash after it is rolled forward by the next writer (or reader).

    def _journal(self) -> Path:
        return self.config.storage_dir / ".cache" / JOURNAL

    def _recover(self) -> None:
        """Finish a commit a crashed process left half done; drop temp files of unfinished ones."""
        import json

        journal = self._journal()
        try:
            pairs = json.loads(journal.read_text(encoding="utf-8"))
        except FileNotFoundError:
            pairs = None
        except (OSError, ValueError):
            pairs = None  # a torn journal was never complete: the commit point was not reached
            journal.unlink(missing_ok=True)
        if pairs:
            for tmp, target in pairs:
                if os.path.exists(tmp):
                    os.replace(tmp, target)
                    _fsync_dir(Path(target).parent)
            journal.unlink(missing_ok=True)
        for folder in {self.config.storage_dir, self.config.archive_dir}:
            if folder.is_dir():
                for stray in folder.glob(f".*{TMP_SUFFIX}"):
                    stray.unlink(missing_ok=True)

    def recover_if_needed(self) -> None:
        """Readers call this: a journal means a writer crashed mid-commit."""
        if self._journal().exists():
            with self.lock():
                pass

    def _write_atomic(self, path: Path, data: bytes) -> None:
        """One file on its own: temp, fsync, rename."""
        tmp = self._temp_copy(path, data)
        try:
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _fsync_dir(path.parent)

    def _temp_copy(self, path: Path, data: bytes) -> str:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()  # what open() would have given a new file
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, mode)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return tmp

    def commit(self) -> None:
        """Land every staged file write together (see above), then update the catalog."""
        import json

        staged, self._staged = self._staged, {}
        if not staged:
            return
        if len(staged) == 1:
            # One file: its rename is atomic by itself, no journal needed
            # (saves two fsyncs on every add and apply).
            (path, (rel, before, data, change)), = staged.items()
            self._write_atomic(path, data)
            self._record(rel, path, before, data, **change)
            return
        temps: list[tuple[str, Path]] = []
        try:
            for path, (_, _, data, _) in staged.items():
                temps.append((self._temp_copy(path, data), path))
            journal = self._journal()
            with open(journal.with_suffix(".tmp"), "w", encoding="utf-8") as handle:
                handle.write(json.dumps([[tmp, str(path)] for tmp, path in temps]))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(journal.with_suffix(".tmp"), journal)
            _fsync_dir(journal.parent)
        except BaseException:
            for tmp, _ in temps:
                Path(tmp).unlink(missing_ok=True)
            raise
        for tmp, path in temps:
            os.replace(tmp, path)
        for folder in {path.parent for _, path in temps}:
            _fsync_dir(folder)
        self._journal().unlink(missing_ok=True)
        for path, (rel, before, data, change) in staged.items():
            self._record(rel, path, before, data, **change)

    def ensure_file(self, category: str, archived: bool = False) -> Path:
        path = self.category_path(category, archived)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            self._check_inside(path.parent)
            label = f"archived {category}" if archived else category
            self._write_atomic(path, HEADER.format(category=label).encode("utf-8"))
            self._fresh.discard(self.config.relative(path))  # it was known as absent
        return path

    def _current(self, path: Path) -> tuple[str, bytes, str]:
        """A file's relative path, bytes and content hash, its catalog rows
        checked to describe exactly those bytes (under the lock)."""
        rel = self.config.relative(path)
        if path in self._staged:
            raise RuntimeError(f"{rel} is written twice in one transaction")  # callers group by file
        for _ in range(3):
            if rel not in self._fresh:
                self.damaged.pop(rel, None)
                known = None
                try:
                    known = self.catalog.records().get(rel)
                except Stale:
                    pass
                try:
                    self._sync_file(rel, path, path.parent == self.config.archive_dir, known)
                except Stale:
                    continue  # the catalog moved under the read: check again
                self._fresh.add(rel)
            raw, stamp = self._read_stamped(path)
            try:
                known = self.catalog.records().get(rel)
            except Stale:
                known = None
            if stamp is None:
                return rel, raw, content_hash(raw)
            # The splice plan comes from the catalog's rows: they must be the
            # rows of these very bytes. The same stamp says so without hashing.
            if known is not None and known[0] == stamp:
                return rel, raw, known[1]
            digest = content_hash(raw)
            if known is not None and known[1] == digest:
                return rel, raw, digest
            self._fresh.discard(rel)  # edited by hand since it was checked: read it again
        raise Damaged(f"{rel}:1: the file keeps changing while mem writes to it", "retry when nothing else is editing it")

    def _read_stamped(self, path: Path) -> tuple[bytes, Stamp | None]:
        """A file's bytes and the stamp of what was read (None: no such file)."""
        try:
            with open(path, "rb") as handle:
                return handle.read(), Stamp.of(os.fstat(handle.fileno()))
        except FileNotFoundError:
            return b"", None
        except OSError as exc:
            raise Damaged(f"{self.config.relative(path)}:1: cannot read: {exc.strerror}", "check the file's permissions") from None

    def _record(self, rel: str, path: Path, before: str, data: bytes, **change: Any) -> None:
        """Tell the catalog what a write changed (from content hash `before`);
        on trouble it re-reads the file later."""
        try:
            self.catalog.apply_write(rel, before, Stamp.of(path.stat()), content_hash(data),
                                     path.parent == self.config.archive_dir, **change)
        except Stale:
            self._fresh.clear()
        # Next read re-checks the stamp: cheap, and right even if the catalog declined the update.
        self._fresh.discard(rel)

    def write(self, path: Path, changes: dict[str, dict[str, Any] | None] | None = None,
              appended: list[dict[str, Any]] | None = None) -> list[tuple[int, int]]:
        """Stage one file's new text: entries rewritten or removed (value None) by id,
        touching only their lines, then new entries appended as text. Returns the
        appended entries' line spans. Lands on `commit` (the end of `lock`)."""

        changes = changes or {}
        rel, raw, digest = self._current(path)
        rows = self.catalog.file_rows(rel)
        old = {r[0]: r[3] for r in self.catalog.by_ids(list(changes)) if r[1] == rel}
        rowids = {entry_id: rowid for rowid, _, _, _, _, entry_id in rows if entry_id}
        data, change = splice(raw, rows, {k: old[rowids[k]] for k in changes if k in rowids and rowids[k] in old}, changes,
                              appended or [], where=rel)
        self._staged[path] = (rel, digest, data, change)
        return [span for _, span, _ in change["appended"]]


def splice(raw: bytes, rows: list[tuple], old: dict[str, Any], changes: dict[str, Any], appended: list[dict[str, Any]],
           where: str) -> tuple[bytes, dict[str, Any]]:
    """Entries of a file rewritten, removed or replaced by id (as `rewrite`
    does), then entries appended, on the file's bytes, given the catalog's rows
    of it (rowid, idx, start, stop, byte offset, id): only the lines of the
    entries that change are decoded and edited; the rest is copied as bytes (a split
    and a join of a 2,000-entry file cost ~7 ms; this, ~0.3). Returns the new
    bytes and what changed, in the terms `Catalog.apply_write` takes."""
    ids = [row[5] for row in rows]
    spans = [(row[2], row[3]) for row in rows]
    offsets = [row[4] for row in rows]
    changed: dict[int, Any] = {}
    removed: list[int] = []
    chunks: dict[int, bytes] = {}
    data = raw
    if changes:
        index_of = {entry_id: i for i, entry_id in enumerate(ids) if entry_id}
        missing = [key for key in changes if key not in index_of]
        if missing:
            raise BadInput(f"{', '.join(missing)} not found in {where}")
        positions = sorted(index_of[key] for key in changes)
        # From the entry before the first change (a removal changes its chunk)
        # to the end of the last changed entry's chunk.
        first, last = max(0, positions[0] - 1), positions[-1]
        _check_layout(raw, spans, offsets, first, last + 1, where)
        begin, end = offsets[first], offsets[last + 1] if last + 1 < len(rows) else len(raw)
        base = spans[first][0] - 1
        window = raw[begin:end].decode("utf-8", "surrogatepass")
        text, kept, gone, edited, hashes = _edit_lines(window, ids[first : last + 1], [(a - base, b - base) for a, b in spans[first : last + 1]],
                                                       old, changes, where)
        new = text.encode("utf-8", "surrogatepass")
        data = raw[:begin] + new + raw[end:]
        lines, size = text.count("\n") - window.count("\n"), len(new) - (end - begin)
        changed = {first + i: item for i, item in edited.items()}
        removed = [first + i for i in gone]
        chunks = {first + k: digest for k, digest in hashes.items()}
        inner = [begin + offset for offset in _line_offsets(text, [a for a, _ in kept])]
        offsets = offsets[:first] + inner + [offset + size for offset in offsets[last + 1 :]]
        spans = spans[:first] + [(a + base, b + base) for a, b in kept] + [(a + lines, b + lines) for a, b in spans[last + 1 :]]
    new_rows = []
    if appended:
        if spans:
            _check_layout(data, spans, offsets, len(spans) - 1, len(spans), where)
        data, new_rows, hashes_appended = _append_entries(data, bool(spans), appended)
        if spans:  # the last entry's chunk now ends where the first new one starts
            chunks[len(spans) - 1] = data_hash(data[offsets[-1] : new_rows[0][2]])
        chunks.update((len(spans) + i, digest) for i, digest in enumerate(hashes_appended))
    return data, {"changed": changed, "removed": removed, "spans": spans, "offsets": offsets, "appended": new_rows, "chunks": chunks}


def _append_entries(data: bytes, has_entries: bool, appended: list[dict[str, Any]]) -> tuple[bytes, list[tuple[Any, tuple[int, int], int]], list[bytes]]:
    """`data` with `appended` written at its end: the new bytes, (item, line
    span, byte offset) of each new entry, and each one's chunk hash."""
    from .yamlio import emit_entry

    if not has_entries and re.search(rb"^\s*\[\s*\]\s*$", data, re.M):
        # An empty flow list `[]` cannot be appended to; drop it.
        data = re.sub(rb"^\s*\[\s*\]\s*$\n?", b"", data, flags=re.M)
    if data and not data.endswith(b"\n"):
        data += b"\n"
    line_count, size = data.count(b"\n"), len(data)
    rows, hashes, pieces = [], [], []
    for item in appended:
        piece = emit_entry(item).encode("utf-8", "surrogatepass")
        count = piece.count(b"\n")
        rows.append((item, (line_count + 1, line_count + count), size))
        hashes.append(data_hash(piece))
        line_count += count
        size += len(piece)
        pieces.append(piece)
    return data + b"".join(pieces), rows, hashes


def _check_layout(data: bytes, spans: list[tuple[int, int]], offsets: list[int | None], first: int, stop: int, where: str) -> None:
    """Entries first..stop-1 must each start with `- ` at column 0, in order:
    the only layout whose entries can be edited by their lines."""
    for i in range(first, stop):
        offset = offsets[i]
        ordered = i == first or (offsets[i - 1] is not None and offset is not None and offset > offsets[i - 1] and spans[i][0] > spans[i - 1][1])
        if offset is None or not ordered or spans[i][0] > spans[i][1] or not (data.startswith(b"- ", offset) or data[offset : offset + 2] in (b"-", b"-\n")):
            raise Damaged(f"{where}:{spans[i][0]}: entries are not written one per `- ` line at column 0 (flow style or an indented list), "
                          "so mem cannot change them in place", "rewrite the file in block style, each entry starting with '- id:'")


def _line_offsets(text: str, wanted: list[int]) -> list[int]:
    """Byte offsets in `text` of the starts of its 1-based lines `wanted` (ascending)."""
    out: list[int] = []
    offset = 0
    targets = iter(wanted)
    target = next(targets, None)
    for number, line in enumerate(text.split("\n"), 1):
        while target == number:
            out.append(offset)
            target = next(targets, None)
        if target is None:
            break
        offset += len(line.encode("utf-8", "surrogatepass")) + 1
    return out


class Raw(list):
    """Replacement lines for an entry's block, used as they are (merge conflicts)."""


def rewrite(text: str, ids: list[str | None], spans: list[tuple[int, int]], old: dict[str, Any],
            changes: dict[str, Any], appended: list[dict[str, Any]], where: str = "<text>") -> str:
    """A file's text with entries rewritten (new data), removed (None) or replaced
    by `Raw` lines, by id, touching only their lines; then entries appended
    (the merge driver's edit, on text it parsed; writes use `splice`).

    `ids` and `spans` describe the file's items in order, `old` maps each
    changed id to its current data.
    """
    kept = spans
    if changes:
        text, kept, _, _, _ = _edit_lines(text, ids, spans, old, changes, where)
    if appended:
        data, _, _ = _append_entries(text.encode("utf-8", "surrogatepass"), bool(kept), appended)
        text = data.decode("utf-8", "surrogatepass")
    return text


def _edit_lines(text: str, ids: list[str | None], spans: list[tuple[int, int]], old: dict[str, Any], changes: dict[str, Any],
                where: str) -> tuple[str, list[tuple[int, int]], list[int], dict[int, Any], dict[int, bytes]]:
    """Entries of `text` rewritten, removed or replaced by id, in place: (text,
    spans kept, positions removed, new data by position, chunk hashes of the
    kept entries whose text changed)."""
    lines = text.split("\n")
    spans = list(spans)
    index_of = {entry_id: i for i, entry_id in enumerate(ids) if entry_id}
    missing = [key for key in changes if key not in index_of]
    if missing:
        raise BadInput(f"{', '.join(missing)} not found in {where}")
    removed: list[int] = []
    changed: dict[int, Any] = {}
    # Work bottom-up so earlier spans stay valid while we splice.
    for entry_id in sorted(changes, key=lambda k: index_of[k], reverse=True):
        i = index_of[entry_id]
        start, stop = spans[i]
        old_block = lines[start - 1 : stop]
        new_data = changes[entry_id]
        if new_data is None:
            replacement: list[str] = []
        elif isinstance(new_data, Raw):
            replacement = list(new_data)
        else:
            replacement = edit_block(old_block, old[entry_id], new_data)
        lines[start - 1 : stop] = replacement
        delta = len(replacement) - len(old_block)
        if new_data is None:
            # Also drop the blank line that separated it, if any.
            removed.append(i)
            if start - 1 < len(lines) and lines[start - 1] == "" and start - 1 < len(lines) - 1:
                del lines[start - 1]
                delta -= 1
            spans[i] = (0, -1)
        else:
            if not isinstance(new_data, Raw):
                changed[i] = new_data
            spans[i] = (start, stop + delta)
        spans[i + 1 :] = [(a + delta, b + delta) for a, b in spans[i + 1 :]]
    from bisect import bisect_left

    gone = set(removed)
    survivors = [i for i in range(len(spans)) if i not in gone]  # old positions, in order
    kept = [spans[i] for i in survivors]
    # The chunks (chunks.py) whose text this edit changed: the rewritten
    # entries and the one before each removed entry (it takes over what
    # trailed it).
    touched = {bisect_left(survivors, index_of[k]) for k in changes if index_of[k] not in gone}
    touched.update(bisect_left(survivors, i) - 1 for i in gone)
    touched.discard(-1)
    chunk_hashes = {k: _kept_chunk(lines, kept, k) for k in touched}
    return "\n".join(lines), kept, removed, changed, chunk_hashes


def _kept_chunk(lines: list[str], kept: list[tuple[int, int]], k: int) -> bytes:
    """Hash of the chunk of the k-th remaining entry in `lines`."""
    start = kept[k][0] - 1
    stop = kept[k + 1][0] - 1 if k + 1 < len(kept) else len(lines)
    return text_hash(chunk_text(lines, start, stop))


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


_FIELD_RE = re.compile(r"^( *)([A-Za-z_][A-Za-z0-9_-]*):(?: |$)")


def edit_block(block: list[str], old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The lines of one entry with only its changed top-level fields rewritten.

    Comments and formatting of untouched fields stay byte-identical. When the
    entry is not in the usual block layout, it is emitted afresh instead.
    """
    from .yamlio import emit_entry, emit_fields, is_exact_emission, parse_entries

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

    # In a fixed order (the old block's keys, then new ones as `new` holds
    # them), so the same edit always writes the same lines.
    changed = [k for k in [*old, *(k for k in new if k not in old)] if old.get(k, _MISSING) != new.get(k, _MISSING)]
    if any(starts.get(k) == 0 for k in changed):
        return emit_entry(new).rstrip("\n").split("\n")
    result = list(block)
    edits = []
    added: list[str] = []
    for key in changed:
        if key in starts:
            begin, end = extent(key)
            edits.append((begin, end, emit_fields({key: new[key]}, indent) if key in new else []))
        else:
            added.extend(emit_fields({key: new[key]}, indent))
    if added:
        tail = max(extent(k)[1] for k in starts) if starts else len(block) - 1
        edits.append((tail + 1, tail, added))
    for begin, end, fresh in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        result[begin : end + 1] = fresh
    if is_exact_emission(result, new):
        # The block is the emitter's own text for `new`: verified by
        # construction, without importing the YAML parser (~15 ms a command).
        return result
    parsed, _ = parse_entries("\n".join(result) + "\n", "<edit>")
    if parsed != [new]:
        return emit_entry(new).rstrip("\n").split("\n")
    return result


_MISSING = object()
