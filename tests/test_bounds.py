"""Out-of-range numbers and oversized search texts (issue 41, item 4): every
numeric option of every command and every numeric argument of every MCP
tool, given 2**70 or -1, and every search text given 120,000 characters,
is one `error:` line, exit 2 — never an SQLite traceback."""

from __future__ import annotations

import pytest
from conftest import mem

from grimoire_cli import Grimoire
from grimoire_cli.core.errors import BadInput
from grimoire_cli.integrations.calls import CALLS, invoke

HUGE_NUMBER = 2**70
HUGE_TEXT = "a " * 60_000
HUGE_GLOB = "a" * 60_000
ID = "MEM-20261122-001"


@pytest.fixture
def full(repo):
    """A grimoire with every kind (SABRE's and Protea's presets) and one memory and one fact."""
    for preset in ("sabre", "protea"):
        assert mem("init", "--preset", preset).code == 0
    assert mem("add", "We use postgres for the main db", "-c", "decision").out.strip() == ID
    assert mem("remember", "db.name", "main").code == 0
    return repo


def grimoire_files(repo) -> dict:
    return {path: path.read_bytes() for path in (repo / "grimoires").rglob("*.yaml")}


# (the command's words before the option, the option): every int and float
# option of `mem` (test_the_table_names_every_numeric_option holds it whole).
NUMERIC_OPTIONS = [
    (("add", "x"), "--confidence"),
    (("add", "x"), "--importance"),
    (("supersede", ID, "We use postgres 17"), "--confidence"),
    (("supersede", ID, "We use postgres 17"), "--importance"),
    (("list",), "--recent"),
    (("query", "db"), "--min-confidence"),
    (("query", "db"), "--limit"),
    (("context",), "--budget"),
    (("episodes", "deploy"), "--limit"),
    (("age",), "--max"),
    (("age", "--older-than", "1h"), "--max-rows"),
    (("compact", "--no-summary"), "--keep"),
    (("compact", "--no-summary"), "--keep-total"),
    (("patterns",), "--min-usage"),
    (("recommend", "deploy"), "--limit"),
    (("chat", "recent"), "-n"),
    (("serve",), "--port"),
]


def _numeric_options() -> set[tuple[str, str]]:
    """(command path, longest option name) of every int or float parameter `mem` declares."""
    import typer

    from grimoire_cli.cli.main import load_all

    found = set()

    def walk(command, path):
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, (*path, name))
        for param in getattr(command, "params", []):
            if param.type_descriptor.annotation in (int, float):
                found.add((" ".join(path), max(param.opts, key=len)))

    walk(typer.main.get_command(load_all()), ())
    return found


def test_the_table_names_every_numeric_option():
    words = {
        "add",
        "supersede",
        "list",
        "query",
        "context",
        "episodes",
        "age",
        "compact",
        "patterns",
        "recommend",
        "chat",
        "recent",
        "serve",
    }
    tabled = {(" ".join(w for w in before if w in words), option) for before, option in NUMERIC_OPTIONS}
    assert _numeric_options() == tabled


@pytest.mark.parametrize("value", [HUGE_NUMBER, -1])
@pytest.mark.parametrize("before, option", NUMERIC_OPTIONS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else v)
def test_an_out_of_range_number_is_one_error_line(full, before, option, value):
    files = grimoire_files(full)
    result = mem(*before, option, str(value))
    assert result.code == 2, (result.out, result.err)
    assert result.err.startswith("error: ") and result.err.count("\n") == 1 and "Traceback" not in result.err, (
        result.err
    )
    assert (
        "must be" in result.err
        and str(value if option not in ("--confidence", "--min-confidence") else float(value)) in result.err
    )
    assert grimoire_files(full) == files


SEARCH_TEXTS = [
    (("query", HUGE_TEXT), "the query is 120000 characters, over the limit of 10000"),
    (("episodes", HUGE_TEXT), "the query is 120000 characters, over the limit of 10000"),
    (("context", HUGE_TEXT), "the query is 120000 characters, over the limit of 10000"),
    (("recommend", HUGE_TEXT), "the action is 120000 characters, over the limit of 10000"),
    (("recall-all", HUGE_TEXT), "the query is 120000 characters, over the limit of 10000"),
    (("facts", HUGE_GLOB), "the pattern is 60000 characters, over the limit of 1000"),
]


@pytest.mark.parametrize("args, says", SEARCH_TEXTS, ids=lambda v: v[0] if isinstance(v, tuple) else None)
def test_an_oversized_search_text_is_one_error_line(full, args, says):
    result = mem(*args)
    assert result.code == 2 and result.err.startswith(f"error: {says}") and result.err.count("\n") == 1, result.err[
        :300
    ]


def test_the_limits_themselves_are_accepted(full):
    assert mem("query", "postgres", "-n", "1000000", "--min-confidence", "0").code == 0
    assert mem("list", "--recent", "1000000").code == 0
    assert mem("context", "--budget", "1000000").code == 0
    assert mem("context", "--budget", "20").code == 0
    assert mem("age", "--max", "0", "--dry-run").code == 0
    assert mem("facts", "d" * 999 + "*").code == 1  # nothing found, no error
    assert mem("query", "postgres " * 1000).code == 0


# (tool, the arguments beside the number, the numeric argument): every integer
# and number of every tool (test_every_numeric_tool_argument_is_bounded holds it whole).
NUMERIC_ARGUMENTS = [
    ("save", {"content": "x"}, "importance"),
    ("save", {"content": "x"}, "confidence"),
    ("supersede", {"id": ID, "content": "y"}, "importance"),
    ("supersede", {"id": ID, "content": "y"}, "confidence"),
    ("query", {"text": "db"}, "limit"),
    ("query", {"text": "db"}, "min_confidence"),
    ("context", {}, "budget"),
    ("list", {}, "recent"),
    ("episodes", {}, "limit"),
    ("chat_recent", {}, "count"),
    ("recommend", {"action": "deploy"}, "limit"),
    ("patterns", {}, "min_usage"),
    ("age", {}, "most"),
    ("age", {"older_than": "1h"}, "max_rows"),
]


def test_every_numeric_tool_argument_is_bounded():
    numeric = {
        (name, arg)
        for name, call in CALLS.items()
        for arg, schema in call.schema["properties"].items()
        if schema.get("type") in ("integer", "number")
    }
    assert numeric == {(name, arg) for name, _, arg in NUMERIC_ARGUMENTS}
    for name, arg in numeric:
        schema = CALLS[name].schema["properties"][arg]
        assert "minimum" in schema and "maximum" in schema, (name, arg)
    assert CALLS["save"].schema["properties"]["importance"]["maximum"] == 10
    assert CALLS["supersede"].schema["properties"]["importance"]["maximum"] == 10


@pytest.mark.parametrize("value", [HUGE_NUMBER, -1])
@pytest.mark.parametrize("name, others, arg", NUMERIC_ARGUMENTS, ids=lambda v: v if isinstance(v, str) else None)
def test_an_out_of_range_tool_argument_is_refused_before_the_call(full, name, others, arg, value):
    files = grimoire_files(full)
    with pytest.raises(BadInput) as refused:
        invoke(lambda: Grimoire.open(full), name, {**others, arg: value})
    message = str(refused.value)
    assert message.startswith(f"bad arguments for {name}: {arg}:") and "\n" not in message, message
    assert grimoire_files(full) == files


TOOL_TEXTS = [
    ("query", {"text": HUGE_TEXT}),
    ("context", {"query": HUGE_TEXT}),
    ("episodes", {"query": HUGE_TEXT}),
    ("recommend", {"action": HUGE_TEXT}),
    ("recommend", {"action": "x", "context": HUGE_TEXT}),
    ("recall_all", {"query": HUGE_TEXT}),
    ("facts", {"pattern": HUGE_GLOB}),
]


@pytest.mark.parametrize("name, arguments", TOOL_TEXTS, ids=lambda v: v if isinstance(v, str) else None)
def test_an_oversized_tool_search_text_is_refused(full, name, arguments):
    with pytest.raises(BadInput, match=f"^bad arguments for {name}: [a-z]+: [0-9]+ characters, over the limit of"):
        invoke(lambda: Grimoire.open(full), name, arguments)


API_CALLS = [
    ("query", lambda g, v: g.query("db", limit=v)),
    ("query", lambda g, v: g.query("db", min_confidence=v)),
    ("list", lambda g, v: g.list(recent=v)),
    ("context", lambda g, v: g.context(budget=v)),
    ("episodes", lambda g, v: g.episodes.list(limit=v)),
    ("age", lambda g, v: g.lifecycle.age(most=v, dry_run=True)),
    ("compact", lambda g, v: g.lifecycle.compact(keep=v, summarize=False)),
    ("compact", lambda g, v: g.lifecycle.compact(keep_total=v, summarize=False)),
    ("patterns", lambda g, v: g.learning.patterns(min_usage=v)),
    ("recommend", lambda g, v: g.learning.recommend("deploy", limit=v)),
    ("recall_all", lambda g, v: g.learning.recall_all("deploy", limit=v)),
    ("chat_recent", lambda g, v: g.chat.recent(v)),
    ("add", lambda g, v: g.add("x", "fact", importance=v)),
]


@pytest.mark.parametrize("value", [HUGE_NUMBER, -1, True, 2.5, float("nan")])
@pytest.mark.parametrize("name, call", API_CALLS, ids=lambda v: v if isinstance(v, str) else None)
def test_the_python_api_checks_numbers_before_any_work(full, name, call, value):
    with pytest.raises(BadInput, match="must be a (whole )?number from"):
        call(Grimoire.open(full), value)


@pytest.mark.parametrize(
    "call",
    [
        lambda g: g.query(HUGE_TEXT),
        lambda g: g.context(HUGE_TEXT),
        lambda g: g.episodes.list(HUGE_TEXT),
        lambda g: g.learning.recommend(HUGE_TEXT),
        lambda g: g.learning.recall_all(HUGE_TEXT),
        lambda g: g.facts.list(HUGE_GLOB),
    ],
)
def test_the_python_api_checks_search_texts(full, call):
    with pytest.raises(BadInput, match="characters, over the limit of"):
        call(Grimoire.open(full))
