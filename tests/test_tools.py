"""Tool memory from the observation log (README: Learning from executions):
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
from executions import generate, truth  # noqa: E402

from grimoire_cli.tools import normalise_error  # noqa: E402

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
        assert (got["executions"], got["successes"], got["failures"]) == (want["executions"], want["successes"], want["failures"])
        assert got["duration_ms"]["mean"] == round(sum(want["durations"]) / len(want["durations"]), 1)
        # percentiles at whole milliseconds
        assert got["duration_ms"]["p50"] == round(_nearest_rank([round(d) for d in want["durations"]], 0.5))
        assert got["duration_ms"]["p95"] == round(_nearest_rank([round(d) for d in want["durations"]], 0.95))
        assert got["mean_retries"] == round(sum(want["retries"]) / len(want["retries"]), 3)
        assert {c: (v["executions"], v["successes"]) for c, v in got["contexts"].items()} == {c: tuple(v) for c, v in want["contexts"].items()}
        assert sum(e["count"] for e in got["errors"]) == want["failures"]  # every failure has its error, grouped
    support = json.loads(mem("tools", "get_rates", "--context", "support", "--json").out)[0]
    per = expected["get_rates"]["contexts"]["support"]
    assert (support["executions"], support["successes"]) == tuple(per)


def test_errors_are_grouped_by_shape():
    assert normalise_error("timeout after 30s on /srv/a/1.json") == normalise_error("timeout after 12s on /srv/b/7.json") \
        == "timeout after <n>s on <path>"
    assert normalise_error("carrier 'dhl' rejected the label") == normalise_error('carrier "ups" rejected the label')
    assert normalise_error("timeout after 30s on /srv/a/1.json") != normalise_error("facility 12 not found")
    assert normalise_error("user a@b.example failed, request 9f8e7d6c5b4a") == "user <email> failed, request <id>"


def test_the_catalog_reads_only_what_the_log_gained(repo):
    _observe(generate(50, seed=2))
    before = json.loads(mem("tools", "--json").out)
    # An edit of a line already read (same size, same file) is not seen: proof it is not read again.
    text = LOG.read_bytes()
    LOG.write_bytes(text.replace(b'"status":"completed"', b'"status":"xompleted"', 1))
    assert json.loads(mem("tools", "--json").out) == before
    _observe(generate(10, seed=3))
    grown = json.loads(mem("tools", "--json").out)
    assert sum(t["executions"] for t in grown) == sum(t["executions"] for t in before) + sum(len(r["steps"]) for r in generate(10, seed=3))
    # A replaced log (another file) is read again from the start.
    os.replace(LOG, LOG.with_suffix(".old"))
    _observe(generate(5, seed=4))
    assert sum(t["executions"] for t in json.loads(mem("tools", "--json").out)) == sum(len(r["steps"]) for r in generate(5, seed=4))


def test_no_runs_and_unknown_tools(repo):
    empty = mem("tools")
    assert empty.code == 0 and empty.out == "" and "no executions observed yet" in empty.err
    _observe(generate(5, seed=1))
    unknown = mem("tools", "warp_drive")
    assert unknown.code == 2 and unknown.err.startswith("error: no runs of 'warp_drive' observed")
    text = mem("tools", "create_shipment").out
    assert text.startswith("create_shipment: ") and "% ok" in text
