"""SABRE's caching of undecorated helpers (`Sabre.helpers`): a call slower
than the threshold is persisted for an hour as `@auto_cache()` would, a
faster one stays in working memory. "Slow" is made certain: a helper that
sleeps 0.05 s against a threshold of 0.01 s, a fast one against 10 s."""

from __future__ import annotations

import json
import time
import types
from datetime import timedelta

import pytest
from conftest import git, mem

from grimoire_cli import Grimoire
from grimoire_cli.adapters import sabre_cache
from grimoire_cli.adapters.sabre import Sabre
from grimoire_cli.core.errors import BadInput
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


AWS = "AKIA" + "IOSFODNN7EXAMPLE"  # split so this file holds no secret a scanner would flag


class Web:
    """An object helper, as `Web.get(url)` in SABRE's examples, with one result of each awkward sort."""

    def __init__(self):
        self.base = "https://example.invalid"
        self.calls = []

    def get(self, url):  # not JSON-able
        self.calls.append(url)
        time.sleep(0.05)
        return object()

    def token(self):  # a secret
        self.calls.append("token")
        time.sleep(0.05)
        return {"key": AWS}

    def fails(self):
        self.calls.append("fails")
        time.sleep(0.05)
        raise ValueError("the site is down")


def test_a_result_that_cannot_be_persisted_is_still_returned_and_nothing_is_written(sabre):
    """Not JSON-able, or a secret the guard refuses: the call returns its value
    (the cache is the runtime's shortcut, not its helper's job), nothing is
    persisted, the reason is kept in `working.refused` without the secret; the
    next call runs again. An exception is not cached either."""
    helpers = adapter(sabre)
    web = Web()
    timed = helpers.helpers(web, threshold=SLOW)

    assert timed.base == "https://example.invalid"
    assert type(timed.get("u")) is object and type(timed.get("u")) is object
    assert timed.token() == timed.token() == {"key": AWS}
    with pytest.raises(ValueError, match="down"):
        timed.fails()
    assert web.calls == ["u", "u", "token", "token", "fails"]

    refused = list(helpers.working.refused)
    assert refused[0].startswith("Web.get: the value is not JSON-able")
    assert refused[2].startswith("Web.token: refusing to store a secret") and AWS not in "".join(refused)
    assert cached_facts() == []
    assert not any(AWS[:8].encode() in p.read_bytes() for p in (sabre / "grimoires").rglob("*") if p.is_file())
    assert helpers.memory_stats()["cache"]["misses"] == 4  # slow calls that looked for a result and found none
    assert git("status", "--porcelain", cwd=sabre) == ""


def test_marked_helpers_are_left_as_they_are(sabre):
    """`@no_cache` is never persisted however slow; `@auto_cache`/`@cacheable`
    are cached by their own decorator (counted once, under their category)."""
    helpers = adapter(sabre)
    calls = []

    @helpers.no_cache
    def current_mrr():
        calls.append("mrr")
        time.sleep(0.05)
        return 47000

    @helpers.auto_cache(ttl=300, category="topology")
    def replicas(service):
        calls.append(service)
        return 3

    @helpers.cacheable
    def regions():
        calls.append("regions")
        return ["eu"]

    namespace = helpers.helpers({"current_mrr": current_mrr, "replicas": replicas, "regions": regions}, threshold=SLOW)
    assert namespace["current_mrr"] is current_mrr and namespace["replicas"] is replicas
    for _ in range(2):
        assert (namespace["current_mrr"](), namespace["replicas"]("api"), namespace["regions"]()) == (47000, 3, ["eu"])
    assert calls == ["mrr", "api", "regions", "mrr"]
    assert [f["ttl"] for f in cached_facts()] == ["1h", "5m"]  # regions (cacheable: auto_cache()), replicas
    assert helpers.memory_stats()["cache"]["categories"] == {
        "cache": {"hits": 1, "misses": 1},
        "topology": {"hits": 1, "misses": 1},
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [({"threshold": -1}, "bad threshold -1"), ({"threshold": "1s"}, "bad threshold '1s'"), ({"ttl": 0}, "bad ttl 0")],
)
def test_a_bad_threshold_or_ttl_is_bad_input_before_any_call(sabre, options, message):
    with pytest.raises(BadInput, match=message):
        adapter(sabre).helpers(Web(), **options)


def test_working_memory_keeps_only_the_latest(sabre, monkeypatch):
    """A runtime runs for days: the fast results and the refusals it keeps are bounded."""
    monkeypatch.setattr(sabre_cache, "WORKING_LIMIT", 2)
    helpers = adapter(sabre)
    fast = helpers.helpers(lambda n: n, threshold=FAST)
    unpersistable = helpers.helpers(lambda n: object(), threshold=0)  # threshold 0: every call is slow
    for n in range(3):
        fast(n), unpersistable(n)
    assert list(helpers.working.results.values()) == [1, 2]
    assert len(helpers.working.refused) == 2


def test_helpers_of_one_name_in_two_modules_are_cached_apart(sabre):
    helpers = adapter(sabre)
    modules = []
    for name in ("database", "warehouse"):
        module = types.ModuleType(name)
        exec(f"import time\ndef query(sql):\n    time.sleep(0.05)\n    return '{name}'", module.__dict__)
        modules.append(helpers.helpers(module, threshold=SLOW))
    database, warehouse = modules
    assert (database.query("select 1"), warehouse.query("select 1")) == ("database", "warehouse")
    assert (database.query("select 1"), warehouse.query("select 1")) == ("database", "warehouse")
    assert len(cached_facts()) == 2
