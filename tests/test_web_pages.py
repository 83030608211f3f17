"""`mem serve`'s pages at more than a handful of entries (issue 39's speed
work, benchmarks/bench_web.py): each page reads only what it draws, and
what it draws is still what the CLI prints."""

from __future__ import annotations

import json
import re
import socket

import pytest
from conftest import mem, started, with_preset
from starlette.testclient import TestClient

from grimoire_cli import Grimoire
from grimoire_cli.core.model import sort_key
from grimoire_cli.integrations.web import pages, server
from grimoire_cli.integrations.web.app import build_app
from grimoire_cli.lifecycle.rules import expiring_within

HTML = {"accept": "text/html"}


def _client(repo) -> TestClient:
    return started(TestClient(build_app(lambda: Grimoire.open(repo)), base_url="http://127.0.0.1"))


def _cli_json(*args: str):
    result = mem(*args, "--json")
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


def _ids_on(page: str) -> list[str]:
    return re.findall(r'<td><a href="/entry/([^"]+)">', page)


@pytest.fixture
def big_archive(repo):
    """More archived entries than one archive page draws, some active ones."""
    grimoire = Grimoire.open(repo)
    written = grimoire.add_many(
        [{"content": f"archived note number {n} about the build cache", "category": "learning"} for n in range(130)]
    )
    grimoire.archive([e.id for e in written], reason="manual", commit=False)
    grimoire.add_many([{"content": "an active decision about postgres", "category": "decision"}])
    return repo


def test_the_archive_page_draws_a_page_at_a_time_in_the_order_of_mem_list(big_archive):
    listed = [e["id"] for e in _cli_json("list", "--archived")]
    assert len(listed) == 130
    client = _client(big_archive)
    first = client.get("/archive", headers=HTML).text
    assert _ids_on(first) == listed[: pages.PAGE]
    assert "130 archived" in first and "page 1 of 2" in first and 'href="/archive?page=2"' in first
    second = client.get("/archive?page=2", headers=HTML).text
    assert _ids_on(second) == listed[pages.PAGE :] and 'href="/archive?page=1"' in second
    assert "archived: manual" in second
    assert _ids_on(client.get("/archive?page=3", headers=HTML).text) == []
    assert client.get("/archive.json").json() == _cli_json("list", "--archived")  # the JSON keeps them all


@pytest.mark.parametrize("page", ["0", "x", "-1", "1.5"])
def test_a_page_that_is_no_page_number_is_bad_input(big_archive, page):
    response = _client(big_archive).get(f"/archive?page={page}", headers=HTML)
    assert response.status_code == 400 and "pages are numbered from 1" in response.text


@pytest.fixture
def varied(repo):
    """Entries in every state and effectiveness tier, some expiring within
    the overview's week, one living an hour (never said to be expiring)."""
    with_preset(repo, "sabre")
    assert mem("remember", "build.status", "green", "-c", "cache").code == 0  # ttl 1h
    grimoire = Grimoire.open(repo)
    at = {age: f"2026-11-{22 - age:02d}T09:00:00Z" for age in (0, 2, 5, 8, 12)}
    items = [
        {"content": f"an error seen {age} days ago, number {n}", "category": "error", "timestamp": at[age]}
        for n, age in enumerate((0, 2, 5, 8, 12, 12))
    ] + [
        {"content": "an error of last month", "category": "error", "timestamp": "2026-10-10T09:00:00Z"},
        {"content": "an error that expires in four days", "category": "error", "timestamp": "2026-10-27T09:00:00Z"},
        {"content": "a learning kept ten days", "category": "learning", "ttl": "10d", "timestamp": at[5]},
        {"content": "a learning kept three days", "category": "learning", "ttl": "3d", "timestamp": at[0]},
        {"content": "a permanent decision about postgres", "category": "decision", "timestamp": at[8]},
        {"content": "a decision that failed often", "category": "decision", "timestamp": at[2]},
        {"content": "a preference that was replaced", "category": "preference", "timestamp": at[12]},
        {"content": "a preference that went to the archive", "category": "preference", "timestamp": at[2]},
    ]
    written = {e.data["content"]: e.id for e in grimoire.add_many(items)}
    for success in (False, False, False, True):
        grimoire.apply(written["a decision that failed often"], success)
    grimoire.supersede(written["a preference that was replaced"], "a preference as it is now")
    grimoire.archive([written["a preference that went to the archive"]], reason="manual", commit=False)
    return repo


def _stats_of_every_entry(grimoire: Grimoire) -> dict:
    """`mem stats`'s counts as it computed them before the catalog counted: from every entry read whole."""
    moment = grimoire.now()
    entries = grimoire.entries()
    categories: dict[str, dict[str, int]] = {}
    tiers: dict[str, int] = {}
    for entry in entries:
        states = categories.setdefault(entry.category, {})
        states[entry.state(moment)] = states.get(entry.state(moment), 0) + 1
        tiers[entry.tier] = tiers.get(entry.tier, 0) + 1
    ordered = sorted(entries, key=sort_key)
    return {
        "entries": len(entries),
        "categories": categories,
        "tiers": tiers,
        "oldest": ordered[0].id,
        "newest": ordered[-1].id,
    }


def test_the_overview_counts_are_those_of_every_entry(varied):
    grimoire = Grimoire.open(varied)
    stats = _cli_json("stats")
    assert {name: stats[name] for name in ("entries", "categories", "tiers", "oldest", "newest")} == (
        _stats_of_every_entry(grimoire)
    )
    assert {"expired", "superseded", "archived", "active"} <= {s for c in stats["categories"].values() for s in c}
    assert {"low", "unrated"} <= set(stats["tiers"])
    hot, long = _cli_json("age", "--dry-run")["hot"], _cli_json("age", "--dry-run")["long"]
    assert stats["split"] == {"hot": hot, "long": long}
    assert _client(varied).get("/overview.json").json()["stats"] == stats


def test_the_overview_lists_what_expires_within_a_week_as_before(varied):
    grimoire = Grimoire.open(varied)
    moment = grimoire.now()
    for days in (0, 1, 7, 30):
        before = [e.id for e in grimoire.list() if expiring_within(e, moment, days)]
        assert [e.id for e in grimoire.lifecycle.expiring(days)] == before, days
    expiring = _client(varied).get("/overview.json").json()["expiring"]
    shown = [e["content"] for e in expiring]
    assert "a learning kept three days" in shown and not any("build.status" in text for text in shown)
    assert len(shown) == len(grimoire.lifecycle.expiring(pages.EXPIRING_DAYS)) >= 3
    assert [e["expires_at"] for e in expiring] == sorted(e["expires_at"] for e in expiring)


WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()


def _distinct(n: int) -> str:
    """A text no other `_distinct(m)` is near: its words drawn by n's digits in base 16."""
    return " ".join(WORDS[(n >> shift) % 16] + WORDS[(n * 7 + shift) % 16] for shift in (0, 4, 8, 12))


@pytest.fixture
def queue(repo):
    """A review queue longer than a page: errors expiring within the week,
    decisions rated low and ineffective, near-duplicate learnings and preferences."""
    grimoire = Grimoire.open(repo)
    soon = "2026-10-27T09:00:00Z"  # an error lives 30 days: it expires on 2026-11-26
    items = [{"content": f"error {_distinct(n)}", "category": "error", "timestamp": soon} for n in range(80)]
    items += [{"content": f"decision {_distinct(n)}", "category": "decision"} for n in range(3)]
    items += [
        {"content": f"the deploy runner needs a restart after the nightly build, case {n}", "category": "learning"}
        for n in range(25)
    ]
    items += [
        {"content": f"prefer small commits with clear messages, rule {n}", "category": "preference"} for n in (1, 2)
    ]
    written = grimoire.add_many(items)
    decisions = [e.id for e in written if e.category == "decision"]
    for outcomes, entry_id in (((False,) * 3, decisions[0]), ((True, False, False), decisions[1])):
        for success in outcomes:
            grimoire.apply(entry_id, success)
    return repo


def _review_of_every_entry(grimoire: Grimoire) -> list[dict]:
    """`mem review --json` as it was computed before the catalog kept the pairs: over every active entry read whole."""
    from grimoire_cli.lifecycle.rules import review

    kinds = {name: spec.kind for name, spec in grimoire.config.categories.items()}
    entries = grimoire.store.entries(include_archive=False, skip_damaged=True)
    return review(entries, grimoire.now(), grimoire.config.lifecycle["warn_before_archive_days"], kinds).to_list()


def test_the_review_queue_is_the_one_found_over_every_entry_kept_or_not(queue):
    grimoire = Grimoire.open(queue)
    expected = _review_of_every_entry(grimoire)
    sections = {s for e in expected for s in e["review"]["sections"]}
    assert sections == {"ineffective", "low", "expiring", "near-duplicate"} and len(expected) > pages.PAGE
    assert _cli_json("review") == expected  # the pairs computed, then kept
    assert _cli_json("review") == expected  # read from the catalog
    # A write changes what one category's pairs were computed from: they are computed again.
    grimoire.add_many([{"content": "prefer small commits with clear messages, rule 3", "category": "preference"}])
    grimoire.archive([e["id"] for e in expected if e["category"] == "learning"][:3], reason="manual", commit=False)
    changed = _review_of_every_entry(grimoire)
    assert changed != expected and _cli_json("review") == changed
    # Time moves: the errors expire, and their pairs and sections go with them.
    grimoire.runtime.fixed_now = grimoire.runtime.now().replace(month=12)
    later = _review_of_every_entry(grimoire)
    assert later != changed and grimoire.review().to_list() == later
    assert "expiring" not in {s for e in later for s in e["review"]["sections"]}


def test_the_review_page_draws_the_queue_a_page_at_a_time(queue):
    expected = _cli_json("review")
    client = _client(queue)
    first = client.get("/review", headers=HTML).text
    assert _ids_on(first) == [e["id"] for e in expected[: pages.PAGE]]
    assert f"{len(expected)} entries, page 1 of 2" in first and 'href="/review?page=2"' in first
    second = client.get("/review?page=2", headers=HTML).text
    assert _ids_on(second) == [e["id"] for e in expected[pages.PAGE :]]
    assert "near-duplicate" in second
    # An entry near many others names the first few, and says how many more the JSON holds.
    learning = next(e for e in expected[pages.PAGE :] if len(e["review"]["near_duplicates"]) > pages.NEAR_SHOWN)
    row = second[second.index(f'<a href="/entry/{learning["id"]}">') :].split("</tr>")[0]
    named = [d["id"] for d in learning["review"]["near_duplicates"]]
    assert re.findall(r'near <a href="/entry/([^"]+)">', row) == named[: pages.NEAR_SHOWN]
    assert f"and {len(named) - pages.NEAR_SHOWN} more near duplicates" in row
    assert client.get("/review.json").json() == expected  # the JSON keeps them all
    assert client.get("/review?page=x", headers=HTML).status_code == 400


def test_the_server_sends_each_answer_at_once():
    """An answer written in two parts (headers, then MCP's JSON) waited ~40 ms
    for the client's delayed ACK while Nagle held the second: every accepted
    connection has TCP_NODELAY, as uvicorn's own sockets would."""
    listening = server.listen("127.0.0.1", 0)
    with listening, socket.create_connection(listening.getsockname()[:2]):
        accepted, _ = listening.accept()
        with accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_each_review_page_is_its_slice_of_the_whole_queue(queue):
    """The page reads whole only the entries it shows; what it shows is still
    `review().page()`, the slice of `mem review --json`, as writes and time change it."""
    grimoire = Grimoire.open(queue)

    def same_pages() -> None:
        for first, last in ((0, pages.PAGE), (pages.PAGE, 2 * pages.PAGE), (50, 130), (500, 600), (0, None)):
            assert grimoire.lifecycle.review_page(first, last) == grimoire.review().page(first, last)
        whole = _review_of_every_entry(grimoire)
        assert grimoire.lifecycle.review_page(0, None) == (whole, len(whole))

    same_pages()
    learnings = [e.id for e in grimoire.review().entries() if e.category == "learning"]
    grimoire.archive(learnings[:2], reason="manual", commit=False)
    same_pages()
    grimoire.runtime.fixed_now = grimoire.runtime.now().replace(month=12)
    same_pages()


def test_a_review_page_makes_no_more_objects_for_the_pairs_it_does_not_show(queue):
    """Thousands of near-duplicate pairs off the page: the page read them
    all, each paired entry whole, and its objects lived long enough to reach
    the collector's oldest generation, whose full collections made the page's
    p95 2.5x its p50 at 10k entries (issue 39). Now the collections a page
    causes do not grow with the pairs it does not show."""
    import gc

    grimoire = Grimoire.open(queue)
    many = [f"the deploy runner needs a restart after the nightly build, case {n}" for n in range(100, 220)]
    grimoire.add_many([{"content": text, "category": "learning"} for text in many])
    assert len(grimoire.review().duplicates) > 4000
    pages.review_page(grimoire, None)  # the pairs computed and kept
    counted = []
    gc.callbacks.append(lambda phase, info: counted.append(info["generation"]) if phase == "start" else None)
    try:
        shown = pages.review_page(grimoire, None)
    finally:
        gc.callbacks.pop()
    assert len(shown["entries"]) == pages.PAGE and len(counted) <= 6, counted
