"""`mem learn`, `mem insights`, `mem correct` and the Persistent Memory
System's Python API (docs/learning.md): insights follow the
evidence, with stable rule ids; the same evidence writes nothing."""

import json
from pathlib import Path

import pytest
from conftest import git, mem, with_preset

LOG = Path("grimoires/loa/memory/local/observations.jsonl")


@pytest.fixture
def pms(repo):
    return with_preset(repo, "pms")


def _task(n, plan, ok=True, goal=None, context="shipping"):
    steps = [{"tool": tool, "status": "completed", "duration_ms": 10} for tool in plan]
    if not ok:
        steps[-1] = {
            "tool": plan[-1],
            "status": "failed",
            "duration_ms": 10,
            "error": f"timeout after {n}s on /srv/x/{n}.json",
        }
    return {
        "task_id": f"{plan[0]}-{n}",
        "goal": goal or f"{plan[0]} order {n}",
        "context": context,
        "outcome": "success" if ok else "failure",
        "started_at": f"2026-11-20T10:{n % 60:02d}:00Z",
        "duration_ms": 10 * len(plan),
        "steps": steps,
    }


def _observe(records):
    result = mem("observe", "-", input="".join(json.dumps(r) + "\n" for r in records))
    assert result.code == 0, result.err


def _learn():
    result = mem("learn", "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)


def _insights():
    return {e["rule_id"]: e for e in json.loads(mem("insights", "--json").out)}


def _commit(repo):
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "learned", cwd=repo)


def test_learn_follows_the_evidence_and_the_same_evidence_writes_nothing(pms):
    _observe([_task(n, ("pack", "ship")) for n in range(10)] + [_task(n, ("bill",)) for n in range(10)])
    first = _learn()
    insights = _insights()
    # pack → ship: its query pattern and its plan (the tool sequence is the plan: said once);
    # bill: its query pattern only (a one-tool plan is the tool's own success rate, which tool memory says)
    assert sorted(e["applies_to"] for e in insights.values()) == [
        "plan_pattern: pack → ship",
        "query_pattern: bill_order_*",
        "query_pattern: pack_order_*",
    ]
    assert len(first["added"]) == 3 and first["superseded"] == {} and first["archived"] == []
    logged = {json.loads(line)["task_id"] for line in LOG.read_text().splitlines()}
    for entry in insights.values():
        assert entry["insight_type"] == "best_practice" and entry["confidence"] == 1.0
        assert entry["validated"] is True and entry["validated_by"] == "mem learn"
        assert entry["evidence"] and set(entry["evidence"]) <= logged
    _commit(pms)
    again = _learn()
    assert (again["added"], again["archived"], again["unchanged"]) == ([], [], 3)
    assert git("status", "--porcelain", cwd=pms) == ""
    # a dry run writes nothing either
    assert mem("learn", "--dry-run").code == 0 and git("status", "--porcelain", cwd=pms) == ""

    # one failure of pack → ship moves its rate (10/11: 91%): exactly its two insights are superseded
    _observe([_task(10, ("pack", "ship"), ok=False)])
    before = _insights()
    moved = _learn()
    changed = {
        rid
        for rid, e in before.items()
        if e["applies_to"] in ("plan_pattern: pack → ship", "query_pattern: pack_order_*")
    }
    assert set(moved["superseded"]) == {before[rid]["id"] for rid in changed}
    assert moved["unchanged"] == 1 and moved["archived"] == []
    after = _insights()
    assert set(after) == set(before)  # the rule ids are stable
    for rid in changed:
        assert (
            after[rid]["supersedes"] == before[rid]["id"]
            and after[rid]["confidence"] == 0.91
            and "91%" in after[rid]["content"]
        )
    for rid in set(before) - changed:
        assert after[rid]["id"] == before[rid]["id"]
    _commit(pms)

    # one more (10/12: 83%): below the rule, so archived as ineffective, in a commit of their own
    _observe([_task(11, ("pack", "ship"), ok=False)])
    dropped = _learn()
    assert sorted(dropped["archived"]) == sorted(after[rid]["id"] for rid in changed)
    assert dropped["commit"] and git("log", "-1", "--format=%s", cwd=pms).strip().startswith("mem archive: 2 memories")
    # ship now fails in 2 of its 12 runs (17%, above 10%): a warning appears meanwhile (1 of 11 was not one)
    assert [e["insight_type"] for e in dropped["added"]] == ["warning"]
    assert set(_insights()) == (set(before) - changed) | {dropped["added"][0]["rule_id"]}
    shown = json.loads(mem("show", dropped["archived"][0], "--json").out)
    assert shown["archive_reason"] == "ineffective"
    _commit(pms)
    assert _learn()["added"] == [] and git("status", "--porcelain", cwd=pms) == ""


def test_a_frequent_error_is_a_warning_naming_the_known_solution(pms):
    tasks = [_task(n, ("label",), ok=n % 4 != 0) for n in range(20)]  # 5 of 20 fail: 25%
    _observe(tasks)
    _learn()
    warning = next(e for e in _insights().values() if e["insight_type"] == "warning")
    assert warning["applies_to"] == "label" and warning["confidence"] == 0.5
    assert '"timeout after <n>s on <path>" in 25% of its runs' in warning["content"]
    assert set(warning["evidence"]) == {f"label-{n}" for n in range(0, 20, 4)}
    # a known solution raises the confidence: the warning is superseded
    solution = json.loads(
        mem("add", "-c", "error", "-t", "label", "--json", "Label timeouts clear when retried after a minute").out
    )["id"]
    again = _learn()
    assert list(again["superseded"]) == [warning["id"]]
    new = next(e for e in _insights().values() if e["insight_type"] == "warning")
    assert new["confidence"] == 0.8 and solution in new["content"]


def test_preferences_need_enough_consistent_corrections_and_a_contradiction_stops_them(pms):
    for _ in range(2):
        assert mem("correct", "carrier", "dhl", "--original", "fedex", "--context", "billing").code == 0
    assert _learn()["added"] == []  # two are not enough (learning.min_corrections: 3)
    assert mem("correct", "carrier", "dhl", "--original", "fedex", "--context", "billing").code == 0
    mem("correct", "carrier", "ups", "--context", "shipping")  # another context: its own count
    learned = _learn()
    assert [e["insight_type"] for e in learned["added"]] == ["preference"]
    preference = learned["added"][0]
    assert preference["applies_to"] == "billing: carrier" and preference["confidence"] == 0.75
    assert (
        preference["content"] == 'In billing, carrier should be "dhl", not "fedex": the user corrected it consistently.'
    )
    logged = {json.loads(line)["task_id"] for line in LOG.read_text().splitlines()}
    assert len(preference["evidence"]) == 3 and set(preference["evidence"]) <= logged
    # a correction to another value contradicts them: the preference is archived
    assert mem("correct", "carrier", "ups", "--context", "billing").code == 0
    assert _learn()["archived"] == [preference["id"]]
    assert [e for e in _insights().values() if e["insight_type"] == "preference"] == []


def test_the_configured_number_of_corrections_is_the_rule(pms):
    config = (
        Path("grimoires/loa/config.yaml") if Path("grimoires/loa/config.yaml").exists() else Path(".loa.config.yaml")
    )
    text = config.read_text()
    assert "memory_schema:" in text
    config.write_text(text.replace("memory_schema:\n", "memory_schema:\n  learning: {min_corrections: 1}\n", 1))
    mem("correct", "tone", "formal")
    assert [e["applies_to"] for e in _learn()["added"]] == ["*: tone"]


def test_learn_needs_an_insight_category(repo):
    result = mem("learn")
    assert result.code == 2 and result.err.startswith("error:") and "pms" in result.err


def test_the_python_api_of_learning(pms):
    from grimoire_cli import Grimoire
    from grimoire_cli.core.errors import BadInput

    g = Grimoire.open(pms)
    g.learning.observe([_task(n, ("pack", "ship")) for n in range(6)])
    assert [p.pattern for p in g.learning.patterns("plan_pattern")] == ["pack → ship"]
    recommended = g.learning.recommend("pack order", context="shipping")
    assert [r.tool for r in recommended.tools] == ["pack", "ship"]
    assert set(g.learning.recall_all("pack")) == {"patterns", "tools", "insights", "preferences"}
    hand = g.learning.add_insight(
        "Pack fragile goods in double boxes", insight_type="rule", applies_to="pack", evidence=["pack-1"]
    )
    other = g.learning.add_insight("Never ship lithium batteries by air", insight_type="rule", applies_to="pack")
    assert hand.data["rule_id"].startswith("manual-") and hand.data["validated"] is False
    assert other.data["rule_id"] != hand.data["rule_id"]  # two insights about one tool stand side by side
    named = g.learning.add_insight("Weigh every parcel", insight_type="rule", applies_to="pack", rule_id="manual-weigh")
    g.learning.learn()
    # learn leaves insights written by hand alone; storing one again under its rule id supersedes it
    again = g.learning.add_insight(
        "Weigh every parcel twice", insight_type="rule", applies_to="pack", rule_id="manual-weigh"
    )
    assert again.supersedes == named.id
    assert {e.data["rule_id"] for e in g.learning.insights(type="rule")} == {
        hand.data["rule_id"],
        other.data["rule_id"],
        "manual-weigh",
    }
    with pytest.raises(BadInput, match="mem learn makes"):
        g.learning.add_insight("x y z", insight_type="warning", applies_to="deploy", rule_id="warn-0123456789ab")


def test_learn_keeps_what_this_log_has_no_evidence_about(pms):
    _observe([_task(n, ("pack", "ship")) for n in range(10)])
    assert len(_learn()["added"]) == 2
    _commit(pms)
    # another clone (or a rotated log): the insights are shared, the log is not
    LOG.unlink()
    _observe([_task(n, ("bill", "mail")) for n in range(10)])
    again = _learn()
    assert again["archived"] == [] and len(again["added"]) == 2
    assert len(_insights()) == 4


def test_insights_of_a_type_there_is_none_of_say_that_others_exist(pms):
    assert mem("insights").err == "no insights yet (see `mem learn`)\n"
    assert mem("insights", "--type", "preference").err == "no insights yet (see `mem learn`)\n"
    _observe([_task(n, ("pack", "ship")) for n in range(10)])
    assert len(_learn()["added"]) == 2  # best practices, no preference
    result = mem("insights", "--type", "preference")
    assert (result.code, result.out, result.err) == (
        1,
        "",
        "no insights of type preference; 2 others (`mem insights` lists every one)\n",
    )
    assert json.loads(mem("insights", "--type", "preference", "--json").out) == []
    assert len(mem("insights", "--type", "best_practice").out.splitlines()) == 4  # two insights, two lines each


def test_an_insight_archived_by_hand_is_a_veto(pms):
    _observe([_task(n, ("pack", "ship")) for n in range(10)])
    learned = _learn()["added"]
    plan = next(e for e in learned if e["applies_to"].startswith("plan_pattern"))
    assert mem("archive", plan["id"], "--reason", "manual").code == 0
    again = mem("learn")
    assert again.code == 0 and "learn: 0 new" in again.out and "archived by hand" in again.err
    assert plan["rule_id"] not in _insights()


def test_two_active_insights_of_one_rule_fail_validate(pms):
    _observe([_task(n, ("pack", "ship")) for n in range(10)])
    _learn()
    path = Path("grimoires/loa/memory/insights.yaml")
    text = path.read_text()
    first = text[text.index("- id:") :]
    first = first[: first.index("\n- id:", 1) + 1] if "\n- id:" in first[1:] else first
    copy = first.replace(first.split()[2], "MEM-20261120-099", 1)
    path.write_text(text + copy)
    report = json.loads(mem("validate", "--json").out)
    assert "rule-unique" in {p["rule"] for p in report["problems"]} and not report["ok"]


def test_corrections_count_once_per_task_and_by_value(pms):
    # one record saying the same correction three times is one piece of evidence
    record = {
        "task_id": "t1",
        "outcome": "success",
        "context": "shipping",
        "steps": [],
        "corrections": [{"field": "weight", "original": 4, "corrected": 5}] * 3,
    }
    _observe([record])
    assert _learn()["added"] == []
    # typed values: `mem correct weight 5` is the number 5, as an agent's log says it
    for _ in range(2):
        assert mem("correct", "weight", "5", "--original", "4", "--context", "shipping").code == 0
    learned = _learn()["added"]
    assert [e["content"] for e in learned] == [
        "In shipping, weight should be 5, not 4: the user corrected it consistently."
    ]
    log = LOG.read_bytes()
    # blank field or value: one error with a hint, no schema path, nothing logged
    for args in (("", "x"), ("  ", "x"), ("carrier", ""), ("carrier", " "), ("carrier", '""')):
        blank = mem("correct", *args)
        assert blank.code == 2 and blank.err.count("\n") == 1 and "(hint: " in blank.err, (args, blank.err)
        assert "corrections.0" not in blank.err and "skip-invalid" not in blank.err
    assert LOG.read_bytes() == log


def test_an_insight_is_checked_against_its_kind(pms):
    from grimoire_cli import Grimoire
    from grimoire_cli.core.errors import BadInput

    g = Grimoire.open(pms)
    with pytest.raises(BadInput, match="insight_type"):
        g.learning.add_insight("x y z", insight_type="hunch", applies_to="pack")
    added = mem("add", "-c", "insight", "a plain note in the insight category")
    assert added.code == 2 and "mem learn" in added.err
    assert mem("validate").code == 0
