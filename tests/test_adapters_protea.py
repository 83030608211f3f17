"""Protea's `MemoryStore` (the Protea design's calls) over a real grimoire: the call
sites of its evolution loop and task executor, in every form the design uses."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from conftest import git, mem

from grimoire_cli import Grimoire
from grimoire_cli.adapters.protea import MemoryStore
from grimoire_cli.core.errors import BadInput


@pytest.fixture
def protea(repo):
    assert mem("init", "--preset", "protea").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "start", cwd=repo)
    return repo


def _generations(memory: MemoryStore) -> None:
    """What the sentinel, the evolver and the task executor write over six generations."""
    for gen in range(1, 7):
        if gen % 2:
            memory.add("observation", gen, f"Gen {gen} survived 60s, Code: 1200 bytes, Output: ok", {"score": gen / 10})
        else:
            memory.add("crash_log", gen, f"Gen {gen} died after 3s, Reason: ImportError, Last output: boom")
        memory.add("reflection", gen, f"Generation {gen}: check imports before running.")
    memory.add("directive", 6, "Focus on speed over features")
    memory.add("task", 6, "User asked: sort the csv by date, Result: done in 2s")
    memory.add("task", 6, "User asked: count the words, Result: 1200 words")


def test_proteas_example_usage_runs_unchanged(protea):
    memory = MemoryStore(Grimoire.open(protea))
    _generations(memory)

    # evolution (_try_evolve) and user task execution
    learned = memory.get_recent(3)
    assert learned == memory.get_recent(limit=3)
    assert [r["entry_type"] for r in learned] == ["task", "task", "directive"]
    tasks = memory.get_by_type("task", 5)
    assert tasks == memory.get_by_type("task", limit=5) and len(tasks) == 2
    crashes = memory.get_by_type("crash_log", 3)
    assert crashes == memory.get_by_type("crash_log", limit=3)
    assert [r["generation"] for r in crashes] == [6, 4, 2]
    assert set(crashes[0]) == {"id", "generation", "entry_type", "content", "metadata", "timestamp"}
    prompt = "## Recent Crashes\n" + "\n".join(r["content"] for r in crashes)
    assert prompt.splitlines()[1] == "Gen 6 died after 3s, Reason: ImportError, Last output: boom"
    assert len(memory.get_by_type("task", 10)) == 2  # autonomous task generation
    assert [r["content"] for r in memory.get_by_type("directive", limit=1)] == ["Focus on speed over features"]
    assert len(memory.get_by_type("crash_log", limit=2)) == 2
    assert len(memory.get_by_type("reflection", limit=3)) == 3
    assert len(memory.get_by_type("task", limit=2)) == 2

    # planned: evolution context, search, compaction
    context = memory.get_context_for_evolution()
    assert [r["entry_type"] for r in context] == ["directive"] + ["crash_log"] * 2 + ["reflection"] * 3 + [
        "observation"
    ] * 2 + ["task"] * 2
    assert [json.loads(r["metadata"])["score"] for r in context if r["entry_type"] == "observation"] == [0.5, 0.3]
    assert len(memory.get_context_for_evolution(limit=4)) == 4
    found = memory.search(["importerror", "GEN 4"])
    assert [r["generation"] for r in found] == [4]
    assert memory.search(["survived"], limit=2)[0]["generation"] == 5

    git("add", "-A", cwd=protea)
    git("commit", "-q", "-m", "six generations", cwd=protea)
    # keep_recent is a total: the newest row overall (a task) stays; observations have no keep of their own.
    replaced = memory.compact(keep_recent=1, keep_types={"crash_log": 3, "reflection": 6})
    assert (len(replaced["observation"]), replaced["crash_log"], replaced["reflection"]) == (3, [], [])
    assert len(memory.get_by_type("directive", limit=5)) == 1 and len(memory.get_by_type("task", limit=5)) == 2
    assert "Gen 1 survived" not in mem("list").out  # condensed, archived in a commit
    assert git("status", "--porcelain", cwd=protea) == ""


def test_task_records_find_their_category_beside_sabres_tasks(repo):
    assert mem("init", "--preset", "sabre").code == 0
    assert mem("init", "--preset", "protea").code == 0
    memory = MemoryStore(Grimoire.open(repo))
    memory.add("task", 3, "User asked: ping, Result: pong")
    assert memory.get_by_type("task", 1)[0]["entry_type"] == "task"
    assert json.loads(mem("list", "-c", "user_task", "--json").out)[0]["content"] == "User asked: ping, Result: pong"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.add("insight", 1, "x"), "unknown entry type"),
        (lambda m: m.add("task", "one", "x"), "bad generation"),
        (lambda m: m.add("task", 1, "x", "meta"), "metadata is not a mapping"),
        (lambda m: m.search([]), "list of keywords"),
        (lambda m: m.search("timeout"), "list of keywords"),
        (lambda m: m.get_recent(0), "limit"),
    ],
)
def test_bad_input_says_what_to_give(protea, call, message):
    with pytest.raises(BadInput, match=message):
        call(MemoryStore(Grimoire.open(protea)))


def test_without_the_preset_the_error_names_it(repo):
    with pytest.raises(BadInput, match="preset protea"):
        MemoryStore(Grimoire.open(repo)).add("crash_log", 1, "Gen 1 died")


def test_the_generation_and_free_metadata_on_the_command_line_and_as_filters(protea):
    memory = MemoryStore(Grimoire.open(protea))
    added = mem("add", "-c", "observation", "Gen 12 survived 60s, Output: ok", "--meta", "generation=12")
    assert added.code == 0, added.err
    scored = mem("add", "-c", "observation", "Gen 13 survived 9s", "--meta", "generation=13", "--meta", "score=0.9",
                 "--meta", "model=fast", "--meta", "score=0.8", "--json")  # fmt: skip
    assert json.loads(scored.out)["metadata"] == {"generation": 13, "score": 0.8, "model": "fast"}  # the later wins
    memory.add("crash_log", 12, "Gen 12 died after 3s, Reason: ImportError")
    rows = memory.get_by_type("observation", 5)
    assert [(r["generation"], json.loads(r["metadata"])) for r in rows] == [
        (13, {"score": 0.8, "model": "fast"}),
        (12, {}),
    ]

    def listed(*args):
        return sorted(entry["content"] for entry in json.loads(mem("list", *args, "--json").out))

    assert listed("--meta", "generation=12") == [
        "Gen 12 died after 3s, Reason: ImportError",
        "Gen 12 survived 60s, Output: ok",
    ]
    assert listed("--meta", "generation=13", "--meta", "model=fast") == ["Gen 13 survived 9s"]
    hits = json.loads(mem("query", "survived", "--meta", "generation=12", "--json").out)
    assert [hit["content"] for hit in hits] == ["Gen 12 survived 60s, Output: ok"]
    assert mem("list", "--meta", "generation=14").code == 1


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("generation", "error: bad --meta 'generation' (hint: write it as key=value, like --meta generation=12)"),
        ("a b=1", "error: bad --meta 'a b=1'"),
        ("run.id=4", "error: bad --meta 'run.id=4'"),
        ("value=4", "error: --meta cannot set metadata.value: mem reads it"),
        ("accept_instructions=true", "error: --meta cannot set metadata.accept_instructions: mem reads it"),
    ],
)
def test_a_malformed_meta_is_refused_and_nothing_written(protea, pair, message):
    refused = mem("add", "-c", "observation", "Gen 1 survived", "--meta", pair)
    assert refused.code == 2 and refused.err.startswith(message) and len(refused.err.splitlines()) == 1
    assert mem("list", "--meta", pair).code == 2
    assert json.loads(mem("stats", "--json").out)["entries"] == 0


def test_the_guides_mem_command_for_compact_runs(protea):
    """The `mem` command docs/adapters.md puts beside compact, as written, does what compact() does (no summarizer)."""
    guide = (Path(__file__).resolve().parent.parent / "docs" / "adapters.md").read_text(encoding="utf-8")
    row = next(line for line in guide.splitlines() if line.startswith("| `compact("))
    command = re.search(r"\| `mem ([^`]*)` \|", row)
    assert command is not None
    memory = MemoryStore(Grimoire.open(protea))
    for generation in range(3):
        memory.add("crash_log", generation, f"Gen {generation} died after 3s, Reason: error {generation}")
    result = mem(*shlex.split(command.group(1).replace("200", "1")))
    assert result.code == 0, result.err
    assert [row["entry_type"] for row in memory.get_recent(10)] == ["crash_log", "crash_log"]  # 1 kept, 2 condensed


def test_a_compacted_row_has_the_newest_generation_it_condensed(protea):
    """Protea's `generation` is NOT NULL: a row compact() condensed stands for the generations it holds."""
    memory = MemoryStore(Grimoire.open(protea))
    for generation in (4, 9, 7):
        memory.add("crash_log", generation, f"Gen {generation} died after 3s, Reason: error {generation}")
    memory.compact(keep_recent=1, keep_types={"crash_log": 1})
    [condensed, kept] = memory.get_by_type("crash_log", 10)  # newest first: the condensed one is new
    assert kept["generation"] == 7
    assert json.loads(condensed["metadata"])["compacted"] == 2
    assert condensed["generation"] == 9
