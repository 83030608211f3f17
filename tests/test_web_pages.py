"""`mem serve`'s pages at more than a handful of entries (issue 39's speed
work, benchmarks/bench_web.py): each page reads only what it draws, and
what it draws is still what the CLI prints."""

from __future__ import annotations

import json
import re

import pytest
from conftest import mem
from starlette.testclient import TestClient

from grimoire_cli import Grimoire
from grimoire_cli.integrations.web import pages
from grimoire_cli.integrations.web.app import build_app

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
