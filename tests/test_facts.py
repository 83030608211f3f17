"""Keyed facts (SABRE's semantic memory): g.facts: remember, recall, list, cached."""

import json
from pathlib import Path

import pytest
from conftest import examples, git, mem
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

MEMORY = Path("grimoires/loa/memory")


def test_remember_and_recall_text(sabre):
    added = mem("remember", "db.engine", "postgres 16")
    assert added.code == 0, added.err
    assert mem("recall", "db.engine").out == "postgres 16\n"
    text = (sabre / MEMORY / "semantic.yaml").read_text()
    assert "key: db.engine" in text and "content: postgres 16" in text and "metadata" not in text


def test_json_values_come_back_typed(sabre):
    assert mem("remember", "db.users.schema", "-", input='{"rows": 12, "cols": ["id", "name"]}').code == 0
    assert json.loads(mem("recall", "db.users.schema").out) == {"rows": 12, "cols": ["id", "name"]}
    assert mem("remember", "db.port", "-", input="5432").code == 0
    assert mem("remember", "db.port.text", "5432").code == 0
    assert json.loads(mem("recall", "db.port", "--json").out)["value"] == 5432
    assert json.loads(mem("recall", "db.port.text", "--json").out)["value"] == "5432"
    from grimoire_cli import Grimoire

    g = Grimoire.open(sabre)
    assert g.facts.recall("db.port") == 5432 and g.facts.recall("db.port.text") == "5432"


def test_an_unchanged_value_writes_nothing(sabre):
    first = mem("remember", "user.name", "Ada")
    path = sabre / MEMORY / "semantic.yaml"
    before = path.read_bytes()
    again = mem("remember", "user.name", "Ada", "--json")
    assert again.code == 0 and json.loads(again.out)["written"] is False
    assert json.loads(again.out)["id"] == first.out.strip()
    assert path.read_bytes() == before
    assert mem("remember", "user.name", "Ada").err.startswith("unchanged: user.name")


def test_refresh_writes_the_same_value_again_and_restarts_its_ttl(sabre):
    first = mem("remember", "build.status", "green", "--ttl", "1m").out.strip()
    later = {"MEM_NOW": "2026-11-22T10:00:50Z"}
    again = mem("remember", "build.status", "green", "--refresh", "--json", env=later)
    assert again.code == 0 and json.loads(again.out)["written"] is True, again.err
    shown = json.loads(mem("show", json.loads(again.out)["id"], "--json").out)
    assert shown["supersedes"] == first and shown["ttl"] == "1m" and shown["expires_at"] == "2026-11-22T10:01:50Z"
    assert mem("recall", "build.status", env={"MEM_NOW": "2026-11-22T10:01:49Z"}).out == "green\n"


def test_a_new_value_supersedes_the_old(sabre):
    old = mem("remember", "user.name", "Ada").out.strip()
    new = mem("remember", "user.name", "Grace").out.strip()
    assert old != new
    assert mem("recall", "user.name").out == "Grace\n"
    chain = json.loads(mem("show", new, "--chain", "--json").out)
    assert [e["id"] for e in chain] == [old, new] and chain[0]["superseded_by"] == new
    # the same value under two keys is two facts, not a duplicate
    assert mem("remember", "owner.name", "Grace").code == 0
    assert [line.split(" = ")[0] for line in mem("facts").out.splitlines()] == ["owner.name", "user.name"]


def test_recall_leaves_git_clean_and_counts_in_the_catalog(sabre):
    entry_id = mem("remember", "user.name", "Ada").out.strip()
    git("commit", "-q", "-am", "a fact", cwd=sabre)
    for _ in range(3):
        assert mem("recall", "user.name").code == 0
    assert git("status", "--porcelain", cwd=sabre) == ""
    shown = json.loads(mem("show", entry_id, "--json").out)
    assert shown["accesses"] == {"count": 3, "last": "2026-11-22T10:00:00Z"}
    assert "recalled: 3 times" in mem("show", entry_id).out
    stats = json.loads(mem("stats", "--json").out)
    assert (stats["accessed"], stats["accesses"]) == (1, 3)


def test_short_ttls_expire(sabre):
    assert mem("remember", "build.status", "green", "--ttl", "10m").code == 0
    assert mem("recall", "build.status", env={"MEM_NOW": "2026-11-22T10:09:00Z"}).out == "green\n"
    gone = mem("recall", "build.status", env={"MEM_NOW": "2026-11-22T10:11:00Z"})
    assert gone.code == 1 and "missing or expired" in gone.err
    # after it expired, remembering the same value writes a new entry
    assert (
        json.loads(
            mem(
                "remember", "build.status", "green", "--ttl", "10m", "--json", env={"MEM_NOW": "2026-11-22T10:11:00Z"}
            ).out
        )["written"]
        is True
    )


def test_a_ttl_in_seconds_expires_after_those_seconds(sabre):
    assert mem("remember", "build.status", "green", "--ttl", "30s").code == 0
    assert mem("recall", "build.status", env={"MEM_NOW": "2026-11-22T10:00:29Z"}).out == "green\n"
    assert mem("recall", "build.status", env={"MEM_NOW": "2026-11-22T10:00:31Z"}).code == 1
    from grimoire_cli import Grimoire

    g = Grimoire.open(sabre)
    assert g.facts.remember("build.owner", "Ada", ttl="45s").entry.data["expires_at"] == "2026-11-22T10:00:45Z"


def test_facts_lists_keys_by_glob(sabre):
    for key, value in [("db.engine", "postgres"), ("db.port", "5432"), ("user.name", "Ada")]:
        assert mem("remember", key, value).code == 0
    assert mem("facts", "db.*").out == "db.engine = postgres\ndb.port = 5432\n"
    listed = json.loads(mem("facts", "--json").out)
    assert [(e["key"], e["value"]) for e in listed] == [
        ("db.engine", "postgres"),
        ("db.port", "5432"),
        ("user.name", "Ada"),
    ]
    assert mem("facts", "-c", "fact").out == ""
    assert mem("facts", "DB/*").code == 2


@pytest.mark.parametrize(
    "args,input,message",
    [
        (["remember", "Not.Lower", "x"], None, "bad key"),
        (["remember", "a..b", "x"], None, "bad key"),
        (["remember", "a.b", "-"], "{not json", "stdin is not a JSON value"),
        (["remember", "a.b", "   "], None, "the value is empty"),
        (["remember", "a.b", "x", "--ttl", "soon"], None, "bad ttl"),
        (
            ["remember", "a.b", "x", "-c", "Nope!"],
            None,
            "bad category name",
        ),  # an unknown one is added (new_categories)
        (["recall", "Bad Key"], None, "bad key"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(sabre, args, input, message):
    before = (sabre / MEMORY / "semantic.yaml").read_bytes()
    result = mem(*args, input=input)
    assert result.code == 2 and result.err.startswith("error: ") and message in result.err
    assert result.err.count("\n") == 1 and result.out == ""
    assert (sabre / MEMORY / "semantic.yaml").read_bytes() == before


def test_library_refuses_values_json_cannot_hold(sabre):
    from grimoire_cli import Grimoire
    from grimoire_cli.core.errors import BadInput

    g = Grimoire.open(sabre)
    for value in ({1, 2}, float("nan"), {"when": object()}):
        with pytest.raises(BadInput, match="not JSON-able"):
            g.facts.remember("a.b", value)
    assert g.facts.list() == []


def test_a_secret_value_is_refused(sabre):
    result = mem("remember", "deploy.token", "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    assert result.code == 2 and "secret" in result.err


def test_cached_remembers_results_locally(sabre):
    from grimoire_cli import Grimoire

    g = Grimoire.open(sabre)
    calls = []

    @g.facts.cached(key="db.{table}.rows", ttl="1h")
    def rows(table, limit=10):
        calls.append(table)
        return {"table": table, "rows": [1, 2, 3][:limit]}

    assert rows("users") == {"table": "users", "rows": [1, 2, 3]}
    assert rows("users") == {"table": "users", "rows": [1, 2, 3]}
    assert rows(table="orders", limit=1) == {"table": "orders", "rows": [1]}
    assert calls == ["users", "orders"]
    assert "key: db.users.rows" in (sabre / MEMORY / "local/cache.yaml").read_text()
    assert git("status", "--porcelain", cwd=sabre) == ""  # local: nothing to commit


def test_cached_counts_hits_and_misses_per_category_in_mem_stats(sabre):
    from grimoire_cli import Grimoire

    g = Grimoire.open(sabre)

    @g.facts.cached(key="db.{table}.rows")
    def rows(table):
        return [table]

    rows("users"), rows("users"), rows("users"), rows("orders")
    expected = {"hits": 2, "misses": 2, "categories": {"cache": {"hits": 2, "misses": 2}}}
    # Kept in the catalog, not in the process: a new process reads them, and no tracked file changed.
    assert json.loads(mem("stats", "--json").out)["cache"] == expected
    assert "cache: 2 hits, 2 misses (cache 2 hits, 2 misses)" in mem("stats").out
    assert Grimoire.open(sabre).stats().to_dict()["cache"] == expected
    assert git("status", "--porcelain", cwd=sabre) == ""


def test_cached_does_not_keep_exceptions_and_guards_values(sabre):
    from grimoire_cli import Grimoire
    from grimoire_cli.core.errors import Refused

    g = Grimoire.open(sabre)
    attempts = []

    @g.facts.cached(key="flaky.{n}")
    def flaky(n):
        attempts.append(n)
        if len(attempts) == 1:
            raise RuntimeError("down")
        return n * 2

    with pytest.raises(RuntimeError):
        flaky(1)
    assert flaky(1) == 2 and flaky(1) == 2
    assert attempts == [1, 1]

    @g.facts.cached(key="contact.{who}")
    def contact(who):
        return "write to ada.lovelace@example.org"

    with pytest.raises(Refused):
        contact("ada")
    assert g.facts.recall("contact.ada", None) is None


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"]), min_size=1, max_size=30).filter(str.strip),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text("abcdefgh", min_size=1, max_size=5), inner, max_size=4)
    ),
    max_leaves=8,
)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_json)
@example(value=[[], "\U00010000"])  # was written as a JSON surrogate pair, which YAML refuses
def test_any_json_value_comes_back_as_it_went_in(sabre, value):
    from grimoire_cli import Grimoire
    from grimoire_cli.core.errors import Refused
    from grimoire_cli.kinds.facts import same_value

    g = Grimoire.open(sabre)
    try:
        g.facts.remember("prop.value", value)
    except Refused:  # the guard refused something that reads like a secret or PII
        return
    assert same_value(g.facts.recall("prop.value"), value)
    # Read back from the file by a fresh catalog sync
    assert same_value(Grimoire.open(sabre).facts.recall("prop.value"), value)


def test_private_sections_never_reach_a_typed_value(sabre):
    assert (
        mem(
            "remember",
            "cfg.door",
            "-",
            input='{"note": "the side door <private>code 4711</private>", "n": ["a <private>x</private>"]}',
        ).code
        == 0
    )
    text = (sabre / MEMORY / "semantic.yaml").read_text()
    assert "4711" not in text and "<private>" not in text
    assert json.loads(mem("recall", "cfg.door").out) == {"note": "the side door ", "n": ["a "]}


def test_a_lone_surrogate_is_bad_input_not_damage(sabre):
    before = (sabre / MEMORY / "semantic.yaml").read_bytes()
    result = mem("remember", "k.y", "-", input='"\\ud800"')
    assert result.code == 2 and "lone surrogate" in result.err
    assert mem("remember", "k.z", "-", input='{"v": ["\\udc00"]}').code == 2
    assert (sabre / MEMORY / "semantic.yaml").read_bytes() == before


@pytest.mark.parametrize(
    "first,second", [([], ["-c", "cache", "--ttl", "1h"]), (["-c", "cache", "--ttl", "1h"], ["-c", "semantic"])]
)
def test_a_local_entry_and_a_tracked_one_never_supersede_each_other(sabre, first, second):
    assert mem("remember", "db.x", "hello", *first).code == 0
    refused = mem("remember", "db.x", "bye", *second)
    assert refused.code == 2 and "cannot supersede it (key db.x)" in refused.err
    assert "superseded_by" not in (sabre / MEMORY / "semantic.yaml").read_text()
    assert "superseded_by" not in (sabre / MEMORY / "local/cache.yaml").read_text()
    assert mem("recall", "db.x").out == "hello\n"


def test_cached_needs_a_local_category_and_a_good_key_before_it_runs(repo):
    from grimoire_cli import Grimoire
    from grimoire_cli.core.errors import BadInput

    g = Grimoire.open(repo)  # plain init: no local category
    with pytest.raises(BadInput, match="no local category"):
        g.facts.cached(key="db.{table}.count")
    assert mem("init", "--preset", "sabre").code == 0
    g = Grimoire.open(repo)
    calls = []

    @g.facts.cached(key="db.{table}.count")
    def count(table):
        calls.append(table)
        return 12

    with pytest.raises(BadInput, match="bad key"):
        count("Users")
    assert calls == []  # refused before the function ran
    assert count("users") == 12 and calls == ["users"]


def test_a_cache_value_is_not_reported_as_expiring(sabre):
    assert mem("remember", "build.status", "green", "-c", "cache").code == 0  # ttl 1h
    assert mem("add", "-c", "learning", "--ttl", "3d", "Flaky tests hide behind retries").code == 0
    check = json.loads(mem("check", "--json").out)
    assert len(check["expiring"]) == 1  # the 3-day learning, not the hour-long value
    assert mem("check", "--strict", env={"MEM_NOW": "2026-11-22T10:00:00Z"}).code == 1
    assert mem("archive", "--no-commit", env={"MEM_NOW": "2026-11-28T10:00:00Z"}).code == 0
    assert mem("check", "--strict").code == 0


def test_the_agent_personas_example_runs(sabre, monkeypatch):
    import re

    from conftest import ROOT

    block = re.search(
        r"```python\n(from grimoire_cli import Grimoire\n.*?)```",
        (ROOT / "docs" / "agent-personas.md").read_text(),
        re.S,
    ).group(1)
    assert mem("--scope", "data-analyst", "init").code == 0
    monkeypatch.chdir(sabre)
    namespace: dict = {}
    exec(compile(block, "docs/agent-personas.md", "exec"), namespace)  # the documented calls, as written
    g = namespace["g"]
    assert g.facts.recall("db.users.schema") == {"rows": 12, "cols": ["id", "email"]}
    assert [e.key for e in g.facts.list("db.*")] == ["db.users.schema"]
    assert g.config.scope == "data-analyst"
    # The episodes and procedures block, in the same session, each line as written.
    kinds = re.search(
        r"```python\n(g\.episodes\.add.*?)```", (ROOT / "docs" / "agent-personas.md").read_text(), re.S
    ).group(1)
    for line in kinds.splitlines():
        call, _, comment = line.partition("#")
        value = eval(compile(call.strip(), "docs/agent-personas.md", "eval"), namespace)
        if comment.strip().startswith("["):  # a shown result: the value must be it
            assert value == eval(comment.strip()), line
    assert [h.entry.data["event"] for h in g.episodes.list()] == ["db-migration"]
    assert g.stats().to_dict()["categories"]["procedure"] == {"active": 1}


def test_a_lone_surrogate_anywhere_in_an_entry_is_bad_input(sabre):
    from grimoire_cli import Grimoire
    from grimoire_cli.core.errors import BadInput

    g = Grimoire.open(sabre)
    before = {p: p.read_bytes() for p in (sabre / MEMORY).glob("*.yaml")}
    for options in (
        {"content": "K\udcffng is the gateway"},
        {"content": "Kong is the gateway", "summary": "K\udcffng"},
        {"content": "Kong is the gateway", "metadata": {"note": ["x\ud800"]}},
    ):
        with pytest.raises(BadInput, match="lone surrogate"):
            g.add(category="fact", **options)
    assert {p: p.read_bytes() for p in (sabre / MEMORY).glob("*.yaml")} == before
