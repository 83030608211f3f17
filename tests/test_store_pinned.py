"""The store's survivors (issue 44, `make mutation MODULES=write`), each
pinned by what a caller of the store sees: a write reads again a file edited
or deleted since the catalog saw it; a file mem creates begins with its
category's header; `by_id` picks the first of a shared id in the configured
order and refuses it when a write asks; reads keep to the files they cover
(the archive, damaged files); a refreshed store finishes a crashed write;
and what a write meets that it cannot do is named: a file another program
keeps rewriting, a folder the system refuses, a file it cannot edit in place,
a damaged file it cannot read for its ids."""

from __future__ import annotations

import json
import resource
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import ARCHIVED, at_the_first_call_of, corrupt_the_catalog, mem, wal_pinned

from grimoire_cli import Grimoire
from grimoire_cli.core.errors import BadInput, Damaged
from grimoire_cli.memory.adding import add_many
from grimoire_cli.memory.request import Request
from grimoire_cli.storage import journal
from grimoire_cli.storage.catalog.connection import Stale
from grimoire_cli.storage.catalog.queries import STATES, Filter, Order
from grimoire_cli.storage.store import Store
from grimoire_cli.storage.yamlio import parse_entries

MEMORY = Path("grimoires/loa/memory")
FACTS = MEMORY / "facts.yaml"
SHARED = "MEM-20261120-009"


def by_hand(entry_id: str, content: str, category: str = "fact", **more: str) -> str:
    """An entry as somebody types it at the end of a file."""
    lines = [
        f"- id: {entry_id}",
        f"  category: {category}",
        f"  content: {content}",
        f"  summary: {content}",
        "  confidence: 0.9",
        "  source: {session_id: s, timestamp: '2026-11-20T10:00:00Z'}",
        "  ttl: permanent",
        *(f"  {key}: {value}" for key, value in more.items()),
    ]
    return "\n".join(lines) + "\n"


def entry(entry_id: str, content: str) -> dict:
    return {
        "id": entry_id,
        "category": "fact",
        "content": content,
        "summary": content,
        "confidence": 0.9,
        "source": {"session_id": "s", "timestamp": "2026-11-22T10:00:00Z"},
        "ttl": "permanent",
    }


def ids_in(path: Path) -> list[str]:
    return [item["id"] for item in parse_entries(path.read_text(), str(path))[0]]


# -- a write on a file edited under it ---------------------------------------------------------


def test_a_write_reads_again_a_file_edited_since_the_catalog_saw_it(grimoire):
    """Nothing read under the lock: the write itself brings the file's rows up to date."""
    kept = grimoire.add("Queues drain hourly", category="fact").id
    FACTS.write_text(FACTS.read_text() + by_hand(SHARED, "Caches live a day"))
    store = grimoire.store
    with store.lock():
        store.write(store.category_path("fact"), appended=[entry("MEM-20261122-005", "Workers scale with the queue")])
    assert ids_in(FACTS) == [kept, SHARED, "MEM-20261122-005"]
    assert grimoire.validate().ok


def test_a_write_to_a_file_deleted_since_the_catalog_saw_it_starts_it_anew(grimoire):
    grimoire.add("Queues drain hourly", category="fact")
    FACTS.unlink()
    store = grimoire.store
    with store.lock():
        store.write(store.category_path("fact"), appended=[entry("MEM-20261122-005", "Workers scale with the queue")])
    assert FACTS.read_text().startswith("# grimoire: fact memories, kept by `mem`.\n")
    assert ids_in(FACTS) == ["MEM-20261122-005"]


def test_a_file_edited_between_a_batchs_reads_and_its_write_is_read_again(grimoire):
    """The in-place edit (superseded_by) lands on the entry it is for, though a line came before it."""
    old = grimoire.add("Queues drain hourly", category="fact").id
    other = grimoire.add("Caches live a day", category="fact").id

    def edit_by_hand(_written):
        FACTS.write_text("# kept by hand\n" + FACTS.read_text())
        return []

    new = add_many(
        grimoire.store, [Request("Queues drain every 30 minutes", supersedes=old)], grimoire.now(), after=edit_by_hand
    )[0]
    assert FACTS.read_text().startswith("# kept by hand\n")
    facts = {item["id"]: item for item in parse_entries(FACTS.read_text(), str(FACTS))[0]}
    assert facts[old]["superseded_by"] == new.id and "superseded_by" not in facts[other]
    assert list(facts) == [old, other, new.id] and grimoire.validate().ok


# -- a file mem creates ------------------------------------------------------------------------


def test_a_file_mem_creates_begins_with_its_categorys_header(sabre):
    g = Grimoire.open(sabre)
    (MEMORY / "decisions.yaml").unlink()
    (MEMORY / "episodes.yaml").unlink()
    held = g.add("We use SQLite for the catalog", category="decision").id
    g.add_many([{"content": "We shipped", "category": "episode", "event": "deploy", "outcome": "success"}])
    assert (
        (MEMORY / "decisions.yaml")
        .read_text()
        .startswith(
            "# grimoire: decision memories, kept by `mem`.\n"
            "# A YAML list of entries validated by `mem validate`. Add with `mem add -c decision`;\n"
        )
    )
    assert "validated by `mem validate`. Add with `mem episode EVENT`;\n" in (MEMORY / "episodes.yaml").read_text()
    assert (MEMORY / "facts.yaml").read_text().startswith("# grimoire: fact memories, kept by `mem`.\n")  # mem init's
    g.archive([held], commit=False)
    assert (
        (MEMORY / "archive" / "decisions.yaml")
        .read_text()
        .startswith(
            "# grimoire: archived decision memories, kept by `mem`.\n"
            "# A YAML list of entries validated by `mem validate`. Entries arrive here by `mem archive`;\n"
        )
    )


def test_a_file_is_staged_once_in_a_lock_and_only_a_configured_one(grimoire):
    """What callers must never do is named as such (they group their changes by file)."""
    store = grimoire.store
    facts = store.category_path("fact")
    with store.lock():
        store.write(facts, appended=[entry("MEM-20261122-005", "Workers scale with the queue")])
        with pytest.raises(
            RuntimeError, match=r"^grimoires/loa/memory/facts\.yaml is written twice in one transaction$"
        ):
            store.write(facts, appended=[entry("MEM-20261122-006", "Caches live a day")])
        with pytest.raises(ValueError, match=r"^notes\.yaml is not a configured grimoire file$"):
            store.write(store.config.root / "notes.yaml", appended=[])
    assert ids_in(FACTS) == ["MEM-20261122-005"]


# -- by_id -------------------------------------------------------------------------------------


def test_a_shared_id_is_read_as_its_first_entry_in_the_configured_order_and_refused_to_a_write(grimoire):
    """facts.yaml comes before decisions.yaml in the config, though the catalog indexed it last."""
    decisions = MEMORY / "decisions.yaml"
    decisions.write_text(decisions.read_text() + by_hand(SHARED, "We use SQLite", "decision"))
    assert [e.id for e in grimoire.list()] == [SHARED]  # decisions.yaml indexed
    FACTS.write_text(FACTS.read_text() + by_hand(SHARED, "Queues drain hourly"))
    grimoire.store.refresh()  # as a new process
    assert grimoire.store.by_id([SHARED])[SHARED].category == "fact"
    with pytest.raises(Damaged) as refused:
        grimoire.store.by_id([SHARED], unique=True)
    assert (refused.value.message, refused.value.hint, refused.value.kind) == (
        f"grimoires/loa/memory/facts.yaml:4: {SHARED} is also the id of the entry at "
        "grimoires/loa/memory/decisions.yaml:4; a write cannot tell which one is meant",
        "run `mem validate` and give one of them a new id",
        "duplicate-id",
    )


def test_a_write_by_id_edits_its_own_files_entry_though_another_file_holds_the_id(grimoire):
    """An edit to an id two files hold (as a merge can leave them, before the hooks renumber one): the decision
    is edited from its own rows, not the learning's (read after it, with tags the decision never had), so only
    its new line is written and the rest of its lines stay as typed; the learning is left as it is."""
    decisions, learnings = MEMORY / "decisions.yaml", MEMORY / "learnings.yaml"
    learning = by_hand(SHARED, "Queues drain hourly", "learning", tags="[queues]")
    decision = by_hand(SHARED, "We use SQLite", "decision")
    decisions.write_text(decisions.read_text() + decision)
    learnings.write_text(learnings.read_text() + learning)
    store = grimoire.store
    assert [e.category for e in store.entries()] == ["decision", "learning"]  # both in the catalog
    superseded = {**parse_entries(decision, "decisions")[0][0], "superseded_by": "MEM-20261120-010"}
    with store.lock():
        store.write(store.category_path("decision"), {SHARED: superseded})
    assert decisions.read_text().endswith(decision + "  superseded_by: MEM-20261120-010\n")
    assert learnings.read_text().endswith(learning)


def archived_by_hand() -> None:
    """SHARED, archived, in the archive's facts file."""
    (MEMORY / "archive" / "facts.yaml").write_text(
        by_hand(
            SHARED,
            "Queues drain hourly",
            archived="true",
            archived_at="'2026-11-21T10:00:00Z'",
            archive_reason="manual",
        )
    )


def test_by_id_keeps_to_the_files_a_read_covers(grimoire):
    archived_by_hand()
    store = grimoire.store
    assert store.by_id([SHARED])[SHARED].archived_file and store.by_id([SHARED], include_archive=False) == {}
    (MEMORY / "learnings.yaml").write_text("- id: [\n")
    store.refresh()
    assert list(store.by_id([SHARED])) == [SHARED]  # the damaged file passed over
    with pytest.raises(Damaged, match=r"^grimoires/loa/memory/learnings\.yaml:2: not valid YAML"):
        store.by_id([SHARED], skip_damaged=False)


def test_reads_keep_to_the_files_they_cover(grimoire):
    """The archive's files are read only when asked for (ids, count), or unless told not to (entries)."""
    archived_by_hand()
    active = grimoire.add("Caches live a day", category="fact").id
    store = grimoire.store
    everything = Filter(at=grimoire.now().timestamp(), states=STATES)
    assert (store.count(everything), store.count(everything, include_archive=True)) == (1, 2)
    assert store.count(Filter(at=grimoire.now().timestamp(), categories=["decision"]), include_archive=True) == 0
    assert (store.ids(everything), sorted(store.ids(everything, include_archive=True))) == ([active], [SHARED, active])
    newest = [store.reads.listed(everything, Order.NEWEST, include_archive=archive) for archive in (False, True)]
    assert [sorted(e.id for e in listed.values()) for listed in newest] == [[active], [SHARED, active]]
    assert [e.id for e in store.entries()] == [active, SHARED]
    assert [e.id for e in store.entries(include_archive=False)] == [active]
    (MEMORY / "learnings.yaml").write_text("- id: [\n")
    store.refresh()
    assert [e.id for e in store.entries(skip_damaged=True)] == [active, SHARED]
    with pytest.raises(Damaged, match=r"^grimoires/loa/memory/learnings\.yaml:2: not valid YAML"):
        store.entries()
    files = store.files()
    store.forget_files()  # as an import that added categories does
    assert store.files() == files and len(files) == 10


def test_a_refreshed_store_finishes_a_write_that_crashed_after_its_commit_point(grimoire):
    """As a new process would: a long-lived one (`mem mcp`) refreshes between requests."""
    kept = grimoire.add("Queues drain hourly", category="fact").id
    store = grimoire.store
    assert [e.id for e in store.entries()] == [kept]
    landing = MEMORY / ".facts.yaml.1.mem-tmp"
    landing.write_text(FACTS.read_text() + by_hand(SHARED, "Caches live a day"))
    (store.cache / journal.JOURNAL).write_text(json.dumps([[str(landing.resolve()), str(FACTS.resolve())]]))
    store.refresh()
    assert [e.id for e in store.entries()] == [kept, SHARED] and not landing.exists()


WRITER = """
import os, sys
path, stop = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
texts = [data, data.replace(b"drains", b"empties") + b"# edited by hand\\n"]  # every entry changed: read anew
n = 0
while not os.path.exists(stop):
    with open(path + ".w", "wb") as out:
        out.write(texts[n % 2])
    os.replace(path + ".w", path)
    n += 1
"""


CHANGING = (
    "grimoires/loa/memory/facts.yaml:1: the file keeps changing while mem writes to it",
    "retry when nothing else is editing it",
    "changing",
)


def raced(store, stop: Path, attempts: int, until_refused: bool = False) -> list[tuple[str, str | None, str]]:
    """Writes tried while a second process rewrites facts.yaml all the time, without mem's lock; how
    each refused one was refused (`until_refused`: the tries stop at the first)."""
    before = FACTS.stat().st_mtime_ns
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(FACTS.resolve()), str(stop)])
    refusals = []
    try:
        deadline = time.monotonic() + 30
        while FACTS.stat().st_mtime_ns == before:  # the writer has started
            assert writer.poll() is None and time.monotonic() < deadline, "the rewriting process did not start"
            time.sleep(0.01)
        for _ in range(attempts):
            try:
                with store.lock():
                    store.write(store.category_path("fact"), appended=[entry("MEM-20261122-999", "Caches live a day")])
            except Damaged as exc:
                refusals.append((exc.message, exc.hint, exc.kind))
                if until_refused:
                    break
    finally:
        stop.touch()
        writer.wait()
    return refusals


def test_a_file_another_program_keeps_rewriting_is_written_whole_or_refused_naming_why(grimoire, tmp_path):
    """A small file: writes land between two of the other program's. The catalog never keeps rows for
    bytes that are not on disk: the stamp it records is that of the bytes written. Whether a write
    lands just before the other program's next one is timing: without that stamp, one of 200 here
    did every time it was tried (the next write then refused the file as laid out wrongly)."""
    grimoire.add("Queues drain hourly", category="fact")
    store = grimoire.store
    refusals = raced(store, tmp_path / "stop", 200)
    assert set(refusals) <= {CHANGING} and len(refusals) < 200  # some landed
    assert [e.id for e in store.entries(include_archive=False)] == ids_in(FACTS)
    assert [e.id for e in Grimoire.open(grimoire.config.root).entries()] == ids_in(FACTS)


@pytest.mark.slow  # seconds: the file is read whole, three times a write, until one gives up
def test_a_write_that_finds_the_file_changed_at_each_read_gives_up_naming_why(grimoire, tmp_path):
    """A file that takes the write longer to parse than the other program to rewrite: each of the
    write's reads finds it changed since the catalog saw it."""
    grimoire.add_many([{"content": f"Queue {n} drains every {n + 2} minutes"} for n in range(2000)])
    assert raced(grimoire.store, tmp_path / "stop", 50, until_refused=True)[-1:] == [CHANGING]


def test_a_write_the_system_refuses_is_one_error_naming_the_folder_and_lands_nothing(repo):
    """As root no permission is refused: a file name the system cannot hold is refused the same way."""
    config = repo / ".loa.config.yaml"
    spec = f"{{storage_file: {'f' * 245}.yaml, ttl: 1d, confidence_required: 0.5, tracked: false}}"
    anchor = "    preference: {storage_file: preferences.yaml"
    config.write_text(config.read_text().replace(anchor, f"    scratch: {spec}\n{anchor}"))
    with pytest.raises(Damaged) as refused:
        Grimoire.open(repo).add("Queues drain hourly", category="scratch")
    assert (refused.value.message, refused.value.hint, refused.value.kind) == (
        "grimoires/loa/memory/local: cannot write: File name too long",
        "check the permissions of the grimoire's folders and the free space",
        "unwritable",
    )
    assert sorted(path.name for path in (MEMORY / "local").iterdir() if "f" * 245 in path.name) == []


def test_a_file_mem_cannot_edit_in_place_is_named_by_the_write(grimoire):
    """Valid YAML in flow style: read, but an in-place edit (superseded_by) names the file and the line."""
    FACTS.write_text(
        f"[{{id: {SHARED}, category: fact, content: Queues drain hourly, summary: Queues drain hourly, "
        "confidence: 0.9, source: {session_id: s, timestamp: '2026-11-20T10:00:00Z'}, ttl: permanent}]\n"
    )
    assert [e.id for e in grimoire.list()] == [SHARED]
    with pytest.raises(
        Damaged, match=r"^grimoires/loa/memory/facts\.yaml:1: entries are not written one per `- ` line"
    ):
        grimoire.supersede(SHARED, "Queues drain every 30 minutes")


def test_a_damaged_file_that_cannot_be_read_for_its_ids_refuses_a_new_id(grimoire):
    """No id could be called free: a directory where a category's file should be."""
    (MEMORY / "learnings.yaml").unlink()
    (MEMORY / "learnings.yaml").mkdir()
    with pytest.raises(Damaged) as refused:
        grimoire.add("Queues drain hourly", category="fact")
    assert (refused.value.message, refused.value.hint, refused.value.kind) == (
        "grimoires/loa/memory/learnings.yaml:1: cannot be read for the ids it holds (cannot read: Is a directory)",
        "fix it (`mem validate` says how) before adding memories",
        "unreadable",
    )


def test_memory_off_refuses_a_write_naming_the_setting_and_a_crashed_write_is_still_finished(grimoire):
    config = grimoire.config.path
    config.write_text(config.read_text().replace("enabled: true", "enabled: false", 1))
    landing = MEMORY / ".facts.yaml.1.mem-tmp"
    landing.write_text(by_hand(SHARED, "Caches live a day"))
    cache = grimoire.store.cache
    journal.cache_folder(cache)
    (cache / journal.JOURNAL).write_text(json.dumps([[str(landing.resolve()), str(FACTS.resolve())]]))
    off = Grimoire.open(grimoire.config.root)
    assert [e.id for e in Store(off.config).entries()] == [SHARED]  # a new store finishes it, memory off or not
    with pytest.raises(BadInput) as refused:
        off.add("Queues drain hourly", category="fact")
    assert (refused.value.message, refused.value.hint) == (
        "memory is off: memory_schema.enabled is false in .loa.config.yaml; nothing written",
        "set memory_schema.enabled: true to write memories again",
    )


def test_a_damaged_file_hides_no_other_file_from_a_read(grimoire):
    """Damage found reading the bytes (decisions: no UTF-8) and parsing them (learnings: no YAML), read once
    (the damage found) and again (known): the file after both is read each time."""
    (MEMORY / "decisions.yaml").write_bytes(b"- id: caf\xe9\n")
    (MEMORY / "learnings.yaml").write_text("- id: [\n")
    errors = MEMORY / "errors.yaml"
    errors.write_text(errors.read_text() + by_hand(SHARED, "Caches live a day", "error"))
    for _ in range(2):
        assert [e.id for e in grimoire.store.entries(skip_damaged=True)] == [SHARED]


def test_an_entry_in_an_archive_file_is_archived_though_it_does_not_say_so(grimoire):
    (MEMORY / "archive" / "facts.yaml").write_text(by_hand(SHARED, "Queues drain hourly"))
    store = grimoire.store
    at = grimoire.now().timestamp()
    assert store.ids(Filter(at=at, states=("archived",)), include_archive=True) == [SHARED]
    assert store.ids(Filter(at=at), include_archive=True) == []


def test_the_local_files_are_those_of_the_untracked_categories(sabre):
    store = Grimoire.open(sabre).store
    assert store.local_paths() == {
        "grimoires/loa/memory/local/cache.yaml",
        "grimoires/loa/memory/local/archive/cache.yaml",
    }


def test_a_write_makes_the_folders_its_file_needs(sabre):
    """An archived local entry imported where no local folder is left: two folders made."""
    shutil.rmtree(MEMORY / "local")
    g = Grimoire.open(sabre)
    item = {"id": SHARED, "category": "cache", "content": "Queues drain hourly", "confidence": 0.9, **ARCHIVED}
    assert not g.import_lines([json.dumps(item)]).rejected
    assert ids_in(MEMORY / "local" / "archive" / "cache.yaml") == [SHARED]


def test_a_file_that_cannot_be_read_is_named_by_its_path(grimoire):
    (MEMORY / "learnings.yaml").write_bytes(b"- id: MEM-20261122-001\n  content: caf\xe9\n")
    with pytest.raises(Damaged, match=r"^grimoires/loa/memory/learnings\.yaml:2: "):
        grimoire.store.entries()
    (MEMORY / "learnings.yaml").unlink()
    (MEMORY / "learnings.yaml").mkdir()
    grimoire.store.refresh()
    with pytest.raises(Damaged, match=r"^grimoires/loa/memory/learnings\.yaml:1: cannot read: Is a directory"):
        grimoire.store.entries()


def test_a_file_whose_folder_is_no_folder_cannot_be_read_and_says_so(sabre):
    shutil.rmtree(MEMORY / "local")
    (MEMORY / "local").write_text("not a folder\n")
    with pytest.raises(Damaged) as refused:
        Grimoire.open(sabre).store.entries()
    assert (refused.value.message, refused.value.hint, refused.value.kind) == (
        "grimoires/loa/memory/local/cache.yaml:1: cannot read: Not a directory",
        "check the file's permissions",
        "unreadable",
    )


def test_the_rows_of_a_file_deleted_since_the_catalog_saw_it_are_forgotten(grimoire):
    grimoire.add("Queues drain hourly", category="fact")
    FACTS.unlink()
    grimoire.store.refresh()
    assert grimoire.store.entries() == []


def test_a_new_file_in_a_folder_that_leads_out_of_the_repository_is_refused(grimoire, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(MEMORY / "archive")
    (MEMORY / "archive").symlink_to(elsewhere)
    item = {"id": SHARED, "category": "fact", "content": "Queues drain hourly", "confidence": 0.9, **ARCHIVED}
    with pytest.raises(Damaged) as refused:
        grimoire.import_lines([json.dumps(item)])
    assert refused.value.message.startswith("grimoires/loa/memory/archive: ")
    assert list(elsewhere.iterdir()) == []


def test_an_archive_files_entries_are_archived_when_worker_processes_parse_it(repo, monkeypatch):
    """The rows the parse workers prepare carry the file's archived flag too."""
    (MEMORY / "archive" / "facts.yaml").write_text(
        "".join(by_hand(f"MEM-20261120-{n:03}", f"Queue {n} drains hourly") for n in range(1, 41))
    )
    monkeypatch.setenv("MEM_PARSE_WORKERS", "2")
    g = Grimoire.open(repo)
    archived = g.store.ids(Filter(at=g.now().timestamp(), states=("archived",)), include_archive=True)
    assert len(archived) == 40


def test_an_operation_the_catalog_fails_under_is_tried_three_times_in_all(grimoire):
    """Each failure moves the process to a catalog in memory (`Stale`); the third try is the last."""
    tries = []

    def failing_twice(_catalog):
        tries.append(1)
        if len(tries) < 3:
            raise Stale()
        return "answered"

    assert grimoire.store.derived(failing_twice) == "answered" and len(tries) == 3
    tries.clear()

    def failing(_catalog):
        tries.append(1)
        raise Stale()

    with pytest.raises(Stale):
        grimoire.store.derived(failing)
    assert len(tries) == 3


def shared_read_then_overwritten(grimoire) -> tuple[Store, Filter, list[int]]:
    """The shared fact, written by hand and read (its row handed out); then another program overwrites the
    catalog's file and its WAL. Outside a block the next read meets the overwritten file; inside one, the
    next write of the process's own (which gives the snapshot up), `overwritten_under_a_block`."""
    store = grimoire.store
    FACTS.write_text(by_hand(SHARED, "the cache is redis"))
    everything = Filter(at=grimoire.now().timestamp())
    held = store.ordered(everything, Order.NEWEST)
    assert held
    corrupt_the_catalog(store)
    return store, everything, held


def overwritten_under_a_block(store: Store) -> None:
    """A write of the process's own (a read counted) gives the block's snapshot up and meets the overwritten
    catalog: the process moves to memory, and the count, kept, is lost."""
    store.reads.note_access(SHARED, 0.0)
    assert store.catalog.in_memory and store.catalog.switches == 1


def newest_ids(store: Store, everything: Filter) -> list[str]:
    return [e.id for e in store.reads.listed(everything, Order.NEWEST).values()]


def failing_twice_then(answer: str):
    """An attempt on the catalog whose first try meets the overwritten catalog (the move to memory), whose
    second meets rows changed under it (`Stale` without a move, as another process re-indexing a file gives),
    and whose third answers; and the list of its tries."""
    tries: list[int] = []

    def attempt(catalog):
        tries.append(1)
        if len(tries) == 1:
            return catalog.records()  # fails: the move to memory
        if len(tries) == 2:
            raise Stale()
        return answer

    return attempt, tries


def test_a_catalog_that_fails_between_a_read_and_its_load_is_named_and_the_next_read_answers(grimoire):
    """The catalog file (and its WAL) overwritten by another program after a read found the rows: their load
    cannot retry for the caller (the rowids are that catalog's), so it names the cache and asks for the command
    again, which a catalog in memory then answers."""
    with grimoire.store.reading():
        store, everything, rowids = shared_read_then_overwritten(grimoire)
        overwritten_under_a_block(store)
        with pytest.raises(Damaged) as failed:
            store.load(rowids)
    assert (failed.value.path, failed.value.line, failed.value.problem, failed.value.hint, failed.value.kind) == (
        (MEMORY / ".cache").as_posix(),
        None,
        "the cache failed during a read",
        "run the command again",
        "cache",
    )
    assert store.catalog.in_memory
    assert newest_ids(store, everything) == [SHARED]


def test_rows_of_a_failed_catalog_are_not_mixed_with_rows_of_the_one_in_memory(grimoire):
    """Rows a read handed out are that catalog's: when it fails under a later read of the same command, the read
    moves to a catalog in memory, which numbers its rows afresh, so it names the cache rather than answer. The
    error starts again from nothing held: the next read answers."""
    with grimoire.store.reading():
        store, everything, _ = shared_read_then_overwritten(grimoire)
        overwritten_under_a_block(store)
        with pytest.raises(Damaged, match="the cache failed during a read"):
            store.ordered(everything, Order.NEWEST)
    assert store.catalog.in_memory and store.catalog.switches == 1
    assert newest_ids(store, everything) == [SHARED]


def test_rows_read_before_a_kept_report_met_the_failure_are_not_loaded_from_the_catalog_in_memory(grimoire):
    """A kept report answers its default when the catalog fails (here a write of its own, which gives the
    block's snapshot up), and moves the process to memory: rows read before are not loaded from that catalog,
    which numbers its rows afresh."""
    with grimoire.store.reading():
        store, _, held = shared_read_then_overwritten(grimoire)
        assert store.kept(lambda catalog: catalog.keep_report("a report", "key", 1) or "kept", "failed") == "failed"
        assert store.catalog.in_memory
        with pytest.raises(Damaged, match="the cache failed during a read"):
            store.load(held)


def test_the_last_try_after_a_move_to_memory_does_not_mix_rows_either(grimoire):
    """The catalog fails (a move to memory), then the rows change under the next try (`Stale` without a move,
    as another process re-indexing a file gives): the third try's answer is refused too, rows being held."""
    store, _, _ = shared_read_then_overwritten(grimoire)
    work, tries = failing_twice_then("answered")
    with pytest.raises(Damaged, match="the cache failed during a read"):
        store.derived(work)
    assert len(tries) == 3 and store.catalog.switches == 1


def test_a_check_that_holds_no_rows_answers_on_its_last_try_too(grimoire):
    """A write's check of its file (`_current`: a file's record, no rows) after the same two failures: its third
    try answers though rows of the failed catalog are held."""
    store, _, _ = shared_read_then_overwritten(grimoire)
    check, tries = failing_twice_then("the file's record")
    assert store._retrying(lambda: check(store.catalog), rows=False) == "the file's record" and len(tries) == 3


@pytest.mark.parametrize("fresh_start", ["lock", "refresh"])
def test_a_first_read_after_a_lock_or_a_refresh_answers_from_a_catalog_in_memory(grimoire, fresh_start):
    """A write reads what it changes under its lock, and a server's request starts with a refresh: rows read
    before either are not held, so a failure moves to a catalog in memory, which answers."""
    store, everything, _ = shared_read_then_overwritten(grimoire)
    if fresh_start == "refresh":
        store.refresh()
        assert newest_ids(store, everything) == [SHARED]
    else:
        with store.lock():
            store.write(
                store.category_path("fact"), appended=[entry("MEM-20261122-005", "Workers scale with the queue")]
            )
        assert ids_in(FACTS) == [SHARED, "MEM-20261122-005"]
    assert store.catalog.in_memory


def test_a_lock_starts_and_ends_with_nothing_held(grimoire):
    """Every write reads what it changes under its lock and hands no rows out of it (mem compact reads again
    under its lock what it read before): rows read before a lock, or inside one, are not held past its edge,
    so a failure met past it moves to memory and answers."""
    store, everything, _ = shared_read_then_overwritten(grimoire)
    with store.lock(writing=False):
        assert newest_ids(store, everything) == [SHARED]
    assert store.catalog.switches == 1


def test_rows_read_inside_a_lock_are_not_held_past_it(grimoire):
    store = grimoire.store
    FACTS.write_text(by_hand(SHARED, "the cache is redis"))
    everything = Filter(at=grimoire.now().timestamp())
    with store.lock(writing=False):
        assert store.ordered(everything, Order.NEWEST)
    corrupt_the_catalog(store)
    assert newest_ids(store, everything) == [SHARED]
    assert store.catalog.switches == 1


# -- one state for a command's reads ------------------------------------------------------------


def read_then_written_beside(
    grimoire, *, beside: str = "", change: str = ""
) -> tuple[Store, Filter, list[int], list[str]]:
    """Two memories read (their rows handed out); then this process writes to the catalog (a read counted).
    Another process changes entries' rows (`CHANGES`): `beside` "before" that write, or "after" it, before
    the snapshot the reads see next is taken."""
    first = grimoire.add("Queues drain hourly", category="fact").id
    store = grimoire.store
    FACTS.write_text(FACTS.read_text() + by_hand(SHARED, "the cache is redis"))
    everything = Filter(at=grimoire.now().timestamp())
    held = store.ordered(everything, Order.NEWEST)
    was = [first, SHARED]
    assert [e.id for e in store.load(held).values()] == was

    def changed() -> None:
        CHANGES[change]()

    if beside == "before":
        changed()
    with at_the_first_call_of("hold", changed if beside == "after" else lambda: None) as done:
        store.reads.note_access(first, 0.0)
    assert done
    return store, everything, held, was


def reindexed_by_hand() -> None:
    """A memory added by hand, another `mem` re-indexing the file (`replace_file`)."""
    FACTS.write_text(FACTS.read_text() + by_hand("MEM-20261120-010", "the queue is rabbitmq"))
    assert mem("list").code == 0


def added_by_mem() -> None:
    """A memory `mem add` writes, bringing its file's rows forward (`apply_write`)."""
    assert mem("add", "-c", "decision", "Use rabbitmq for the queue").code == 0


def removed_by_hand() -> None:
    """A file removed, another `mem` forgetting its rows (`forget`)."""
    FACTS.unlink()
    assert mem("list").code == 1  # nothing to list: no memory is left


CHANGES = {"by hand": reindexed_by_hand, "mem add": added_by_mem, "file removed": removed_by_hand}


def test_rows_read_before_and_after_a_write_of_its_own_are_of_one_state(grimoire):
    """A write of this process's own gives up the snapshot its reads see, and takes a new one after it: no
    other process changed entries in between, so the rows handed out before still load."""
    with grimoire.store.reading():
        store, _, held, was = read_then_written_beside(grimoire)
        assert [e.id for e in store.load(held).values()] == was
    assert store.catalog.others_changes == 0


@pytest.mark.parametrize(
    ("beside", "change"),
    [("before", "by hand"), ("after", "by hand"), ("before", "mem add"), ("before", "file removed")],
)
def test_rows_held_across_a_write_while_another_process_changed_entries_are_refused(grimoire, beside, change):
    """Another process changed entries' rows while this one held rows, before its write or after it, and the
    write took a new snapshot: rows of the two states are not mixed. The cache is named; the next command
    reads the new state."""
    with grimoire.store.reading():
        store, everything, held, was = read_then_written_beside(grimoire, beside=beside, change=change)
        assert store.catalog.others_changes == 1
        with pytest.raises(Damaged) as failed:
            store.load(held)
    assert (failed.value.problem, failed.value.hint, failed.value.kind) == (
        "another process changed the cache during a read",
        "run the command again",
        "cache",
    )
    as_a_new_process = {e.id for e in Grimoire.open(Path.cwd()).store.entries(include_archive=False)}
    assert set(newest_ids(store, everything)) == as_a_new_process != set(was)


def test_rows_held_across_a_second_change_by_another_process_are_refused_as_the_first(grimoire):
    """The refusal starts again from nothing held, and the next rows are read after that change: a second
    change of entries by another process between two reads is named the same way."""
    with grimoire.store.reading():
        store, everything, held, _ = read_then_written_beside(grimoire, beside="before", change="by hand")
        with pytest.raises(Damaged, match="another process changed the cache"):
            store.load(held)
    with store.reading():
        held = store.ordered(everything, Order.NEWEST)
        assert mem("add", "-c", "decision", "Use rabbitmq for the queue").code == 0
        store.reads.note_access(SHARED, 0.0)
        assert store.catalog.others_changes == 2
        with pytest.raises(Damaged) as failed:
            store.load(held)
    assert failed.value.problem == "another process changed the cache during a read"


def test_a_load_with_nothing_held_that_meets_a_failure_names_the_cache(grimoire):
    """Rows read before a refresh (a long-lived server's next request) are not held; their load (in a block of
    its own, which forgets them too) meets the failed catalog: the cache is named as failed, not as changed by another process."""
    store, everything, rowids = shared_read_then_overwritten(grimoire)
    store.refresh()
    corrupt_the_catalog(store)
    with store.reading(), pytest.raises(Damaged) as failed:
        store.load(rowids)
    assert failed.value.problem == "the cache failed during a read"
    assert newest_ids(store, everything) == [SHARED]


def test_a_write_of_its_own_that_changes_entries_is_no_change_by_another(grimoire):
    """Rows held, then this process re-indexes an archive file edited by hand (a read that covers the
    archive): its own change of entries is not another process's, so the rows held still load."""
    store = grimoire.store
    FACTS.write_text(by_hand(SHARED, "the cache is redis"))
    everything = Filter(at=grimoire.now().timestamp())
    with store.reading():
        held = store.ordered(everything, Order.NEWEST)
        archived_by_hand()
        assert any(e.archived for e in store.entries(include_archive=True))
        assert [e.id for e in store.load(held).values()] == [SHARED]
    assert store.catalog.others_changes == 0


def test_a_long_lived_grimoire_reads_what_another_process_wrote_by_its_next_query(grimoire):
    """A query's snapshot ends with it: the next query of the same Grimoire (an adapter keeps one for a
    session) finds what another process wrote since, a read counted in between (a write of its own) refuses
    nothing, and the WAL the other process wrote to is not pinned meanwhile."""
    first = grimoire.add("Queues drain hourly", category="fact").id
    assert [hit.entry.id for hit in grimoire.query("hourly")] == [first]
    assert not wal_pinned(Path.cwd())
    added = mem("add", "-c", "fact", "Workers drain hourly too")
    assert added.code == 0
    grimoire.store.reads.note_access(first, 0.0)
    assert {hit.entry.id for hit in grimoire.query("hourly")} == {first, added.out.strip()}
    # Reads outside a block (a listing) hold no snapshot either.
    assert len(grimoire.store.entries()) == 3  # and wal_pinned's
    assert mem("add", "-c", "fact", "The nightly backup runs hourly").code == 0
    assert len(grimoire.store.entries()) == 4
    assert not wal_pinned(Path.cwd())


def test_a_first_read_that_re_indexes_a_file_holds_no_snapshot_after_it(grimoire):
    """The first read of a new Grimoire re-indexes a file edited by hand (a write of its own, outside any block):
    it takes no snapshot after it, so the next listing finds what another process added meanwhile."""
    FACTS.write_text(by_hand(SHARED, "the cache is redis"))
    assert [e.id for e in grimoire.store.entries()] == [SHARED]
    assert mem("add", "-c", "fact", "Workers scale with the queue").code == 0
    assert len(grimoire.store.entries()) == 2


def test_a_block_inside_a_block_reads_the_outer_ones_snapshot(grimoire):
    """`mem context` ranks inside its own block: a block inside it neither lets the snapshot go nor forgets
    the rows handed out before it."""
    grimoire.add("Queues drain hourly", category="fact")
    store = grimoire.store
    everything = Filter(at=grimoire.now().timestamp())
    with store.reading():
        held = store.ordered(everything, Order.NEWEST)
        with store.reading():
            assert store.load(held)
        assert store.catalog.db.in_transaction and store._handed.at is not None


def test_a_block_after_a_failure_an_earlier_call_met_starts_from_nothing_held(grimoire):
    """An earlier call (a listing) read rows; the catalog then failed. A long-lived caller's next query is a new
    block: it moves to memory and answers, as a new command would, rather than naming the cache."""
    first = grimoire.add("Queues drain hourly", category="fact").id
    assert [e.id for e in grimoire.store.entries()] == [first]
    corrupt_the_catalog(grimoire.store)
    assert [hit.entry.id for hit in grimoire.query("hourly")] == [first]
    assert grimoire.store.catalog.in_memory


def test_a_read_the_catalog_fails_under_after_a_read_under_the_lock_still_writes(grimoire):
    """The entry the write changes was read under the lock, then the catalog failed as the write checked its
    file: that check holds no rows, so it moves to a catalog in memory and the write lands."""
    kept = grimoire.add("Queues drain hourly", category="fact").id
    store = grimoire.store
    with store.lock():
        assert [e.id for e in store.entries()] == [kept]
        corrupt_the_catalog(store)
        store.write(store.category_path("fact"), {kept: None})
    assert store.catalog.in_memory and ids_in(FACTS) == []


def test_a_catalog_failing_under_a_kept_result_is_filled_from_the_files_again(grimoire):
    """validate's kept reports answer their default when the catalog fails; the next read fills the catalog in
    memory it moved to from the files, those this process had checked (here, the one a write checked) too."""
    kept = grimoire.add("Queues drain hourly", category="fact").id
    store = grimoire.store
    with store.lock():
        store.write(store.category_path("fact"), appended=[entry("MEM-20261122-005", "Workers scale with the queue")])
        corrupt_the_catalog(store)
        assert store.kept(lambda catalog: catalog.records(), "failed") == "failed"
        assert [e.id for e in store.entries()] == [kept]  # the write lands when the lock ends
    assert [e.id for e in store.entries()] == [kept, "MEM-20261122-005"]


def test_a_write_whose_catalog_failed_since_the_last_read_lands_from_a_catalog_in_memory(grimoire):
    """The catalog failed after the fact file was read: the write moves to a catalog in memory, reads the file
    into it, splices into the bytes it found, and the next read answers from it."""
    kept = grimoire.add("Queues drain hourly", category="fact").id
    store = grimoire.store
    assert [e.id for e in store.entries()] == [kept]
    corrupt_the_catalog(store)
    with store.lock():
        store.write(store.category_path("fact"), appended=[entry("MEM-20261122-005", "Workers scale with the queue")])
    assert store.catalog.in_memory
    assert ids_in(FACTS) == [kept, "MEM-20261122-005"]
    assert [e.id for e in store.entries()] == [kept, "MEM-20261122-005"]


def test_a_file_another_program_creates_after_a_read_under_the_lock_is_written_as_found(grimoire):
    """The file was missing when a read under the lock checked it (no rows, nothing to re-read); a program that
    ignores mem's lock writes it; the write then reads it again rather than trusting the catalog's nothing."""
    store = grimoire.store
    FACTS.unlink(missing_ok=True)
    with store.lock():
        assert store.entries() == []
        FACTS.write_text(by_hand(SHARED, "the cache is redis"))
        store.write(store.category_path("fact"), appended=[entry("MEM-20261122-005", "Workers scale with the queue")])
    assert ids_in(FACTS) == [SHARED, "MEM-20261122-005"]
    assert [e.id for e in store.entries()] == [SHARED, "MEM-20261122-005"]


def test_a_file_removed_between_its_stat_and_its_read_answers_for_nothing(grimoire):
    """The catalog saw a hand-edited file changed (stat), and another program removed it before mem read it:
    the read finds no bytes, so the file's rows go, stamped as seen; the next read finds no file."""
    grimoire.add("Queues drain hourly", category="fact")
    store = grimoire.store
    FACTS.write_text(FACTS.read_text() + by_hand(SHARED, "the cache is redis"))
    store.refresh()
    with at_the_first_call_of("_check_inside", FACTS.unlink) as done:  # between `_changed`'s stat and its read
        assert store.entries() == []
    assert done and not FACTS.exists()
    store.refresh()
    assert store.entries() == [] and FACTS.as_posix() not in store.catalog.records()


def test_a_damaged_file_fixed_while_a_write_waits_is_written_and_read(grimoire):
    learnings = MEMORY / "learnings.yaml"
    good = learnings.read_text()
    learnings.write_text("- id: [\n")

    def fix_by_hand(_written):
        learnings.write_text(good)
        return []

    new = add_many(
        grimoire.store, [Request("Caches live a day", category="learning")], grimoire.now(), after=fix_by_hand
    )
    assert [e.id for e in grimoire.store.entries()] == [new[0].id]


def test_the_tiers_a_store_reads_honour_an_aging_recorded_beside_the_grimoire(grimoire):
    """An entry a capped aging moved (`mem age --max`, its record in local/aged.json) is long-term for good."""
    from grimoire_cli.retrieval.tiers import split

    held = grimoire.add("Queues drain hourly", category="fact").id
    assert split(grimoire.store, grimoire.now()) == ([held], [])
    (MEMORY / "local" / "aged.json").write_text(json.dumps({"ids": [held]}))
    assert split(Store(grimoire.config), grimoire.now()) == ([], [held])


@contextmanager
def files_limited_to(size: int):
    """This process may not grow a file past `size` bytes (RLIMIT_FSIZE, as a quota does): a write past it fails
    with EFBIG, an error that names no file (SIGXFSZ ignored, so it is an error and not the end of the process)."""
    ignored = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, ignored)


def test_a_write_the_disk_refuses_naming_no_file_is_one_error_line_naming_the_grimoire(grimoire):
    """A full disk or a quota fails the write itself, and the error names no file: the line names the grimoire's
    folder, and nothing lands."""
    kept = grimoire.add("Queues drain hourly", category="fact").id
    before = FACTS.read_bytes()
    with files_limited_to(len(before) + 16):
        run = mem("add", "-c", "fact", "Workers scale with the length of the queue", "--confidence", "0.9")
    assert (run.code, run.err) == (
        Damaged.exit_code,
        "error: grimoires/loa/memory: cannot write: File too large "
        "(hint: check the permissions of the grimoire's folders and the free space)\n",
    )
    assert FACTS.read_bytes() == before and ids_in(FACTS) == [kept]


def test_a_recovery_the_system_refuses_is_one_error_line(grimoire):
    """A folder where the journal's temp file goes: `mem add` says so in one line, no traceback."""
    (journal.cache_folder(grimoire.store.cache) / "journal.tmp").mkdir()
    run = mem("add", "-c", "fact", "Queues drain hourly", "--confidence", "0.9")
    assert (run.code, run.err) == (
        Damaged.exit_code,
        "error: grimoires/loa/memory/.cache: cannot write: Is a directory "
        "(hint: check the permissions of the grimoire's folders and the free space)\n",
    )
    assert ids_in(FACTS) == []
    (grimoire.store.cache / "journal.tmp").rmdir()
    (MEMORY / ".facts.yaml.x.mem-tmp").mkdir()  # where a crashed writer's temp file would be swept
    assert mem("add", "-c", "fact", "Queues drain hourly", "--confidence", "0.9").err.startswith(
        "error: grimoires/loa/memory: cannot write: Is a directory"
    )


def test_a_load_outside_a_reading_block_is_refused(grimoire):
    """Rows a read handed out may name other entries by the time they are loaded, unless both sit in one block."""
    kept = grimoire.add("Queues drain hourly", "fact").id
    store = grimoire.store
    rowids = store.ordered(Filter(at=grimoire.now().timestamp()), Order.NEWEST)
    with pytest.raises(
        RuntimeError, match="^Store.load outside a reading block: its rows may name other entries by now$"
    ):
        store.load(rowids)
    with store.reading():
        assert [entry.id for entry in store.load(rowids).values()] == [kept]
