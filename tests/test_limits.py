"""Size limits of every field (issue 41, item 3): an oversized key, tag,
tag list, session id, agent, context or procedure is refused at every write
path with one line naming the field and its limit (exit 2, nothing written),
and `mem validate` reports one written by hand with file:line (exit 1)."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, mem, with_preset
from jsonschema import Draft202012Validator

from grimoire_cli import Grimoire
from grimoire_cli.core.errors import BadInput, GrimoireError
from grimoire_cli.core.schemas import entry_schema, first_problem
from grimoire_cli.integrations.calls import invoke

# Longer than any limit, short enough for one command-line argument (128 KiB).
LONG = "a" * 100_000
MEGABYTE = "a" * 1_048_576


def files(repo) -> dict:
    """Every tracked grimoire file's bytes: what a refused write must leave alone."""
    return {path: path.read_bytes() for path in (repo / "grimoires").rglob("*.yaml")}


@pytest.fixture
def sabred(repo):
    """A repo with SABRE's kinds (episode, procedure, task, semantic), committed."""
    with_preset(repo, "sabre")
    return repo


def _steps(count: int) -> str:
    return json.dumps({"name": "big", "steps": [{"name": f"s{i}"} for i in range(count)]})


CLI_CASES = [
    (("add", "x one", "-c", "fact", "--key", LONG), {}, "key: 100000 characters, over the limit of 200"),
    (("add", "x two", "-c", "fact", "-t", LONG), {}, "tags.0: 100000 characters, over the limit of 64"),
    (
        ("add", "x three", "-c", "fact", *[w for i in range(20_000) for w in ("-t", f"t{i}")]),
        {},
        "tags: 20000 items, over the limit of 50",
    ),
    (
        ("add", "x four", "-c", "fact", "--session-id", LONG),
        {},
        "source.session_id: 100000 characters, over the limit of 200",
    ),
    (
        ("add", "x five", "-c", "fact"),
        {"MEM_SESSION_ID": LONG},
        "source.session_id: 100000 characters, over the limit of 200",
    ),
    (("add", "x six", "-c", "fact"), {"MEM_AGENT": LONG}, "source.agent: 100000 characters, over the limit of 200"),
    (("add", "x seven", "-c", "fact", "--phase", LONG), {}, "source.phase: 100000 characters, over the limit of 200"),
    (("remember", LONG, "v"), {}, "key: 100000 characters, over the limit of 200"),
    (
        ("episode", "deploy", "--outcome", "failure", "--context", f"k={LONG}"),
        {},
        "context.k: 100000 characters, over the limit of 2000",
    ),
    (
        ("episode", "deploy", "--context-json", json.dumps({f"k{i}": i for i in range(50_000)})),
        {},
        "context: 50000 keys, over the limit of 50",
    ),
    (
        ("task", "add", "do it", "--next-session", "--context", f"k={LONG}"),
        {},
        "context.k: 100000 characters, over the limit of 2000",
    ),
    (("procedure", "add", "-"), {}, "steps: 20000 items, over the limit of 200"),
]


@pytest.mark.parametrize("args, env, says", CLI_CASES, ids=lambda v: v[0] if isinstance(v, tuple) else None)
def test_the_cli_refuses_an_oversized_field_and_writes_nothing(sabred, args, env, says):
    before = files(sabred)
    result = mem(*args, env=env, input=_steps(20_000) if args[-1] == "-" else None)
    assert result.code == 2, result.err[:300]
    assert result.err.startswith(f"error: {says}") and result.err.count("\n") == 1, result.err[:300]
    assert files(sabred) == before


def test_supersede_refuses_oversized_tags(sabred):
    old = mem("add", "We deploy on Fridays", "-c", "decision").out.strip()
    before = files(sabred)
    result = mem("supersede", old, "We deploy on Thursdays", *[w for i in range(51) for w in ("-t", f"t{i}")])
    assert result.code == 2 and result.err.startswith("error: tags: 51 items, over the limit of 50"), result.err
    assert files(sabred) == before


IMPORTS = [
    ({"content": "y", "category": "fact", "key": MEGABYTE}, "key: 1048576 characters, over the limit of 200"),
    (
        {"content": "y", "category": "fact", "tags": [f"t{i}" for i in range(20_000)]},
        "tags: 20000 items, over the limit of 50",
    ),
    (
        {"content": "y", "category": "fact", "source": {"session_id": MEGABYTE, "timestamp": "2026-11-22T10:00:00Z"}},
        "source.session_id: 1048576 characters, over the limit of 200",
    ),
    (
        {"content": "y", "category": "fact", "agent": MEGABYTE},
        "source.agent: 1048576 characters, over the limit of 200",
    ),
    (
        {"content": "y", "category": "fact", "source": {"session_id": "s", "notes": MEGABYTE}},
        "source.notes: 1048576 characters, over the limit of 2000",
    ),
    (
        {"content": "y", "category": "fact", "metadata": {f"k{i}": i for i in range(51)}},
        "metadata: 51 keys, over the limit of 50",
    ),
    (
        {"content": "y", "category": "fact", "metadata": {"deep": [[MEGABYTE]]}},
        "metadata.deep.0.0: 1048576 characters, over the limit of 2000",
    ),
    (
        {
            "content": "y",
            "category": "episode",
            "event": "e",
            "outcome": "success",
            "context": {f"k{i}": 1 for i in range(50_000)},
        },
        "context: 50000 keys, over the limit of 50",
    ),
    (
        {"content": "y", "category": "procedure", "name": "p", "steps": [{"name": f"s{i}"} for i in range(20_000)]},
        "steps: 20000 items, over the limit of 200",
    ),
]


@pytest.mark.parametrize("line, says", IMPORTS, ids=lambda v: v[:40] if isinstance(v, str) else None)
def test_import_refuses_an_oversized_field_and_writes_nothing(sabred, tmp_path, line, says):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(line) + "\n")
    before = files(sabred)
    result = mem("import", source)
    assert result.code == 2 and says in result.err and result.err.count("\n") == 1, result.err[:300]
    assert files(sabred) == before


CALLS = [
    ("save", {"content": "x", "key": MEGABYTE}, "key: 1048576 characters, over the limit of 200"),
    ("save", {"content": "x", "tags": [MEGABYTE]}, "tags.0: 1048576 characters, over the limit of 64"),
    ("save", {"content": "x", "tags": [f"t{i}" for i in range(20_000)]}, "tags: 20000 items, over the limit of 50"),
    ("save", {"content": "x", "session_id": MEGABYTE}, "source.session_id: 1048576 characters, over the limit of 200"),
    ("save", {"content": "x", "agent": MEGABYTE}, "source.agent: 1048576 characters, over the limit of 200"),
    ("episode", {"event": "e", "context": {"k": MEGABYTE}}, "context.k: 1048576 characters, over the limit of 2000"),
    (
        "episode",
        {"event": "e", "context": {f"k{i}": 1 for i in range(50_000)}},
        "context: 50000 keys, over the limit of 50",
    ),
    (
        "procedure_add",
        {"document": {"name": "p", "steps": [{"name": f"s{i}"} for i in range(20_000)]}},
        "steps: 20000 items, over the limit of 200",
    ),
    ("remember", {"key": MEGABYTE, "value": 1}, "key: 1048576 characters, over the limit of 200"),
    (
        "task_schedule",
        {"text": "t", "next_session": True, "context": {"k": MEGABYTE}},
        "context.k: 1048576 characters, over the limit of 2000",
    ),
]


@pytest.mark.parametrize(
    "name, arguments, says", CALLS, ids=lambda v: v if isinstance(v, str) and len(v) < 20 else None
)
def test_mcp_calls_refuse_an_oversized_field_and_write_nothing(sabred, name, arguments, says):
    before = files(sabred)
    with pytest.raises(GrimoireError) as refused:
        invoke(lambda: Grimoire.open(sabred), name, arguments)
    assert refused.value.exit_code == 2 and str(refused.value).startswith(says), str(refused.value)[:300]
    assert files(sabred) == before


def test_the_python_api_and_the_memory_tool_refuse_oversized_fields(sabred):
    from anthropic.lib.tools import ToolError
    from anthropic.types.beta import BetaMemoryTool20250818CreateCommand as Create

    from grimoire_cli.integrations.anthropic import GrimoireMemoryTool

    before = files(sabred)
    g = Grimoire.open(sabred)
    with pytest.raises(BadInput, match="^tags: 51 items, over the limit of 50"):
        g.add("x", "fact", tags=[f"t{i}" for i in range(51)])
    with pytest.raises(BadInput, match="^metadata.v: 2001 characters, over the limit of 2000"):
        g.add("x", "fact", metadata={"v": "a" * 2001})
    with pytest.raises(ToolError, match="source.agent: 1048576 characters, over the limit of 200"):
        GrimoireMemoryTool(g, agent=MEGABYTE).execute(
            Create(command="create", path="/memories/fact/a.md", file_text="hello")
        )
    assert files(sabred) == before


def test_values_at_the_limits_are_kept(sabred):
    g = Grimoire.open(sabred)
    entry = g.add(
        "x at the limits",
        "fact",
        key="k" * 200,
        tags=[f"{i:02d}" + "t" * 62 for i in range(50)],
        session_id="s" * 200,
        agent="a" * 200,
        metadata={f"k{i}": "v" * 2000 for i in range(50)},
    )
    assert len(entry.data["tags"]) == 50
    g.episodes.add("deploy", context={f"k{i}": "v" * 2000 for i in range(50)})
    g.procedures.add({"name": "long", "steps": [{"name": f"s{i}"} for i in range(200)]})
    assert mem("validate").code == 0


def test_validate_reports_a_hand_written_oversized_field_with_its_line(sabred):
    assert mem("add", "We use postgres", "-c", "fact", "-t", "db").code == 0
    assert mem("episode", "deploy", "--outcome", "failure", "--context", "a=b").code == 0
    facts = sabred / "grimoires/loa/memory/facts.yaml"
    facts.write_text(
        facts.read_text().replace(
            "  tags: [db]\n", "  key: " + "a" * 300 + "\n  tags: [" + ", ".join(f"t{i}" for i in range(60)) + "]\n"
        )
    )
    episodes = sabred / "grimoires/loa/memory/episodes.yaml"
    episodes.write_text(
        episodes.read_text().replace("    a: b\n", "    a: b\n    " + "k" * 90 + ": 1\n    c: " + "v" * 3000 + "\n")
    )
    result = mem("validate")
    assert result.code == 1
    lines = result.out.splitlines()
    key_line = facts.read_text().splitlines().index("  key: " + "a" * 300) + 1
    assert (
        f"grimoires/loa/memory/facts.yaml:{key_line}: [schema] MEM-20261122-001: key: 300 characters, over the limit of 200"
        in lines
    )
    assert (
        f"grimoires/loa/memory/facts.yaml:{key_line + 1}: [schema] MEM-20261122-001: tags: 60 items, over the limit of 50"
        in lines
    )
    assert any(line.endswith("context.c: 3000 characters, over the limit of 2000") for line in lines)
    # A context key's pattern holds its length
    assert any(f"context: '{'k' * 90}' does not match" in line for line in lines)
    assert all(len(line) < 400 for line in lines)  # no value quoted whole


BASE = {
    "id": "MEM-20261122-001",
    "category": "fact",
    "summary": "s",
    "content": "c",
    "confidence": 0.9,
    "ttl": "permanent",
    "source": {"session_id": "s", "timestamp": "2026-11-22T10:00:00Z"},
}
OVERSIZED = [
    ("note", {"key": "k" * 201}, "key: 201 characters, over the limit of 200"),
    ("note", {"tags": ["t" * 65]}, "tags.0: 65 characters, over the limit of 64"),
    ("note", {"tags": [f"t{i}" for i in range(51)]}, "tags: 51 items, over the limit of 50"),
    (
        "note",
        {"source": {"session_id": "s" * 201, "timestamp": "2026-11-22T10:00:00Z"}},
        "source.session_id: 201 characters, over the limit of 200",
    ),
    (
        "note",
        {"source": {"session_id": "s", "timestamp": "2026-11-22T10:00:00Z", "agent": "a" * 201}},
        "source.agent: 201 characters",
    ),
    ("note", {"metadata": {"k" * 81: 1}}, "metadata: a key of 81 characters, over the limit of 80"),
    ("note", {"metadata": {"v": {f"k{i}": 1 for i in range(101)}}}, "metadata.v: 101 keys, over the limit of 100"),
    ("note", {"metadata": {"v": list(range(201))}}, "metadata.v: 201 items, over the limit of 200"),
    ("note", {"effectiveness": {"applications": 2**70, "successes": 0, "score": 0}}, None),
    (
        "episode",
        {"event": "e", "outcome": "success", "context": {f"k{i}": 1 for i in range(51)}},
        "context: 51 keys, over the limit of 50",
    ),
    ("procedure", {"name": "p", "steps": [{"name": "s"}] * 201}, "steps: 201 items, over the limit of 200"),
    (
        "procedure",
        {"name": "p", "steps": [{"name": "s"}], "params": [f"p{i}" for i in range(51)]},
        "params: 51 items, over the limit of 50",
    ),
    (
        "task",
        {"task": "t", "trigger": "session-start", "status": "pending", "context": {"k": "v" * 2001}},
        "context.k: 2001 characters",
    ),
]


@pytest.mark.parametrize("kind, fields, says", OVERSIZED)
def test_the_write_check_and_jsonschema_both_refuse_oversized_fields(kind, fields, says):
    from grimoire_cli.core.schemas import limit_problem

    data = {**BASE, **fields}
    assert list(Draft202012Validator(entry_schema(kind)).iter_errors(data))
    assert first_problem(data, kind) is not None
    if says is not None:  # a size limit: the write path names it before any other check
        assert limit_problem(data, kind).startswith(says)


def test_the_projects_grimoire_and_the_good_examples_keep_the_limits():
    from grimoire_cli.core.schemas import limit_problem
    from grimoire_cli.storage.yamlio import parse_entries

    for folder in (ROOT / "grimoires", ROOT / "tests/examples/good/grimoires"):
        paths = sorted(folder.rglob("*.yaml"))
        assert paths
        for path in paths:
            for entry in parse_entries(path.read_text(), str(path))[0]:
                assert limit_problem(entry, "note") is None, (path, entry.get("id"))


def test_learn_keeps_a_long_tool_names_tag_within_the_limit(repo):
    """A tool may be named in 200 characters (observation.schema.json); its warning's tag holds 64."""
    with_preset(repo, "pms")
    tool = "t" * 100
    records = [
        {
            "task_id": f"job-{n}",
            "outcome": "success" if n % 4 else "failure",
            "steps": [
                {"tool": tool, "status": "completed" if n % 4 else "failed", **({} if n % 4 else {"error": "timeout"})}
            ],
        }
        for n in range(20)
    ]
    assert mem("observe", "-", input="".join(json.dumps(r) + "\n" for r in records)).code == 0
    learned = mem("learn", "--json")
    assert learned.code == 0, learned.err
    warning = next(e for e in json.loads(mem("insights", "--json").out) if e["insight_type"] == "warning")
    assert warning["tags"] == ["warning", "t" * 64]
