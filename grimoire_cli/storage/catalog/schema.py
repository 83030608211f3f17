"""The catalog's tables, and creating them.

The catalog is derived (never the source of truth), so a different schema
version is not migrated: its tables are dropped and rebuilt from the files.
"""

from __future__ import annotations

import sqlite3

VERSION = "29"

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
-- How many writes changed entries' rows (connection.bump_epoch): a reader
-- holding rows across a write of its own learns whether another process's came between.
INSERT OR IGNORE INTO meta VALUES ('epoch', 0);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, ino INTEGER, ctime_ns INTEGER, hash TEXT);
CREATE TABLE IF NOT EXISTS entries (
    rowid INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    mapping INTEGER, archived INTEGER, id TEXT, category TEXT, key TEXT, name TEXT,
    confidence REAL, importance INTEGER, tier TEXT, born REAL, expires REAL,
    superseded_by TEXT, tags TEXT, seq INTEGER, norm TEXT, nlen INTEGER, data TEXT
);
CREATE INDEX IF NOT EXISTS entries_path ON entries(path);
-- Where each entry sits in its file, kept apart and narrow: an edit that
-- adds a line (a supersede) moves every entry after it, and updating these
-- columns inside the wide entries rows cost far more. `offset` is the byte
-- where the entry's first line starts, `chunk` the hash of its text
-- (chunks.py), NULL when not known.
CREATE TABLE IF NOT EXISTS spans (
    rowid INTEGER PRIMARY KEY, path TEXT NOT NULL, idx INTEGER NOT NULL, start INTEGER, stop INTEGER, offset INTEGER, id TEXT, chunk BLOB
);
CREATE INDEX IF NOT EXISTS spans_path ON spans(path, idx);
CREATE INDEX IF NOT EXISTS entries_id ON entries(id);
-- Duplicate checks read one category's entries, one new entry's only those
-- of a length that could be 90 % alike.
CREATE INDEX IF NOT EXISTS entries_category ON entries(category, nlen);
-- The filter and order columns again, narrow (no JSON): ranking joins every
-- match, often most rows, and listing and `context` sort all active ones;
-- they read far fewer pages here. Inserts copy new entries' rows in one
-- statement (`indexer`: far cheaper in a cold build than a trigger per row),
-- triggers keep updates and deletes equal to entries; span moves do not touch it.
CREATE TABLE IF NOT EXISTS ranks (
    rowid INTEGER PRIMARY KEY, path TEXT, mapping INTEGER, archived INTEGER, id TEXT, category TEXT, key TEXT, name TEXT,
    confidence REAL, importance INTEGER, tier TEXT, born REAL, expires REAL, superseded_by TEXT, tags TEXT, seq INTEGER
);
-- Kinds' commands and recipe sections read one category's few entries among many.
CREATE INDEX IF NOT EXISTS ranks_category ON ranks(category);
CREATE TRIGGER IF NOT EXISTS ranks_delete AFTER DELETE ON entries BEGIN
    DELETE FROM ranks WHERE rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS ranks_update AFTER UPDATE OF path, mapping, archived, id, category, key, name, confidence, importance, tier,
    born, expires, superseded_by, tags, seq ON entries BEGIN
    UPDATE ranks SET path = new.path, mapping = new.mapping, archived = new.archived, id = new.id, category = new.category,
        key = new.key, name = new.name, confidence = new.confidence, importance = new.importance, tier = new.tier, born = new.born,
        expires = new.expires, superseded_by = new.superseded_by, tags = new.tags, seq = new.seq WHERE rowid = new.rowid;
END;
-- aliases: the parts and joined forms of the identifiers in the other columns (scoring.aliases).
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(summary, content, tags, aliases, tokenize='porter unicode61 remove_diacritics 2');
-- The `semantic` extra's vectors (float32, the model's dimensions) of each
-- entry's summary and content, by the model meta's `vectors_model` names: made
-- on the first semantic read after an entry is indexed; gone with its row or
-- a change of its text, all of them when the model changes.
CREATE TABLE IF NOT EXISTS vectors (rowid INTEGER PRIMARY KEY, vector BLOB NOT NULL);
CREATE TRIGGER IF NOT EXISTS vectors_delete AFTER DELETE ON entries BEGIN
    DELETE FROM vectors WHERE rowid = old.rowid;
END;
CREATE TABLE IF NOT EXISTS words (word TEXT, path TEXT, n INTEGER, PRIMARY KEY (word, path)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS reports (path TEXT PRIMARY KEY, key TEXT, value TEXT);
-- `mem validate`'s result for each entry's text (chunk hash) under the rules' version.
CREATE TABLE IF NOT EXISTS checks (path TEXT, chunk BLOB, version TEXT, value TEXT, PRIMARY KEY (path, chunk)) WITHOUT ROWID;
-- How often each entry was read by `mem recall` and when last (derived
-- state: never written to a grimoire file, so reading leaves git clean).
-- What the observation log says of each tool (executions.py), read incrementally: derived, rebuilt from the log.
-- Kept as running totals per tool and context, so a warm `mem tools` reads a few rows, not every step;
-- durations per whole millisecond, for the percentiles.
CREATE TABLE IF NOT EXISTS tool_stats (tool TEXT, context TEXT, runs INTEGER, ok INTEGER, timed INTEGER, duration REAL, retries INTEGER,
                                       PRIMARY KEY (tool, context)) WITHOUT ROWID;
-- Evidence columns hold the first task ids (at most 5) that showed a row, joined by U+001F.
CREATE TABLE IF NOT EXISTS tool_errors (tool TEXT, context TEXT, error TEXT, count INTEGER, example TEXT, evidence TEXT,
                                        PRIMARY KEY (tool, context, error)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tool_durations (tool TEXT, context TEXT, ms INTEGER, n INTEGER, PRIMARY KEY (tool, context, ms)) WITHOUT ROWID;
-- Runs per parameter value (JSON text); a parameter with too many values to say anything (an id) is kept in tool_params_wide instead.
CREATE TABLE IF NOT EXISTS tool_params (tool TEXT, param TEXT, value TEXT, runs INTEGER, ok INTEGER, PRIMARY KEY (tool, param, value)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tool_params_wide (tool TEXT, param TEXT, PRIMARY KEY (tool, param)) WITHOUT ROWID;
-- Per pattern (query_pattern, plan_pattern, tool_sequence, error_pattern): the tasks that showed it; evidence = the first successful ones (an error pattern's: the first).
CREATE TABLE IF NOT EXISTS patterns (type TEXT, pattern TEXT, usage INTEGER, ok INTEGER, timed INTEGER, duration REAL, steps INTEGER,
                                     first_seen TEXT, last_seen TEXT, evidence TEXT, PRIMARY KEY (type, pattern)) WITHOUT ROWID;
-- The tasks that showed a pattern, per context (`mem patterns --context`).
CREATE TABLE IF NOT EXISTS pattern_contexts (type TEXT, pattern TEXT, context TEXT, usage INTEGER, ok INTEGER,
                                             PRIMARY KEY (context, type, pattern)) WITHOUT ROWID;
-- Which tools the tasks of a query pattern ran, per context (for `mem recommend`).
CREATE TABLE IF NOT EXISTS pattern_tools (pattern TEXT, tool TEXT, context TEXT, runs INTEGER, ok INTEGER,
                                          PRIMARY KEY (pattern, tool, context)) WITHOUT ROWID;
-- Corrections per context, field and corrected value (JSON text); original = the last one seen.
CREATE TABLE IF NOT EXISTS corrections (context TEXT, field TEXT, corrected TEXT, n INTEGER, original TEXT, evidence TEXT,
                                        PRIMARY KEY (context, field, corrected)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS accesses (id TEXT PRIMARY KEY, count INTEGER NOT NULL, last REAL NOT NULL) WITHOUT ROWID;
-- The auto-cache's hits and misses (g.facts.cached, SABRE's auto_cache) per category: derived state, like accesses.
CREATE TABLE IF NOT EXISTS cache_counts (category TEXT PRIMARY KEY, hits INTEGER NOT NULL, misses INTEGER NOT NULL) WITHOUT ROWID;
"""

TABLES = (
    "meta",
    "files",
    "entries",
    "spans",
    "ranks",
    "fts",
    "vectors",
    "words",
    "reports",
    "checks",
    "accesses",
    "cache_counts",
    "tool_stats",
    "tool_errors",
    "tool_durations",
    "tool_params",
    "tool_params_wide",
    "patterns",
    "pattern_contexts",
    "pattern_tools",
    "corrections",
)


def statements(script: str = DDL) -> list[str]:
    """A script's statements (trigger bodies hold semicolons of their own)."""
    out, buffer = [], ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \n;"):
                out.append(buffer.strip())
            buffer = ""
    return out


def create(db: sqlite3.Connection) -> None:
    """Make the tables of this version, dropping those of any other, inside
    the caller's transaction (so two processes starting on an empty cache
    never drop each other's tables)."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
    except sqlite3.OperationalError:
        row = None
    if row is not None and row[0] == VERSION:
        return
    for table in TABLES:
        db.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in statements():
        db.execute(statement)  # not executescript: it would commit, ending the caller's lock
    db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (VERSION,))
