"""Episodic memory (SABRE): mem episode / episodes, and --since/--until on list, query and episodes."""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import examples, git, mem
from hypothesis import given, settings
from hypothesis import strategies as st

EPISODES = Path("grimoires/loa/memory/episodes.yaml")


def _episode(*args, when: str | None = None) -> str:
    result = mem("episode", *args, env={"MEM_NOW": when} if when else None)
    assert result.code == 0, result.err
    return result.out.strip()


@pytest.fixture
def three(sabre):
    """Three episodes: an old failure, a deploy, a recent success of the old event."""
    old = _episode(
        "db-migration",
        "--context",
        "table=users",
        "--context",
        "env=prod",
        "--learned",
        "Lock timeout on the users table; run migrations off-peak",
        "--outcome",
        "failure",
        when="2026-10-01T10:00:00Z",
    )
    deploy = _episode(
        "deploy",
        "--context-json",
        '{"service": "api", "replicas": 3}',
        "--learned",
        "The blue green switch took 40 seconds",
        "--outcome",
        "success",
        when="2026-11-15T10:00:00Z",
    )
    recent = _episode("db-migration", "--context", "table=orders", "--outcome", "success", when="2026-11-21T10:00:00Z")
    return old, deploy, recent


def test_an_episode_keeps_its_fields_and_a_readable_content(sabre):
    entry_id = _episode(
        "deploy",
        "--context",
        "service=api",
        "--context-json",
        '{"service": "web", "replicas": 3}',
        "--learned",
        "Drain the queue first",
        "--outcome",
        "failure",
    )
    shown = json.loads(mem("show", entry_id, "--json").out)
    assert (shown["event"], shown["outcome"], shown["learned"]) == ("deploy", "failure", "Drain the queue first")
    assert shown["context"] == {"service": "api", "replicas": 3}  # a --context pair wins over the same key in JSON
    assert shown["content"] == "deploy (failure): Drain the queue first [service=api, replicas=3]"
    assert shown["ttl"] == "180d" and shown["expires_at"] == "2027-05-21T10:00:00Z"
    assert mem("validate").code == 0
    text = EPISODES.read_text()
    assert "Add with `mem episode EVENT`" in text  # the new file's header says how it is written
    assert git("status", "--porcelain", cwd=sabre).split() == ["M", str(EPISODES)]


def test_the_same_episode_again_is_another_occurrence_not_a_duplicate(sabre):
    first = _episode("flaky-test", "--context", "test=test_merge")
    second = _episode("flaky-test", "--context", "test=test_merge")
    assert first != second
    assert [h["id"] for h in json.loads(mem("episodes", "--event", "flaky-test", "--json").out)] == [second, first]


def test_episodes_rank_by_event_lesson_and_context_values(three):
    old, deploy, recent = three
    # A context value only the old episode has; a lesson word; a JSON context number.
    assert [h["id"] for h in json.loads(mem("episodes", "users", "--json").out)] == [old]
    assert [h["id"] for h in json.loads(mem("episodes", "seconds", "--json").out)] == [deploy]
    assert [h["id"] for h in json.loads(mem("episodes", "replicas", "--json").out)] == [deploy]
    # Both db-migration episodes match their event; the recent one ranks first (recency).
    hits = json.loads(mem("episodes", "migration", "--json").out)
    assert [h["id"] for h in hits] == [recent, old] and hits[0]["score"] > hits[1]["score"]
    # Without a query: newest first.
    listed = mem("episodes").out.splitlines()
    assert [line.split()[1] for line in listed] == [recent, deploy, old]


def test_episodes_filter_by_event_and_time(three):
    old, deploy, recent = three
    ids = lambda *args: [h["id"] for h in json.loads(mem("episodes", *args, "--json").out)]
    assert ids("--event", "db-migration") == [recent, old]
    assert ids("--since", "30d") == [recent, deploy]  # now is 2026-11-22T10:00Z
    assert ids("--until", "2026-11-15") == [deploy, old]  # a date alone includes that day
    assert ids("--since", "2026-11-01", "--until", "2026-11-20") == [deploy]
    assert ids("migration", "--since", "48h") == [recent]
    assert ids("-n", "1") == [recent]
    nothing = mem("episodes", "migration", "--event", "deploy")
    assert nothing.code == 1 and nothing.out == "" and "no episodes match" in nothing.err


def test_since_and_until_filter_list_and_query(repo):
    assert (
        mem("add", "-c", "fact", "The deploy uses blue green slots", env={"MEM_NOW": "2026-11-01T10:00:00Z"}).code == 0
    )
    newer = mem(
        "add", "-c", "fact", "The deploy pipeline runs on tuesdays", env={"MEM_NOW": "2026-11-20T10:00:00Z"}
    ).out.strip()
    assert [e["id"] for e in json.loads(mem("list", "--since", "7d", "--json").out)] == [newer]
    assert len(json.loads(mem("list", "--until", "2026-11-20", "--json").out)) == 2
    assert [h["id"] for h in json.loads(mem("query", "deploy", "--since", "2026-11-15", "--json").out)] == [newer]
    missed = mem("query", "deploy", "--since", "1d")
    assert "2 created outside the time window (--since/--until)" in missed.err


@pytest.mark.parametrize(
    "args, message",
    [
        (("list", "--since", "yesterday"), "cannot read --since 'yesterday'"),
        (("query", "deploy", "--until", "soon"), "cannot read --until 'soon'"),
        (("list", "--since", "2026-11-20", "--until", "2026-11-01"), "is after --until"),
    ],
)
def test_a_bad_time_window_is_one_error_line(repo, args, message):
    result = mem(*args)
    assert result.code == 2 and message in result.err and len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (("episode", "Deploy Failed"), "bad event name"),
        (("episode", "deploy", "--outcome", "meh"), "bad outcome 'meh'"),
        (("episode", "deploy", "--context", "novalue"), "bad --context"),
        (("episode", "deploy", "--context-json", "[1]"), "--context-json must be a JSON object"),
        (("episode", "deploy", "--context-json", "{"), "--context-json is not JSON"),
        (("episode", "deploy", "--context-json", '{"a": NaN}'), "NaN is not a JSON number"),
        (("episode", "deploy", "--context-json", '{"a": -Infinity}'), "-Infinity is not a JSON number"),
        (("episode", "deploy", "--learned", " "), "--learned is empty"),
        (("episode", "deploy", "--learned", "the key is AKIAIOSFODNN7EXAMPLE"), "refusing to store a secret"),
        (("episodes", "--event", "Bad Event"), "bad event name"),
        (("episodes", "-n", "0"), "the limit must be a whole number from 1 to"),
    ],
)
def test_bad_episode_input_writes_nothing(sabre, args, message):
    before = EPISODES.read_bytes()
    result = mem(*args)
    assert result.code in (2, 3) and message in result.err and "Traceback" not in result.err
    assert EPISODES.read_bytes() == before


def test_episodes_need_an_episode_category(repo):
    result = mem("episode", "deploy")
    assert result.code == 2 and "no category of kind episode" in result.err and "mem init --preset sabre" in result.err
    assert mem("episodes").code == 2


def test_the_python_api(sabre):
    from grimoire_cli import Grimoire

    g = Grimoire.open(sabre)
    entry = g.episodes.add("db-migration", context={"table": "users"}, learned="Run it off-peak", outcome="failure")
    assert entry.data["event"] == "db-migration" and entry.category == "episode"
    assert [h.entry.id for h in g.episodes.list(event="db-migration")] == [entry.id]
    assert [h.entry.id for h in g.episodes.list("off-peak users")] == [entry.id]
    assert g.episodes.list(since="2026-11-23") == []


NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


@settings(max_examples=examples(200))
@given(amount=st.integers(0, 999_999), unit=st.sampled_from("mhd"))
def test_a_relative_window_is_that_long_back_from_now(amount, unit):
    from grimoire_cli.core.clock import back_time

    span = {"m": timedelta(minutes=amount), "h": timedelta(hours=amount), "d": timedelta(days=amount)}[unit]
    try:
        expected = NOW - span
    except OverflowError:  # before year 1: the beginning of time
        expected = datetime.min.replace(tzinfo=UTC)
    assert back_time(f"{amount}{unit}", NOW) == expected


@settings(max_examples=examples(200))
@given(text=st.text(max_size=20))
def test_any_window_text_is_a_time_or_one_bad_input(text):
    from grimoire_cli.core.clock import back_time
    from grimoire_cli.core.errors import BadInput

    try:
        when = back_time(text, NOW)
    except BadInput as exc:
        assert "cannot read --since" in str(exc)
    else:
        assert when.tzinfo is not None


def test_an_episode_event_is_named_like_a_task_event(sabre):
    """The same names as `mem event`: dotted ones too, in the file and in validate."""
    entry_id = _episode("data.loaded", "--outcome", "success")
    assert json.loads(mem("show", entry_id, "--json").out)["event"] == "data.loaded"
    assert mem("validate").code == 0
