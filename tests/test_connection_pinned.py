"""The catalog's connection, pinned (issue 44): what a failure leaves on disk, the catalog in memory it moves
to, and which failures move it. Each test kills mutants the rest of the suite let live."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import corrupt_the_catalog, mem_process

from grimoire_cli import Grimoire
from grimoire_cli.storage.catalog.connection import DB_FILE
from grimoire_cli.storage.catalog.queries import Filter, Order

WORDS = "hourly"  # the first memory's alone


def filled(grimoire: Grimoire) -> list[str]:
    """Two memories, the catalog on disk built with them; their ids."""
    ids = [grimoire.add(text, category="fact").id for text in ("Queues drain hourly", "Workers scale with the queue")]
    assert grimoire.query(WORDS) and not grimoire.store.catalog.in_memory
    return ids


def as_a_new_process() -> Grimoire:
    return Grimoire.open(Path.cwd())


def another_program(index: Path, statement: str) -> None:
    """Another program changes the catalog behind mem (its own connection, committed)."""
    other = sqlite3.connect(index)
    try:
        other.execute(statement)
        other.commit()
    finally:
        other.close()


def test_a_cache_file_that_is_not_sqlite_is_removed_and_the_next_process_builds_it_on_disk(grimoire):
    ids = filled(grimoire)
    corrupt_the_catalog(grimoire.store)
    failing = as_a_new_process()
    assert [hit.entry.id for hit in failing.query(WORDS)] == ids[:1] and failing.store.catalog.in_memory
    after = as_a_new_process()
    assert [hit.entry.id for hit in after.query(WORDS)] == ids[:1]
    assert not after.store.catalog.in_memory


def test_a_sqlite_cache_a_process_cannot_open_is_left_alone(grimoire, repo):
    """Its shared-memory file is a folder (as a program that ignores mem could leave it): another `mem` process
    cannot open the catalog for writing and answers from memory, but the file is a catalog, so it is kept for
    the processes that can."""
    ids = filled(grimoire)
    index = grimoire.store.cache / DB_FILE
    shm = index.with_name(DB_FILE + "-shm")
    shm.unlink()  # this process keeps the one it has mapped
    shm.mkdir()
    blocked = mem_process("query", WORDS, "--json", cwd=repo)
    assert blocked.returncode == 0, blocked.stderr
    assert [hit["id"] for hit in json.loads(blocked.stdout)] == ids[:1]
    assert index.read_bytes()[:16] == b"SQLite format 3\x00"  # not removed as a file that is no catalog
    shm.rmdir()
    assert [hit.entry.id for hit in as_a_new_process().query(WORDS)] == ids[:1]


def test_a_ranking_calls_its_python_functions_on_disk_and_in_memory(grimoire):
    """A tag pattern with a wildcard other than a last `*` is matched by a Python function the connection
    registers: on disk at the first ranking, and again on the catalog in memory a failure moves to (there a
    ranking that could not call it found nothing)."""
    ops = grimoire.add("Deploys drain hourly", category="fact", tags=["ops"]).id
    filled(grimoire)
    fresh = as_a_new_process()
    assert [hit.entry.id for hit in fresh.query(WORDS, tags=["o?s"])] == [ops]
    assert not fresh.store.catalog.in_memory
    corrupt_the_catalog(fresh.store)
    fresh.store.refresh()
    assert [hit.entry.id for hit in fresh.query(WORDS, tags=["o?s"])] == [ops] and fresh.store.catalog.in_memory


def test_a_catalog_whose_tables_another_program_dropped_moves_to_memory_and_answers(grimoire):
    """Not a broken file but a missing table (sqlite's OperationalError, as an FTS5 expression's is): only an
    FTS5 expression's error is the caller's; this one moves the process to memory, which answers."""
    ids = filled(grimoire)
    store = grimoire.store
    another_program(store.cache / DB_FILE, "DROP TABLE ranks")
    store.refresh()
    everything = Filter(at=grimoire.now().timestamp())
    assert sorted(e.id for e in store.reads.listed(everything, Order.NEWEST).values()) == ids
    assert store.catalog.in_memory


def test_a_write_of_its_own_in_memory_is_no_other_process_change(grimoire):
    """After a move to memory (a catalog in memory: no file left in the working folder), rows read, a write of this
    process's own (a read counted), rows read again: no snapshot is held in memory, so nothing counts as another
    process's change."""
    ids = filled(grimoire)
    store = grimoire.store
    around = set(Path.cwd().iterdir())
    corrupt_the_catalog(store)
    store.refresh()
    everything = Filter(at=grimoire.now().timestamp())
    with store.reading():
        held = store.ordered(everything, Order.NEWEST)
        assert store.catalog.in_memory and set(Path.cwd().iterdir()) == around  # in memory: no file of its own
        store.reads.note_access(ids[0], 0.0)
        assert sorted(e.id for e in store.load(held).values()) == ids
    assert store.catalog.others_changes == 0


def test_a_catalog_that_keeps_no_epoch_cannot_serve_and_moves_to_memory(grimoire):
    """Another mem (another version) rebuilt the catalog without the count of changes a query's snapshot reads:
    the query moves to memory and answers, where it raised a TypeError with a transaction left open."""
    ids = filled(grimoire)
    another_program(grimoire.store.cache / DB_FILE, "DELETE FROM meta WHERE key='epoch'")
    fresh = as_a_new_process()
    assert [hit.entry.id for hit in fresh.query(WORDS)] == ids[:1] and fresh.store.catalog.in_memory
