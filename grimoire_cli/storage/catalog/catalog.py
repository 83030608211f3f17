"""The catalog: a derived SQLite copy of the grimoire files, never the source of truth.

Per file it keeps a stamp (size, mtime_ns, inode, ctime_ns) and a content hash; per
entry its position and line span, the fields reads filter and rank on, the
stored mapping as JSON, an FTS5 row for search, and its words (for typo
correction). The store answers reads from here after checking each file's
stamp, so an unchanged grimoire is answered without parsing YAML; a changed
file (hand edit, `git pull`) is re-parsed alone.

It also keeps what reading does (access counts): bookkeeping that must
never dirty a tracked file.

Its parts: `schema` (the tables), `connection` (opening, the in-memory
fallback), `indexer` (writes), `queries` (reads), `rows` (the named rows);
here they come together: `Catalog` is the indexer and the queries over
one connection, plus the results `mem validate` keeps (a cache of a cache:
losing them only costs a re-check).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .executions import Executions
from .indexer import Indexer
from .learned import LogReads
from .queries import Filter, Queries
from .rows import texts


class Catalog(Indexer, Queries, Executions, LogReads):
    """One grimoire's catalog (see the module's docstring)."""

    # -- results kept by `mem validate` ----------------------------------------

    def report(self, path: str, key: str) -> Any | None:
        """The validation result kept for a file, if it was made under `key`."""
        row = self.read("SELECT value FROM reports WHERE path=? AND key=?", (path, key))
        return json.loads(row[0][0]) if row else None

    def keep_report(self, path: str, key: str, value: Any) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO reports VALUES (?, ?, ?)", (path, key, json.dumps(value)))

    def chunk_reports(self, path: str, version: str) -> dict[bytes, Any]:
        """The results kept for a file's entries, by chunk hash, if made under `version`."""
        from ..chunks import content_hash

        rows = self.read(
            "SELECT chunk, value FROM checks WHERE path=? AND version=?", (path, content_hash(version.encode()))
        )
        return {chunk: json.loads(value) for chunk, value in rows}

    def keep_chunk_reports(self, path: str, version: str, rows: list[tuple[bytes, Any]]) -> None:
        """Replace a file's kept results by these (chunk hash, result) pairs."""
        from ..chunks import content_hash

        tag = content_hash(version.encode())
        with self.transaction() as db:
            db.execute("DELETE FROM checks WHERE path=?", (path,))
            db.executemany(
                "INSERT OR REPLACE INTO checks VALUES (?, ?, ?, ?)",
                [(path, chunk, tag, json.dumps(value)) for chunk, value in rows],
            )

    # -- what `mem review`'s near-duplicate pairs are computed from ---------------

    def spread(self, paths: list[str], chosen: Filter) -> list[tuple[str, str, int, int, str]]:
        """(category, path, how many, the first one's place in the file, their
        rows' numbers summed up) of the chosen entries."""
        where, params = self._where(paths, chosen)
        return self.read(
            f"SELECT e.category, e.path, count(*), min(s.idx), min(e.rowid) || ' ' || max(e.rowid) || ' ' || sum(e.rowid) "
            f"FROM ranks AS e JOIN spans AS s ON s.rowid = e.rowid WHERE {where} GROUP BY 1, 2",
            params,
        )

    def placed(self, paths: list[str], chosen: Filter) -> list[tuple[int, str, int, str]]:
        """(rowid, path, place in its file, id) of the chosen entries."""
        where, params = self._where(paths, chosen)
        return self.read(
            f"SELECT e.rowid, e.path, s.idx, coalesce(e.id, '') FROM ranks AS e JOIN spans AS s ON s.rowid = e.rowid WHERE {where}",
            params,
        )

    def file_hashes(self, paths: list[str]) -> dict[str, str]:
        """The content hash the catalog holds for each of these files."""
        marks = ", ".join("?" * len(paths))
        return dict(self.read(f"SELECT path, hash FROM files WHERE path IN ({marks})", paths)) if paths else {}

    def norms(self, rowids: list[int]) -> dict[int, str | None]:
        """The normalized content of these rows (`model.normalize_text`)."""
        out: dict[int, str | None] = {}
        for start in range(0, len(rowids), 500):
            part = rowids[start : start + 500]
            out.update(
                self.read(f"SELECT rowid, norm FROM entries WHERE rowid IN ({', '.join('?' * len(part))})", part)
            )
        return out

    # -- what reads did (derived state, kept here and nowhere else) --------------

    def record_access(self, entry_id: str, at: float) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO accesses VALUES (?, 1, ?) ON CONFLICT(id) DO UPDATE SET count = count + 1, last = excluded.last",
                (entry_id, at),
            )

    def accesses(self, ids: list[str]) -> dict[str, tuple[int, float]]:
        """(count, last access as POSIX time) by id, for the ids read at least once."""
        out: dict[str, tuple[int, float]] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = self.read(
                f"SELECT id, count, last FROM accesses WHERE id IN ({', '.join('?' * len(part))})", tuple(part)
            )
            out.update((entry_id, (count, last)) for entry_id, count, last in rows)
        return out

    def access_totals(self) -> tuple[int, int]:
        """(entries read at least once, reads in all)."""
        row = self.read("SELECT count(*), coalesce(sum(count), 0) FROM accesses", ())
        return int(row[0][0]), int(row[0][1])

    def record_cache(self, category: str, hit: bool) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO cache_counts VALUES (?, ?, ?) ON CONFLICT(category) DO UPDATE SET "
                "hits = hits + excluded.hits, misses = misses + excluded.misses",
                (category, int(hit), int(not hit)),
            )

    def cache_counts(self) -> dict[str, tuple[int, int]]:
        """(hits, misses) by category."""
        rows = self.read("SELECT category, hits, misses FROM cache_counts ORDER BY category", ())
        return {category: (int(hits), int(misses)) for category, hits, misses in rows}

    # -- the semantic extra's vectors (retrieval/semantic.py) --------------------

    def vectors(
        self, paths: list[str], chosen: Filter, model: str, embed: Callable[[list[str]], list[bytes]]
    ) -> list[tuple[int, str, bytes]]:
        """(rowid, id, vector) of the chosen entries, by `model`. Entries of
        these files without a vector are embedded first (`embed`: texts to
        float32 bytes); every vector of another model is dropped."""
        named = {f"path{i}": path for i, path in enumerate(paths)}
        inside = f"e.path IN ({', '.join(':' + k for k in named)})" if named else "0"
        missing = f"SELECT e.rowid, e.data FROM entries AS e WHERE e.mapping = 1 AND {inside} AND e.rowid NOT IN (SELECT rowid FROM vectors)"
        kept = self.read("SELECT value FROM meta WHERE key='vectors_model'")
        if not kept or kept[0][0] != model or self.read(missing + " LIMIT 1", named):
            # Under the write lock: a row deleted or re-indexed meanwhile never keeps a vector of its old text.
            with self.transaction() as db:
                if db.execute("SELECT value FROM meta WHERE key='vectors_model'").fetchone() != (model,):
                    db.execute("DELETE FROM vectors")
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('vectors_model', ?)", (model,))
                rows = db.execute(missing, named).fetchall()
                if rows:
                    made = embed([passage(json.loads(data)) for _, data in rows])
                    db.executemany("INSERT INTO vectors VALUES (?, ?)", zip((rowid for rowid, _ in rows), made))
        where, params = self._where(paths, chosen)
        return self.read(
            f"SELECT e.rowid, e.id, v.vector FROM ranks AS e JOIN vectors AS v ON v.rowid = e.rowid WHERE {where}",
            params,
        )


def passage(item: Any) -> str:
    """What a vector is made of: an entry's summary and content as indexed (`rows.texts`)."""
    summary, content, _, _ = texts(item)
    return "\n".join(part for part in (summary, content) if part)
