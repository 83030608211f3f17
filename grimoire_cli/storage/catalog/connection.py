"""The catalog's SQLite connection, and the fallback that keeps commands
working when the file cannot serve.

The catalog lives in `<storage_dir>/.cache/index.sqlite3`. If it cannot be
opened, is corrupt, read-only or locked too long, this process switches to
an in-memory catalog built from the files: the answer is the same, only
slower. A failure in the middle of an operation raises `Stale` after the
switch; the store runs the operation again (its one retry policy).

The reads of a store's `reading` block (a query) see one state of the
catalog (`hold`: a read transaction, which WAL lets other processes write
beside): rows one read hands out are the rows the next one finds, though
another process re-indexes a file in between. A write of this process's own
ends that snapshot and takes a new one after it; when another process
changed entries in the gap (the `epoch` in `meta` moved), `others_changes`
counts it, so the store never mixes rows of the two (storage/handed.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..journal import cache_folder
from . import schema

DB_FILE = "index.sqlite3"


class Stale(Exception):
    """The on-disk catalog failed mid-operation; the caller re-syncs from the files."""


class Connection:
    """A lazily opened catalog database, on disk or (after a failure) in memory."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._db: sqlite3.Connection | None = None
        self.in_memory = False
        self.switches = 0  # moves to memory after a failure: each numbers the rows afresh (storage/handed.py)
        self.others_changes = 0  # other processes' changes of entries seen across a write of its own (handed.py)
        self._held_epoch: int | None = None  # the entries' epoch of the snapshot reads see; None: none held
        self._has_functions = False
        self._has_pow: bool | None = None
        # Where the store keeps its local state (storage/aging.py's record of `mem age --older-than`); None: none.
        self.local_dir: Path | None = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                self._db = self._open_file()
            except (sqlite3.Error, OSError):
                self._discard_corrupt()
                self._use_memory()
        return self._db  # type: ignore[return-value]

    def _open_file(self) -> sqlite3.Connection:
        db = sqlite3.connect(cache_folder(self.folder) / DB_FILE, timeout=5, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            # Up to 64 MiB of pages, allocated only as used: a cold build of
            # 100k entries inserts into indexes far larger than the default 2 MiB.
            db.execute("PRAGMA cache_size=-65536")
            # Under the write lock, which also proves the database writable
            # before anything relies on it.
            db.execute("BEGIN IMMEDIATE")
            schema.create(db)
            db.execute("COMMIT")
        except BaseException:
            db.close()
            raise
        return db

    def _use_memory(self) -> None:
        db = sqlite3.connect(":memory:", isolation_level=None)
        for statement in schema.statements():
            db.execute(statement)  # no version row: only a catalog on disk is read for its version
        self._db = db
        self.in_memory = True

    def _discard_corrupt(self) -> None:
        """A file that is not SQLite is deleted (best effort); others are left alone."""
        path = self.folder / DB_FILE
        try:
            with open(path, "rb") as handle:
                head = handle.read(16)
            if head and head != b"SQLite format 3\x00":
                path.unlink()
        except OSError:
            pass

    def _drop_to_memory(self) -> None:
        self.switches += 1
        self._held_epoch = None
        self._has_functions = False
        self._has_pow = None
        try:
            if self._db is not None:
                self._db.close()
        except sqlite3.Error:
            pass
        self._use_memory()

    # -- one snapshot for a block of reads ------------------------------------

    def hold(self) -> None:
        """Read one state of the catalog from now on, until `release` (a read
        transaction; in memory there is no other writer)."""
        if self._held_epoch is not None:
            return
        db = self.db
        if self.in_memory:
            return
        try:
            db.execute("BEGIN")
            self._held_epoch = _epoch(db)  # the first read: the snapshot starts here
        except sqlite3.Error:
            self._drop_to_memory()
            raise Stale() from None

    def release(self) -> int | None:
        """End the snapshot reads see; the epoch it had (None: none held)."""
        held, self._held_epoch = self._held_epoch, None
        if held is not None:
            try:
                self.db.execute("COMMIT")  # a read transaction: nothing to write (not in memory: never held there)
            except sqlite3.Error:
                pass
        return held

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; a database failure moves this process to
        memory and raises `Stale`. A snapshot held is given up for it and
        taken again after it (`others_changes` counts another process's changes in between)."""
        held = self.release()
        seen = held
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
            seen = _epoch(db)
            if held is not None and seen != held:
                self.others_changes += 1
            yield db
            seen = _epoch(db)  # with this write's own changes (a COMMIT that fails moves to memory: not used)
            db.execute("COMMIT")
        except sqlite3.Error:
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if self.in_memory:
                raise
            self._drop_to_memory()
            raise Stale() from None
        except BaseException:
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise
        finally:
            if held is not None and not self.in_memory:
                self.hold()
                if self._held_epoch != seen:
                    self.others_changes += 1

    def read(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        """Rows of one query; a database failure moves this process to memory
        and raises `Stale` (an FTS5 expression it cannot parse is the caller's)."""
        try:
            return self.db.execute(sql, params if isinstance(params, dict) else tuple(params)).fetchall()
        except sqlite3.OperationalError as exc:
            if self.in_memory or "fts5" in str(exc) or "syntax" in str(exc):
                raise
            self._drop_to_memory()
            raise Stale() from None
        except sqlite3.DatabaseError:
            if self.in_memory:
                raise
            self._drop_to_memory()
            raise Stale() from None


def _epoch(db: sqlite3.Connection) -> int:
    """How many times entries' rows were changed (`bump_epoch`); a catalog
    without the count (another version rebuilt it) is one that cannot serve."""
    row = db.execute("SELECT value FROM meta WHERE key='epoch'").fetchone()
    if row is None:
        raise sqlite3.DatabaseError("the catalog keeps no epoch")
    return int(row[0])


def bump_epoch(db: sqlite3.Connection) -> None:
    """Inside a write that changes, adds or removes entries' rows: a reader holding rows learns of it."""
    db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='epoch'")
