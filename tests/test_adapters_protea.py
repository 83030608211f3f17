"""Protea's `MemoryStore` (the Protea design's calls) over a real grimoire: the call
sites of its evolution loop and task executor, in every form the design uses."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from adapter_examples import EXAMPLES, played
from conftest import git, mem

from grimoire_cli import Grimoire
from grimoire_cli.adapters.protea import MemoryStore
from grimoire_cli.core.errors import BadInput


def test_proteas_example_usage_runs_unchanged(protea, tmp_path):
    namespace = played(EXAMPLES["protea"], protea, tmp_path).names

    # evolution (_try_evolve) and user task execution
    learned = namespace["learned"]
    assert learned == namespace["learned_by_keyword"]
    assert [r["entry_type"] for r in learned] == ["task", "task", "directive"]
    tasks = namespace["tasks"]
    assert tasks == namespace["tasks_by_keyword"] and len(tasks) == 2
    crashes = namespace["crashes"]
    assert crashes == namespace["crashes_by_keyword"]
    assert [r["generation"] for r in crashes] == [6, 4, 2]
    assert set(crashes[0]) == {"id", "generation", "entry_type", "content", "metadata", "timestamp"}
    assert namespace["prompt"].splitlines()[1] == "Gen 6 died after 3s, Reason: ImportError, Last output: boom"
    assert len(namespace["user_needs"]) == 2  # autonomous task generation
    assert [r["content"] for r in namespace["directive"]] == ["Focus on speed over features"]
    assert len(namespace["two_crashes"]) == 2
    assert len(namespace["reflections"]) == 3
    assert len(namespace["two_tasks"]) == 2

    # planned: evolution context, search, compaction
    context = namespace["context"]
    assert [r["entry_type"] for r in context] == ["directive"] + ["crash_log"] * 2 + ["reflection"] * 3 + [
        "observation"
    ] * 2 + ["task"] * 2
    assert [json.loads(r["metadata"])["score"] for r in context if r["entry_type"] == "observation"] == [0.5, 0.3]
    assert len(namespace["four"]) == 4
    assert [r["generation"] for r in namespace["found"]] == [4]
    assert namespace["survived"][0]["generation"] == 5

    # keep_recent is a total: the newest row overall (a task) stayed; observations have no keep of their own.
    replaced = namespace["replaced"]
    assert (len(replaced["observation"]), replaced["crash_log"], replaced["reflection"]) == (3, [], [])
    assert len(namespace["directives_after"]) == 1 and len(namespace["tasks_after"]) == 2
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
