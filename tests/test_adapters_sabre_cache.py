"""SABRE's caching of undecorated helpers (`Sabre.helpers`): a call slower
than the threshold is persisted for an hour as `@auto_cache()` would, a
faster one stays in working memory. "Slow" is made certain: a helper that
sleeps 0.05 s against a threshold of 0.01 s, a fast one against 10 s."""

from __future__ import annotations

import json
import time
from datetime import timedelta

from conftest import git, mem

from grimoire_cli import Grimoire
from grimoire_cli.adapters.sabre import Sabre
from grimoire_cli.core.runtime import Runtime

SLOW, FAST = 0.01, 10.0  # thresholds: a 0.05 s sleep is always slower than SLOW, a dict lookup faster than FAST
SCHEMA = {"table": "orders", "columns": ["id", "amount"]}


def adapter(path) -> Sabre:
    return Sabre(Grimoire.open(path, runtime=Runtime.from_environment()))


def cached_facts() -> list[dict]:
    found = mem("facts", "cache.*", "--json")
    return json.loads(found.out) if found.code == 0 else []


def test_a_slow_helper_is_persisted_for_an_hour_and_served_from_it(sabre):
    helpers = adapter(sabre)
    calls = []

    class Database:  # as SABRE's runtime injects it: a class of static helpers
        @staticmethod
        def get_schema(table):
            calls.append(table)
            time.sleep(0.05)
            return {**SCHEMA, "table": table}

    database = helpers.helpers(Database, threshold=SLOW)
    assert database.get_schema("orders") == database.get_schema("orders") == SCHEMA
    assert database.get_schema("users")["table"] == "users"
    assert calls == ["orders", "users"]

    # Persisted as @auto_cache() persists: its key, the local `cache` category, a 1 h TTL, nothing to commit.
    facts = cached_facts()
    assert [(f["category"], f["ttl"]) for f in facts] == [("cache", "1h")] * 2
    assert all(f["key"].startswith("cache.") and "database_get_schema.h" in f["key"] for f in facts)
    expected = {"hits": 1, "misses": 2, "categories": {"cache": {"hits": 1, "misses": 2}}}
    assert helpers.memory_stats()["cache"] == expected
    assert json.loads(mem("stats", "--json").out)["cache"] == expected
    assert git("status", "--porcelain", cwd=sabre) == ""

    # Another runtime (another process) is served from it too; an hour later the helper runs again.
    again = adapter(sabre)
    later = again.helpers(Database, threshold=SLOW)
    assert later.get_schema("orders") == SCHEMA and calls == ["orders", "users"]
    again.grimoire.runtime.fixed_now = again.grimoire.now() + timedelta(seconds=3601)
    assert later.get_schema("orders") == SCHEMA and calls == ["orders", "users", "orders"]


def test_a_fast_helper_stays_in_working_memory(sabre):
    helpers = adapter(sabre)
    calls = []

    def calculate_mrr():
        calls.append(1)
        return 47000

    namespace = helpers.helpers({"calculate_mrr": calculate_mrr, "limit": 3}, threshold=FAST)
    assert namespace["calculate_mrr"]() == namespace["calculate_mrr"]() == 47000
    assert calls == [1, 1]  # never served: a fast call runs again
    assert namespace["limit"] == 3
    assert list(helpers.working.results.values()) == [47000]
    assert cached_facts() == []
    assert helpers.memory_stats()["cache"] == {"hits": 0, "misses": 0, "categories": {}}
