"""Samaritan's memory API (the Samaritan design's calls) over a real grimoire: its
example calls, awaited as Samaritan awaits them."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from adapter_examples import EXAMPLES, played
from conftest import NOW, git, mem

from grimoire_cli import Grimoire
from grimoire_cli.adapters.samaritan import Samaritan
from grimoire_cli.core.clock import parse_time
from grimoire_cli.core.errors import BadInput, CommandFailed
from grimoire_cli.core.runtime import Runtime


@pytest.fixture
def samaritan(repo):
    assert mem("init", "--preset", "samaritan").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "start", cwd=repo)
    return repo


def test_samaritans_example_usage_runs_unchanged(samaritan, tmp_path):
    namespace = played(EXAMPLES["samaritan"], samaritan, tmp_path).names

    assert namespace["reply"] == "saved: topic=X (imp=8)"
    rows = namespace["rows"]
    assert [(r["topic"], r["importance"], r["source"]) for r in rows] == [
        ("X", 8, "session"),
        ("coding style", 7, "user"),
        ("Hermes project", 6, "session"),
    ]
    assert rows[1]["session_id"] == "s-42"
    block = namespace["block"]
    assert block.splitlines()[:3] == ["## Active Memory", "### X", "- Y is the release manager (imp=8)"]
    assert "- Prefers type hints in code examples (imp=7)" in block
    status = namespace["status"]
    assert status["messages"] == 4 and status["saved"] == 1 and status["summary_id"]
    assert "Rex" in mem("list", "--json").out

    # 30 hours later (hot by age until 48h) an aging of 24h moved the unimportant memories; importance 8 stayed hot.
    # Samaritan's rows only: the two saved above at importance 6 and 7, and the one the summarizer saved (mem's own
    # answer, its facts kept in Samaritan's category); not the chat summary (a table of its own in Samaritan).
    assert namespace["text"] == "Aged 3 memories from short-term to long-term (threshold: 24h)."
    memory = Samaritan(Grimoire.open(samaritan, runtime=Runtime.from_environment()))
    assert [(r["topic"], r["content"]) for r in asyncio.run(memory.memory_recall("pets", tier="long"))] == [
        ("pets", "The user's dog is called Rex")
    ]
    summary = Grimoire.open(samaritan).show(status["summary_id"])
    assert summary.category == "summary" and summary.id in Grimoire.open(samaritan).lifecycle.age().hot
    # The moves are recorded: the next aging finds nothing left to move, and the short term holds what stayed.
    assert namespace["again"] == "Aged 0 memories from short-term to long-term (threshold: 24h)."
    assert [r["content"] for r in namespace["long_term"]] == ["Deploys go through the staging cluster first"]
    assert [r["content"] for r in namespace["short_term"]] == ["Y is the release manager"]
    assert namespace["moved"] == 0
    assert [r["content"] for r in namespace["still_short"]] == ["Y is the release manager"]


def test_an_empty_store_injects_nothing(samaritan):
    assert asyncio.run(Samaritan(Grimoire.open(samaritan)).load_context_block()) == ""


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.save_memory("t", "c", source="robot"), "bad source"),
        (lambda m: m.save_memory(" ", "c"), "needs a topic"),
        (lambda m: m.memory_recall("t", tier="medium"), "unknown tier"),
        (lambda m: m.memory_recall("t", source="robot"), "bad source"),
        (lambda m: m.memory_age(older_than_hours="24h"), "older_than_hours"),
    ],
)
def test_bad_input_says_what_to_give(samaritan, call, message):
    with pytest.raises(BadInput, match=message):
        asyncio.run(call(Samaritan(Grimoire.open(samaritan))))
    assert json.loads(mem("stats", "--json").out)["entries"] == 0


async def saved_from_three_sources(memory):
    await memory.save_memory("Hermes project", "Deploys of Hermes go through staging", 6, "user")
    await memory.save_memory("Hermes project", "Deploys of Hermes need a sign-off", 6, "directive")
    await memory.save_memory("Hermes project", "Deploys of Hermes ran twice today", 6, "session")


def test_a_source_keeps_its_memories_in_query_recall_and_the_query_tool(samaritan):
    from grimoire_cli.integrations.calls import invoke

    grimoire = Grimoire.open(samaritan)
    memory = Samaritan(grimoire)
    asyncio.run(saved_from_three_sources(memory))

    found = mem("query", "deploys hermes", "--source", "user", "--json")
    assert found.code == 0, found.err
    assert [hit["content"] for hit in json.loads(found.out)] == ["Deploys of Hermes go through staging"]
    assert [hit.entry.content for hit in grimoire.query("deploys", source="directive")] == [
        "Deploys of Hermes need a sign-off"
    ]
    tool = invoke(lambda: Grimoire.open(samaritan), "query", {"text": "deploys", "source": "session"})
    assert [hit["content"] for hit in tool] == ["Deploys of Hermes ran twice today"]
    recalled = asyncio.run(memory.memory_recall("hermes", source="directive"))
    assert [(row["content"], row["source"]) for row in recalled] == [("Deploys of Hermes need a sign-off", "directive")]
    assert mem("query", "deploys", "--source", "robot").code == 1  # a source nothing came from: nothing found
    empty = mem("query", "deploys", "--source", " ")
    assert empty.code == 2 and empty.err.startswith("error: --source is empty")


async def saved_on_two_days(memory, runtime):
    runtime.fixed_now = parse_time("2026-11-18T10:00:00Z")  # four days before NOW: long-term by then
    await memory.save_memory("Hermes project", "Hermes deploys through staging", 5, "user")
    await memory.save_memory("Hermetic builds", "Builds are hermetic", 5, "session")
    await memory.save_memory("coding style", "Prefers type hints", 5, "user")
    runtime.fixed_now = parse_time(NOW)
    await memory.save_memory("Hermes project", "Hermes runs on three nodes", 5, "directive")


def test_recall_by_tier_and_topic_prefix_without_query_words(samaritan):
    from grimoire_cli.integrations.calls import invoke

    runtime = Runtime.from_environment()
    memory = Samaritan(Grimoire.open(samaritan, runtime=runtime))
    asyncio.run(saved_on_two_days(memory, runtime))

    def contents(*args):
        listed = mem("list", *args, "--json")
        assert listed.code == 0, listed.err
        return sorted(entry["content"] for entry in json.loads(listed.out))

    assert contents("--tier", "long", "--topic", "herm*") == ["Builds are hermetic", "Hermes deploys through staging"]
    assert contents("--tier", "hot", "--topic", "herm*") == ["Hermes runs on three nodes"]
    assert contents("--topic", "hermes-*") == ["Hermes deploys through staging", "Hermes runs on three nodes"]
    assert contents("-t", "herm?tic-builds") == ["Builds are hermetic"]
    assert contents("--tier", "long", "--source", "user") == ["Hermes deploys through staging", "Prefers type hints"]
    hits = json.loads(mem("query", "hermes", "--topic", "hermes*", "--tier", "long", "--json").out)
    assert [hit["content"] for hit in hits] == ["Hermes deploys through staging"]
    tool = invoke(lambda: Grimoire.open(samaritan), "list", {"tier": "hot", "tags": ["herm*"]})
    assert [entry["content"] for entry in tool] == ["Hermes runs on three nodes"]
    long_term = asyncio.run(memory.memory_recall("herm", tier="long"))
    assert sorted(row["content"] for row in long_term) == ["Builds are hermetic", "Hermes deploys through staging"]
    bad = mem("list", "--tier", "warm")
    assert bad.code == 2 and bad.err.startswith("error: unknown tier 'warm'")


def test_max_rows_caps_an_aging_the_least_important_first_and_the_moves_stay(samaritan):
    """Samaritan's age_to_longterm(older_than_hours, max_rows): at most max_rows move, lowest importance first."""
    runtime = Runtime.from_environment()  # its clock moves below
    memory = Samaritan(Grimoire.open(samaritan, runtime=runtime))
    for importance, topic in ((5, "deploys"), (2, "lunch"), (7, "releases"), (3, "office")):
        asyncio.run(memory.save_memory(topic, f"A note about {topic} for the team", importance=importance))
    runtime.fixed_now = parse_time("2026-11-23T16:00:00Z")  # 30 hours later: all past a 24h aging
    assert asyncio.run(memory.age_to_longterm(older_than_hours=24, max_rows=2)) == 2
    short = Samaritan(Grimoire.open(samaritan, runtime=runtime))  # another process reads the recorded moves
    assert [r["topic"] for r in asyncio.run(short.load_short_term())] == ["releases", "deploys"]
    assert [r["topic"] for r in asyncio.run(short.memory_recall("office", tier="long"))] == ["office"]
    reply = asyncio.run(memory.memory_age(older_than_hours=24, max_rows=200))
    assert reply == "Aged 2 memories from short-term to long-term (threshold: 24h)."
    assert asyncio.run(memory.load_short_term()) == []


def test_summarize_and_save_takes_samaritans_own_extraction_answer(samaritan, tmp_path):
    """Samaritan's summarizer answers a JSON list [{topic, content, importance}]; each is a short-term memory."""
    script = tmp_path / "samaritan-summarizer.py"
    answer = [
        {"topic": "Hermes project", "content": "Deploys need a green staging run", "importance": 7},
        {"topic": "coding style", "content": "Prefers type hints in code examples", "importance": 6},
    ]
    script.write_text(f"#!{sys.executable}\nimport sys, json\nsys.stdin.read()\nprint(json.dumps({answer!r}))\n")
    script.chmod(0o755)
    memory = Samaritan(Grimoire.open(samaritan), summarizers={"summarizer-anthropic": str(script)})
    history = [{"role": "user", "content": "Hermes deploys?"}, {"role": "assistant", "content": "Staging first."}] * 2
    status = asyncio.run(memory.summarize_and_save("s-7", history))
    assert status["messages"] == 4 and status["saved"] == 2 and status["summary_id"]
    rows = asyncio.run(memory.load_short_term())
    assert [(r["topic"], r["content"], r["importance"], r["session_id"]) for r in rows] == [
        ("Hermes project", "Deploys need a green staging run", 7, "s-7"),
        ("coding style", "Prefers type hints in code examples", 6, "s-7"),
    ]
    assert mem("validate").code == 0


def test_summarize_and_save_falls_back_to_summarizer_gemini(samaritan, tmp_path):
    """Samaritan's design: when the summarizer fails, summarizer-gemini summarizes instead (when configured)."""
    failing = tmp_path / "anthropic.py"
    failing.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stdin.read()\nsys.stderr.write('overloaded\\n')\nsys.exit(1)\n"
    )
    working = tmp_path / "gemini.py"
    answer = [{"topic": "pets", "content": "The user's dog is called Rex", "importance": 6}]
    working.write_text(f"#!{sys.executable}\nimport sys, json\nsys.stdin.read()\nprint(json.dumps({answer!r}))\n")
    for script in (failing, working):
        script.chmod(0o755)
    history = [{"role": "user", "content": "My dog is Rex"}, {"role": "assistant", "content": "Noted."}] * 2
    alone = Samaritan(Grimoire.open(samaritan), summarizers={"summarizer-anthropic": str(failing)})
    with pytest.raises(CommandFailed, match="overloaded"):
        asyncio.run(alone.summarize_and_save("s-1", history))
    both = {"summarizer-anthropic": str(failing), "summarizer-gemini": str(working)}
    status = asyncio.run(Samaritan(Grimoire.open(samaritan), summarizers=both).summarize_and_save("s-1", history))
    assert status["saved"] == 1
    assert [r["content"] for r in asyncio.run(alone.memory_recall("pets"))] == ["The user's dog is called Rex"]


def test_an_aging_narrowed_to_categories_moves_and_records_only_theirs(samaritan):
    """What Samaritan's memory_age rests on: entries of other categories stay hot, now and at the next read."""
    runtime = Runtime.from_environment()
    g = Grimoire.open(samaritan, runtime=runtime)
    mine = g.add("Deploys go through the staging cluster first", "preference", importance=5).id
    other = g.add("The staging cluster runs in eu-west-1", "fact").id
    runtime.fixed_now = parse_time("2026-11-23T16:00:00Z")  # 30 hours later
    with pytest.raises(BadInput, match="categories narrow an aging for good"):
        g.lifecycle.age(categories=["preference"])
    assert g.lifecycle.age(older_than="24h", categories=["preference"]).moved_to_long == [mine]
    split = Grimoire.open(samaritan, runtime=runtime).lifecycle.age()
    assert mine in split.long and other in split.hot
