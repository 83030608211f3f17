"""The catalog: a derived SQLite copy of the grimoire files, never the source of truth.

Per file it keeps a stamp (size, mtime_ns, inode) and a content hash; per
entry its position and line span, the fields reads filter and rank on, the
stored mapping as JSON, an FTS5 row for search, and its words (for typo
correction). Reads answer from here after checking each file's stamp, so an
unchanged grimoire is answered without parsing YAML; a changed file (hand
edit, `git pull`) is re-parsed alone.

The catalog lives in `<storage_dir>/.cache/index.sqlite3`. If it cannot be
opened, is corrupt, read-only or locked too long, this process switches to
an in-memory catalog built from the files: the answer is the same, only
slower. Rows of a file are trusted only while the file's stamp (or hash)
matches the one stored in the same transaction as the rows.
"""

from __future__ import annotations

import gc
import json
import sqlite3
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple

from .chunks import data_hash
from .model import Entry, epoch, normalize_text, parse_id, state_of

SCHEMA_VERSION = "15"

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, ino INTEGER, hash TEXT);
CREATE TABLE IF NOT EXISTS entries (
    rowid INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    mapping INTEGER, archived INTEGER, id TEXT, category TEXT, key TEXT,
    confidence REAL, importance INTEGER, tier TEXT, born REAL, expires REAL,
    superseded_by TEXT, tags TEXT, seq INTEGER, norm TEXT, nlen INTEGER, data TEXT
);
CREATE INDEX IF NOT EXISTS entries_path ON entries(path);
-- Where each entry sits in its file, kept apart and narrow: an edit that
-- adds a line (a supersede) moves every entry after it, measured 5 ms of
-- row updates at 2,000 entries a file when these columns lived in entries,
-- plus the wide pages it wrote to the WAL. `offset` is the byte where the
-- entry's first line starts, `chunk` the hash of its text (chunks.py),
-- NULL when not known.
CREATE TABLE IF NOT EXISTS spans (
    rowid INTEGER PRIMARY KEY, path TEXT NOT NULL, idx INTEGER NOT NULL, start INTEGER, stop INTEGER, offset INTEGER, id TEXT, chunk BLOB
);
CREATE INDEX IF NOT EXISTS spans_path ON spans(path, idx);
CREATE INDEX IF NOT EXISTS entries_id ON entries(id);
-- Duplicate checks read one category's entries (measured 22 -> 5 ms at 10k),
-- one new entry's only those of a length that could be 90 % alike.
CREATE INDEX IF NOT EXISTS entries_category ON entries(category, nlen);
-- The filter and order columns again, narrow (~100 bytes a row against ~1.4 KB
-- with the JSON): ranking joins every match, often most rows, and listing and
-- `context` sort all active ones; they read far fewer pages here. Triggers
-- keep it equal to entries; span moves do not touch it.
CREATE TABLE IF NOT EXISTS ranks (
    rowid INTEGER PRIMARY KEY, path TEXT, mapping INTEGER, archived INTEGER, id TEXT, category TEXT, key TEXT,
    confidence REAL, importance INTEGER, tier TEXT, born REAL, expires REAL, superseded_by TEXT, tags TEXT, seq INTEGER
);
CREATE TRIGGER IF NOT EXISTS ranks_insert AFTER INSERT ON entries BEGIN
    INSERT INTO ranks VALUES (new.rowid, new.path, new.mapping, new.archived, new.id, new.category, new.key,
                              new.confidence, new.importance, new.tier, new.born, new.expires, new.superseded_by, new.tags, new.seq);
END;
CREATE TRIGGER IF NOT EXISTS ranks_delete AFTER DELETE ON entries BEGIN
    DELETE FROM ranks WHERE rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS ranks_update AFTER UPDATE OF path, mapping, archived, id, category, key, confidence, importance, tier,
    born, expires, superseded_by, tags, seq ON entries BEGIN
    UPDATE ranks SET path = new.path, mapping = new.mapping, archived = new.archived, id = new.id, category = new.category,
        key = new.key, confidence = new.confidence, importance = new.importance, tier = new.tier, born = new.born,
        expires = new.expires, superseded_by = new.superseded_by, tags = new.tags, seq = new.seq WHERE rowid = new.rowid;
END;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(summary, content, tags, tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS words (word TEXT, path TEXT, n INTEGER, PRIMARY KEY (word, path)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS reports (path TEXT PRIMARY KEY, key TEXT, value TEXT);
-- `mem validate`'s result for each entry's text (chunk hash) under the rules' version.
CREATE TABLE IF NOT EXISTS checks (path TEXT, chunk BLOB, version TEXT, value TEXT, PRIMARY KEY (path, chunk)) WITHOUT ROWID;
"""

# Columns a light row carries (no JSON decoding needed to filter or rank).
LIGHT = "rowid, id, category, confidence, importance, tier, born, expires, superseded_by, archived, tags, key"


def content_hash(data: bytes) -> str:
    """A file's hash, as text: the chunk hash (chunks.data_hash) of all of it."""
    return data_hash(data).hex()


class Stamp(NamedTuple):
    """What `stat` says of a file; equal stamps mean the file was not rewritten."""

    size: int
    mtime_ns: int
    ino: int

    @classmethod
    def of(cls, stat) -> "Stamp":
        return cls(stat.st_size, stat.st_mtime_ns, stat.st_ino)


class Light:
    """The filter and rank fields of one entry, read without its JSON.

    A plain class with slots: `mem query` builds none, `mem add` a few
    thousand, and a dataclass costs more to define than it saves here.
    """

    __slots__ = ("rowid", "id", "category", "confidence", "importance", "tier", "born", "expires",
                 "superseded_by", "archived", "tag_text", "key")

    def __init__(self, rowid: int, id: str, category: str, confidence: float, importance: int, tier: str,
                 born: float | None, expires: float | None, superseded_by: str | None, archived: bool, tag_text: str,
                 key: str | None):
        self.rowid, self.id, self.category, self.confidence = rowid, id, category, confidence
        self.importance, self.tier, self.born, self.expires = importance, tier, born, expires
        self.superseded_by, self.archived, self.tag_text, self.key = superseded_by, archived, tag_text, key

    @property
    def tags(self) -> list[str]:
        return [t for t in self.tag_text.split(TAG_SEPARATOR) if t]

    def state(self, epoch: float) -> str:
        return state_of(self, epoch)

    def is_expired(self, moment: datetime) -> bool:
        return self.expires is not None and self.expires <= moment.timestamp()

    def is_active(self, moment: datetime) -> bool:
        return state_of(self, moment.timestamp()) == "active"


def _light(row: tuple) -> Light:
    return Light(row[0], row[1] or "", row[2] or "", row[3], row[4], row[5], row[6], row[7], row[8], bool(row[9]), row[10], row[11])


# Tags are kept as one string, each tag between separators, so a tag filter
# is an `instr` in SQL (no JSON1 needed from the platform's SQLite).
TAG_SEPARATOR = "\x1f"


def _number(read: Callable[[], Any], default: Any) -> Any:
    try:
        return read()
    except (TypeError, ValueError):
        return default


def search_words(text: str) -> list[str]:
    from .search import words

    return words(text)


def derive(item: Any, archived_file: bool) -> tuple:
    """(mapping, archived, id, category, key, confidence, importance, tier, born, expires, superseded_by, tags, seq, norm, nlen)."""
    if not isinstance(item, dict):
        return (0, int(archived_file), None, None, None, 0.0, 5, "unrated", None, None, None, "", 0, None, None)
    norm = normalize_text(item["content"]) if isinstance(item.get("content"), str) else None
    entry = Entry(item, archived_file=archived_file)
    tags = [t for t in (item.get("tags") or []) if isinstance(t, str)] if isinstance(item.get("tags"), list) else []
    return (
        1,
        int(entry.archived),
        str(item.get("id") or ""),
        str(item.get("category") or ""),
        item.get("key") if isinstance(item.get("key"), str) else None,
        _number(lambda: entry.confidence, 0.0),
        _number(lambda: entry.importance, 5),
        _number(lambda: entry.tier, "unrated"),
        epoch(entry.timestamp if isinstance(item.get("source"), dict) else None),
        entry.expires,
        item.get("superseded_by") if isinstance(item.get("superseded_by"), str) and item.get("superseded_by") else None,
        TAG_SEPARATOR + TAG_SEPARATOR.join(tags) + TAG_SEPARATOR if tags else "",
        (parse_id(item["id"]) or ("", 0))[1] if isinstance(item.get("id"), str) else 0,
        norm,
        len(norm) if norm is not None else None,
    )


def _texts(item: Any) -> tuple[str, str, str]:
    """(summary, content, tags) as indexed for search."""
    if not isinstance(item, dict):
        return "", "", ""
    summary = item.get("summary") if isinstance(item.get("summary"), str) else ""
    content = item.get("content") if isinstance(item.get("content"), str) else ""
    tags = item.get("tags") if isinstance(item.get("tags"), list) else []
    return summary, content if content != summary else "", " ".join(t for t in tags if isinstance(t, str))


def _word_set(item: Any) -> set[str]:
    if not isinstance(item, dict):
        return set()
    summary, content, _ = _texts(item)
    out = set(search_words(summary)) | set(search_words(content))
    out.update(t for t in (item.get("tags") or []) if isinstance(t, str)) if isinstance(item.get("tags"), list) else None
    return out


class Catalog:
    def __init__(self, folder: Path):
        self.folder = folder
        self._db: sqlite3.Connection | None = None
        self.in_memory = False

    # -- connection ----------------------------------------------------------

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
        self.folder.mkdir(parents=True, exist_ok=True)
        ignore = self.folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# derived cache of mem: never commit\n*\n")
        db = sqlite3.connect(self.folder / "index.sqlite3", timeout=5, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            # Checked and (re)created under the write lock, so two processes
            # starting on an empty cache never drop each other's tables. This
            # also proves the database writable before anything relies on it.
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
            except sqlite3.OperationalError:
                row = None
            if row is None or row[0] != SCHEMA_VERSION:
                for table in ("meta", "files", "entries", "spans", "ranks", "fts", "words", "reports", "checks"):
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in _statements(_DDL):
                    db.execute(statement)  # not executescript: it would commit, ending the lock
                db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (SCHEMA_VERSION,))
            db.execute("COMMIT")
        except BaseException:
            db.close()
            raise
        return db

    def _use_memory(self) -> None:
        db = sqlite3.connect(":memory:", isolation_level=None)
        db.executescript(_DDL)
        db.execute("INSERT INTO meta VALUES ('version', ?)", (SCHEMA_VERSION,))
        self._db = db
        self.in_memory = True

    def _discard_corrupt(self) -> None:
        """A file that is not SQLite is deleted (best effort); others are left alone."""
        path = self.folder / "index.sqlite3"
        try:
            with open(path, "rb") as handle:
                head = handle.read(16)
            if head and head != b"SQLite format 3\x00":
                path.unlink()
        except OSError:
            pass

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; a database failure moves this process to memory.

        Raises `Stale` after switching, so the caller re-syncs from the files.
        """
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
            yield db
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

    def _drop_to_memory(self) -> None:
        self._has_functions = False
        self._has_pow = None
        try:
            if self._db is not None:
                self._db.close()
        except sqlite3.Error:
            pass
        self._use_memory()

    def read(self, sql: str, params: Any = ()) -> list[tuple]:
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

    # -- files ---------------------------------------------------------------

    def records(self) -> dict[str, tuple[Stamp, str]]:
        return {path: (Stamp(size, mtime, ino), digest) for path, size, mtime, ino, digest in self.read("SELECT path, size, mtime_ns, ino, hash FROM files")}

    def restamp(self, path: str, stamp: Stamp) -> None:
        with self.transaction() as db:
            db.execute("UPDATE files SET size=?, mtime_ns=?, ino=? WHERE path=?", (stamp.size, stamp.mtime_ns, stamp.ino, path))

    def chunk_counts(self, path: str) -> dict[bytes, int]:
        """How many rows of a file each chunk hash has."""
        return dict(self.read("SELECT chunk, count(*) FROM spans WHERE path=? AND chunk IS NOT NULL GROUP BY chunk", (path,)))

    def replace_file(self, path: str, stamp: Stamp, digest: str, placed: list[tuple[Any, tuple[int, int], bytes, int]], archived: bool) -> None:
        """All rows of one file, from a fresh read: (item, span, chunk hash, byte
        offset) in order; an item is `chunks.KNOWN` if a row with its chunk exists."""
        from .chunks import KNOWN

        with self.transaction() as db:
            row = db.execute("SELECT hash FROM files WHERE path=?", (path,)).fetchone()
            if row is not None and row[0] == digest:
                # Another process parsed the same bytes meanwhile: keep its rows
                # (and their row numbers, which readers may be holding).
                db.execute("UPDATE files SET size=?, mtime_ns=?, ino=? WHERE path=?", (stamp.size, stamp.mtime_ns, stamp.ino, path))
                return
            # Rows whose chunk is unchanged are kept (moved if their lines
            # moved), then rows whose entry is unchanged: a hand edit of one
            # entry re-indexes that entry only.
            by_chunk: dict[bytes | None, list[tuple]] = {}
            for old in db.execute("SELECT rowid, idx, start, stop, chunk, offset FROM spans WHERE path=? ORDER BY idx", (path,)):
                by_chunk.setdefault(old[4], []).append(old)
            reused: dict[int, tuple] = {}  # position -> old row
            for position, (item, _, chunk, _) in enumerate(placed):
                same = by_chunk.get(chunk)
                if same:
                    reused[position] = same.pop(0)
                elif item is KNOWN:
                    # The rows changed since the caller counted them: read again.
                    self._delete_file(db, path)
                    raise Stale()
            left = {old[0]: old for rows in by_chunk.values() for old in rows}
            if left and len(reused) < len(placed):
                by_data: dict[str, list[tuple]] = {}
                for rowid, data in db.execute(f"SELECT e.rowid, e.data FROM entries e JOIN spans s ON s.rowid = e.rowid "
                                              f"WHERE e.rowid IN ({', '.join(map(str, left))}) ORDER BY s.idx"):
                    by_data.setdefault(data, []).append(left[rowid])
                for position, (item, _, _, _) in enumerate(placed):
                    same = by_data.get(_json(item)) if position not in reused else None
                    if same:
                        reused[position] = same.pop(0)
                        del left[reused[position][0]]
            moved = []
            fresh = []
            for position, (item, span, chunk, offset) in enumerate(placed):
                old = reused.get(position)
                if old is None:
                    fresh.append((position, item, span, chunk, offset))
                elif (old[1], old[2], old[3], old[4], old[5]) != (position, span[0], span[1], chunk, offset):
                    moved.append((position, span[0], span[1], chunk, offset, old[0]))
            if left:
                marks = ", ".join(map(str, left))
                self._count_words(db, path, [_word_set(json.loads(data)) for (data,) in db.execute(f"SELECT data FROM entries WHERE rowid IN ({marks})")], -1)
                for table in ("fts", "entries", "spans"):
                    db.execute(f"DELETE FROM {table} WHERE rowid IN ({marks})")
            db.executemany("UPDATE spans SET idx=?, start=?, stop=?, chunk=?, offset=? WHERE rowid=?", moved)
            self._insert(db, path, fresh, archived)
            db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)", (path, stamp.size, stamp.mtime_ns, stamp.ino, digest))

    def forget(self, paths: Iterable[str]) -> None:
        with self.transaction() as db:
            for path in paths:
                self._delete_file(db, path)

    def _delete_file(self, db: sqlite3.Connection, path: str) -> None:
        db.execute("DELETE FROM fts WHERE rowid IN (SELECT rowid FROM entries WHERE path=?)", (path,))
        db.execute("DELETE FROM entries WHERE path=?", (path,))
        db.execute("DELETE FROM spans WHERE path=?", (path,))
        db.execute("DELETE FROM words WHERE path=?", (path,))
        db.execute("DELETE FROM files WHERE path=?", (path,))

    def _insert(self, db: sqlite3.Connection, path: str, placed: list[tuple[int, Any, tuple[int, int], bytes | None, int]], archived: bool) -> None:
        """Rows for (position, item, span, chunk hash, byte offset) of new items."""
        if not placed:
            return
        items = [placed_item[1] for placed_item in placed]
        enabled = gc.isenabled()
        gc.disable()  # bulk loads allocate many small objects and no cycles
        try:
            rows = []
            for item in items:
                data = _json(item)
                rows.append((path, *derive(item if data != "null" else None, archived), data))
            cursor = db.cursor()
            ids = []
            for row in rows:
                cursor.execute(f"INSERT INTO entries (path, {_DERIVED}, data) VALUES ({', '.join('?' * 17)})", row)
                ids.append(cursor.lastrowid)
            db.executemany("INSERT INTO spans VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           [(rowid, path, position, span[0], span[1], offset, row[3], chunk)
                            for rowid, row, (position, _, span, chunk, offset) in zip(ids, rows, placed)])
            db.executemany("INSERT INTO fts(rowid, summary, content, tags) VALUES (?, ?, ?, ?)", [(rowid, *_texts(item)) for rowid, item in zip(ids, items)])
            self._count_words(db, path, [_word_set(item) for item in items], +1)
        finally:
            if enabled:
                gc.enable()

    def _count_words(self, db: sqlite3.Connection, path: str, sets: list[set[str]], sign: int) -> None:
        counts: dict[str, int] = {}
        for found in sets:
            for word in found:
                counts[word] = counts.get(word, 0) + 1
        if not counts:
            return
        db.executemany(
            "INSERT INTO words VALUES (?, ?, ?) ON CONFLICT(word, path) DO UPDATE SET n = n + excluded.n",
            [(word, path, sign * n) for word, n in counts.items()],
        )
        if sign < 0:
            db.execute("DELETE FROM words WHERE path=? AND n <= 0", (path,))

    # -- incremental updates by a writer that holds the grimoire lock --------

    def apply_write(self, path: str, before: str, stamp: Stamp, digest: str, archived: bool,
                    appended: list[tuple[Any, tuple[int, int], int]] = (), changed: dict[int, Any] | None = None,
                    removed: Iterable[int] = (), spans: list[tuple[int, int]] | None = None,
                    offsets: list[int] | None = None, chunks: dict[int, bytes] | None = None) -> None:
        """Bring one file's rows from hash `before` to `digest` without re-parsing.

        `changed` maps row position to new data, `removed` lists positions
        gone, `spans` and `offsets` (given together) the new span and byte
        offset of every remaining row in order, `appended` (item, span, offset) of new rows,
        `chunks` the new chunk hash of each row (by new position, appended
        rows after the others) whose chunk text the write changed.
        When the rows are not those of `before` (another process re-parsed
        meanwhile), the file is forgotten and re-parsed on the next read.
        """
        with self.transaction() as db:
            row = db.execute("SELECT hash FROM files WHERE path=?", (path,)).fetchone()
            if row is None or row[0] != before:
                if row is None or row[0] != digest:
                    self._delete_file(db, path)
                return
            current = db.execute("SELECT rowid, idx, start, stop, offset FROM spans WHERE path=? ORDER BY idx", (path,)).fetchall()
            gone = set(removed)
            for position, item in (changed or {}).items():
                rowid = current[position][0]
                old = json.loads(db.execute("SELECT data FROM entries WHERE rowid=?", (rowid,)).fetchone()[0])
                db.execute(f"UPDATE entries SET ({_DERIVED}, data) = ({', '.join('?' * 16)}) WHERE rowid=?", (*derive(item, archived), json.dumps(item), rowid))
                if _texts(old) != _texts(item) or _word_set(old) != _word_set(item):
                    # Lifecycle edits (apply, supersede's old entry) leave the
                    # searched text alone, and with it the index and words.
                    self._count_words(db, path, [_word_set(old)], -1)
                    db.execute("DELETE FROM fts WHERE rowid=?", (rowid,))
                    db.execute("INSERT INTO fts(rowid, summary, content, tags) VALUES (?, ?, ?, ?)", (rowid, *_texts(item)))
                    self._count_words(db, path, [_word_set(item)], +1)
            for position in sorted(gone):
                rowid = current[position][0]
                old = db.execute("SELECT data FROM entries WHERE rowid=?", (rowid,)).fetchone()[0]
                self._count_words(db, path, [_word_set(json.loads(old))], -1)
                for table in ("fts", "entries", "spans"):
                    db.execute(f"DELETE FROM {table} WHERE rowid=?", (rowid,))
            kept = [row for position, row in enumerate(current) if position not in gone]
            if spans is not None:
                # Only rows whose place changed (an append moves none).
                places = zip(kept, spans, offsets)
                db.executemany("UPDATE spans SET idx=?, start=?, stop=?, offset=? WHERE rowid=?",
                               [(i, a, b, o, row[0]) for i, (row, (a, b), o) in enumerate(places) if (row[1], row[2], row[3], row[4]) != (i, a, b, o)])
            chunks = chunks or {}
            db.executemany("UPDATE spans SET chunk=? WHERE rowid=?", [(chunks[i], row[0]) for i, row in enumerate(kept) if i in chunks])
            first = len(kept)
            if appended:
                self._insert(db, path, [(first + i, item, span, chunks.get(first + i), offset) for i, (item, span, offset) in enumerate(appended)], archived)
            db.execute("UPDATE files SET size=?, mtime_ns=?, ino=?, hash=? WHERE path=?", (stamp.size, stamp.mtime_ns, stamp.ino, digest, path))

    # -- reads ---------------------------------------------------------------

    def file_rows(self, path: str) -> list[tuple[int, int, int, int, str | None]]:
        """(rowid, idx, start, stop, offset, id) of one file in order."""
        return self.read("SELECT rowid, idx, start, stop, offset, id FROM spans WHERE path=? ORDER BY idx", (path,))

    def lights(self, paths: list[str], where: str = "1", params: dict[str, Any] | None = None) -> list[Light]:
        inside, named = _paths_sql(paths)
        sql = f"SELECT {LIGHT} FROM ranks AS e WHERE mapping = 1 AND {inside} AND {where}"
        return [_light(row) for row in self.read(sql, {**named, **(params or {})})]

    def columns(self, paths: list[str], names: str, where: str, params: dict[str, Any]) -> list[tuple]:
        inside, named = _paths_sql(paths)
        return self.read(f"SELECT {names} FROM entries AS e WHERE mapping = 1 AND {inside} AND {where}", {**named, **params})

    def ordered(self, paths: list[str], where: str, params: dict[str, Any], order: str, limit: int | None = None) -> list[int]:
        """Rowids of the entries that pass `where`, in `order` (over `ranks` columns)."""
        inside, named = _paths_sql(paths)
        sql = f"SELECT rowid FROM ranks AS e WHERE mapping = 1 AND {inside} AND {where} ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [row[0] for row in self.read(sql, {**named, **params})]

    def count(self, paths: list[str], where: str, params: dict[str, Any]) -> int:
        """How many entries pass `where`."""
        inside, named = _paths_sql(paths)
        return self.read(f"SELECT count(*) FROM ranks AS e WHERE mapping = 1 AND {inside} AND {where}", {**named, **params})[0][0]

    def rank(self, paths: list[str], expression: str, weights: tuple[float, ...], where: str, params: dict[str, Any],
             epoch: float, recency_weight: float, tier_bonus: dict[str, float], limit: int | None) -> list[tuple]:
        """(rowid, id, bm25, relevance, recency, prior, score, number of matches) of matching entries, best first.

        The blend of `search` in SQL, so only the rows asked for leave SQLite.
        """
        self._functions()
        inside, named = _paths_sql(paths)
        weight_list = ", ".join(repr(float(w)) for w in weights)
        tiers = " ".join(f"WHEN {_quote(name)} THEN {bonus!r}" for name, bonus in tier_bonus.items())
        # The index drives the join (CROSS JOIN keeps that order), so bm25()
        # is computed only for the matches the filters keep.
        matches = f"""
            SELECT e.rowid AS rowid, e.id AS id, -bm25(fts, {weight_list}) AS b, {self._recency_sql()} AS rec,
                   0.1 * (e.confidence - 0.5) + 0.05 * (e.importance - 5) / 5 + (CASE e.tier {tiers} ELSE 0.0 END) AS pri
            FROM fts CROSS JOIN ranks AS e ON e.rowid = fts.rowid
            WHERE fts MATCH :match AND e.mapping = 1 AND {inside} AND {where}
        """
        sql = _ranking_sql(matches, MATERIALIZE)
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        try:
            return self.read(sql, {**named, **params, "w": recency_weight, "epoch": epoch, "match": expression})
        except sqlite3.OperationalError:
            return []  # an expression FTS5 cannot parse matches nothing

    def _recency_sql(self) -> str:
        """`search.recency_of` as SQL: the built-in pow() when this SQLite has it
        (it is C's pow, as Python's ** is), else the Python function."""
        if getattr(self, "_has_pow", None) is None:
            try:
                self.db.execute("SELECT pow(0.5, 2.0)").fetchone()
                self._has_pow = True
            except sqlite3.OperationalError:
                self._has_pow = False
        if self._has_pow:
            return "(CASE WHEN e.born IS NULL THEN 0.0 ELSE pow(0.5, max(0.0, (:epoch - e.born) / 86400.0) / 30.0) END)"
        return "grimoire_recency(e.born, :epoch)"

    def _functions(self) -> None:
        if not getattr(self, "_has_functions", False):
            from .search import recency_of

            self.db.create_function("grimoire_recency", 2, recency_of, deterministic=True)
            self._has_functions = True

    def load(self, rowids: list[int]) -> dict[int, tuple[str, int, Any]]:
        """rowid -> (path, start, data)."""
        out: dict[int, tuple[str, int, Any]] = {}
        for chunk in range(0, len(rowids), 500):
            part = rowids[chunk : chunk + 500]
            sql = f"SELECT e.rowid, e.path, s.start, e.data FROM entries e JOIN spans s ON s.rowid = e.rowid WHERE e.rowid IN ({', '.join('?' * len(part))})"
            for rowid, path, start, data in self.read(sql, part):
                out[rowid] = (path, start, json.loads(data))
        return out

    def file_data(self, path: str) -> list[tuple[int, Any]]:
        """(start, data) of every row of one file in order."""
        rows = self.read("SELECT s.start, e.data FROM spans s JOIN entries e ON e.rowid = s.rowid WHERE s.path=? ORDER BY s.idx", (path,))
        return [(start, json.loads(data)) for start, data in rows]

    def ids(self, paths: list[str], prefix: str | None = None) -> list[str]:
        marks = ", ".join("?" * len(paths))
        if prefix:
            # A range, not LIKE, so the id index is used; prefixes end in '-' and '.' follows it.
            assert prefix.endswith("-")
            # INDEXED BY: left alone, SQLite walks every row of the paths (measured 21 ms vs 0.4 ms at 10k).
            return [r[0] for r in self.read(f"SELECT id FROM entries INDEXED BY entries_id WHERE path IN ({marks}) AND id >= ? AND id < ?",
                                            [*paths, prefix, prefix[:-1] + "."])]
        return [r[0] for r in self.read(f"SELECT id FROM entries WHERE path IN ({marks}) AND id IS NOT NULL", paths)]

    def by_ids(self, ids: Iterable[str]) -> list[tuple[int, str, int, Any]]:
        """(rowid, path, start, data) of every row with one of these ids."""
        wanted = list(ids)
        out = []
        for chunk in range(0, len(wanted), 500):
            part = wanted[chunk : chunk + 500]
            sql = (f"SELECT e.rowid, e.path, s.start, e.data FROM entries e JOIN spans s ON s.rowid = e.rowid "
                   f"WHERE e.id IN ({', '.join('?' * len(part))}) ORDER BY e.path, s.idx")
            out.extend((rowid, path, start, json.loads(data)) for rowid, path, start, data in self.read(sql, part))
        return out

    def knows(self, word: str) -> bool:
        return bool(self.read("SELECT 1 FROM words WHERE word=? LIMIT 1", (word,)))

    def vocabulary(self) -> list[str]:
        return [r[0] for r in self.read("SELECT DISTINCT word FROM words ORDER BY word")]

    # -- cached reports ------------------------------------------------------

    def report(self, path: str, key: str) -> Any | None:
        """The validation result kept for a file, if it was made under `key`."""
        row = self.read("SELECT value FROM reports WHERE path=? AND key=?", (path, key))
        return json.loads(row[0][0]) if row else None

    def keep_report(self, path: str, key: str, value: Any) -> None:
        try:
            with self.transaction() as db:
                db.execute("INSERT OR REPLACE INTO reports VALUES (?, ?, ?)", (path, key, json.dumps(value)))
        except Stale:
            pass

    def chunk_reports(self, path: str, version: str) -> dict[bytes, Any]:
        """The results kept for a file's entries, by chunk hash, if made under `version`."""
        rows = self.read("SELECT chunk, value FROM checks WHERE path=? AND version=?", (path, content_hash(version.encode())))
        return {chunk: json.loads(value) for chunk, value in rows}

    def keep_chunk_reports(self, path: str, version: str, rows: list[tuple[bytes, Any]]) -> None:
        """Replace a file's kept results by these (chunk hash, result) pairs."""
        tag = content_hash(version.encode())
        try:
            with self.transaction() as db:
                db.execute("DELETE FROM checks WHERE path=?", (path,))
                db.executemany("INSERT OR REPLACE INTO checks VALUES (?, ?, ?, ?)", [(path, chunk, tag, json.dumps(value)) for chunk, value in rows])
        except Stale:
            pass


def _json(item: Any) -> str:
    """The stored form of an entry; "null" for what JSON cannot hold (a hand-written !!binary)."""
    try:
        return json.dumps(item)
    except (TypeError, ValueError):
        return "null"


# CTEs can be forced into a table from SQLite 3.35 (2021); older ones get
# the same answer through window functions.
MATERIALIZE = sqlite3.sqlite_version_info >= (3, 35)


def _ranking_sql(matches: str, materialize: bool) -> str:
    """Blend and order the scored `matches` (rowid, id, b, rec, pri).

    Materialized, the matches are scored once into a table, then read for
    their best bm25 and count, then for the order: measured 154 -> 111 ms at
    100k entries against window functions over the same rows (which buffer
    them and sort a second, wider copy).
    """
    if materialize:
        return f"""
            WITH m AS MATERIALIZED ({matches}), t AS (SELECT max(b) AS top, count(*) AS n FROM m)
            SELECT rowid, id, b, rel, rec, pri, (1 - :w) * rel + :w * rec + pri AS score, n FROM (
                SELECT m.rowid AS rowid, m.id AS id, m.b AS b, CASE WHEN t.top > 0 THEN m.b / t.top ELSE m.b END AS rel,
                       m.rec AS rec, m.pri AS pri, t.n AS n FROM m, t
            ) ORDER BY score DESC, id, rowid
        """
    return f"""
        SELECT rowid, id, b, rel, rec, pri, (1 - :w) * rel + :w * rec + pri AS score, n FROM (
            SELECT rowid, id, b, rec, pri, COUNT(*) OVER () AS n,
                   CASE WHEN MAX(b) OVER () > 0 THEN b / MAX(b) OVER () ELSE b END AS rel
            FROM ({matches})
        ) ORDER BY score DESC, id, rowid
    """


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _statements(script: str) -> list[str]:
    """A script's statements (trigger bodies hold semicolons of their own)."""
    out, buffer = [], ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \n;"):
                out.append(buffer.strip())
            buffer = ""
    return out


def _paths_sql(paths: list[str], column: str = "e.path") -> tuple[str, dict[str, Any]]:
    named = {f"path{i}": path for i, path in enumerate(paths)}
    return f"{column} IN ({', '.join(':' + k for k in named)})" if named else "0", named


def filter_sql(states: set[str], epoch: float, categories: Iterable[str] = (), tags: Iterable[str] = (),
               min_confidence: float | None = None, key: str | None = None) -> tuple[str, dict[str, Any]]:
    """An SQL condition (and its parameters) for the usual entry filters, on
    the columns of the table aliased `e` (ranks or entries: both have them)."""
    parts = [state_sql(states)]
    params: dict[str, Any] = {"now": epoch}
    wanted = sorted(set(categories))
    if wanted:
        params.update({f"cat{i}": c for i, c in enumerate(wanted)})
        parts.append(f"e.category IN ({', '.join(f':cat{i}' for i in range(len(wanted)))})")
    for i, tag in enumerate(sorted(set(tags))):
        params[f"tag{i}"] = TAG_SEPARATOR + tag + TAG_SEPARATOR
        parts.append(f"instr(e.tags, :tag{i}) > 0")
    if min_confidence is not None:
        params["floor"] = min_confidence
        parts.append("e.confidence >= :floor")
    if key is not None:
        params["key"] = key
        parts.append("e.key = :key")
    return " AND ".join(parts), params


def state_sql(states: set[str]) -> str:
    """An SQL condition true for entries in one of `states` at the POSIX time bound to :now."""
    parts = {
        "active": "(e.archived = 0 AND e.superseded_by IS NULL AND (e.expires IS NULL OR e.expires > :now))",
        "expired": "(e.archived = 0 AND e.superseded_by IS NULL AND e.expires IS NOT NULL AND e.expires <= :now)",
        "superseded": "(e.archived = 0 AND e.superseded_by IS NOT NULL)",
        "archived": "(e.archived = 1)",
    }
    return "(" + " OR ".join(parts[s] for s in sorted(states)) + ")" if states else "0"


_DERIVED = "mapping, archived, id, category, key, confidence, importance, tier, born, expires, superseded_by, tags, seq, norm, nlen"


class Stale(Exception):
    """The on-disk catalog failed mid-operation; the caller re-syncs from the files."""
