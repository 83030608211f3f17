"""The Persistent Memory System's API (the the Persistent Memory System design's calls) over a real
grimoire: its hooks (observe after a task, recommend before a plan, query
before a thought) and its agent tools, called as its design calls them."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from pathlib import Path

import pytest
from adapter_examples import EXAMPLES, PLAN, played
from adapter_examples import pms_task as _task
from conftest import git, mem

from grimoire_cli import Grimoire
from grimoire_cli.adapters.pms import (
    PersistentMemory,
    extractPlanPattern,
    extractQueryPattern,
    extractToolSequence,
)
from grimoire_cli.core.errors import BadInput


@pytest.fixture
def pms(repo):
    assert mem("init", "--preset", "pms").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "start", cwd=repo)
    return repo


def test_pms_example_usage_runs_unchanged(pms, tmp_path):
    namespace = played(EXAMPLES["pms"], pms, tmp_path).names

    remembered, recommendations, errors = namespace["remembered"], namespace["recommendations"], namespace["errors"]
    assert set(remembered) == {"patterns", "toolMemory", "insights"}
    assert recommendations[0]["toolName"] == "create_shipment"
    assert set(recommendations[0]) == {"toolName", "successRate", "recommendation"}
    assert recommendations[0]["successRate"] == 0.875
    assert errors[0]["error"] and errors[0]["frequency"] == 1 and errors[0]["contexts"] == ["shipping"]
    assert namespace["query_pattern"] == "create_a_shipment_for_facility_*"
    assert namespace["plan_pattern"] == ["list_facilities", "create_shipment"]
    assert namespace["sequence"] == "list_facilities → create_shipment"

    # the agent's tools, with keywords and with one object (the TypeScript input)
    answer = namespace["answer"]
    assert set(answer) == {"patterns", "toolMemory", "insights", "preferences"}
    assert {t["toolName"] for t in answer["toolMemory"]} >= {"create_shipment"}
    tool = next(t for t in answer["toolMemory"] if t["toolName"] == "create_shipment")
    assert tool["performance"]["totalExecutions"] == 8 and tool["performance"]["failureCount"] == 1
    assert namespace["tools_only"]["patterns"] == []
    found = namespace["found"]
    assert found["usageCount"] == 8 and found["successMetrics"]["successRate"] == 0.875
    assert namespace["nothing"] is None
    stored = namespace["stored"]
    assert stored["insightType"] == "warning"
    assert stored["evidence"] == [{"taskId": "task-7", "description": "carrier timeout"}]
    assert stored["appliesTo"] == {"agents": ["planner"], "contexts": ["shipping"]}
    assert "Check carrier status" in mem("insights").out
    # the query tools with the design's TypeScript input objects, every type and field of its models
    optimization = namespace["optimization"]
    assert optimization["appliesTo"]["conditions"] == {"carrier": "ups"}
    assert optimization["evidence"] == [{"taskId": "task-3", "description": "one call for ten labels"}]
    error = namespace["error"]
    assert error["usageCount"] == 1 and error["evidence"] == [{"taskId": "task-7"}]
    assert optimization["insightId"] in [i["insightId"] for i in namespace["here"]["insights"]]
    # The warning mem learned from the carrier timeout applies where the error was seen (PMS's generateInsights:
    # a warning's contexts are its error's), not to the tool's name, and not in another context.
    learned = [i for i in answer["insights"] if i["rule"].startswith("warn-")]
    assert [i["appliesTo"] for i in learned] == [{"contexts": ["shipping"]}]
    memory = PersistentMemory(Grimoire.open(pms))
    elsewhere = memory.query_memory("create shipment carrier timeout", ["insights"], "returns", 10)["insights"]
    assert [i for i in elsewhere if i["rule"].startswith("warn-")] == []
    assert optimization["insightId"] not in [i["insightId"] for i in namespace["elsewhere"]["insights"]]
    assert json.loads(mem("tools", "create_shipment", "--json").out)[0]["executions"] == 8


def test_the_pure_extractors():
    assert extractQueryPattern("Create a shipment for facility 42") == "create_a_shipment_for_facility_*"
    assert extractQueryPattern("Email bob@example.com about order 12 ASAP") == "email_*_about_order_*_*"
    assert extractPlanPattern(PLAN) == ["list_facilities", "create_shipment"]
    assert extractToolSequence(PLAN) == "list_facilities → create_shipment"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.query_memory("x", ["memories"]), "unknown memory type"),
        (lambda m: m.store_insight("x y z", "hunch", {}, [], 0.5), "insight_type"),
        (lambda m: asyncio.run(m.observeTaskExecution({"taskId": "t-1"}, PLAN, None)), "executionHistory"),
    ],
)
def test_bad_input_says_what_to_give(pms, call, message):
    with pytest.raises(BadInput, match=message):
        call(PersistentMemory(Grimoire.open(pms)))


@pytest.mark.parametrize("kind", ["optimization", "pattern"])
def test_the_insight_types_written_by_hand(pms, kind):
    memory = PersistentMemory(Grimoire.open(pms))
    stored = memory.store_insight(
        f"Batch the shipments of one facility ({kind})", kind, {"contexts": ["shipping"]}, [], 0.7
    )
    assert stored["insightType"] == kind
    listed = mem("insights", "--type", kind)
    assert listed.code == 0 and stored["insightId"] in listed.out
    found = memory.query_memory("batch shipments facility", ["insights"])["insights"]
    assert [i["insightType"] for i in found] == [kind]


def test_error_patterns_are_the_errors_that_failed_a_tool(pms):
    memory = PersistentMemory(Grimoire.open(pms))

    async def work() -> None:
        for n in range(8):
            await memory.observeTaskExecution(_task(n, ok=n % 4 != 3), PLAN, None)
        await memory.learn()

    asyncio.run(work())
    found = memory.get_memory_pattern("error_pattern", "create_shipment: carrier timeout after <n>s")
    assert found["usageCount"] == 2 and found["successMetrics"]["successRate"] == 0.0
    assert found["evidence"] == [{"taskId": "task-3"}, {"taskId": "task-7"}]
    listed = json.loads(mem("patterns", "--type", "error_pattern", "--json").out)
    assert [p["pattern"] for p in listed] == ["create_shipment: carrier timeout after <n>s"]


def test_applies_to_and_evidence_are_kept_as_structured_as_they_are_given(pms):
    from datetime import datetime

    memory = PersistentMemory(Grimoire.open(pms))
    applies = {
        "agents": ["planner"],
        "contexts": ["shipping", "returns"],
        "conditions": {"carrier": "fedex", "minItems": 3},
    }
    evidence = [
        {"taskId": "task-1", "description": "two calls instead of ten", "timestamp": "2026-11-20T11:00:00+01:00"},
        {"taskId": "task-2", "description": "the same", "timestamp": datetime(2026, 11, 21, 9, 30)},
        {"taskId": "task-3"},
    ]
    stored = memory.store_insight("Batch the labels of one carrier", "optimization", applies, evidence, 0.7)
    assert stored["appliesTo"] == applies and stored["createdAt"] == "2026-11-22T10:00:00Z"
    assert stored["evidence"] == [
        {"taskId": "task-1", "description": "two calls instead of ten", "timestamp": "2026-11-20T10:00:00Z"},
        {"taskId": "task-2", "description": "the same", "timestamp": "2026-11-21T09:30:00Z"},
        {"taskId": "task-3"},
    ]
    # The entry holds them as written; mem shows them, validates them, and a later learn leaves them be.
    [kept] = json.loads(mem("insights", "--json").out)
    assert kept["applies_to"] == applies and kept["evidence"][0]["task_id"] == "task-1"
    assert "agents planner; contexts shipping, returns; when carrier=fedex, minItems=3" in mem("insights").out
    assert mem("validate").code == 0
    # a rule id of one's own may start like a learned warning's
    memory.grimoire.learning.add_insight(
        "Watch the carrier", insight_type="warning", applies_to=applies, rule_id="warn-carrier"
    )
    asyncio.run(memory.observeTaskExecution(_task(1, ok=False), PLAN, None))
    asyncio.run(memory.learn())
    assert memory.query_memory("batch labels carrier", ["insights"])["insights"][0]["appliesTo"] == applies


@pytest.mark.parametrize(
    ("applies", "evidence", "message"),
    [
        ({"teams": ["ops"]}, [], "'teams' was unexpected"),
        ("shipping", [], "appliesTo is a str"),
        ({"contexts": ["shipping"]}, [{"description": "no task"}], "has no taskId"),
        ({"contexts": ["shipping"]}, [{"taskId": "t", "timestamp": "yesterday"}], "not an ISO-8601 time"),
    ],
)
def test_a_bad_applies_to_or_evidence_is_bad_input(pms, applies, evidence, message):
    with pytest.raises(BadInput, match=message):
        PersistentMemory(Grimoire.open(pms)).store_insight("Batch the labels", "rule", applies, evidence, 0.7)
    assert json.loads(mem("insights", "--json").out) == []


def test_query_memory_with_a_context_answers_about_that_context(pms):
    memory = PersistentMemory(Grimoire.open(pms))

    def task(n: int, context: str, tools: list[str]) -> dict:
        history = [{"action": tool, "status": "completed", "duration": 100} for tool in tools]
        return {
            "taskId": f"{context}-{n}",
            "goal": f"create shipment {n}",
            "context": context,
            "executionHistory": history,
        }

    async def work() -> None:
        for n in range(3):
            await memory.observeTaskExecution(task(n, "shipping", ["list_facilities", "create_shipment"]), None, None)
            await memory.observeTaskExecution(task(n, "returns", ["find_order", "create_shipment"]), None, None)

    asyncio.run(work())
    memory.store_insight("Create shipment labels in batches", "optimization", {"contexts": ["shipping"]}, [], 0.7)
    memory.store_insight("Create shipment only after the return is scanned", "rule", {"contexts": ["returns"]}, [], 0.7)
    memory.store_insight(
        "Create shipment with the customer's address checked", "rule", {"agents": ["planner"]}, [], 0.7
    )

    found = memory.query_memory("create shipment", None, "returns", 10)
    assert {p["pattern"] for p in found["patterns"]} == {"create_shipment_*", "find_order → create_shipment"}
    assert {i["insight"] for i in found["insights"]} == {
        "Create shipment only after the return is scanned",
        "Create shipment with the customer's address checked",  # it names no context: it applies everywhere
    }
    assert [t["toolName"] for t in found["toolMemory"]] == ["create_shipment"]
    assert found["toolMemory"][0]["performance"]["totalExecutions"] == 3  # the runs in returns
    everywhere = memory.query_memory("create shipment", ["patterns"], None, 10)["patterns"]
    assert "list_facilities → create_shipment" in {p["pattern"] for p in everywhere}

    # The same through mem
    plans = json.loads(mem("patterns", "--type", "plan_pattern", "--context", "returns", "--json").out)
    assert [p["pattern"] for p in plans] == ["find_order → create_shipment"]
    recalled = json.loads(mem("recall-all", "create shipment", "--context", "shipping", "--json").out)
    assert "Create shipment only after the return is scanned" not in {i["content"] for i in recalled["insights"]}


def test_an_observed_task_is_dated_so_patterns_and_metrics_have_times(pms):
    from datetime import datetime

    memory = PersistentMemory(Grimoire.open(pms))
    asyncio.run(memory.observeTaskExecution(_task(1), PLAN, None))  # observed now (MEM_NOW)
    asyncio.run(memory.observeTaskExecution({**_task(2), "startedAt": datetime(2026, 11, 15, 9, 0)}, PLAN, None))
    found = memory.get_memory_pattern("tool_sequence", "list_facilities → create_shipment")
    assert (found["firstSeen"], found["lastUsed"]) == ("2026-11-15T09:00:00Z", "2026-11-22T10:00:00Z")
    weeks = json.loads(mem("metrics", "--json").out)["periods"]
    assert [(w["period"], w["tasks"], w["reuse_rate"]) for w in weeks] == [("2026-W46", 1, 0.0), ("2026-W47", 1, 1.0)]


def test_a_pattern_times_its_tasks_by_their_steps_durations(pms):
    """PMS's Task times only its steps: the task took their sum, so successMetrics.avgExecutionTime is known."""
    memory = PersistentMemory(Grimoire.open(pms))
    asyncio.run(memory.observeTaskExecution(_task(1), PLAN, None))
    untimed = {**_task(2), "executionHistory": [{"action": "list_facilities", "status": "completed"}]}
    asyncio.run(memory.observeTaskExecution(untimed, {"steps": [{"action": "list_facilities"}]}, None))
    timed = memory.get_memory_pattern("tool_sequence", "list_facilities → create_shipment")
    assert timed is not None and timed["successMetrics"]["avgExecutionTime"] == 420
    alone = memory.get_memory_pattern("plan_pattern", "list_facilities")
    assert alone is not None and alone["successMetrics"]["avgExecutionTime"] is None  # a step without a duration


def test_the_guides_mem_command_for_query_memory_runs(pms):
    """The `mem` command docs/adapters.md puts beside query_memory, as written (PMS's memoryTypes named as mem names them)."""
    guide = (Path(__file__).resolve().parent.parent / "docs" / "adapters.md").read_text(encoding="utf-8")
    row = next(line for line in guide.splitlines() if line.startswith("| `query_memory("))
    command = re.search(r"\| `mem ([^`]*)` \|", row)
    assert command is not None
    asyncio.run(PersistentMemory(Grimoire.open(pms)).observeTaskExecution(_task(1), PLAN, None))
    result = mem(*shlex.split(command.group(1)))
    assert result.code == 0, result.err
    assert "create_shipment" in result.out


def test_a_correction_is_no_task_in_the_success_metrics(pms):
    """learnFromCorrection records a correction, not a task run: the success metrics count tasks only."""
    memory = PersistentMemory(Grimoire.open(pms))
    asyncio.run(memory.observeTaskExecution(_task(1, ok=False), PLAN, None))
    for _ in range(3):
        asyncio.run(memory.learnFromCorrection("user-42", "fedex", "ups", "carrier"))
    metrics = Grimoire.open(pms).learning.metrics()
    assert (metrics["tasks"], metrics["success_rate"]) == (1, 0.0)
    assert "1 task, 0.0% ok" in mem("metrics").out


def test_mem_observe_takes_pms_tasks_as_they_are(pms):
    """PMS runs in TypeScript: its runtime pipes each Task, as it has it, to `mem observe`."""
    lines = [json.dumps({**_task(n, ok=n != 2), "startedAt": f"2026-11-2{n}T10:00:00Z"}) for n in (1, 2)]
    assert mem("observe", "-", input="\n".join(lines) + "\n").code == 0
    memory = PersistentMemory(Grimoire.open(pms))
    [tool] = [t for t in memory.query_memory("create shipment", ["tool_memory"])["toolMemory"]]
    assert tool["performance"]["totalExecutions"] == 2 and tool["performance"]["failureCount"] == 1
    pattern = memory.get_memory_pattern("tool_sequence", "list_facilities → create_shipment")
    assert pattern is not None and pattern["firstSeen"] == "2026-11-21T10:00:00Z"
    assert pattern["successMetrics"]["avgExecutionTime"] == 420
    bad = mem("observe", "-", input=json.dumps({"taskId": "t", "executionHistory": "ran"}) + "\n")
    assert bad.code == 2 and "executionHistory is not a list" in bad.err
