"""Tool memory from the observation log (docs/learning.md):
statistics equal what the generator put in; errors grouped by shape; the
catalog reads only what the log gained."""

import json
import math
import os
import sys
from pathlib import Path

import pytest
from conftest import ROOT, mem

sys.path.insert(0, str(ROOT / "benchmarks"))
from executions import generate, truth

from grimoire_cli.learning.execution_log import normalise_error

LOG = Path("grimoires/loa/memory/local/observations.jsonl")


def _observe(records) -> None:
    result = mem("observe", "-", input="".join(json.dumps(r) + "\n" for r in records))
    assert result.code == 0, result.err


def _nearest_rank(values, share):
    ordered = sorted(values)
    return ordered[max(1, math.ceil(share * len(ordered))) - 1]


def test_the_statistics_equal_what_the_generator_put_in(repo):
    records = generate(800, seed=11)
    _observe(records[:500])
    _observe(records[500:])  # the catalog adds what the log gained
    expected = truth(records)
    found = {t["tool"]: t for t in json.loads(mem("tools", "--json").out)}
    assert set(found) == set(expected)
    for tool, want in expected.items():
        got = found[tool]
        assert (got["executions"], got["successes"], got["failures"]) == (
            want["executions"],
            want["successes"],
            want["failures"],
        )
        assert got["duration_ms"]["mean"] == round(sum(want["durations"]) / len(want["durations"]), 1)
        # percentiles at whole milliseconds
        assert got["duration_ms"]["p50"] == round(_nearest_rank([round(d) for d in want["durations"]], 0.5))
        assert got["duration_ms"]["p95"] == round(_nearest_rank([round(d) for d in want["durations"]], 0.95))
        assert got["mean_retries"] == round(sum(want["retries"]) / len(want["retries"]), 3)
        assert {c: (v["executions"], v["successes"]) for c, v in got["contexts"].items()} == {
            c: tuple(v) for c, v in want["contexts"].items()
        }
        assert sum(e["count"] for e in got["errors"]) == want["failures"]  # every failure has its error, grouped
    support = json.loads(mem("tools", "get_rates", "--context", "support", "--json").out)[0]
    per = expected["get_rates"]["contexts"]["support"]
    assert (support["executions"], support["successes"]) == tuple(per)


def test_errors_are_grouped_by_shape_and_kept_apart():
    assert normalise_error("can't connect to the database, won't retry") != normalise_error(
        "can't parse config.yaml, won't retry"
    )
    uuid_a, uuid_b = "2f1e9c0a-1b2c-4d3e-8f9a-0b1c2d3e4f5a", "91aa0c3b-77de-4e21-a0b9-1c2d3e4f5a6b"
    assert normalise_error(f"job {uuid_a} lost") == normalise_error(f"job {uuid_b} lost") == "job <id> lost"
    assert normalise_error("sha1 mismatch") != normalise_error("sha256 mismatch")


def test_errors_are_grouped_by_shape():
    assert (
        normalise_error("timeout after 30s on /srv/a/1.json")
        == normalise_error("timeout after 12s on /srv/b/7.json")
        == "timeout after <n>s on <path>"
    )
    assert normalise_error("carrier 'dhl' rejected the label") == normalise_error('carrier "ups" rejected the label')
    assert normalise_error("timeout after 30s on /srv/a/1.json") != normalise_error("facility 12 not found")
    assert normalise_error("user a@b.example failed, request 9f8e7d6c5b4a") == "user <email> failed, request <id>"


def test_the_catalog_reads_only_what_the_log_gained(repo):
    _observe(generate(50, seed=2))
    before = json.loads(mem("tools", "--json").out)
    # An edit of a line already read, past the log's first bytes (same size, same file), is not seen:
    # proof that what was read is not read again.
    text = LOG.read_bytes()
    at = text.rindex(b'"status":"completed"')
    LOG.write_bytes(text[:at] + b'"status":"xompleted"' + text[at + 20 :])
    assert json.loads(mem("tools", "--json").out) == before
    # A log rewritten from its start (same file, another content) is read again.
    LOG.write_bytes(LOG.read_bytes().replace(b'"status":"completed"', b'"status":"xompleted"', 1))
    assert json.loads(mem("tools", "--json").out) != before
    _observe(generate(10, seed=3))
    grown = json.loads(mem("tools", "--json").out)
    assert sum(t["executions"] for t in grown) == sum(t["executions"] for t in before) + sum(
        len(r["steps"]) for r in generate(10, seed=3)
    )
    # A replaced log (another file) is read again from the start.
    os.replace(LOG, LOG.with_suffix(".old"))
    _observe(generate(5, seed=4))
    assert sum(t["executions"] for t in json.loads(mem("tools", "--json").out)) == sum(
        len(r["steps"]) for r in generate(5, seed=4)
    )


def test_no_runs_and_unknown_tools(repo):
    empty = mem("tools")  # found nothing: exit 1, as every search does (docs/reference.md, Exit codes)
    assert empty.code == 1 and empty.out == "" and "no executions observed yet" in empty.err
    _observe(generate(5, seed=1))
    unknown = mem("tools", "warp_drive")  # a tool with no runs is nothing found, not bad input
    assert (
        unknown.code == 1
        and unknown.out == ""
        and unknown.err.startswith("no runs of 'warp_drive' observed (see the tools")
    )
    assert (mem("tools", "warp_drive", "--json").code, mem("tools", "warp_drive", "--json").out) == (1, "[]\n")
    text = mem("tools", "create_shipment").out
    assert text.startswith("create_shipment: ") and "% ok" in text


def test_errors_count_failures_only_and_contexts_may_hold_commas(repo):
    steps = [
        {"tool": "a", "status": "completed", "error": "warning 1"},
        {"tool": "a", "status": "failed", "error": "warning 2"},
    ]
    _observe(
        [
            {"task_id": f"t{n}", "outcome": "success", "context": "billing, EU", "steps": [steps[n % 2]]}
            for n in range(4)
        ]
    )
    tool = json.loads(mem("tools", "a", "--json").out)[0]
    assert tool["errors"] == [
        {
            "error": "warning <n>",
            "count": 2,
            "share": 1.0,
            "rate": 0.5,
            "contexts": ["billing, EU"],
            "example": "warning 2",
            "evidence": ["t1", "t3"],
        }
    ]
    only = json.loads(mem("tools", "a", "--context", "billing, EU", "--json").out)[0]
    assert list(only["contexts"]) == ["billing, EU"]
    assert mem("tools", "--context", "nowhere").err.startswith("no runs of 'any tool' observed in 'nowhere'")


def test_a_line_mem_did_not_write_never_stops_the_statistics(repo):
    _observe(generate(3, seed=1))
    with open(LOG, "a") as handle:
        handle.write('{"steps": "abc"}\n{"task_id": 1, "steps": [{"tool": ["x"], "status": "completed"}]}\n{"half": \n')
    _observe(generate(2, seed=2))
    total = sum(t["executions"] for t in json.loads(mem("tools", "--json").out))
    # ["x"] is read as the tool "['x']"
    assert total == sum(len(r["steps"]) for r in generate(3, seed=1) + generate(2, seed=2)) + 1


@pytest.mark.parametrize("left", [b"", b'{"task_id": "half'])
def test_a_log_cut_to_nothing_whole_drops_what_was_kept(repo, left):
    _observe(generate(50, seed=1))
    assert json.loads(mem("tools", "--json").out)
    LOG.write_bytes(left)
    assert json.loads(mem("tools", "--json").out) == []
    assert json.loads(mem("patterns", "--json").out) == []


def test_an_unreadable_log_is_one_error_line(repo):
    LOG.parent.mkdir(parents=True, exist_ok=True)
    LOG.mkdir()
    result = mem("tools")
    assert (
        result.code == 2
        and result.err.startswith("error: cannot read the observation log")
        and "Traceback" not in result.err
    )
