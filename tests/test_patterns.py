"""Patterns, parameter insights, known solutions, recommendations and
recall-all from the observation log (docs/learning.md):
the numbers equal what the generator put in."""

import json
import sys
from collections import defaultdict

import pytest
from conftest import ROOT, mem

sys.path.insert(0, str(ROOT / "benchmarks"))
import itertools

from executions import GOALS, generate

from grimoire_cli.learning.execution_log import normalise_error, query_pattern
from grimoire_cli.learning.patterns import reliability

QUERY = {
    "create shipment for facility {n}": "create_shipment_for_facility_*",
    "quote and ship order {n} to {email}": "quote_and_ship_order_*_to_*",
    "cancel shipment {n} and tell the customer": "cancel_shipment_*_and_tell_the_customer",
}


def _observe(records) -> None:
    result = mem("observe", "-", input="".join(json.dumps(r) + "\n" for r in records))
    assert result.code == 0, result.err


def _truth(records):
    """Per (type, pattern): tasks, successes, steps, durations, times, ids and successful ids: counted here, not by mem
    (an error's shape is mem's normalise_error, tested on its own)."""
    plans = {tuple(plan): GOALS[plan] for plan in GOALS}
    found = defaultdict(
        lambda: {"usage": 0, "ok": 0, "steps": 0, "durations": [], "times": [], "ids": [], "ok_ids": []}
    )

    def count(key, record):
        row = found[key]
        row["usage"] += 1
        row["ok"] += record["outcome"] == "success"
        row["steps"] += len(record["steps"])
        row["durations"].append(record["duration_ms"])
        row["times"].append(record["started_at"])
        row["ids"].append(record["task_id"])
        if record["outcome"] == "success":
            row["ok_ids"].append(record["task_id"])

    for record in records:
        tools = [s["tool"] for s in record["steps"]]
        goal = next(
            template
            for plan, template in plans.items()
            if tuple(tools) == plan[: len(tools)]
            and (len(tools) == len(plan) or record["outcome"] == "failure")
            and _fits(template, record["goal"])
        )
        count(("query_pattern", QUERY[goal]), record)
        count(("plan_pattern", " → ".join(tools)), record)
        for a, b in itertools.pairwise(tools):
            count(("tool_sequence", f"{a} → {b}"), record)
        failed = [s for s in record["steps"] if s["status"] == "failed" and s.get("error")]
        for error in dict.fromkeys(f"{s['tool']}: {normalise_error(s['error'])}" for s in failed):
            count(("error_pattern", error), record)
    return found


def _fits(template, goal):
    return goal.split()[0] == template.split()[0]


def test_patterns_equal_what_the_generator_put_in(repo):
    records = generate(600, seed=5)
    _observe(records[:250])
    _observe(records[250:])  # added as the log grows
    want = _truth(records)
    got = {(p["type"], p["pattern"]): p for p in json.loads(mem("patterns", "--json").out)}
    assert set(got) == set(want)
    by_id = {r["task_id"]: r for r in records}
    for key, truth in want.items():
        p = got[key]
        assert (p["usage"], p["successes"]) == (truth["usage"], truth["ok"]), key
        assert p["success_rate"] == round(truth["ok"] / truth["usage"], 4)
        assert p["reliability"] == round(reliability(truth["ok"], truth["usage"]), 4)
        assert p["mean_steps"] == round(truth["steps"] / truth["usage"], 2)
        assert p["mean_duration_ms"] == pytest.approx(sum(truth["durations"]) / truth["usage"], abs=0.051)
        assert (p["first_seen"], p["last_seen"]) == (min(truth["times"]), max(truth["times"]))
        if key[0] == "error_pattern":  # evidence: the first tasks that showed the error
            assert p["evidence"] == sorted(truth["ids"][:5])
            continue
        # evidence: the first successful tasks, which exist in the log and succeeded
        assert p["evidence"] == sorted(truth["ok_ids"][:5])
        assert all(by_id[t]["outcome"] == "success" for t in p["evidence"])
    # most used first; --type and --min-usage filter
    usages = [p["usage"] for p in json.loads(mem("patterns", "--json").out)]
    assert usages == sorted(usages, reverse=True)
    plans = json.loads(mem("patterns", "--type", "plan_pattern", "--min-usage", "100", "--json").out)
    assert plans and {p["type"] for p in plans} == {"plan_pattern"} and min(p["usage"] for p in plans) >= 100
    assert {p["pattern"] for p in plans} == {
        k[1] for k, t in want.items() if k[0] == "plan_pattern" and t["usage"] >= 100
    }


def test_a_query_pattern_wildcards_codes_numbers_addresses_and_redactions():
    assert (
        query_pattern("Create shipment for facility 12")
        == query_pattern("create shipment for facility 7")
        == "create_shipment_for_facility_*"
    )
    assert query_pattern("ship ORD-2231 to ann@example.com") == "ship_*_to_*"
    assert query_pattern("email [redacted: email address] now") == "email_*_now"
    assert query_pattern("order 12 34 56") == "order_*"
    assert query_pattern("42") is None and query_pattern("") is None


def test_a_retry_logged_as_its_own_step_is_one_step_of_the_plan(repo):
    steps = [
        {"tool": "a", "status": "failed", "error": "x"},
        {"tool": "a", "status": "completed"},
        {"tool": "b", "status": "completed"},
    ]
    _observe([{"task_id": "t1", "goal": "do it", "outcome": "success", "steps": steps}])
    got = {(p["type"], p["pattern"]): p for p in json.loads(mem("patterns", "--json").out)}
    assert set(got) == {
        ("query_pattern", "do_it"),
        ("plan_pattern", "a → b"),
        ("tool_sequence", "a → b"),
        ("error_pattern", "a: x"),  # the retry's failure
    }
    assert got[("plan_pattern", "a → b")]["mean_steps"] == 3


def test_parameter_insights_name_the_value_that_goes_with_success(repo):
    records = generate(900, seed=3)
    _observe(records)
    runs = defaultdict(lambda: [0, 0])
    for record in records:
        for step in record["steps"]:
            if step["tool"] == "create_shipment":
                runs[step["params"]["carrier"]][0] += 1
                runs[step["params"]["carrier"]][1] += step["status"] == "completed"
    tool = json.loads(mem("tools", "create_shipment", "--json").out)[0]
    # the id parameter has hundreds of values: an id, not a choice, so no insight about it
    assert [p["param"] for p in tool["parameters"]] == ["carrier"]
    carrier = tool["parameters"][0]
    rates = {c: ok / n for c, (n, ok) in runs.items()}
    assert carrier["worst"] == {"value": "fedex", "runs": runs["fedex"][0], "success_rate": round(rates["fedex"], 4)}
    best = max(rates, key=rates.get)
    assert carrier["best"] == {"value": best, "runs": runs[best][0], "success_rate": round(rates[best], 4)}
    assert carrier["values"] == 3


def test_known_solutions_are_error_memories_tagged_with_the_tool(repo):
    _observe(generate(200, seed=2))
    added = mem(
        "add",
        "-c",
        "error",
        "-t",
        "create-shipment",
        "--json",
        "Label timeouts on create_shipment clear when the carrier API is retried after 60s",
    )
    assert added.code == 0, added.err
    entry_id = json.loads(added.out)["id"]
    mem("add", "-c", "error", "-t", "other", "An unrelated failure of the build cache")
    tools = {t["tool"]: t for t in json.loads(mem("tools", "--json").out)}
    assert [s["id"] for s in tools["create_shipment"]["known_solutions"]] == [entry_id]
    assert tools["get_rates"]["known_solutions"] == []


def test_tools_text_shows_the_parameter_insights_and_known_solutions(repo):
    records = generate(900, seed=3)
    _observe(records)
    entry_id = mem(
        "add", "-c", "error", "-t", "create-shipment", "Label timeouts on create_shipment clear when retried after 60s"
    ).out.strip()
    tool = json.loads(mem("tools", "create_shipment", "--json").out)[0]
    best, worst = tool["parameters"][0]["best"], tool["parameters"][0]["worst"]
    text = mem("tools", "create_shipment").out.splitlines()
    # what --json has, the text has too
    assert (
        f"  param carrier: best {best['value']} ({100 * best['success_rate']:.1f}% ok over {best['runs']} runs), "
        f"worst fedex ({100 * worst['success_rate']:.1f}% ok over {worst['runs']} runs)"
    ) in text
    assert f"  known solution {entry_id}: Label timeouts on create_shipment clear when retried after 60s" in text


def test_one_run_and_one_task_are_singular(repo):
    _observe(
        [
            {
                "task_id": "t-1",
                "goal": "pack order 7",
                "context": "shipping",
                "outcome": "success",
                "started_at": "2026-11-20T10:00:00Z",
                "duration_ms": 10,
                "steps": [{"tool": "pack", "status": "completed", "duration_ms": 10}],
            }
        ]
    )
    tools = mem("tools").out
    assert (
        tools.startswith("pack: 1 run, 100.0% ok")
        and "  in shipping: 1 run, 100.0% ok" in tools
        and "1 runs" not in tools
    )
    patterns = mem("patterns").out
    assert "  1 task, 100.0% ok" in patterns and "1 tasks" not in patterns
    recalled = mem("recall-all", "pack order").out
    assert (
        "1 task)" in recalled
        and "- pack: 1 run, 100.0% ok" in recalled
        and "1 tasks" not in recalled
        and "1 runs" not in recalled
    )
    assert "over 1 run in" in mem("recommend", "pack", "--context", "shipping").out


def _rates(records, context):
    runs = defaultdict(lambda: [0, 0])
    for record in records:
        for step in record["steps"]:
            if context is None or record["context"] == context:
                runs[step["tool"]][0] += 1
                runs[step["tool"]][1] += step["status"] == "completed"
    return {tool: (ok / n, n) for tool, (n, ok) in runs.items()}


def test_recommend_ranks_by_success_in_the_context_and_falls_back_with_a_note(repo):
    records = generate(900, seed=9)
    _observe(records)
    got = json.loads(mem("recommend", "quote and ship", "--context", "support", "--json").out)
    rates = _rates(records, "support")
    # the tasks "quote and ship order N to ..." run get_rates, create_shipment, send_email
    want = sorted(("get_rates", "create_shipment", "send_email"), key=lambda t: (-rates[t][0], -rates[t][1], t))
    assert [r["tool"] for r in got["recommendations"]] == want
    assert [r["success_rate"] for r in got["recommendations"]] == [round(rates[t][0], 4) for t in want]
    assert all(
        r["context"] == "support" and "quote_and_ship_order_*_to_*" in r["reason"] for r in got["recommendations"]
    )
    assert got["note"] is None
    # a context with no runs: all contexts, and the answer says so
    fallback = json.loads(mem("recommend", "quote and ship", "--context", "nowhere", "--json").out)
    assert fallback["note"] == "no runs of these tools in 'nowhere': success rates over all contexts"
    overall = _rates(records, None)
    assert [(r["tool"], r["success_rate"], r["runs"], r["context"]) for r in fallback["recommendations"]] == [
        (t, round(overall[t][0], 4), overall[t][1], None)
        for t in sorted(want, key=lambda t: (-overall[t][0], -overall[t][1], t))
    ]
    # a tool named by the action
    named = json.loads(mem("recommend", "send email", "--json").out)
    assert (
        named["recommendations"][0]["tool"] == "send_email" and "name matches" in named["recommendations"][0]["reason"]
    )
    # no evidence
    none = mem("recommend", "frobnicate widgets", "--json")
    assert none.code == 1  # no tool to recommend: nothing found
    assert json.loads(none.out) == {
        "action": "frobnicate widgets",
        "context": None,
        "recommendations": [],
        "note": "no evidence for 'frobnicate widgets': no observed tool or task goal matches it",
    }
    bad = mem("recommend", "a to")
    assert bad.code == 2 and bad.err.startswith("error: no words to match")
    assert mem("recommend", "send email", "-n", "0").code == 2
    # each tool's reason names the matching pattern whose tasks ran it
    reasons = {
        r["tool"]: r["reason"] for r in json.loads(mem("recommend", "shipment", "--json").out)["recommendations"]
    }
    assert reasons["list_facilities"] == "used by tasks like create_shipment_for_facility_*"
    assert reasons["cancel_shipment"] in ("its name matches 'shipment'",)


def test_recommend_ranks_the_tools_the_action_names_first(repo):
    def task(n, steps, goal):
        return {
            "task_id": f"t-{goal[:5]}-{n}",
            "goal": goal,
            "context": "shipping",
            "outcome": "success",
            "started_at": "2026-11-20T10:00:00Z",
            "duration_ms": 10,
            "steps": [
                {"tool": tool, "status": "completed" if ok else "failed", "duration_ms": 5} for tool, ok in steps
            ],
        }

    # list_facilities always succeeds in the tasks that create shipments; create_shipment half the time; createShipment never
    records = [
        task(n, [("list_facilities", True), ("create_shipment", n % 2 == 0)], f"create shipment for facility {n}")
        for n in range(6)
    ]
    records.append(task(0, [("createShipment", False)], "migrate the old client"))
    _observe(records)
    got = json.loads(mem("recommend", "create shipment", "--json").out)["recommendations"]
    # named by the action first (camelCase too), each group by success rate; then the tools its tasks ran
    assert [(r["tool"], r["success_rate"]) for r in got] == [
        ("create_shipment", 0.5),
        ("createShipment", 0.0),
        ("list_facilities", 1.0),
    ]
    assert got[0]["reason"] == got[1]["reason"] == "its name matches 'create shipment'"
    assert got[2]["reason"] == "used by tasks like create_shipment_for_facility_*"
    assert (
        mem("recommend", "create shipment")
        .out.splitlines()[0]
        .startswith("1. create_shipment: 50.0% ok over 6 runs; its name matches")
    )


def test_recommend_on_generated_logs_puts_the_named_tool_first(repo):
    _observe(generate(600, seed=9))
    got = json.loads(mem("recommend", "create shipment", "--json").out)["recommendations"]
    assert got[0]["tool"] == "create_shipment" and len(got) > 1


def test_recall_all_answers_patterns_tools_insights_and_preferences_at_once(repo):
    assert mem("init", "--preset", "pms").code == 0
    _observe(generate(300, seed=4))
    mem("add", "-c", "preference", "Ship with the cheapest carrier unless the customer asked otherwise")
    found = json.loads(mem("recall-all", "shipment carrier", "--json").out)
    assert set(found) == {"patterns", "tools", "insights", "preferences"}
    assert found["patterns"] and all("shipment" in p["pattern"] for p in found["patterns"])
    assert {t["tool"] for t in found["tools"]} == {"create_shipment", "cancel_shipment"}
    assert [p["category"] for p in found["preferences"]] == ["preference"]
    only = json.loads(mem("recall-all", "shipment", "--types", "tools", "--json").out)
    assert set(only) == {"tools"}
    bad = mem("recall-all", "x", "--types", "tools,gossip")
    assert bad.code == 2 and "unknown type 'gossip'" in bad.err
    assert mem("recall-all", "x", "--types", ",").code == 2


@pytest.mark.parametrize(
    "args, message",
    [
        (("patterns", "--type", "gossip"), "unknown pattern type 'gossip'"),
        (("patterns", "--min-usage", "0"), "--min-usage must be a whole number from 1 to"),
    ],
)
def test_bad_pattern_options_are_one_error_line(repo, args, message):
    result = mem(*args)
    assert (
        result.code == 2
        and result.err.startswith("error:")
        and message in result.err
        and len(result.err.strip().splitlines()) == 1
    )


def test_an_error_a_retry_got_past_is_no_best_practice(repo):
    assert mem("init", "--preset", "pms").code == 0
    steps = [
        {"tool": "a", "status": "failed", "error": "x"},
        {"tool": "a", "status": "completed"},
        {"tool": "b", "status": "completed"},
    ]
    _observe([{"task_id": f"t{n}", "goal": "do it", "outcome": "success", "steps": steps} for n in range(6)])
    [error] = json.loads(mem("patterns", "--type", "error_pattern", "--json").out)
    assert (error["pattern"], error["usage"], error["success_rate"]) == ("a: x", 6, 1.0)
    assert mem("learn").code == 0
    practices = json.loads(mem("insights", "--type", "best_practice", "--json").out)
    assert practices and not any(i["applies_to"].startswith("error_pattern") for i in practices)
