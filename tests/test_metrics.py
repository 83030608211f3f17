"""Success metrics over time (`mem metrics`, `g.learning.metrics`): the
numbers equal what a hand-made log of two weeks put in (docs/learning.md)."""

import json

from conftest import mem

from grimoire_cli import Grimoire

PLANS = (["list_facilities", "create_shipment"], ["get_rates", "create_shipment"])


def _log(repo) -> None:
    """12 tasks, one a day from 2026-11-16 (a Monday): the 1st, 3rd and 5th fail
    their second step; every third runs the first plan, the others the second."""
    records = []
    for n in range(12):
        ok = not (n < 6 and n % 2 == 0)
        first, second = PLANS[0] if n % 3 == 0 else PLANS[1]
        failed = {"status": "failed", "error": "carrier timeout"}
        steps = [
            {"tool": first, "status": "completed"},
            {"tool": second, **({"status": "completed"} if ok else failed)},
        ]
        records.append(
            {
                "task_id": f"t{n}",
                "goal": "ship it",
                "outcome": "success" if ok else "failure",
                "started_at": f"2026-11-{16 + n:02d}T10:00:00Z",
                "steps": steps,
            }
        )
    records.append({"task_id": "undated", "goal": "ship it", "outcome": "failure", "steps": steps})  # left out
    assert mem("observe", "-", input="".join(json.dumps(r) + "\n" for r in records)).code == 0


def test_metrics_per_week_count_reuse_and_the_error_reduction(repo):
    _log(repo)
    measured = json.loads(mem("metrics", "--json").out)
    assert measured["periods"] == [
        # 7 tasks; 2 first runs of a plan; 3 of 14 steps failed
        {"period": "2026-W47", "tasks": 7, "success_rate": 0.5714, "reuse_rate": 0.7143, "steps": 14,
         "failed_steps": 3, "error_rate": 0.2143},
        {"period": "2026-W48", "tasks": 5, "success_rate": 1.0, "reuse_rate": 1.0, "steps": 10,
         "failed_steps": 0, "error_rate": 0.0},
    ]  # fmt: skip
    assert (measured["tasks"], measured["success_rate"], measured["reuse_rate"]) == (12, 0.75, 0.8333)
    assert (measured["error_rate_first"], measured["error_rate_last"], measured["error_reduction"]) == (
        0.2143,
        0.0,
        1.0,
    )
    assert "error rate 21.4% -> 0.0%: 100.0% reduction" in mem("metrics").out


def test_metrics_per_day_through_the_library(repo):
    _log(repo)
    measured = Grimoire.open(repo).learning.metrics(by="day")
    days = measured["periods"]
    assert [d["period"] for d in days][:2] == ["2026-11-16", "2026-11-17"] and len(days) == 12
    assert (days[0]["error_rate"], days[0]["reuse_rate"], days[3]["reuse_rate"]) == (0.5, 0.0, 1.0)
    assert measured["error_reduction"] == 1.0  # from 1 of 2 steps failing to none


def test_no_log_and_a_bad_period(repo):
    nothing = mem("metrics")
    assert nothing.code == 1 and "no tasks with a start time" in nothing.err
    assert json.loads(mem("metrics", "--json").out)["error_reduction"] is None
    bad = mem("metrics", "--by", "month")
    assert bad.code == 2 and bad.err.startswith("error: cannot count by 'month'")
