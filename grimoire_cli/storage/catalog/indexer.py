"""Writing the catalog: a file's rows from a fresh read, or brought forward
by what a write did, without parsing again.

Rows of a file are trusted only while the file's stamp (or hash) matches
the one stored in the same transaction as the rows.
"""

from __future__ import annotations

import gc
import json
import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..layout import FileChange, Stamp
from .connection import Connection, Stale, bump_epoch
from .rows import COLUMNS, Derived, Prepared, derive, prepare, stored, texts, word_counts, word_set

if TYPE_CHECKING:
    from ..chunks import Placed

_INSERT_ENTRY = (
    f"INSERT INTO entries (rowid, path, {COLUMNS}, data) VALUES ({', '.join('?' * (len(Derived._fields) + 3))})"
)
_UPDATE_ENTRY = f"UPDATE entries SET ({COLUMNS}, data) = ({', '.join('?' * (len(Derived._fields) + 1))}) WHERE rowid=?"
_INSERT_FTS = "INSERT INTO fts(rowid, summary, content, tags, aliases) VALUES (?, ?, ?, ?, ?)"
_SPAN = "rowid, idx, start, stop, chunk, offset"
_RANKS = "rowid, path, mapping, archived, id, category, key, name, confidence, importance, tier, born, expires, superseded_by, tags, seq"
_COPY_RANKS = f"INSERT INTO ranks ({_RANKS}) SELECT {_RANKS} FROM entries WHERE rowid BETWEEN ? AND ?"


class Record(NamedTuple):
    """What the catalog knows of one file: the stamp and hash of the bytes its rows describe."""

    stamp: Stamp
    digest: str


class _Span(NamedTuple):
    """A `spans` row, as replace_file reads it."""

    rowid: int
    idx: int
    start: int
    stop: int
    chunk: bytes | None
    offset: int | None


class _New(NamedTuple):
    """An item to insert rows for."""

    position: int
    item: Any
    span: tuple[int, int]
    digest: bytes | None
    offset: int | None
    prepared: Prepared | None = None  # its rows, when a worker computed them


class Indexer(Connection):
    """The catalog's writes."""

    # -- files ---------------------------------------------------------------

    def records(self) -> dict[str, Record]:
        """What the catalog holds of each file it has rows for."""
        return {
            path: Record(Stamp(size, mtime, ino, ctime), digest)
            for path, size, mtime, ino, ctime, digest in self.read(
                "SELECT path, size, mtime_ns, ino, ctime_ns, hash FROM files"
            )
        }

    def restamp(self, path: str, stamp: Stamp) -> None:
        with self.transaction() as db:
            db.execute("UPDATE files SET size=?, mtime_ns=?, ino=?, ctime_ns=? WHERE path=?", (*stamp, path))

    def chunk_counts(self, path: str) -> dict[bytes, int]:
        """How many rows of a file each chunk hash has."""
        return dict(
            self.read("SELECT chunk, count(*) FROM spans WHERE path=? AND chunk IS NOT NULL GROUP BY chunk", (path,))
        )

    def replace_file(
        self,
        path: str,
        stamp: Stamp,
        digest: str,
        placed: list[Placed],
        archived: bool,
        prepared: list[Prepared] | None = None,
        counts: dict[str, int] | None = None,
    ) -> None:
        """All rows of one file, from a fresh read of it, in order; an item is
        `chunks.KNOWN` if a row with its chunk exists. `prepared` and `counts`:
        each item's rows and all items' word counts, when workers computed them."""
        from ..chunks import KNOWN  # a file changed: chunks was loaded to read it

        with self.transaction() as db:
            row = db.execute("SELECT hash FROM files WHERE path=?", (path,)).fetchone()
            if row is not None and row[0] == digest:
                # Another process parsed the same bytes meanwhile: keep its rows
                # (and their row numbers, which readers may be holding).
                db.execute("UPDATE files SET size=?, mtime_ns=?, ino=?, ctime_ns=? WHERE path=?", (*stamp, path))
                return
            bump_epoch(db)
            # Rows whose chunk is unchanged are kept (moved if their lines
            # moved), then rows whose entry is unchanged: a hand edit of one
            # entry re-indexes that entry only.
            by_chunk: dict[bytes | None, list[_Span]] = {}
            for span in map(_Span._make, db.execute(f"SELECT {_SPAN} FROM spans WHERE path=? ORDER BY idx", (path,))):
                by_chunk.setdefault(span.chunk, []).append(span)
            reused: dict[int, _Span] = {}  # position -> old row
            for position, new in enumerate(placed):
                same = by_chunk.get(new.digest)
                if same:
                    reused[position] = same.pop(0)
                elif new.item is KNOWN:
                    # The rows changed since the caller counted them: read again.
                    self._delete_file(db, path)
                    raise Stale()
            left = {span.rowid: span for rows in by_chunk.values() for span in rows}
            if left and len(reused) < len(placed):
                by_data: dict[str, list[_Span]] = {}
                for rowid, data in db.execute(
                    f"SELECT e.rowid, e.data FROM entries e JOIN spans s ON s.rowid = e.rowid "
                    f"WHERE e.rowid IN ({', '.join(map(str, left))}) ORDER BY s.idx"
                ):
                    by_data.setdefault(data, []).append(left[rowid])
                for position, new in enumerate(placed):
                    same = by_data.get(stored(new.item)) if position not in reused else None
                    if same:
                        reused[position] = same.pop(0)
                        del left[reused[position].rowid]
            moved: list[tuple[Any, ...]] = []
            fresh: list[_New] = []
            for position, new in enumerate(placed):
                old = reused.get(position)
                start, stop = new.span
                if old is None:
                    fresh.append(
                        _New(
                            position,
                            new.item,
                            new.span,
                            new.digest,
                            new.offset,
                            prepared[position] if prepared else None,
                        )
                    )
                elif (old.idx, old.start, old.stop, old.chunk, old.offset) != (
                    position,
                    start,
                    stop,
                    new.digest,
                    new.offset,
                ):
                    moved.append((position, start, stop, new.digest, new.offset, old.rowid))
            if left:
                marks = ", ".join(map(str, left))
                self._count_words(
                    db,
                    path,
                    word_counts(
                        word_set(json.loads(data))
                        for (data,) in db.execute(f"SELECT data FROM entries WHERE rowid IN ({marks})")
                    ),
                    -1,
                )
                for table in ("fts", "entries", "spans"):
                    db.execute(f"DELETE FROM {table} WHERE rowid IN ({marks})")
            db.executemany("UPDATE spans SET idx=?, start=?, stop=?, chunk=?, offset=? WHERE rowid=?", moved)
            self._insert(db, path, fresh, archived, counts if len(fresh) == len(placed) else None)
            db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)", (path, *stamp, digest))

    def forget(self, paths: Iterable[str]) -> None:
        """Drop every row of these files (they are gone, or their rows must not answer)."""
        with self.transaction() as db:
            bump_epoch(db)
            for path in paths:
                self._delete_file(db, path)

    def _delete_file(self, db: sqlite3.Connection, path: str) -> None:
        db.execute("DELETE FROM fts WHERE rowid IN (SELECT rowid FROM entries WHERE path=?)", (path,))
        db.execute("DELETE FROM entries WHERE path=?", (path,))
        db.execute("DELETE FROM spans WHERE path=?", (path,))
        db.execute("DELETE FROM words WHERE path=?", (path,))
        db.execute("DELETE FROM files WHERE path=?", (path,))

    def _insert(
        self,
        db: sqlite3.Connection,
        path: str,
        placed: list[_New],
        archived: bool,
        counts: dict[str, int] | None = None,
    ) -> None:
        """Rows for new items (`counts`: their word counts, when a worker made them)."""
        if not placed:
            return
        enabled = gc.isenabled()
        gc.disable()  # bulk loads allocate many small objects and no cycles
        try:
            rows = [new.prepared or prepare(new.item, archived) for new in placed]
            # Numbered as SQLite would (the largest rowid + 1 each), in one executemany.
            first = db.execute("SELECT coalesce(max(rowid), 0) + 1 FROM entries").fetchone()[0]
            ids = range(first, first + len(rows))
            db.executemany(_INSERT_ENTRY, [(rowid, path, *row.derived, row.data) for rowid, row in zip(ids, rows)])
            db.execute(_COPY_RANKS, (ids[0], ids[-1]))
            db.executemany(
                "INSERT INTO spans VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (rowid, path, new.position, new.span[0], new.span[1], new.offset, row.derived.id, new.digest)
                    for rowid, row, new in zip(ids, rows, placed)
                ],
            )
            db.executemany(_INSERT_FTS, [(rowid, *row.texts) for rowid, row in zip(ids, rows)])
            if counts is None:
                counts = word_counts(word_set(new.item, row.texts) for new, row in zip(placed, rows))
            self._count_words(db, path, counts, +1)
        finally:
            if enabled:
                gc.enable()

    def _count_words(self, db: sqlite3.Connection, path: str, counts: dict[str, int], sign: int) -> None:
        if not counts:
            return
        db.executemany(
            "INSERT INTO words VALUES (?, ?, ?) ON CONFLICT(word, path) DO UPDATE SET n = n + excluded.n",
            [(word, path, sign * n) for word, n in counts.items()],
        )
        if sign < 0:
            db.execute("DELETE FROM words WHERE path=? AND n <= 0", (path,))

    # -- incremental updates by a writer that holds the grimoire lock --------

    def apply_write(
        self, path: str, before: str, stamp: Stamp, digest: str, archived: bool, change: FileChange
    ) -> None:
        """Bring one file's rows from hash `before` to `digest` without re-parsing,
        following what a text edit reports it did (`spans.FileChange`).

        When the rows are not those of `before` (another process re-parsed
        meanwhile), the file is forgotten and re-parsed on the next read.
        """
        with self.transaction() as db:
            bump_epoch(db)
            row = db.execute("SELECT hash FROM files WHERE path=?", (path,)).fetchone()
            if row is None and not (change.spans or change.removed or change.changed):
                # A file this write created (store.ensure_file), or one without items: no rows to follow.
                self._delete_file(db, path)
                db.execute("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)", (path, *stamp, before))
            elif row is None or row[0] != before:
                if row is None or row[0] != digest:
                    self._delete_file(db, path)
                return
            # Plain tuples (rowid, idx, start, stop, offset): a file can hold tens of thousands.
            current = db.execute(
                "SELECT rowid, idx, start, stop, offset FROM spans WHERE path=? ORDER BY idx", (path,)
            ).fetchall()
            gone = set(change.removed)
            # Word counts summed over every row, applied once: per row, each
            # removal scanned the file's words again (quadratic for an archive).
            taken: list[set[str]] = []
            given: list[set[str]] = []
            for position, item in change.changed.items():
                rowid = current[position][0]
                old = json.loads(db.execute("SELECT data FROM entries WHERE rowid=?", (rowid,)).fetchone()[0])
                derived = derive(item, archived)
                db.execute(_UPDATE_ENTRY, (*derived, json.dumps(item), rowid))
                if not isinstance(old, dict) or derived.id != old.get("id"):
                    # A renumbering (merge-fixup, local_ids): a file's layout names its entries by id.
                    db.execute("UPDATE spans SET id=? WHERE rowid=?", (derived.id, rowid))
                if texts(old) != texts(item) or word_set(old) != word_set(item):
                    # Lifecycle edits (apply, supersede's old entry) leave the
                    # searched text alone, and with it the index and words.
                    taken.append(word_set(old))
                    db.execute("DELETE FROM fts WHERE rowid=?", (rowid,))
                    db.execute(_INSERT_FTS, (rowid, *texts(item)))
                    db.execute("DELETE FROM vectors WHERE rowid=?", (rowid,))  # embedded again when next asked
                    given.append(word_set(item))
            for position in sorted(gone):
                rowid = current[position][0]
                old = db.execute("SELECT data FROM entries WHERE rowid=?", (rowid,)).fetchone()[0]
                taken.append(word_set(json.loads(old)))
                for table in ("fts", "entries", "spans"):
                    db.execute(f"DELETE FROM {table} WHERE rowid=?", (rowid,))
            self._count_words(db, path, word_counts(taken), -1)
            self._count_words(db, path, word_counts(given), +1)
            kept = [row for position, row in enumerate(current) if position not in gone]
            # Only rows whose place changed (an append moves none).
            db.executemany(
                "UPDATE spans SET idx=?, start=?, stop=?, offset=? WHERE rowid=?",
                [
                    (i, a, b, o, rowid)
                    for i, ((rowid, idx, start, stop, offset), (a, b), o) in enumerate(
                        zip(kept, change.spans, change.offsets)
                    )
                    if (idx, start, stop, offset) != (i, a, b, o)
                ],
            )
            chunks = change.chunks
            db.executemany(
                "UPDATE spans SET chunk=? WHERE rowid=?",
                [(chunks[i], row[0]) for i, row in enumerate(kept) if i in chunks],
            )
            first = len(kept)
            self._insert(
                db,
                path,
                [
                    _New(first + i, new.item, new.span, chunks.get(first + i), new.offset)
                    for i, new in enumerate(change.appended)
                ],
                archived,
            )
            db.execute(
                "UPDATE files SET size=?, mtime_ns=?, ino=?, ctime_ns=?, hash=? WHERE path=?", (*stamp, digest, path)
            )
