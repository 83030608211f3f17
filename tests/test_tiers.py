"""Hot and long-term memory, importance decay, `mem age` (docs/tiers-and-consolidation.md)."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import examples, git, mem
from hypothesis import given, settings
from hypothesis import strategies as st

from grimoire_cli.core.settings import Decay


def _add(*args, when="2026-11-22T10:00:00Z") -> str:
    result = mem("add", *args, env={"MEM_NOW": when})
    assert result.code == 0, result.err
    return result.out.strip()


def _config(repo: Path, text: str) -> None:
    path = repo / ".loa.config.yaml"
    path.write_text(path.read_text().replace("memory_schema:\n", "memory_schema:\n" + text, 1))


def _hits(*args) -> list[str]:
    result = mem("query", *args, "--json")
    assert result.code in (0, 1), result.err
    return [hit["id"] for hit in json.loads(result.out)]


@pytest.fixture
def aged(repo):
    """A young fact, an old one, an old one of importance 9 (pinned), an old one tagged keep-db."""
    young = _add("-c", "fact", "The cache runs on redis seven", "--importance", "4", when="2026-11-21T10:00:00Z")
    old = _add("-c", "fact", "The queue runs on rabbit", "--importance", "4", when="2026-11-10T10:00:00Z")
    pinned = _add("-c", "fact", "Never deploy the queue on fridays", "--importance", "9", when="2026-11-20T10:00:00Z")
    tagged = _add("-c", "fact", "The queue database is postgres", "-t", "keep-db", when="2026-11-15T10:00:00Z")
    return young, old, pinned, tagged


def test_decay_takes_a_point_a_week_above_three_and_never_goes_below():
    decay, week = Decay(), 7 * 86400
    assert [decay.of(9, age * week) for age in range(8)] == [9, 8, 7, 6, 5, 4, 3, 3]
    assert decay.of(2, 30 * week) == 2  # at or below the floor: as stored
    assert decay.of(9, week - 1) == 9 and decay.of(9, None) == 9
    assert Decay(every_days=0).of(9, 100 * week) == 9  # off


def test_show_gives_the_effective_importance_beside_the_stored_one(aged):
    _, _, pinned, _ = aged
    later = {"MEM_NOW": "2026-12-05T10:00:00Z"}  # 15 days: two points off
    shown = json.loads(mem("show", pinned, "--json", env=later).out)
    assert (shown["importance"], shown["effective_importance"], shown["memory_tier"]) == (9, 7, "long")
    text = mem("show", pinned, env=later).out
    assert "importance: 9 (effective 7)" in text and f"{pinned}  (fact, active)\n" in text  # tiers off: no tier named


def test_show_names_the_memory_tier_only_when_tiers_are_on_and_effectiveness_once_applied(aged, repo):
    young, _, pinned, _ = aged
    later = {"MEM_NOW": "2026-12-05T10:00:00Z"}
    _config(repo, "  tiers: {enabled: true}\n")
    assert mem("show", pinned, env=later).out.startswith(f"{pinned}  (fact, active, long-term)\n")
    assert mem("show", young).out.startswith(f"{young}  (fact, active, hot)\n")
    assert mem("apply", young, "--success").code == 0
    assert mem("show", young).out.startswith(f"{young}  (fact, active, hot, effectiveness unrated)\n")
    for _ in range(2):
        mem("apply", young, "--success")
    assert mem("show", young).out.startswith(f"{young}  (fact, active, hot, effectiveness high)\n")


def test_the_split_by_age_pin_and_retention(aged, repo):
    young, old, pinned, tagged = aged
    assert set(_hits("queue cache", "--tier", "hot")) == {young, pinned}
    assert set(_hits("queue cache", "--tier", "long")) == {old, tagged}
    assert set(_hits("queue cache", "--tier", "all")) == {young, old, pinned, tagged}
    # a retention per tag pattern (the longest wins) and per category
    _config(repo, "  tiers:\n    tags: {'keep-*': 240, other: 1}\n    categories: {fact: 12}\n")
    assert set(_hits("queue cache", "--tier", "hot")) == {pinned, tagged}  # young is 24h old: past fact's 12h
    assert mem("query", "queue", "--tier", "warm").err.startswith("error: unknown tier 'warm'")


def test_at_most_hot_max_are_hot_and_the_least_important_ages_first(repo):
    ids = [
        _add("-c", "fact", f"The queue note number {n}", "--importance", str(n), when="2026-11-22T09:00:00Z")
        for n in range(1, 6)
    ]
    _config(repo, "  tiers: {hot_max: 3}\n")
    assert set(_hits("queue", "--tier", "hot")) == set(ids[2:])
    aged = json.loads(mem("age", "--dry-run", "--json").out)
    assert (aged["hot"], aged["long"], aged["hot_ids"]) == (3, 2, sorted(ids[2:]))


def test_topic_is_a_tag_filter(aged):
    _, _, _, tagged = aged
    assert _hits("queue", "--topic", "keep-db") == [tagged]


def test_mem_age_reports_what_moved_since_it_last_looked_and_a_dry_run_records_nothing(aged, repo):
    young, _old, pinned, _tagged = aged
    first = mem("age")
    assert first.code == 0 and first.out.startswith("2 hot, 2 long-term") and "first `mem age` here" in first.out
    later = {"MEM_NOW": "2026-11-24T11:00:00Z"}
    dry = json.loads(mem("age", "--dry-run", "--json", env=later).out)
    assert (dry["moved_to_long"], dry["moved_to_hot"], dry["since"]) == ([young], [], "2026-11-22T10:00:00Z")
    again = mem("age", env=later)  # the dry run recorded nothing: the same move again
    assert "since 2026-11-22T10:00:00Z: 1 moved to long-term, 0 back to hot" in again.out and young in again.out
    assert json.loads(mem("age", "--json", env=later).out)["moved_to_long"] == []
    tight = json.loads(mem("age", "--json", "--older-than", "1h", "--max", "0", env=later).out)
    assert (tight["hot"], tight["moved_to_long"]) == (0, [pinned])
    assert (
        mem("age", "--older-than", "soon").err
        == "error: cannot read --older-than 'soon' (hint: give a span like 24h, 2d or 90m)\n"
    )
    assert git("status", "--porcelain", "--untracked-files=no", cwd=repo) == ""


def test_age_older_than_moves_for_good_in_local_state_and_as_a_tool(aged, repo):
    """Samaritan's aging (issue 37): a move `mem age --older-than` makes is kept, so the next read (another
    process, the tool) does not undo it; it is recorded in git-ignored local state, never in a tracked file."""
    from grimoire_cli import Grimoire
    from grimoire_cli.integrations.calls import invoke

    young, _old, pinned, _tagged = aged  # young is 24h old: hot by age (48h) until aged
    dry = json.loads(mem("age", "--older-than", "12h", "--dry-run", "--json").out)
    assert (dry["moved_to_long"], dry["recorded"]) == ([young], False)
    assert set(_hits("queue cache", "--tier", "hot")) == {young, pinned}  # the dry run moved nothing
    run = mem("age", "--older-than", "12h")
    assert run.code == 0 and "older than 12h: 1 moved to long-term for good" in run.out and young in run.out
    assert set(_hits("queue cache", "--tier", "hot")) == {pinned}  # the move stays; importance 9 stays hot
    assert [e["id"] for e in json.loads(mem("list", "--tier", "hot", "--json").out)] == [pinned]
    tool = invoke(lambda: Grimoire.open(repo), "age", {"older_than": "12h"})
    assert (tool["moved_to_long"], tool["hot_ids"], tool["recorded"]) == ([], [pinned], True)  # nothing moves twice
    newer = _add("-c", "fact", "The cache warms at noon")  # created after the aging: hot as any new memory
    assert set(_hits("cache", "--tier", "hot")) == {newer}
    record = Grimoire.open(repo).config.local_dir / "aged.json"
    assert json.loads(record.read_text())["at"] == "2026-11-22T10:00:00Z"
    assert git("check-ignore", str(record), cwd=repo).strip()
    git("add", "-A", cwd=repo)
    assert "aged.json" not in git("diff", "--cached", "--name-only", cwd=repo)


def test_age_max_rows_moves_at_most_n_the_least_important_first_and_they_stay(repo):
    """Samaritan's max_rows: a capped aging moves the least important (then the oldest) first, and
    what it moved stays long-term (recorded by id); what it left stays hot for a later aging."""
    from grimoire_cli import Grimoire
    from grimoire_cli.integrations.calls import invoke

    low, mid, high = (
        _add("-c", "fact", f"The {name} service moved", "--importance", importance, when=f"2026-11-21T0{hour}:00:00Z")
        for name, importance, hour in (("billing", "2", "9"), ("search", "4", "8"), ("mail", "6", "7"))
    )
    dry = json.loads(mem("age", "--older-than", "12h", "--max-rows", "2", "--dry-run", "--json").out)
    assert (dry["moved_to_long"], dry["hot_ids"], dry["recorded"]) == ([low, mid], [high], False)
    assert set(_hits("service", "--tier", "hot")) == {low, mid, high}
    run = mem("age", "--older-than", "12h", "--max-rows", "2", "--json")
    assert run.code == 0, run.err
    assert (json.loads(run.out)["moved_to_long"], json.loads(run.out)["hot_ids"]) == ([low, mid], [high])
    assert [e["id"] for e in json.loads(mem("list", "--tier", "hot", "--json").out)] == [high]  # the moves stay
    tool = invoke(lambda: Grimoire.open(repo), "age", {"older_than": "12h", "max_rows": 5})
    assert (tool["moved_to_long"], tool["hot_ids"]) == ([high], [])
    alone = mem("age", "--max-rows", "2")
    assert alone.code == 2 and alone.err.startswith("error: --max-rows caps the moves of an aging for good")


def test_age_older_than_with_max_moves_for_good_what_max_moved_too(repo):
    """`mem age --older-than 6h --max 1` says what it moved "for good": a memory younger than 6h
    that --max pushed out stays long-term at the next read too."""
    older = _add("-c", "fact", "The billing service moved", when="2026-11-22T09:50:00Z")
    newer = _add("-c", "fact", "The search service moved", "--importance", "6", when="2026-11-22T09:55:00Z")
    run = json.loads(mem("age", "--older-than", "6h", "--max", "1", "--json").out)
    assert (run["moved_to_long"], run["hot_ids"]) == ([older], [newer])
    assert [e["id"] for e in json.loads(mem("list", "--tier", "hot", "--json").out)] == [newer]


def test_stats_shows_the_split(aged):
    stats = json.loads(mem("stats", "--json").out)
    assert stats["split"] == {"hot": 2, "long": 2}
    assert "memory: 2 hot, 2 long-term" in mem("stats").out


def test_context_with_tiers_on_injects_hot_memories_only(aged, repo):
    young, old, pinned, tagged = aged
    before = json.loads(mem("context", "--json").out)["included"]
    assert set(before) == {young, old, pinned, tagged}  # tiers off (the default): everything may be injected
    _config(repo, "  tiers: {enabled: true}\n")
    block = json.loads(mem("context", "--json").out)
    assert set(block["included"]) == {young, pinned} and block["left_out"] == 0
    assert _hits("postgres") == [tagged]  # long-term: still found by query
    assert mem("context", "postgres").err.startswith('no memories match "postgres"; filtered out: 1 in the other tier')


def test_samaritan_context_most_important_first_limited_and_above_the_floor(repo):
    assert mem("init", "--preset", "samaritan").code == 0
    ids = [
        _add(
            "-c",
            "fact",
            f"Fact number {n} about the deploy",
            "--importance",
            str(1 + n % 10),
            when="2026-11-22T09:00:00Z",
        )
        for n in range(20)
    ]
    block = json.loads(mem("context", "--json").out)
    importance = {i: 1 + n % 10 for n, i in enumerate(ids)}
    assert len(block["included"]) == 15
    assert [importance[i] for i in block["included"]] == sorted(
        (importance[i] for i in block["included"]), reverse=True
    )
    assert min(importance[i] for i in block["included"]) >= 3


def test_reads_leave_the_tree_clean_and_two_clones_compute_the_same(aged, repo, tmp_path):
    _config(repo, "  tiers: {enabled: true, tags: {'keep-*': 240}}\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "memories", cwd=repo)
    clone = tmp_path / "clone"
    git("clone", "-q", str(repo), str(clone), cwd=tmp_path)
    later = {"MEM_NOW": "2026-11-25T08:00:00Z"}
    outputs = []
    for where in (repo, clone):
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(where)
            outputs.append(
                [
                    mem(*args, env=later).out
                    for args in (
                        ("context",),
                        ("query", "queue", "--tier", "long", "--json"),
                        ("age", "--dry-run", "--json"),
                        ("stats", "--json"),
                    )
                ]
            )
            assert git("status", "--porcelain", cwd=where) == ""
    assert outputs[0][:3] == outputs[1][:3]
    assert json.loads(outputs[0][3])["split"] == json.loads(outputs[1][3])["split"]
    shutil.rmtree(clone)


@settings(max_examples=examples(30), deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 10), st.integers(0, 200), st.sampled_from(["", "keep-a", "x"])),
        min_size=1,
        max_size=12,
    ),
    st.integers(0, 6),
)
def test_the_split_equals_the_rule_worked_out_by_hand(tmp_path_factory, items, hot_max):
    """Hot = young (per its retention) or pinned, at most hot_max of them by
    effective importance then newest; the catalog's SQL against Python."""
    import os

    from grimoire_cli import Grimoire
    from grimoire_cli.core.clock import parse_time

    path = tmp_path_factory.mktemp("split")
    git("init", "-q", cwd=path)
    cwd = os.getcwd()
    os.chdir(path)
    try:
        assert mem("init").code == 0
        _config(path, f"  tiers: {{hot_max: {hot_max}, hot_hours: 24, tags: {{'keep-*': 72}}}}\n")
        grimoire = Grimoire.open(path)
        now = parse_time("2026-11-22T10:00:00Z")
        written = grimoire.add_many(
            [
                {
                    "content": f"item {n}",
                    "category": "fact",
                    "importance": imp,
                    "tags": [tag] if tag else [],
                    "timestamp": _back(now, hours),
                }
                for n, (imp, hours, tag) in enumerate(items)
            ]
        )
        decay = Decay()
        rows = []
        for entry in written:
            age = now.timestamp() - entry.born
            retention = 72 if "keep-a" in entry.tags else 24
            candidate = age < retention * 3600 or decay.of(entry.importance, age) >= 8
            if candidate:
                rows.append((-decay.of(entry.importance, age), -entry.born, entry.id))
        expected = sorted(i for _, _, i in sorted(rows)[:hot_max])
        assert grimoire.lifecycle.age(dry_run=True).hot == expected
    finally:
        os.chdir(cwd)


def _back(now, hours):
    from datetime import timedelta

    from grimoire_cli.core.clock import iso

    return iso(now - timedelta(hours=hours))


def test_a_tightened_age_is_not_the_next_runs_baseline(aged):
    assert mem("age").code == 0
    assert json.loads(mem("age", "--max", "0", "--json").out)["recorded"] is False
    after = json.loads(mem("age", "--json").out)
    assert (after["moved_to_long"], after["moved_to_hot"]) == ([], [])
    for bad in ("²h", "9" * 300 + "h", "0.5h"):
        result = mem("age", "--older-than", bad)
        assert result.code == 2 and result.err.startswith("error: cannot read --older-than"), bad


def test_due_tasks_the_tiers_hide_are_shown_and_counted_once(repo):
    """Issue 33 item 4: sabre + samaritan, a fact, two tasks due in an hour,
    three days later: `left_out` was -2 (the due tasks were shown but not
    counted, since the tier hid them) and the footer said "-2 more"."""
    for preset in ("sabre", "samaritan"):
        assert mem("init", "--preset", preset).code == 0
    _add("-c", "fact", "The gateway listens on port 8080")
    tasks = [
        mem("task", "add", name, "--due", "+1h").out.strip() for name in ("Rotate the logs", "Renew the certificate")
    ]
    later = {"MEM_NOW": "2026-11-25T10:00:00Z"}
    block = json.loads(mem("context", "--json", env=later).out)
    assert (block["included"], block["left_out"]) == (tasks, 0)
    assert block["text"].endswith(
        "- MEM-20261122-003 (task, task due now): Renew the certificate\n_all hot memories with importance 3+ shown_\n"
    )
    # Room for one task: the other is left out
    small = json.loads(mem("context", "--json", "--budget", "54", env=later).out)
    assert (len(small["included"]), small["left_out"]) == (1, 1) and small["text"].endswith(
        "_1 more memory left out (`mem query` finds them)_\n"
    )
    # The fact is long-term: the query's selection is the tasks
    queried = json.loads(mem("context", "port", "--json", env=later).out)
    assert (queried["included"], queried["left_out"]) == (tasks, 0)
