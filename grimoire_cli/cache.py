"""A derived SQLite cache of parsed grimoire files (never the source of truth).

Per file it keeps the stat (size, mtime_ns), a content hash, every entry as
JSON and each entry's line span. A file whose size and mtime match is
answered from here without parsing YAML; one whose stat changed but whose
hash did not is re-stamped; anything else is re-parsed by the caller.

Any trouble with the database (missing, corrupt, read-only, locked too long)
turns the cache off for this process: answers come from the files instead.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

SCHEMA_VERSION = "1"

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, hash TEXT);
CREATE TABLE IF NOT EXISTS entries (
    path TEXT, idx INTEGER, id TEXT, start INTEGER, stop INTEGER, data TEXT,
    PRIMARY KEY (path, idx)
);
"""


def content_hash(data: bytes) -> str:
    import hashlib

    return hashlib.blake2b(data, digest_size=16).hexdigest()


class Cache:
    def __init__(self, folder: Path):
        self.folder = folder
        self._db: sqlite3.Connection | None = None
        self._broken = False

    # -- connection ----------------------------------------------------------

    def _connect(self) -> sqlite3.Connection | None:
        if self._db is not None or self._broken:
            return self._db
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# derived cache of mem: never commit\n*\n")
            db = sqlite3.connect(self.folder / "index.sqlite3", timeout=5, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_DDL)
            row = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
            if row is None or row[0] != SCHEMA_VERSION:
                db.executescript("DELETE FROM files; DELETE FROM entries;")
                db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (SCHEMA_VERSION,))
            self._db = db
        except (sqlite3.Error, OSError):
            self._discard_corrupt()
        return self._db

    def _discard_corrupt(self) -> None:
        """A corrupt cache is deleted (best effort) and not used this run."""
        self._broken = True
        self._db = None
        db_path = self.folder / "index.sqlite3"
        try:
            if db_path.exists():
                with open(db_path, "rb") as handle:
                    head = handle.read(16)
                if head and head != b"SQLite format 3\x00":
                    db_path.unlink()
        except OSError:
            pass

    def _fail(self) -> None:
        self._broken = True
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
        self._db = None

    # -- per-file records ----------------------------------------------------

    def lookup(self, key: str, stat: os.stat_result, read_bytes) -> tuple[list[Any], list[tuple[int, int]]] | None:
        """Cached (entries, spans) when the file is unchanged, else None."""
        db = self._connect()
        if db is None:
            return None
        try:
            row = db.execute("SELECT size, mtime_ns, hash FROM files WHERE path=?", (key,)).fetchone()
            if row is None:
                return None
            if (row[0], row[1]) != (stat.st_size, stat.st_mtime_ns):
                # Touched but maybe unchanged (checkout, copy): compare content.
                if row[0] != stat.st_size or content_hash(read_bytes()) != row[2]:
                    return None
                db.execute("UPDATE files SET mtime_ns=? WHERE path=?", (stat.st_mtime_ns, key))
            rows = db.execute("SELECT data, start, stop FROM entries WHERE path=? ORDER BY idx", (key,)).fetchall()
            return [json.loads(r[0]) for r in rows], [(r[1], r[2]) for r in rows]
        except (sqlite3.Error, ValueError):
            self._fail()
            return None

    def store(self, key: str, stat: os.stat_result, digest: str, entries: list[Any], spans: list[tuple[int, int]]) -> None:
        db = self._connect()
        if db is None:
            return
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM entries WHERE path=?", (key,))
            db.executemany(
                "INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (key, index, entry.get("id") if isinstance(entry, dict) else None, span[0], span[1], json.dumps(entry))
                    for index, (entry, span) in enumerate(zip(entries, spans))
                ],
            )
            db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", (key, stat.st_size, stat.st_mtime_ns, digest))
            db.execute("COMMIT")
        except (TypeError, ValueError):
            # Not JSON-able (e.g. a hand-written !!binary): just do not cache it.
            db.execute("ROLLBACK")
        except sqlite3.Error:
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            self._fail()

    def forget(self, key: str) -> None:
        db = self._connect()
        if db is None:
            return
        try:
            db.execute("DELETE FROM files WHERE path=?", (key,))
            db.execute("DELETE FROM entries WHERE path=?", (key,))
        except sqlite3.Error:
            self._fail()
