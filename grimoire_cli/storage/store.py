"""The grimoire's files: read through the catalog, written as text under the lock.

Reads bring the catalog up to date with the files they cover (a `stat`
each; a changed file is re-parsed alone), then ask it (`read`). Writes are
text operations (`textedit`): a new entry is emitted and appended; a
lifecycle edit rewrites only the lines of the fields it changes. They are
staged inside `lock()` and land together when it ends (`journal`), so
readers never see a half-written file and concurrent writers never lose an
entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

from ..core.config import Config
from ..core.errors import BadInput, Damaged
from ..core.model import Entry
from ..core.runtime import Runtime
from . import issued, journal, reading
from .catalog.catalog import Catalog
from .catalog.connection import Stale
from .catalog.indexer import Record
from .catalog.rows import Row
from .handed import Handed
from .layout import FileChange, Stamp
from .reading import GrimoireFile, Reread
from .reads import Reads

if TYPE_CHECKING:
    from .catalog.queries import Filter
    from .parallel import Parsed

T = TypeVar("T")
_ID_WORD = re.compile(r"MEM-\d{8}-\d+")

# Times an operation runs when the on-disk catalog fails under it (each
# failure moves this process to an in-memory catalog; see `_retrying`).
ATTEMPTS = 3
REREADS = 3  # times a write re-reads a file that someone else keeps editing under it
HEADER = """\
# grimoire: {category} memories, kept by `mem`.
# A YAML list of entries validated by `mem validate`. {how};
# never edit content in place: `mem supersede ID "new text"` keeps the history.
"""
# How the entries of each kind of category are written (docs/agent-personas.md).
_ADD_WITH = {
    "note": "Add with `mem add -c {category}`",
    "episode": "Add with `mem episode EVENT`",
    "procedure": "Add with `mem procedure add FILE`",
    "task": "Add with `mem task add TEXT`",
    "summary": "Written by `mem consolidate`",
    "chat": "Add with `mem chat add ROLE TEXT`",
    "insight": "Written by `mem learn` (by hand: add_insight in Python)",
}


class _Staged(NamedTuple):
    rel: str
    before: str  # the content hash of the bytes the change was made on
    data: bytes
    change: FileChange


class Store:
    """The files of one grimoire and their catalog."""

    def __init__(self, config: Config, runtime: Runtime | None = None):
        self.config = config
        self.runtime = runtime if runtime is not None else Runtime()
        self.cache = config.storage_dir / ".cache"
        self.catalog = Catalog(self.cache)
        self.catalog.local_dir = config.local_dir  # tier reads honour a recorded aging (storage/aging.py)
        self._fresh: set[str] = set()  # files whose catalog rows this process has checked
        self._handed = Handed(self.catalog)  # the catalog state of the rows handed out since a lock or refresh
        self.reading = self._handed.reading  # a block whose reads see one snapshot of the catalog (storage/handed.py)
        self.damaged: dict[str, Damaged] = {}
        self.skipped: list[Damaged] = []  # files passed over by reads with skip_damaged=True
        self._staged: dict[Path, _Staged] = {}
        self._recovered = False
        self._files: list[GrimoireFile] | None = None
        self.reads = Reads(self)  # what feature modules read, by name

    # -- paths ---------------------------------------------------------------

    def category_path(self, category: str, archived: bool = False) -> Path:
        spec = self.config.category(category)
        return self.config.folder(spec, archived) / spec.storage_file

    def files(self, include_archive: bool = True) -> list[GrimoireFile]:
        """Every configured file, existing or not: the category files, then the archive's."""
        if self._files is None:  # the config never changes under a store: worked out once
            self._files = [
                GrimoireFile(name, path, self.config.relative(path), archived)
                for archived in (False, True)
                for name in self.config.categories
                for path in (self.category_path(name, archived),)
            ]
        return list(self._files) if include_archive else [f for f in self._files if not f.archived]

    def forget_files(self) -> None:
        """The config was changed in place (an import adding categories): work the files out again."""
        self._files = None

    def local_paths(self) -> set[str]:
        """The files of the local categories (`tracked: false`), their archive's too: never committed, never merged."""
        return {f.rel for f in self.files() if not self.config.category(f.category).tracked}

    def _archive_paths(self) -> set[str]:
        return {f.rel for f in self.files() if f.archived}

    # -- reading -------------------------------------------------------------

    def ask(
        self, query: Callable[[Catalog, list[str]], T], *, include_archive: bool = True, skip_damaged: bool = True
    ) -> T:
        """`query(catalog, paths)` once the catalog is up to date with the files
        a read covers (`paths`, relative). With `skip_damaged` (reads that rank
        or list), a damaged file is passed over and noted in `skipped`: the rest
        of the grimoire keeps working while `mem validate` names the file."""
        return self._retrying(lambda: query(self.catalog, self._sync(include_archive, skip_damaged)))

    # The reads feature modules ask for most, by name (SQL stays in the catalog).
    def ordered(
        self, chosen: Filter, order: str, limit: int | None = None, *, include_archive: bool = False
    ) -> list[int]:
        """Catalog rows of the entries `chosen` selects, in a named `Order`, at most `limit`."""
        return self.ask(
            lambda catalog, paths: catalog.ordered(paths, chosen, order, limit), include_archive=include_archive
        )

    def ids(self, chosen: Filter, *, include_archive: bool = False) -> list[str]:
        """Ids of the entries `chosen` selects."""
        return self.ask(lambda catalog, paths: catalog.ids(paths, chosen), include_archive=include_archive)

    def count(self, chosen: Filter, *, include_archive: bool = False) -> int:
        """How many entries `chosen` selects."""
        return self.ask(lambda catalog, paths: catalog.count(paths, chosen), include_archive=include_archive)

    def _retrying(self, attempt: Callable[[], T], rows: bool = True) -> T:
        """The one retry policy: when the on-disk catalog fails mid-operation,
        this process moves to an in-memory one (`Stale`), and the operation
        runs again from the files. `rows`: the answer holds catalog rows,
        which must not be mixed with rows of a catalog that failed (`_held`);
        a file's record (`_current`) holds none."""
        for _ in range(ATTEMPTS - 1):
            try:
                return self._held(attempt(), rows)
            except Stale:
                self._fresh.clear()
        return self._held(attempt(), rows)

    def _held(self, answer: T, rows: bool = True) -> T:
        """`answer`, unless rows of a catalog that failed, or of a state since changed, are held (storage/handed.py)."""
        if rows and self._handed.mixes():
            raise self._cache_failed()
        return answer

    def _cache_failed(self) -> Damaged:
        """The catalog failed (or changed) under rows handed out: the command stops; the next starts from nothing held."""
        what = "another process changed the cache" if self._handed.changed() else "the cache failed"
        self._fresh.clear()
        self._handed.forget()
        return Damaged(
            self.config.relative(self.cache), None, f"{what} during a read", "run the command again", "cache"
        )

    def derived(self, work: Callable[[Catalog], T]) -> T:
        """`work(catalog)` for what the catalog derives from outside the
        grimoire files (the observation log), under the one retry policy."""
        return self._retrying(lambda: work(self.catalog))

    def kept(self, ask: Callable[[Catalog], T], default: T) -> T:
        """`ask(catalog)` for a result the catalog merely keeps (validate's
        reports): when the catalog fails, the default, and no retry."""
        try:
            return ask(self.catalog)
        except Stale:  # now in memory: the next read fills it from the files
            self._fresh.clear()
            return default

    def entries(self, include_archive: bool = True, skip_damaged: bool = False) -> list[Entry]:
        """Every entry of every configured file (archive last)."""

        def query(catalog: Catalog, paths: list[str]) -> list[Entry]:
            archive = self._archive_paths()
            return [
                self._entry(row, archive)
                for rel in paths
                for row in catalog.file_entries(rel)
                if isinstance(row.data, dict)
            ]

        return self.ask(query, include_archive=include_archive, skip_damaged=skip_damaged)

    def by_id(
        self, ids: list[str], include_archive: bool = True, skip_damaged: bool = True, unique: bool = False
    ) -> dict[str, Entry]:
        """Entries with these ids (the first of each, in file order). With
        `unique` (a write is about to edit them), an id two entries share is
        refused, naming both places, instead of picking one."""

        def query(catalog: Catalog, paths: list[str]) -> dict[str, Entry]:
            order = {rel: i for i, rel in enumerate(paths)}
            rows = sorted((r for r in catalog.by_ids(ids) if r.path in order), key=lambda r: order[r.path])
            archive = self._archive_paths()
            out: dict[str, Entry] = {}
            for row in rows:
                if not isinstance(row.data, dict):
                    continue
                entry_id = row.data.get("id")
                if unique and entry_id in out:
                    first = out[entry_id]
                    raise Damaged(
                        str(first.file),
                        first.line,
                        f"{entry_id} is also the id of the entry at {row.path}:{row.line}; "
                        "a write cannot tell which one is meant",
                        "run `mem validate` and give one of them a new id",
                        "duplicate-id",
                    )
                out.setdefault(cast(str, entry_id), self._entry(row, archive))
            return out

        return self.ask(query, include_archive=include_archive, skip_damaged=skip_damaged)

    def load(self, rowids: list[int]) -> dict[int, Entry]:
        """Entries by catalog row, for rowids a read of the same `reading` block returned."""
        if not self._handed.inside():
            raise RuntimeError("Store.load outside a reading block: its rows may name other entries by now")
        try:
            found = self._held(self.catalog.load(rowids))
        except Stale:
            raise self._cache_failed() from None
        archive = self._archive_paths()
        return {rowid: self._entry(row, archive) for rowid, row in found.items() if isinstance(row.data, dict)}

    @staticmethod
    def _entry(row: Row, archive: set[str]) -> Entry:
        return Entry(row.data, row.path, row.line, row.path in archive)

    def decode(self, path: Path, data: bytes) -> str:
        """The text of a grimoire file, or Damaged naming the first bad line (or its size)."""
        return reading.decode(self.config.relative(path), data)

    # -- keeping the catalog in step with the files --------------------------

    def _sync(self, include_archive: bool, skip_damaged: bool) -> list[str]:
        """Re-read files that changed since the catalog saw them; the readable paths (in a `reading` block, one snapshot)."""
        if not self._recovered:
            self._recovered = True
            self.recover_if_needed()
        records = None
        readable: dict[str, bool] = {}  # in the files' order: whether it can be read
        pending: list[Reread] = []
        for file in self.files(include_archive):
            rel = file.rel
            if rel in self._fresh:
                readable[rel] = True
                continue
            if rel in self.damaged:
                self._damaged(self.damaged[rel], skip_damaged)
                continue
            if records is None:
                records = self.catalog.records()
            try:
                reread = self._changed(file, records.get(rel))
            except Damaged as exc:
                self.damaged[rel] = exc
                self._damaged(exc, skip_damaged)
                continue
            if reread is None:
                self._fresh.add(rel)
                readable[rel] = True
            else:
                pending.append(reread)
                readable[rel] = False
        if pending:
            self._reread(pending, skip_damaged, readable)
        if records is not None:
            configured = {f.rel for f in self.files()}
            gone = [rel for rel in records if rel not in configured]
            if gone:
                self.catalog.forget(gone)
        self._handed.hold()  # inside a `reading` block, this read and the next see one state
        return [rel for rel, ok in readable.items() if ok]

    def _damaged(self, exc: Damaged, skip: bool) -> None:
        if not skip:
            raise exc
        if exc not in self.skipped:
            self.skipped.append(exc)

    def _changed(self, file: GrimoireFile, known: Record | None) -> Reread | None:
        """What of one file must be parsed again; None when its rows are up to date."""
        rel, path = file.rel, file.path
        try:
            stat = path.stat()
        except FileNotFoundError:
            if known is not None:
                self.catalog.forget([rel])
            return None
        except OSError as exc:
            raise Damaged(
                rel, 1, f"cannot read: {exc.strerror}", "check the file's permissions", "unreadable"
            ) from None
        stamp = Stamp.of(stat)
        if known is not None and known.stamp == stamp:
            return None
        from .chunks import content_hash  # only when a file changed

        self._check_inside(path)
        raw, read_stamp = self._read_stamped(path)
        stamp = read_stamp or stamp  # the stamp of the bytes read, if it moved meanwhile
        digest = content_hash(raw)
        if known is not None and known.digest == digest:
            self.catalog.restamp(rel, stamp)  # touched, not changed (checkout, copy)
            return None
        # Chunks the catalog holds rows for are not parsed again.
        counts = self.catalog.chunk_counts(rel) if known is not None else {}
        return Reread(file, stamp, digest, self.decode(path, raw), counts, known is not None)

    def _reread(self, pending: list[Reread], skip_damaged: bool, readable: dict[str, bool]) -> None:
        """Parse the changed files (many at once on every core, see `parallel`) and replace their rows."""
        from .parallel import Job, parse_files

        jobs = [Job(reread.file.rel, reread.text, reread.known, reread.file.archived) for reread in pending]
        for reread, parsed in zip(pending, parse_files(jobs, self.runtime.parse_workers)):
            rel = reread.file.rel
            try:
                self._index(reread, parsed)
            except Damaged as exc:
                self.damaged[rel] = exc
                self._damaged(exc, skip_damaged)
                continue
            self._fresh.add(rel)
            readable[rel] = True

    def _sync_file(self, file: GrimoireFile, known: Record | None) -> None:
        """Bring one file's rows up to date (`known`: the catalog's record of it, if any)."""
        reread = self._changed(file, known)
        if reread is not None:
            from .chunks import parse_chunked
            from .parallel import Parsed

            try:
                parsed: Parsed | Damaged = Parsed(parse_chunked(reread.text, file.rel, reread.known))
            except Damaged as exc:
                parsed = exc
            self._index(reread, parsed)

    def _index(self, reread: Reread, parsed: Parsed | Damaged) -> None:
        """Replace a re-read file's rows with what parsing it gave (Damaged: drop them, and raise it)."""
        if isinstance(parsed, Damaged):
            if reread.had_rows:
                self.catalog.forget([reread.file.rel])  # stale rows must never answer for it
            raise parsed
        self.catalog.replace_file(
            reread.file.rel,
            reread.stamp,
            reread.digest,
            parsed.placed,
            reread.file.archived,
            parsed.prepared,
            parsed.counts,
        )

    def ids_in_damaged(self) -> set[str]:
        """Every id-shaped word in the files that reads passed over as damaged.

        A file mem cannot parse still holds ids its author will restore, so new
        ids must avoid them (any mention counts: over-avoiding costs a number,
        reusing one costs a duplicate). A file whose text cannot be read at
        all is refused instead: no id could be called free.
        """
        paths = {file.rel: file.path for file in self.files()}
        found: set[str] = set()
        for rel, problem in self.damaged.items():
            try:
                if problem.kind == "outside-repository":
                    raise OSError
                text = paths[rel].read_bytes().decode("utf-8", "replace")
            except (OSError, KeyError):
                raise Damaged(
                    rel,
                    problem.line,
                    f"cannot be read for the ids it holds ({problem.problem})",
                    "fix it (`mem validate` says how) before adding memories",
                    problem.kind,
                ) from None
            found.update(_ID_WORD.findall(text))
        return found

    def issued(self) -> dict[str, int]:
        """Day -> the highest id number this clone has issued that day (`issued`): new ids go past it."""
        return issued.highest(self.config.local_dir)

    def _check_inside(self, path: Path) -> None:
        reading.check_inside(self.config.root, path, self.config.relative(path))

    def _read_stamped(self, path: Path) -> tuple[bytes, Stamp | None]:
        """A file's bytes and the stamp of what was read (None: no such file)."""
        return reading.read_stamped(path, self.config.relative(path))

    # -- writing: staged under the lock, then landing all together -------------

    def check_writable(self) -> None:
        """Refuse, before anything is written, when Loa's `memory_schema.enabled` is false."""
        if not self.config.enabled:
            where = self.config.relative(self.config.path) if self.config.path else "the config"
            raise BadInput(
                f"memory is off: memory_schema.enabled is false in {where}; nothing written",
                "set memory_schema.enabled: true to write memories again",
            )

    @contextmanager
    def lock(self, *, writing: bool = True) -> Iterator[None]:
        """Exclusive lock on the whole grimoire for a read-modify-write
        (`writing`: refused when memory is off, `check_writable`).

        Writes made inside are staged and land together when the block ends
        without an error; an error discards them all.
        """
        if writing:
            self.check_writable()
        with journal.locked(self.cache, self.runtime.lock_timeout):
            self._recover()
            # Other processes may have written since we last looked; a write
            # reads what it changes under the lock, so no row read before is held.
            self._fresh.clear()
            self._handed.forget()
            self.damaged.clear()
            self._staged = {}
            try:
                yield
                self.commit()
            finally:
                self._staged = {}
                self._handed.forget()

    def refresh(self) -> None:
        """Forget what this process has checked, as a new process would not
        know it: the next read stats every file again (and finishes a
        crashed writer's commit). A long-lived process (`mem mcp`) calls it
        between requests, keeping its catalog connection and parsed config."""
        self._fresh.clear()
        self._handed.forget()
        self.damaged.clear()
        self.skipped.clear()
        self._recovered = False

    def _recover(self) -> None:
        try:  # local/: issued ids' temp file too
            journal.recover(self.cache, [*self.config.folders(), self.config.local_dir])
        except OSError as exc:  # refused by the system (permissions, a folder where a temp file goes)
            raise self._refused(exc) from None
        self._recovered = True

    def _refused(self, exc: OSError) -> Damaged:
        """A write the system refused, as one error line naming the folder of the file it names (or, for an error
        that names none, as a full disk gives, the grimoire's folder)."""
        folder = Path(exc.filename).parent if exc.filename else self.config.storage_dir
        return reading.unwritable(exc, self.config.relative(folder))

    def recover_if_needed(self) -> None:
        """Readers call this: a journal means a writer crashed mid-commit."""
        if journal.pending(self.cache):
            with self.lock(writing=False):  # finishing a crashed write, even when memory is off
                pass

    def new_file(self, category: str, archived: bool = False) -> bytes:
        """What a category's file holds when mem creates it: its header comment."""
        if archived:
            how = "Entries arrive here by `mem archive`"
        else:
            spec = self.config.categories.get(category)
            how = _ADD_WITH.get(spec.kind if spec is not None else "note", _ADD_WITH["note"]).format(category=category)
        return HEADER.format(category=f"archived {category}" if archived else category, how=how).encode("utf-8")

    def ensure_file(self, category: str, archived: bool = False) -> Path:
        """The category's file, its folder made: a missing file is written, its
        header comment first, by the commit of the first `write` to it."""
        path = self.category_path(category, archived)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            self._check_inside(path.parent)
        return path

    def write(
        self,
        path: Path,
        changes: Mapping[str, dict[str, Any] | None] | None = None,
        appended: list[dict[str, Any]] | None = None,
    ) -> list[tuple[int, int]]:
        """Stage one file's new text: entries rewritten or removed (value None) by id,
        touching only their lines, then new entries appended as text. Returns the
        appended entries' line spans. Lands on `commit` (the end of `lock`)."""
        from .textedit import splice

        changes = changes or {}
        rel, raw, digest = self._current(path)
        old = {
            row.data.get("id"): row.data
            for row in self.catalog.by_ids(list(changes))
            if row.path == rel and isinstance(row.data, dict)
        }
        data, change = splice(
            raw, self.catalog.layout(rel), {k: old[k] for k in changes if k in old}, changes, appended or [], where=rel
        )
        self._staged[path] = _Staged(rel, digest, data, change)
        return [new.span for new in change.appended]

    def commit(self) -> None:
        """Land every staged file write together, then tell the catalog what changed."""
        staged, self._staged = self._staged, {}
        if not staged:
            return
        # Recorded before the files land: a commit that then fails only skips a number.
        issued.record(
            self.config.local_dir,
            [
                cast(str, item.get("id"))
                for one in staged.values()
                for item in (*(new.item for new in one.change.appended), *one.change.changed.values())
                if isinstance(item, dict)
            ],
        )
        try:
            journal.replace_all(self.cache, {path: one.data for path, one in staged.items()})
        except OSError as exc:  # refused by the system (permissions, a full disk): nothing landed, or a journal the next command finishes
            raise self._refused(exc) from None
        # Next read re-checks the stamps: cheap, and right even where the catalog was told nothing.
        self._fresh.difference_update(one.rel for one in staged.values())
        for path, one in staged.items():
            self._record(path, one)

    def _current(self, path: Path) -> tuple[str, bytes, str]:
        """A file's relative path, bytes and content hash, its catalog rows
        checked to describe exactly those bytes (under the lock)."""
        from .chunks import content_hash

        rel = self.config.relative(path)
        if path in self._staged:
            raise RuntimeError(f"{rel} is written twice in one transaction")  # callers group by file
        file = next((f for f in self.files() if f.path == path), None)
        if file is None:  # callers write only the configured files
            raise ValueError(f"{rel} is not a configured grimoire file")
        # Not the catalog's retry policy: this loop is about the file being
        # edited by someone else between our read and our check.
        for _ in range(REREADS):
            if rel not in self._fresh:
                self.damaged.pop(rel, None)
                self._retrying(lambda: self._sync_file(file, self.catalog.records().get(rel)), rows=False)
                self._fresh.add(rel)
            raw, stamp = self._read_stamped(path)
            known = self._retrying(lambda: self.catalog.records().get(rel), rows=False)
            if stamp is None:  # a new file: written with the rest, never alone (a crash would leave it)
                raw = self.new_file(file.category, file.archived)
                return rel, raw, content_hash(raw)
            # The splice plan comes from the catalog's rows: they must be the
            # rows of these very bytes. The same stamp says so without hashing.
            if known is not None and known.stamp == stamp:
                return rel, raw, known.digest
            digest = content_hash(raw)
            if known is not None and known.digest == digest:
                return rel, raw, digest
            self._fresh.discard(rel)  # edited by hand since it was checked: read it again
        keeps = "the file keeps changing while mem writes to it"
        raise Damaged(rel, 1, keeps, "retry when nothing else is editing it", "changing")

    def _record(self, path: Path, staged: _Staged) -> None:
        """Tell the catalog what a write changed; on trouble it re-reads the file later."""
        from .chunks import content_hash

        # The stamp recorded must be that of the bytes written: a program that
        # rewrites the file without mem's lock may have changed them already,
        # and rows kept under its stamp would describe bytes no longer there.
        # A stamp taken before the read and the same after it is the read's.
        try:
            before = Stamp.of(path.stat())
            raw, stamp = self._read_stamped(path)
        except (OSError, Damaged):
            return  # the next read finds the file as it is
        if stamp != before or raw != staged.data:
            return
        try:
            self.catalog.apply_write(
                staged.rel,
                staged.before,
                stamp,
                content_hash(staged.data),
                staged.rel in self._archive_paths(),
                staged.change,
            )
        except Stale:
            self._fresh.clear()
