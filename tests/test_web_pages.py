"""`mem serve`'s pages at more than a handful of entries (issue 39's speed
work, benchmarks/bench_web.py): each page reads only what it draws, and
what it draws is still what the CLI prints."""

from __future__ import annotations

import json
import re

import pytest
from conftest import mem, with_preset
from starlette.testclient import TestClient

from grimoire_cli import Grimoire
from grimoire_cli.core.model import sort_key
from grimoire_cli.integrations.web import pages
from grimoire_cli.integrations.web.app import build_app
from grimoire_cli.lifecycle.rules import expiring_within

HTML = {"accept": "text/html"}


def _client(repo) -> TestClient:
    return TestClient(build_app(lambda: Grimoire.open(repo)), base_url="http://127.0.0.1")


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
    assert _ids_on(first) == listed[: pages.ARCHIVE_PAGE]
    assert "130 archived" in first and "page 1 of 2" in first and 'href="/archive?page=2"' in first
    second = client.get("/archive?page=2", headers=HTML).text
    assert _ids_on(second) == listed[pages.ARCHIVE_PAGE :] and 'href="/archive?page=1"' in second
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
        assert [e.id for e in grimoire.expiring(days)] == before, days
    expiring = _client(varied).get("/overview.json").json()["expiring"]
    shown = [e["content"] for e in expiring]
    assert "a learning kept three days" in shown and not any("build.status" in text for text in shown)
    assert len(shown) == len(grimoire.expiring(pages.EXPIRING_DAYS)) >= 3
    assert [e["expires_at"] for e in expiring] == sorted(e["expires_at"] for e in expiring)

