"""Each memory system's example usage (../shared/SEED_APIS.md), its calls written as the
system's design writes them, in one place: the adapter tests play them and assert on
what they bound; scripts/adapter_transcripts.py plays them and prints each call's result.

An example is scenes of Python source run statement by statement in a namespace of
the names the system's code calls (top-level `await` allowed: Samaritan's and PMS's
calls are coroutines). Between scenes the clock moves or the work is committed, as
the system's runtime would find it later; neither is a call of the system.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from grimoire_cli import Grimoire
from grimoire_cli.adapters.loa import Loa
from grimoire_cli.adapters.pms import PersistentMemory, extractPlanPattern, extractQueryPattern, extractToolSequence
from grimoire_cli.adapters.protea import MemoryStore
from grimoire_cli.adapters.sabre import Sabre
from grimoire_cli.adapters.samaritan import Samaritan
from grimoire_cli.core.clock import parse_time
from grimoire_cli.core.runtime import Runtime


class Scene(NamedTuple):
    code: str
    at: str | None = None  # the clock moved to this time first
    commit: bool = False  # everything written so far committed first


class Example(NamedTuple):
    system: str  # its heading in docs/adapters.md
    init: tuple[str, ...]  # the `mem` arguments the guide runs first
    scope: str | None  # the scope the guide's excerpt opens
    namespace: Callable[[Grimoire, Path], dict[str, Any]]  # the names its calls use; Path: a folder for its files
    scenes: tuple[Scene, ...]


class Call(NamedTuple):
    source: str  # the statement as written
    value: Any  # what it returned or bound
    error: BaseException | None


class Session:
    """One example's namespace over a grimoire, its scenes played one at a time."""

    def __init__(self, example: Example, grimoire: Grimoire, runtime: Runtime, root: Path, folder: Path):
        self.runtime, self.root = runtime, root
        self.names: dict[str, Any] = example.namespace(grimoire, folder)

    def play(self, scene: Scene, *, strict: bool = False) -> list[Call]:
        """Each statement's call; `strict` raises what a statement raised (a test's traceback)."""
        if scene.commit:
            for args in (("add", "-A"), ("commit", "-q", "--allow-empty", "-m", "the work so far")):
                subprocess.run(["git", *args], cwd=self.root, check=True, capture_output=True)
        if scene.at is not None:
            self.runtime.fixed_now = parse_time(scene.at)
        lines = scene.code.strip("\n").splitlines()
        calls = []
        for statement in ast.parse("\n".join(lines)).body:
            first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))])
            source = "\n".join(lines[first - 1 : statement.end_lineno])
            try:
                calls.append(Call(source, self._run(statement), None))
            except Exception as error:
                if strict:
                    raise
                calls.append(Call(source, None, error))
        return calls

    def _run(self, statement: ast.stmt) -> Any:
        if isinstance(statement, ast.Expr):
            return _awaited(eval(_compiled(ast.Expression(statement.value), "eval"), self.names))
        _awaited(eval(_compiled(ast.Module([statement], type_ignores=[]), "exec"), self.names))
        if isinstance(statement, ast.Assign):
            return eval(ast.unparse(statement.targets[0]), self.names)
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return self.names[statement.name]
        return None


def _compiled(tree: ast.Expression | ast.Module, mode: str) -> Any:
    return compile(ast.fix_missing_locations(tree), "the example usage", mode, flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def _awaited(value: Any) -> Any:
    return asyncio.run(value) if inspect.iscoroutine(value) else value


# -- SABRE: helpers injected into the runtime's namespace ---------------------------


class Database:
    @staticmethod
    def get_schema(table):
        return {"table": table, "columns": ["id", "amount", "created_at"]}


def sabre_names(grimoire: Grimoire, folder: Path) -> dict[str, Any]:
    return {**Sabre(grimoire).namespace(), "Database": Database, "calculate_mrr": lambda: 47000, "calls": []}


# SABRE's usage, each call in a form the SABRE design's calls lists (keyword, positional, all-positional).
SABRE = """
schema = Database.get_schema("orders")
remember_fact("database.orders.schema", schema, ttl=3600)
remember_fact("metrics.mrr.baseline", {"value": 48200, "currency": "EUR"})
remember_fact("project.test_command", "pytest -q", 86400)
remember_fact("trusted_sources.science", ["nature.com", "arxiv.org"], ttl=3600, category="research")
cached = recall_fact("database.orders.schema")
missing = recall_fact("database.users.schema")
update_fact("metrics.mrr.baseline", {"value": 47900, "currency": "EUR"})
research = search_facts(category="research")
metrics = search_facts(pattern="metrics")

remember_episode(
    event="mrr-drop-investigation",
    context={"symptom": "MRR down 12%", "root_cause": "failed card retries", "resolution": "re-enabled the retry job"},
    learned="Check the payment retry job first when MRR drops",
)
remember_episode(event="flaky-test-fix", learned="Pin the random seed in the fixture")
remember_episode("docs-research", {"topic": "vector stores", "sources_checked": 4}, "Prefer primary sources")
r = recall_episodes("MRR drop", limit=3)
root_cause = r[0]['root_cause']
again = recall_episodes("MRR drop")

remember_procedure("analyze-mrr-drop", steps=[
    {"name": "baseline", "description": "Load the baseline", "action": "baseline = recall_fact('metrics.mrr.baseline')"},
    {"name": "compare", "condition": "baseline is not None", "action": "delta = calculate_mrr() - baseline['value']"},
])
remember_procedure("debug-test-failure", steps=[{"action": "run the failing test alone"}, {"action": "read the traceback"}])
name, steps, cat = "restart-service", [{"action": "Kubernetes.set_image(service, version)"}], "runbooks"
remember_procedure(name, steps, category=cat)
procedure = recall_procedure("analyze-mrr-drop")
runbooks = list_procedures(category="runbooks")

schedule_task("Re-check MRR after the retry job ran", trigger="time:+1hour", context={"baseline": 47900})
pending_now = get_pending_tasks()

@auto_cache(ttl=3600, category="schemas")
def table_schema(table):
    calls.append(table)
    return Database.get_schema(table)

first = table_schema("orders")
second = table_schema("orders")

@no_cache
def current_mrr():
    return calculate_mrr()

categories = list_memory_categories()
stats = memory_stats()
"""

# An hour later the task is due; SABRE completes it by the id it was given.
SABRE_LATER = """
[task] = get_pending_tasks()
done = complete_task(task["id"])
pending_after = get_pending_tasks()
"""


# -- Samaritan: memory.py's functions and the memory tools, awaited ----------------------

SAMARITAN_SUMMARY = {
    "facts": [{"content": "The user's dog is called Rex", "importance": 6, "topic": "pets"}],
    "summary": "A chat.",
}


def samaritan_names(grimoire: Grimoire, folder: Path) -> dict[str, Any]:
    script = folder / "summarizer.py"  # the summarizer-anthropic model's stand-in: a fixed answer
    script.write_text(
        f"#!{sys.executable}\nimport sys, json\nsys.stdin.read()\nprint(json.dumps({SAMARITAN_SUMMARY!r}))\n"
    )
    script.chmod(0o755)
    memory = Samaritan(grimoire, summarizers={"summarizer-anthropic": str(script)})
    names = "save_memory load_short_term age_to_longterm load_context_block summarize_and_save memory_save memory_recall memory_age"
    history = [
        {"role": "user", "content": "My dog is called Rex"},
        {"role": "assistant", "content": "Noted: Rex."},
        {"role": "user", "content": "What about deploys?"},
        {"role": "assistant", "content": "Staging first."},
    ]
    return {**{name: getattr(memory, name) for name in names.split()}, "session_id": "s-42", "history": history}


SAMARITAN = """
await save_memory("Hermes project", "Deploys go through the staging cluster first", importance=6)
await save_memory("coding style", "Prefers type hints in code examples", 7, "user", session_id)
reply = await memory_save(topic="X", content="Y is the release manager", importance=8)
rows = await load_short_term(limit=20, min_importance=1)
block = await load_context_block(limit=15, min_importance=3)
status = await summarize_and_save(session_id, history, "summarizer-anthropic")
"""

# 30 hours later (hot by age until 48h) an aging of 24h moves the unimportant memories.
SAMARITAN_LATER = """
text = await memory_age(older_than_hours=24)
again = await memory_age(older_than_hours=24, max_rows=200)
long_term = await memory_recall("hermes", tier="long")
short_term = await memory_recall("X")
moved = await age_to_longterm()
still_short = await load_short_term()
"""


# -- Protea: the call sites of its evolution loop and task executor -------------------------

# What the sentinel, the evolver and the task executor write over six generations, then read.
PROTEA = """
memory.add("observation", 1, "Gen 1 survived 60s, Code: 1200 bytes, Output: ok", {"score": 0.1})
memory.add("reflection", 1, "Generation 1: check imports before running.")
memory.add("crash_log", 2, "Gen 2 died after 3s, Reason: ImportError, Last output: boom")
memory.add("reflection", 2, "Generation 2: check imports before running.")
memory.add("observation", 3, "Gen 3 survived 60s, Code: 1200 bytes, Output: ok", {"score": 0.3})
memory.add("reflection", 3, "Generation 3: check imports before running.")
memory.add("crash_log", 4, "Gen 4 died after 3s, Reason: ImportError, Last output: boom")
memory.add("reflection", 4, "Generation 4: check imports before running.")
memory.add("observation", 5, "Gen 5 survived 60s, Code: 1200 bytes, Output: ok", {"score": 0.5})
memory.add("reflection", 5, "Generation 5: check imports before running.")
memory.add("crash_log", 6, "Gen 6 died after 3s, Reason: ImportError, Last output: boom")
memory.add("reflection", 6, "Generation 6: check imports before running.")
memory.add("directive", 6, "Focus on speed over features")
memory.add("task", 6, "User asked: sort the csv by date, Result: done in 2s")
memory.add("task", 6, "User asked: count the words, Result: 1200 words")
learned = memory.get_recent(3)
learned_by_keyword = memory.get_recent(limit=3)
tasks = memory.get_by_type("task", 5)
tasks_by_keyword = memory.get_by_type("task", limit=5)
crashes = memory.get_by_type("crash_log", 3)
crashes_by_keyword = memory.get_by_type("crash_log", limit=3)
prompt = "## Recent Crashes\\n" + "\\n".join(r["content"] for r in crashes)
user_needs = memory.get_by_type("task", 10)
directive = memory.get_by_type("directive", limit=1)
two_crashes = memory.get_by_type("crash_log", limit=2)
reflections = memory.get_by_type("reflection", limit=3)
two_tasks = memory.get_by_type("task", limit=2)
context = memory.get_context_for_evolution()
four = memory.get_context_for_evolution(limit=4)
found = memory.search(["importerror", "GEN 4"])
survived = memory.search(["survived"], limit=2)
"""

# keep_recent is a total: the newest row overall stays; observations have no keep of their own.
PROTEA_COMPACTED = """
replaced = memory.compact(keep_recent=1, keep_types={"crash_log": 3, "reflection": 6})
directives_after = memory.get_by_type("directive", limit=5)
tasks_after = memory.get_by_type("task", limit=5)
"""


# -- PMS: its hooks (observe after a task, recommend before a plan) and its agent tools ------------


def pms_task(n: int, ok: bool = True) -> dict:
    """A PMS Task: two steps, the second failing with a carrier timeout unless `ok`."""
    failed = {} if ok else {"error": "carrier timeout after 30s"}
    return {
        "taskId": f"task-{n}",
        "goal": f"Create a shipment for facility {n}",
        "context": "shipping",
        "executionHistory": [
            {"action": "list_facilities", "status": "completed", "duration": 120},
            {"action": "create_shipment", "status": "completed" if ok else "failed", "duration": 300, **failed},
        ],
    }


PLAN = {"planId": "plan-1", "steps": [{"action": "list_facilities"}, {"action": "create_shipment"}]}


def pms_names(grimoire: Grimoire, folder: Path) -> dict[str, Any]:
    return {
        "memory": PersistentMemory(grimoire),
        "task": pms_task,
        "PLAN": PLAN,
        "thought": {"text": "thinking"},
        "extractQueryPattern": extractQueryPattern,
        "extractPlanPattern": extractPlanPattern,
        "extractToolSequence": extractToolSequence,
    }


PMS = """
await memory.observeTaskExecution(task(0), PLAN, thought)
await memory.observeTaskExecution(task(1), PLAN, thought)
await memory.observeTaskExecution(task(2), PLAN, thought)
await memory.observeTaskExecution(task(3), PLAN, thought)
await memory.observeTaskExecution(task(4), PLAN, thought)
await memory.observeTaskExecution(task(5), PLAN, thought)
await memory.observeTaskExecution(task(6), PLAN, thought)
await memory.observeTaskExecution(task(7, ok=False), PLAN, thought)
await memory.learn()
remembered = await memory.remember("Create a shipment", "shipping")
recommendations = await memory.getToolRecommendations("shipping", "create shipment")
errors = await memory.analyzeCommonErrors()
await memory.learnFromCorrection("user-42", "fedex", "ups", "carrier")
await memory.learnFromCorrection("user-42", "fedex", "ups", "carrier")
await memory.learnFromCorrection("user-42", "dhl", "ups", "carrier")
await memory.generateInsights()
query_pattern = extractQueryPattern("Create a shipment for facility 42")
plan_pattern = extractPlanPattern(PLAN)
sequence = extractToolSequence(PLAN)
answer = memory.query_memory("create shipment", ["patterns", "tool_memory", "insights"], "shipping", 5)
tools_only = memory.query_memory({"query": "create shipment", "memoryTypes": ["tool_memory"]})
found = memory.get_memory_pattern("tool_sequence", "list_facilities → create_shipment")
nothing = memory.get_memory_pattern({"patternType": "plan_pattern", "pattern": "nothing → here"})
stored = memory.store_insight(
    "Check carrier status before create_shipment",
    "warning",
    {"agents": ["planner"], "contexts": ["shipping"]},
    [{"taskId": "task-7", "description": "carrier timeout"}],
    0.8,
)
optimization = memory.store_insight({
    "insight": "Batch the labels of one carrier",
    "insightType": "optimization",
    "appliesTo": {"agents": ["executor"], "contexts": ["shipping"], "conditions": {"carrier": "ups"}},
    "evidence": [{"taskId": "task-3", "description": "one call for ten labels"}],
    "confidence": 0.75,
})
error = memory.get_memory_pattern({"patternType": "error_pattern", "pattern": "create_shipment: carrier timeout after <n>s"})
here = memory.query_memory({"query": "labels carrier", "memoryTypes": ["insights"], "context": "shipping", "limit": 5})
elsewhere = memory.query_memory({"query": "labels carrier", "memoryTypes": ["insights"], "context": "returns"})
"""


# -- Loa: each operation of its protocol, by the adapter's descriptive names ---------------------

LOA_SOURCE = {"session_id": "sess-7", "agent": "implementing-tasks", "phase": "implementation"}


def loa_names(grimoire: Grimoire, folder: Path) -> dict[str, Any]:
    return {"loa": Loa(grimoire), "SOURCE": LOA_SOURCE}


LOA = """
fact = loa.create("The API is served from api/ with FastAPI", "fact", 0.9, SOURCE, ["api", "stack"])
learning = loa.create("Run migrations before the seed script, or the seed fails on missing tables", "learning", 0.8, SOURCE, ["database"])
error = loa.create("pytest -x hides the second failure; run without -x in CI", "error", 0.7, SOURCE)
facts = loa.retrieve(category="fact")
tagged = loa.retrieve(tags=["database"])
queried = loa.retrieve(query="migrations seed")
oracle = loa.oracle_query("seed script")
newer = loa.update(fact["id"], "The API is served from api/ with FastAPI 0.115")
facts_now = loa.retrieve(category="fact")
loa.record_application(learning["id"], "success")
loa.record_application(learning["id"], "success")
loa.record_application(learning["id"], "failure")
loa.record_application(learning["id"], True)
effectiveness = loa.record_application(learning["id"], True)
"""

# A month later, at the start of a session: the error's 30 days are over.
LOA_LATER = """
checked = loa.session_start_check()
archived = loa.archive()
"""

EXAMPLES = {
    "sabre": Example(
        "SABRE",
        ("--scope", "data-analyst", "init", "--preset", "sabre"),
        "data-analyst",
        sabre_names,
        (Scene(SABRE), Scene(SABRE_LATER, at="2026-11-22T11:00:01Z")),
    ),
    "samaritan": Example(
        "Samaritan",
        ("init", "--preset", "samaritan"),
        None,
        samaritan_names,
        (Scene(SAMARITAN), Scene(SAMARITAN_LATER, at="2026-11-23T16:00:00Z")),
    ),
    "protea": Example(
        "Protea",
        ("init", "--preset", "protea"),
        None,
        lambda grimoire, folder: {"memory": MemoryStore(grimoire)},
        (Scene(PROTEA), Scene(PROTEA_COMPACTED, commit=True)),
    ),
    "pms": Example("Persistent Memory System", ("init", "--preset", "pms"), None, pms_names, (Scene(PMS),)),
    "loa": Example(
        "Loa", ("init",), None, loa_names, (Scene(LOA), Scene(LOA_LATER, at="2026-12-23T10:00:00Z", commit=True))
    ),
}


def played(example: Example, root: Path, folder: Path, *, scope: str | None = None) -> Session:
    """A session of `example` over the grimoire at `root` on a clock of its own (MEM_NOW at first), every scene
    played strictly: what a test asserts on."""
    runtime = Runtime.from_environment()
    session = Session(example, Grimoire.open(root, runtime=runtime, scope=scope), runtime, root, folder)
    for scene in example.scenes:
        session.play(scene, strict=True)
    return session
