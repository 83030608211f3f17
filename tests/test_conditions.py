"""Condition triggers of tasks (SABRE's `condition:<expr>`): checked against a
context the caller passes, parsed by an allow-list, never run as code."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import examples, mem
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from grimoire_cli import Grimoire
from grimoire_cli.core.errors import BadInput
from grimoire_cli.kinds.conditions import MAX_CONDITION, check_condition, holds

TASKS = Path("grimoires/loa/memory/tasks.yaml")


def _add(*args: str) -> str:
    result = mem("task", "add", *args)
    assert result.code == 0, result.err
    return result.out.strip()


def test_a_condition_task_is_due_when_its_condition_holds_against_the_context(sabre):
    entry_id = _add("Scale the workers up", "--condition", "cpu > 80 and env == 'prod'", "--context", "team=ops")
    shown = json.loads(mem("show", entry_id, "--json").out)
    assert shown["trigger"] == "condition:cpu > 80 and env == 'prod'" and shown["context"] == {"team": "ops"}
    held = mem("due", "--context", "cpu=93", "--context", "env=prod")
    assert held.code == 0 and held.out.startswith(entry_id) and "if cpu > 80" in held.out
    assert mem("due", "--context", "cpu=50", "--context", "env=prod").code == 1
    assert mem("due", "--context", "env=prod").code == 1  # an unknown key is false, not an error
    assert mem("due").code == 1  # no context: a condition task is not due
    assert json.loads(mem("check", "--json").out)["tasks"] == []
    assert mem("validate").code == 0


def test_the_library_and_the_tool_take_a_context(sabre):
    from grimoire_cli.integrations.kind_calls import tasks_due

    g = Grimoire.open(sabre)
    task = g.tasks.add("Page the on-call", condition="not (errors < 5) or status == 'down'")
    assert g.tasks.due() == [] and g.tasks.due(context={"errors": 2}) == []
    assert [t.id for t in g.tasks.due(context={"errors": 12})] == [task.id]
    assert [t.id for t in g.tasks.due(context={"status": "down"})] == [task.id]
    assert [t["id"] for t in tasks_due(g, context={"errors": 7.5})] == [task.id]
    g.tasks.end(task.id, "done")
    assert g.tasks.due(context={"errors": 12}) == []


@pytest.mark.parametrize(
    ("condition", "context", "expected"),
    [
        ("ready", {"ready": "yes"}, True),
        ("ready", {"ready": "false"}, False),  # what `--context ready=false` says
        ("ready", {"ready": "0"}, False),
        ("ready", {}, False),
        ("not ready", {}, True),
        ("rows >= 1000", {"rows": "1000"}, True),
        ("rows >= 1000", {"rows": "many"}, False),  # not a number: false
        ("-5 < delta", {"delta": -1}, True),
        ("db.rows > 3", {"db.rows": 4}, True),  # a dotted key
        ("env != 'prod'", {}, False),  # unknown: false whatever the operator
        ("env != 'prod'", {"env": "dev"}, True),
        ("version == '2'", {"version": 2}, True),  # text compares as text
        ("a and (b or c)", {"a": 1, "c": True}, True),
        ("a and (b or c)", {"a": 1}, False),
    ],
)
def test_what_a_condition_means(condition, context, expected):
    assert holds(check_condition(condition), context) is expected


@pytest.mark.parametrize(
    "condition",
    [
        "__import__('os').system('true')",
        "open('x', 'w')",
        "x[0] == 1",
        "lambda: 1",
        "x == y",  # two keys: a key is compared with a literal
        "1 < x < 5",  # one comparison at a time
        "x in 'abc'",
        "x is None",
        "x + 1 > 2",
        "x == True",
        "'a'.upper() == 'A'",
        "(x := 1)",
        "x if y else z",
        "",
        "x ==",
        "a\nb",
        "x" * 201,
    ],
)
def test_anything_else_is_refused_when_scheduled(sabre, condition):
    before = (sabre / TASKS).read_bytes()
    result = mem("task", "add", "Do it", "--condition", condition)
    assert result.code == 2 and result.err.startswith("error: ") and len(result.err.strip().splitlines()) == 1
    assert (sabre / TASKS).read_bytes() == before


def test_a_task_has_one_trigger(sabre):
    result = mem("task", "add", "Do it", "--condition", "x", "--next-session")
    assert result.code == 2 and "exactly one trigger" in result.err


# Pieces that would do something if run as Python: none may ever be accepted.
_HARMFUL = st.sampled_from(
    [
        "__import__('os')",
        "open('{marker}', 'w')",
        "exec('1')",
        "eval('1')",
        "().__class__",
        "[x for x in ()]",
        "globals()",
        "x.__class__()",
        "getattr(x, 'y')",
    ]
)
_KEYS = st.sampled_from(["cpu", "env", "ready", "db.rows", "a_b"])
_LITERALS = st.one_of(st.integers(-1000, 1000), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
_OPS = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])


def _comparison(key: str, op: str, literal: object, flip: bool) -> str:
    pair = [key, repr(literal)]
    return f"{pair[1]} {op} {pair[0]}" if flip else f"{pair[0]} {op} {pair[1]}"


_ATOMS = st.one_of(_KEYS, st.builds(_comparison, _KEYS, _OPS, _LITERALS, st.booleans()))
_GRAMMAR = st.recursive(
    _ATOMS,
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"{a} and {b}", inner, inner),
        st.builds(lambda a, b: f"{a} or {b}", inner, inner),
        st.builds(lambda a: f"not {a}", inner),
        st.builds(lambda a: f"({a})", inner),
    ),
    max_leaves=8,
)
_CONTEXTS = st.dictionaries(_KEYS, st.one_of(st.integers(), st.text(max_size=5), st.booleans(), st.none()))


@settings(max_examples=examples(300), deadline=None)
@given(text=st.one_of(st.text(max_size=80), _GRAMMAR, st.builds(lambda a, b: f"{a} and {b}", _GRAMMAR, _HARMFUL)))
def test_any_string_parses_or_is_refused_and_nothing_runs(text, tmp_path_factory):
    marker = tmp_path_factory.mktemp("condition") / "ran"
    text = text.replace("{marker}", str(marker))
    try:
        checked = check_condition(text)
    except BadInput as refused:
        assert str(refused) and "\n" not in str(refused)
    else:
        assert holds(checked, {"cpu": 90, "env": "prod", "ready": "yes"}) in (True, False)
    assert not os.path.exists(marker)


@settings(max_examples=examples(200), deadline=None)
@given(text=_GRAMMAR, context=_CONTEXTS)
def test_the_grammar_always_parses_and_gives_a_truth_value(text, context):
    assume(len(text) <= MAX_CONDITION)
    assert holds(check_condition(text), context) in (True, False)


@settings(max_examples=examples(100), deadline=None)
@given(text=st.builds(lambda a, b, left: f"{a} and {b}" if left else f"{b} or {a}", _GRAMMAR, _HARMFUL, st.booleans()))
def test_harmful_pieces_are_always_refused(text):
    with pytest.raises(BadInput):
        check_condition(text)
