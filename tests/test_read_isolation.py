"""A read that hands catalog rows to a later read of the same command (a listing and its load, a queue and
its entries) reads one state of the catalog, though another process re-indexes a file between the two
(storage/handed.py). The catalog numbers a new row as the largest + 1, so the row of an entry a `git pull`
replaced comes back as the new entry's: without the block, the listing would show the entry that took the
number in place of the one it chose. A load outside a block is refused every time (`test_store_pinned.py`),
so a read path that loads outside its block fails every test that reaches it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from conftest import at_the_first_call_of, mem_process, row_of, with_preset

from grimoire_cli import Grimoire
from grimoire_cli.learning.tools import known_solutions
from grimoire_cli.lifecycle.archiving import expiring
from grimoire_cli.lifecycle.compaction import older_by_category
from grimoire_cli.storage.catalog.queries import Filter, Order

OTHER = "MEM-20260101-999"  # the id the pulled file gives the replaced entry's place
PULLED = "notes about kappa"  # and its text


def shown(result: Any) -> str:
    """What a read returned, as text to look for ids and contents in."""
    if isinstance(result, tuple):
        result = result[0]
    if isinstance(result, dict):
        result = list(result.values())
    if isinstance(result, list):
        result = [item.to_dict() if hasattr(item, "to_dict") else item for item in result]
    elif hasattr(result, "to_dict"):
        result = result.to_dict()
    return json.dumps(result, default=str)


# Each read: the preset it needs, what the grimoire holds before (the last entry added is the one another
# process's pull replaces, so the row numbered last comes back), and the read.
Setup = Callable[[Grimoire], Any]
Read = Callable[[Grimoire], Any]


def facts(**last: Any) -> Setup:
    def setup(g: Grimoire) -> Any:
        g.add("Queues drain hourly", "fact")
        g.add("Workers scale with the queue", "fact")
        return g.add("The cache is redis", "fact", **last)

    return setup


def insight(g: Grimoire) -> Any:
    return g.learning.add_insight("Retry the flaky upload once", applies_to="uploads")


READS: dict[str, tuple[str | None, Setup, Read]] = {
    "mem list": (None, facts(), lambda g: g.list()),
    "a page of mem list": (None, facts(), lambda g: g.list_page(1, 10)),
    "a fact by its key": (None, facts(key="cache"), lambda g: g.get("cache")),
    "mem facts": (None, facts(key="cache"), lambda g: g.facts.list()),
    "mem review": (None, facts(ttl="2d"), lambda g: g.review()),
    "what expires soon (mem check)": (None, facts(ttl="2d"), lambda g: expiring(g.store, g.now(), 7)),
    "a tool's known solutions": (
        None,
        lambda g: g.add("When pytest hangs, stop its xdist workers", "error", tags=["pytest"]),
        lambda g: known_solutions(g.store, ["pytest"])["pytest"],
    ),
    "what mem compact condenses": (
        None,
        facts(),
        lambda g: older_by_category(g.store, ["fact"], {"fact": 0}, g.now(), None)["fact"],
    ),
    "Reads.listed": (None, facts(), lambda g: g.store.reads.listed(Filter(at=g.now().timestamp()), Order.NEWEST)),
    "mem task list": ("sabre", lambda g: g.tasks.add("Rotate the deploy keys", on="deploy"), lambda g: g.tasks.list()),
    "a procedure": (
        "sabre",
        lambda g: g.procedures.add({"name": "deploy", "steps": ["build the wheel", "ship it"]}).entry,
        lambda g: g.procedures.get("deploy").entry,
    ),
    "mem chat recent": ("protea", lambda g: g.chat.add("user", "Where do the logs go?"), lambda g: g.chat.recent()),
    "mem insights": ("pms", insight, lambda g: g.learning.insights()),
}


@pytest.mark.parametrize("name", READS)
def test_a_read_shows_what_it_chose_though_another_process_reindexes_between_its_reads(repo, name):
    preset, setup, read = READS[name]
    if preset is not None:
        with_preset(repo, preset)
    grimoire = Grimoire.open(repo)
    chosen = setup(grimoire)
    path = repo / chosen.file
    before = path.read_text()
    start = before.index(f"- id: {chosen.id}")
    pulled = before[:start] + before[start:].replace(chosen.id, OTHER).replace(chosen.content, PULLED)

    def pull() -> None:
        number = row_of(repo, chosen.id)
        path.write_text(pulled)
        assert mem_process("stats", cwd=repo).returncode == 0  # another `mem` re-indexes the file
        assert row_of(repo, chosen.id) is None and row_of(repo, OTHER) == number  # the premise: the number came back

    grimoire = Grimoire.open(repo)  # a new command
    with at_the_first_call_of("load", pull, where="storage/store.py") as done:
        text = shown(read(grimoire))
    assert done
    assert chosen.id in text and chosen.content in text
    assert OTHER not in text and PULLED not in text
    grimoire.store.refresh()  # the next command reads the new state
    assert OTHER in shown(read(grimoire))


@pytest.mark.parametrize(
    "review",
    [lambda g: g.review(), lambda g: g.lifecycle.review_page(0, 10)],
    ids=["mem review", "the review page"],
)
def test_review_keeps_the_pairs_it_computed_after_its_reads_though_another_process_writes_meanwhile(repo, review):
    """Review computes a category's near-duplicate pairs inside its block and keeps them for the next review: a
    write of its own there would give the snapshot up, and another process's `mem add` meanwhile would refuse
    the rows held. It keeps them once its reads are done: the review answers, and the pairs are kept."""
    grimoire = Grimoire.open(repo)
    first = grimoire.add("The deploy runs at noon on weekdays", "fact").id
    second = grimoire.add("The deploy runs at noon on weekdays only", "fact").id

    def another_add() -> None:
        assert mem_process("add", "-c", "decision", "Use rabbitmq for the queue", cwd=repo).returncode == 0

    with at_the_first_call_of("alike_pairs", another_add) as done:
        text = shown(review(grimoire))
    assert done and first in text and second in text
    db = sqlite3.connect(repo / "grimoires/loa/memory/.cache/index.sqlite3")
    try:
        (pairs,) = db.execute("SELECT value FROM reports WHERE path='review near-duplicates of fact'").fetchone()
    finally:
        db.close()
    assert json.loads(pairs)[3:] == [first, second]  # one pair, flat: (rowid, rowid, score, id, id)
