"""Loa's memory protocol (the Loa design's calls) over a real grimoire: each of its
operations, as its protocol describes them, on the files Loa reads."""

from __future__ import annotations

import json

import pytest
import yaml
from adapter_examples import EXAMPLES, played
from adapter_examples import LOA_SOURCE as SOURCE
from conftest import git, mem

from grimoire_cli import Grimoire
from grimoire_cli.adapters.loa import Loa
from grimoire_cli.core.clock import parse_time
from grimoire_cli.core.errors import BadInput, Refused
from grimoire_cli.core.runtime import Runtime


def test_loas_operations_run_as_its_protocol_describes(repo, tmp_path):
    namespace = played(EXAMPLES["loa"], repo, tmp_path).names
    fact, learning, error = namespace["fact"], namespace["learning"], namespace["error"]
    assert fact["id"].startswith("MEM-") and fact["source"]["agent"] == "implementing-tasks"
    assert learning["ttl"] == "90d" and learning["expires_at"] and fact["ttl"] == "permanent"
    on_disk = yaml.safe_load((repo / "grimoires/loa/memory/learnings.yaml").read_text())
    assert on_disk[0]["id"] == learning["id"] and on_disk[0]["summary"]

    assert [e["id"] for e in namespace["facts"]] == [fact["id"]]
    assert [e["id"] for e in namespace["tagged"]] == [learning["id"]]
    assert [e["id"] for e in namespace["queried"]] == [learning["id"]]
    assert [e["id"] for e in namespace["oracle"]] == [learning["id"]]

    newer = namespace["newer"]
    assert newer["supersedes"] == fact["id"]
    assert Grimoire.open(repo).show(fact["id"]).superseded_by == newer["id"]  # kept for audit
    assert [e["id"] for e in namespace["facts_now"]] == [newer["id"]]

    effectiveness = namespace["effectiveness"]  # after success, success, failure, True, True
    assert (effectiveness["applications"], effectiveness["successes"], effectiveness["score"]) == (5, 4, 80)

    # A month later the error's 30 days were over: the session-start check archived it, committed.
    assert namespace["checked"]["archived"] == [error["id"]]
    assert namespace["archived"] == []
    archived = yaml.safe_load((repo / "grimoires/loa/memory/archive/errors.yaml").read_text())
    assert archived[0]["archived"] is True and archived[0]["archive_reason"] == "expired"


def test_below_its_floor_a_memory_is_refused_and_retrieval_is_capped(repo):
    loa = Loa(Grimoire.open(repo))
    with pytest.raises(Refused, match="below the preference floor"):
        loa.create("Maybe the cache is stale on mondays", "preference", 0.3)
    for n in range(12):
        loa.create(f"Preference number {n} about formatting", "preference", 0.9)
    assert len(loa.retrieve(category="preference")) == 10  # retrieval.max_per_query


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda loa: loa.create("x y z", "fact", 0.9, "sess-1"), "source is not a mapping"),
        (lambda loa: loa.record_application("MEM-20261122-001", "maybe"), "bad outcome"),
    ],
)
def test_bad_input_says_what_to_give(repo, call, message):
    with pytest.raises(BadInput, match=message):
        call(Loa(Grimoire.open(repo)))


def test_archived_memories_are_kept_for_the_configured_period_then_purged(repo):
    runtime = Runtime.from_environment()  # its clock moves below
    loa = Loa(Grimoire.open(repo, runtime=runtime))
    with pytest.raises(BadInput, match="retention is not configured"):
        loa.purge_archive()
    config = repo / ".loa.config.yaml"
    config.write_text(config.read_text() + "  archive: {retention_days: 60}\n")
    loa = Loa(Grimoire.open(repo, runtime=runtime))
    error = loa.create("pytest -x hides the second failure; run without -x in CI", "error", 0.7, SOURCE)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "memories", cwd=repo)
    runtime.fixed_now = parse_time("2026-12-23T10:00:00Z")  # the error's 30 days are over
    assert loa.archive() == [error["id"]]
    runtime.fixed_now = parse_time("2027-02-20T10:00:00Z")  # 59 days in the archive
    assert loa.purge_archive() == []
    runtime.fixed_now = parse_time("2027-02-21T10:00:00Z")
    assert loa.purge_archive() == [error["id"]]
    assert yaml.safe_load((repo / "grimoires/loa/memory/archive/errors.yaml").read_text()) is None
    assert git("log", "-1", "--format=%s", cwd=repo).startswith("mem archive --purge: 1 memory")


def test_the_oracle_reads_the_learnings_one_json_object_a_line_while_integrate_with_oracle_is_on(repo):
    learning = Loa(Grimoire.open(repo)).create("Run migrations before the seed script", "learning", 0.8, SOURCE)
    assert mem("add", "The seed script lives in scripts/", "-c", "fact").code == 0
    run = mem("query", "seed script", "--format", "oracle")
    assert run.code == 0, run.err
    records = [json.loads(line) for line in run.out.splitlines()]
    assert [(r["id"], r["summary"], r["confidence"]) for r in records] == [
        (learning["id"], "Run migrations before the seed script", 0.8)
    ]
    assert set(records[0]) == {"id", "score", "summary", "content", "tags", "confidence"}
    assert mem("query", "nothing like it", "--format", "oracle").code == 1
    for args in (("-c", "fact"), ("--all-scopes",)):
        refused = mem("query", "seed", "--format", "oracle", *args)
        assert refused.code == 2 and "learnings only" in refused.err
    bad = mem("query", "seed", "--format", "xml")
    assert bad.code == 2 and "use one of: text, json, oracle" in bad.err

    config = repo / ".loa.config.yaml"
    config.write_text(config.read_text().replace("integrate_with_oracle: true", "integrate_with_oracle: false"))
    off = mem("query", "seed script", "--format", "oracle")
    assert off.code == 2 and off.out == "" and "integrate_with_oracle is false" in off.err
    with pytest.raises(BadInput, match="integrate_with_oracle is false"):
        Loa(Grimoire.open(repo)).oracle_query("seed script")
    assert json.loads(mem("query", "seed script", "--format", "json").out)  # other formats are not Loa's oracle
