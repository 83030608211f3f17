"""SABRE's helpers (the SABRE design's calls) over a real grimoire: its example calls,
as its design writes them, run in a namespace built by the adapter."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import sys
from pathlib import Path

import pytest
from adapter_examples import EXAMPLES, Database, played
from conftest import git, mem

from grimoire_cli import Grimoire
from grimoire_cli.adapters.sabre import Sabre, due_of, ttl_of
from grimoire_cli.core.clock import parse_time
from grimoire_cli.core.errors import BadInput, Duplicate, NotFound
from grimoire_cli.core.runtime import Runtime


def test_sabres_example_usage_runs_unchanged(sabre, tmp_path):
    session = played(EXAMPLES["sabre"], sabre, tmp_path)
    namespace = session.names

    assert namespace["cached"]["columns"] == ["id", "amount", "created_at"] and "_cached_at" in namespace["cached"]
    assert namespace["missing"] is None
    assert namespace["research"] == {"trusted_sources.science": ["nature.com", "arxiv.org"]}
    assert namespace["metrics"] == {"metrics.mrr.baseline": {"value": 47900, "currency": "EUR"}}
    assert namespace["root_cause"] == "failed card retries"
    assert namespace["again"][0]["event"] == "mrr-drop-investigation"
    assert namespace["procedure"]["steps"][1] == {
        "name": "compare",
        "description": None,
        "condition": "baseline is not None",
        "action": "delta = calculate_mrr() - baseline['value']",
    }
    assert [p["name"] for p in namespace["runbooks"]] == ["restart-service"]
    assert namespace["pending_now"] == []  # due in an hour
    assert namespace["first"] == namespace["second"] and namespace["calls"] == ["orders"]
    assert {"semantic", "episode", "procedure", "task", "cache"} <= set(namespace["categories"])
    stats = namespace["stats"]
    assert (stats["episodic"]["count"], stats["procedural"]["count"], stats["prospective"]["count"]) == (3, 3, 1)
    assert stats["cache"] == {"hits": 1, "misses": 1, "categories": {"schemas": {"hits": 1, "misses": 1}}}

    # An hour later the task was due; SABRE completed it by the id it was given.
    task = namespace["task"]
    assert task["task"] == "Re-check MRR after the retry job ran" and task["context"] == {"baseline": 47900}
    assert namespace["done"] is None
    assert namespace["pending_after"] == []

    # What the grimoire holds is what `mem` shows.
    recalled = json.loads(mem("recall", "project.test_command", "--json").out)
    assert recalled["value"] == "pytest -q" and recalled["category"] == "semantic"
    assert json.loads(mem("show", recalled["id"], "--json").out)["ttl"] == "1d"
    assert "mrr-drop-investigation" in mem("episodes", "MRR").out


def test_auto_cache_hits_and_misses_are_kept_locally_per_category(sabre):
    """SABRE's "hit/miss statistics logged": counted in the catalog per
    auto_cache category, so another runtime and `mem stats` see them."""
    first = Sabre(Grimoire.open(sabre))

    @first.auto_cache(ttl=3600, category="schemas")
    def table_schema(table):
        return Database.get_schema(table)

    @first.auto_cache(ttl=300, category="topology")
    def replicas(service):
        return 3

    table_schema("orders"), table_schema("orders"), table_schema("users"), replicas("api"), replicas("api")
    expected = {
        "hits": 2,
        "misses": 3,
        "categories": {"schemas": {"hits": 1, "misses": 2}, "topology": {"hits": 1, "misses": 1}},
    }
    assert Sabre(Grimoire.open(sabre)).memory_stats()["cache"] == expected
    assert json.loads(mem("stats", "--json").out)["cache"] == expected
    assert "cache: 2 hits, 3 misses (schemas 1 hit, 2 misses, topology 1 hit, 1 miss)" in mem("stats").out
    assert git("status", "--porcelain", cwd=sabre) == ""


def test_a_procedure_comes_back_in_sabres_own_shape(sabre):
    """SABRE's procedure YAML: {name, description, category, persona, steps of
    {name, description, condition?, action}, learned_from, success_rate, avg_execution_time}."""
    adapter = Sabre(Grimoire.open(sabre), run_step=lambda step, params: step["action"])
    episode = adapter.remember_episode("mrr-drop-investigation", {"root_cause": "retries"}, "Check retries first")
    adapter.remember_procedure(
        "analyze-mrr-drop",
        steps=[
            {"name": "baseline", "description": "Load the baseline", "action": "b = recall_fact('mrr')"},
            {"name": "compare", "condition": "b is not None", "action": "delta = calculate_mrr() - b"},
            {"action": "result(delta)"},
        ],
        category="analysis",
        description="Find why MRR dropped",
        learned_from=[{"episode": episode}],
        avg_execution_time="5min",
    )
    assert adapter.recall_procedure("analyze-mrr-drop") == {
        "id": adapter.recall_procedure("analyze-mrr-drop")["id"],
        "name": "analyze-mrr-drop",
        "description": "Find why MRR dropped",
        "category": "analysis",
        "persona": Grimoire.open(sabre).config.scope,
        "steps": [
            {"name": "baseline", "description": "Load the baseline", "action": "b = recall_fact('mrr')"},
            {
                "name": "compare",
                "description": None,
                "condition": "b is not None",
                "action": "delta = calculate_mrr() - b",
            },
            {"name": "result(delta)", "description": None, "action": "result(delta)"},
        ],
        "learned_from": [{"episode": episode}],
        "success_rate": None,  # never run yet
        "avg_execution_time": "5min",
    }
    adapter.execute_procedure("analyze-mrr-drop")
    assert adapter.recall_procedure("analyze-mrr-drop")["success_rate"] == 1.0
    # Plain SABRE calls: only `action` steps, nothing else known.
    adapter.remember_procedure("debug-test-failure", [{"action": "run the failing test alone"}])
    plain = adapter.recall_procedure("debug-test-failure")
    assert (plain["learned_from"], plain["avg_execution_time"], plain["description"]) == ([], None, None)
    with pytest.raises(NotFound):
        adapter.remember_procedure("x", [{"action": "a"}], learned_from=[{"episode": "MEM-20200101-001"}])
    with pytest.raises(BadInput):
        adapter.remember_procedure("x", [{"action": "a"}], learned_from="MEM-20200101-001")
    assert adapter.recall_procedure("x") is None


def test_the_consolidation_calls_run_positionally(sabre):
    """`consolidate_conversation` persists the LLM's result with these forms."""
    helpers = Sabre(Grimoire.open(sabre)).namespace()
    helpers["remember_fact"]("service.api.topology", {"replicas": 3}, ttl=300)
    helpers["remember_episode"]("deploy-rollback", {"service": "api"}, "Roll back before debugging")
    helpers["remember_procedure"]("rollback", [{"action": "kubectl rollout undo"}], category="runbooks")
    assert helpers["recall_fact"]("service.api.topology")["replicas"] == 3
    assert helpers["recall_procedure"]("rollback")["category"] == "runbooks"
    assert helpers["search_episodes"](event_type="deploy-rollback")[0]["service"] == "api"


def test_a_fact_expires_after_its_seconds(sabre, monkeypatch):
    runtime = Runtime.from_environment()
    sabre_memory = Sabre(Grimoire.open(sabre, runtime=runtime))
    sabre_memory.remember_fact("service.api.topology", {"replicas": 3}, ttl=300)
    runtime.fixed_now = parse_time("2026-11-22T10:04:59Z")
    assert sabre_memory.recall_fact("service.api.topology")["replicas"] == 3
    runtime.fixed_now = parse_time("2026-11-22T10:05:01Z")
    assert sabre_memory.recall_fact("service.api.topology") is None
    sabre_memory.remember_fact("service.api.status", "up", ttl=30)  # exact seconds, not rounded up to a minute
    runtime.fixed_now = parse_time("2026-11-22T10:05:30Z")
    assert sabre_memory.recall_fact("service.api.status") == "up"
    runtime.fixed_now = parse_time("2026-11-22T10:05:32Z")
    assert sabre_memory.recall_fact("service.api.status") is None


def test_update_fact_keeps_the_ttl_and_category(sabre):
    sabre_memory = Sabre(Grimoire.open(sabre))
    sabre_memory.remember_fact("metrics.mrr.baseline", 48200, ttl=86400, category="metrics")
    new_id = sabre_memory.update_fact("metrics.mrr.baseline", 47900)
    entry = Grimoire.open(sabre).show(new_id)
    assert entry.data["ttl"] == "1d" and entry.category == "metrics" and entry.supersedes
    assert sabre_memory.search_facts(category="metrics") == {"metrics.mrr.baseline": 47900}


def test_update_fact_restarts_the_ttl_of_an_unchanged_value(sabre):
    runtime = Runtime.from_environment()
    sabre_memory = Sabre(Grimoire.open(sabre, runtime=runtime))
    first_id = sabre_memory.remember_fact("service.api.status", "up", ttl=60)
    runtime.fixed_now = parse_time("2026-11-22T10:00:50Z")
    new_id = sabre_memory.update_fact("service.api.status", "up")
    assert new_id != first_id and Grimoire.open(sabre).show(new_id).supersedes == first_id
    runtime.fixed_now = parse_time("2026-11-22T10:01:49Z")  # past the first expiry, within the restarted one
    assert sabre_memory.recall_fact("service.api.status") == "up"
    runtime.fixed_now = parse_time("2026-11-22T10:01:51Z")
    assert sabre_memory.recall_fact("service.api.status") is None


@pytest.mark.parametrize(
    ("seconds", "ttl"),
    [(3600, "1h"), (86400, "1d"), (300, "5m"), (30, "30s"), (90, "90s"), (5400, "90m"), (None, "permanent")],
)
def test_seconds_become_a_ttl(seconds, ttl):
    assert ttl_of(seconds) == ttl


@pytest.mark.parametrize("seconds", [0, -5, 1.5, "3600", True])
def test_a_bad_ttl_is_bad_input(seconds):
    with pytest.raises(BadInput, match="TTL in seconds"):
        ttl_of(seconds)


def test_triggers():
    assert due_of("time:+1hour") == {"due": "+1h"}
    assert due_of("time:+30min") == {"due": "+30m"}
    assert due_of("time:+2days") == {"due": "+2d"}
    assert due_of("time:+45sec") == {"due": "+45s"}
    assert due_of("event:deploy") == {"on": "deploy"}
    assert due_of("condition:x > 3") == {"condition": "x > 3"}
    for bad in ("condition:", "time:+1fortnight", "tomorrow"):
        with pytest.raises(BadInput):
            due_of(bad)


def test_a_task_in_seconds_is_due_after_those_seconds(sabre):
    runtime = Runtime.from_environment()
    helpers = Sabre(Grimoire.open(sabre, runtime=runtime)).namespace()
    helpers["schedule_task"]("Check the deploy", trigger="time:+45sec")
    runtime.fixed_now = parse_time("2026-11-22T10:00:44Z")
    assert helpers["get_pending_tasks"]() == []
    runtime.fixed_now = parse_time("2026-11-22T10:00:45Z")
    assert [t["task"] for t in helpers["get_pending_tasks"]()] == ["Check the deploy"]


def test_a_condition_task_is_pending_when_it_holds_against_the_runtimes_context(sabre):
    helpers = Sabre(Grimoire.open(sabre)).namespace()
    task_id = helpers["schedule_task"]("Alert finance", trigger="condition:mrr_drop > 10", context={"team": "finance"})
    assert helpers["get_pending_tasks"]() == []  # no context given: not due
    assert helpers["get_pending_tasks"](context={"mrr_drop": 4}) == []
    [task] = helpers["get_pending_tasks"](context={"mrr_drop": 12.5})
    assert (task["id"], task["trigger_type"], task["trigger_value"]) == (task_id, "condition", "mrr_drop > 10")
    assert task["context"] == {"team": "finance"}
    with pytest.raises(BadInput, match="not a condition"):
        helpers["schedule_task"]("Never", trigger="condition:__import__('os').system('true')")
    # An event trigger is fired by `mem event`.
    waiting = helpers["schedule_task"]("Re-run the report", trigger="event:data.loaded")
    assert mem("event", "data.loaded").code == 0
    assert [t["id"] for t in helpers["get_pending_tasks"]()] == [waiting]


def test_execute_procedure_runs_through_the_runtime_and_records_the_outcome(sabre):
    ran = []
    sabre_memory = Sabre(Grimoire.open(sabre), run_step=lambda step, params: ran.append((step["action"], params)))
    sabre_memory.remember_procedure("rollback", [{"action": "undo"}, {"action": "verify"}])
    assert sabre_memory.execute_procedure("rollback", {"service": "api"}) == [None, None]
    assert ran == [("undo", {"service": "api"}), ("verify", {"service": "api"})]
    assert sabre_memory.recall_procedure("rollback")["success_rate"] == 1.0
    with pytest.raises(BadInput, match="runs no procedure step"):
        Sabre(Grimoire.open(sabre)).execute_procedure("rollback")
    with pytest.raises(NotFound):
        sabre_memory.execute_procedure("nothing-here")


def test_clear_memory_asks_for_confirmation_then_archives_in_a_commit(sabre):
    sabre_memory = Sabre(Grimoire.open(sabre))
    sabre_memory.remember_episode("deploy-rollback", {"service": "api"}, "Roll back first")
    sabre_memory.remember_fact("service.api.topology", {"replicas": 3})
    git("add", "-A", cwd=sabre)
    git("commit", "-q", "-m", "remembered", cwd=sabre)
    assert sabre_memory.clear_memory("episodic") == 1
    assert len(sabre_memory.search_episodes()) == 1  # nothing moved without confirm
    assert sabre_memory.clear_memory("episodic", confirm=True) == 1
    assert sabre_memory.search_episodes() == [] and sabre_memory.recall_fact("service.api.topology") is not None
    assert git("log", "-1", "--format=%B", cwd=sabre).strip().endswith(": cleared")
    assert git("status", "--porcelain", cwd=sabre) == ""


def test_consolidate_conversation_reads_the_transcript_it_is_given(sabre):
    grimoire = Grimoire.open(sabre)
    with pytest.raises(BadInput, match="read a conversation"):
        asyncio.run(Sabre(grimoire).consolidate_conversation("c-1", "loa"))


def test_a_step_must_say_what_it_does(sabre):
    with pytest.raises(BadInput, match="not a list of steps"):
        Sabre(Grimoire.open(sabre)).remember_procedure("x", ...)
    with pytest.raises(BadInput, match="step 1 is not a step"):
        Sabre(Grimoire.open(sabre)).remember_procedure("x", [{"description": "no action"}])


def test_consolidate_conversation_saves_sabres_bare_facts(sabre, tmp_path):
    """SABRE's summarizer answers facts as [{key, value, ttl}], as its design's consolidation persists them."""
    script = tmp_path / "summarizer.py"
    answer = {"facts": [{"key": "service.api.topology", "value": {"replicas": 3}, "ttl": 300}]}
    script.write_text(f"#!{sys.executable}\nimport json, sys\nsys.stdin.read()\nprint(json.dumps({answer!r}))\n")
    script.chmod(0o755)
    config = sabre / ".loa.config.yaml"
    config.write_text(config.read_text() + f"  consolidate: {{command: {json.dumps(str(script))}}}\n")
    transcript = [{"role": "user", "content": f"turn {n}"} for n in range(5)]
    helpers = Sabre(Grimoire.open(sabre), transcript_of=lambda conversation_id: transcript).namespace()

    asyncio.run(helpers["consolidate_conversation"]("conv-7", "loa"))
    assert helpers["recall_fact"]("service.api.topology")["replicas"] == 3
    assert json.loads(mem("recall", "service.api.topology", "--json").out)["expires_at"] == "2026-11-22T10:05:00Z"


# SABRE's conversation-end consolidation as its design writes it (the SABRE design's
# consolidation section): the runtime's own function, persisting the LLM's result
# with the helpers, positionally, as the design calls them.
CONSOLIDATION = """
async def consolidate_conversation(conversation_id, persona):
    transcript = get_conversation_transcript(conversation_id)
    result = await llm_call([transcript], CONSOLIDATION_PROMPT)
    for fact in result.get("facts", []):
        remember_fact(fact["key"], fact["value"], ttl=fact["ttl"])
    for episode in result.get("episodes", []):
        remember_episode(episode["event"], episode["context"], episode["learned"])
    for procedure in result.get("procedures", []):
        remember_procedure(procedure["name"], procedure["steps"], category=procedure["category"])
    log(f"Consolidated {len(result.get('facts', []))} facts, {len(result.get('episodes', []))} episodes, "
        f"{len(result.get('procedures', []))} procedures")
"""

LLM_RESULT = {
    "facts": [{"key": "service.api.topology", "value": {"replicas": 3, "zone": "eu-1"}, "ttl": 300}],
    "episodes": [
        {
            "event": "deploy-rollback",
            "context": {"service": "checkout", "root_cause": "bad migration"},
            "learned": "Roll back before debugging",
        }
    ],
    "procedures": [
        {"name": "rollback-api", "steps": [{"action": "kubectl rollout undo deploy/api"}], "category": "runbooks"}
    ],
}


def test_sabres_own_consolidation_code_runs_unchanged(sabre):
    logged = []

    async def llm_call(messages, prompt):
        assert messages == [["user: the api deploy broke", "assistant: rolled back"]]
        return LLM_RESULT

    namespace = {
        **Sabre(Grimoire.open(sabre)).namespace(),
        "get_conversation_transcript": lambda conversation_id: ["user: the api deploy broke", "assistant: rolled back"],
        "llm_call": llm_call,
        "CONSOLIDATION_PROMPT": "Extract facts, episodes and procedures as JSON.",
        "log": logged.append,
    }
    exec(compile(CONSOLIDATION, "the SABRE design's consolidation", "exec"), namespace)
    asyncio.run(namespace["consolidate_conversation"]("conv-9", "default"))

    assert logged == ["Consolidated 1 facts, 1 episodes, 1 procedures"]
    assert namespace["recall_fact"]("service.api.topology")["zone"] == "eu-1"
    assert namespace["recall_episodes"]("deploy rollback")[0]["root_cause"] == "bad migration"
    procedure = namespace["recall_procedure"]("rollback-api")
    assert procedure["category"] == "runbooks" and procedure["steps"][0]["action"] == "kubectl rollout undo deploy/api"
    # SABRE's free-form category is a category of the grimoire now; the ttl is 300 seconds.
    assert json.loads(mem("procedures", "-c", "runbooks", "--json").out)[0]["category"] == "runbooks"
    assert json.loads(mem("recall", "service.api.topology", "--json").out)["expires_at"] == "2026-11-22T10:05:00Z"


def test_a_task_done_or_cancelled_may_be_scheduled_again(sabre):
    helpers = Sabre(Grimoire.open(sabre)).namespace()
    first = helpers["schedule_task"]("Send the weekly report", trigger="time:+1hour", context={"week": 47})
    with pytest.raises(Duplicate, match=f"already pending: {first}.*mem task done {first}"):
        helpers["schedule_task"]("Send the weekly report", trigger="time:+1hour")
    helpers["complete_task"](first)
    second = helpers["schedule_task"]("Send the weekly report", trigger="time:+1hour", context={"week": 48})
    helpers["cancel_task"](second)
    third = helpers["schedule_task"]("Send the weekly report", trigger="time:+1hour")
    assert len({first, second, third}) == 3
    assert mem("task", "add", "Send the weekly report", "--due", "+2h").code == 2  # the third is pending
    assert mem("validate").code == 0


def test_the_guides_setup_makes_the_persona_its_example_opens(tmp_path, monkeypatch):
    """A new user runs the setup docs/adapters.md gives for SABRE, then its example, unchanged."""
    guide = (Path(__file__).resolve().parent.parent / "docs" / "adapters.md").read_text(encoding="utf-8")
    section = guide.split("## SABRE")[1].split("\n## ")[0]
    setup = re.search(r"Run `mem ([^`]*)` first", section)
    opened = re.search(r'Grimoire\.open\("\.", scope="([^"]+)"\)', section)
    assert setup is not None and opened is not None
    (tmp_path / "new").mkdir()
    git("init", "-q", cwd=tmp_path / "new")
    monkeypatch.chdir(tmp_path / "new")
    assert mem(*shlex.split(setup.group(1))).code == 0
    sabre = Sabre(Grimoire.open(".", scope=opened.group(1)))
    sabre.remember_fact("database.orders.schema", {"columns": ["id"]}, ttl=3600)
    assert sabre.recall_fact("database.orders.schema")["columns"] == ["id"]


SABRE_PROCEDURE = """\
name: analyze-mrr-drop
description: Find why MRR dropped
category: analysis
persona: {persona}
steps:
  - name: baseline
    description: Load the baseline
    action: "baseline = recall_fact('metrics.mrr.baseline')"
  - condition: "baseline is not None"
    action: "delta = calculate_mrr() - baseline"
learned_from: [{{episode: {episode}}}]
success_rate: 0.9
avg_execution_time: 5min
"""


def test_mem_procedure_add_reads_sabres_own_procedure_yaml(sabre, tmp_path):
    """SABRE keeps a procedure as procedural/{name}.yaml: `mem procedure add` takes that file as it is."""
    helpers = Sabre(Grimoire.open(sabre))
    episode = helpers.remember_episode("mrr-drop-investigation", {"root_cause": "retries"}, "Check retries first")
    path = tmp_path / "analyze-mrr-drop.yaml"
    path.write_text(SABRE_PROCEDURE.format(persona="loa", episode=episode))
    added = mem("procedure", "add", str(path))
    assert added.code == 0, added.err
    helpers = Sabre(Grimoire.open(sabre))  # on the config the add changed (its new category)
    procedure = helpers.recall_procedure("analyze-mrr-drop")
    assert procedure is not None
    assert (procedure["category"], procedure["description"]) == ("analysis", "Find why MRR dropped")
    assert procedure["steps"][0]["action"] == "baseline = recall_fact('metrics.mrr.baseline')"
    assert procedure["steps"][1] == {
        "name": "delta = calculate_mrr() - baseline",
        "description": None,
        "condition": "baseline is not None",
        "action": "delta = calculate_mrr() - baseline",
    }
    assert (procedure["learned_from"], procedure["avg_execution_time"]) == ([{"episode": episode}], "5min")
    assert procedure["success_rate"] is None  # mem's is the outcomes recorded, not the file's
    # Another persona's file belongs in that persona's scope: refused, nothing written.
    path.write_text(SABRE_PROCEDURE.format(persona="coder", episode=episode).replace("analyze-mrr", "other"))
    refused = mem("procedure", "add", str(path))
    assert refused.code == 2 and "mem --scope coder procedure add" in refused.err
    assert helpers.recall_procedure("other-drop") is None
    assert mem("validate").code == 0


def test_without_sabres_preset_a_fact_in_seconds_says_to_run_it(repo):
    """Loa's categories keep days; SABRE's facts live for seconds (3600 by default): the preset is what serves them."""
    sabre = Sabre(Grimoire.open(repo))
    with pytest.raises(BadInput, match=r"mem init --preset sabre"):
        sabre.remember_fact("database.orders.schema", {"columns": ["id"]})
    assert mem("export").out == ""  # nothing written
    sabre.remember_fact("project.test_command", "pytest -q", 86400)  # whole days: Loa's fact category keeps it
    assert sabre.recall_fact("project.test_command") == "pytest -q"


@pytest.mark.parametrize(
    "call, named",
    [
        (lambda s: s.recall_episodes("MRR drop", time_range="last week"), "time_range 'last week'"),
        (lambda s: s.search_episodes(date_range=("2026-11-01", "yesterday")), "date_range end 'yesterday'"),
        (lambda s: s.schedule_task("Re-check", trigger="time:tomorrow"), "trigger 'time:tomorrow'"),
        (lambda s: s.schedule_task("Re-check", trigger="time:2020-01-01T00:00:00Z"), "trigger 'time:2020-01-01"),
    ],
)
def test_a_bad_time_is_told_by_the_argument_sabre_gave(sabre, call, named):
    """A SABRE helper's bad time names the helper's argument, not a `mem` option."""
    with pytest.raises(BadInput) as raised:
        call(Sabre(Grimoire.open(sabre)))
    assert named in raised.value.message and "--" not in raised.value.message
