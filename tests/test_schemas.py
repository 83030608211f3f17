"""The write path's schema check (`schemas.first_problem`) against jsonschema
itself, which `mem validate` uses: the same verdict on every entry."""

import json

from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from grimoire_cli.core.config import KINDS
from grimoire_cli.core.schemas import entry_validator, first_problem

BASE = {
    "id": "MEM-20261122-001",
    "category": "fact",
    "summary": "s",
    "content": "c",
    "confidence": 0.9,
    "ttl": "permanent",
    "source": {"session_id": "s", "timestamp": "2026-11-22T10:00:00Z"},
}
VALID = {
    "note": {},
    "episode": {"event": "deploy", "outcome": "failure", "learned": "x", "context": {"a": 1}},
    "procedure": {"name": "rotate", "steps": [{"name": "one", "run": "x"}], "params": ["key"], "description": "d"},
    "task": {
        "task": "t",
        "trigger": "session-start",
        "status": "pending",
        "due_at": "2026-11-22T10:00:00Z",
        "context": {},
    },
    "summary": {"session_id": "s1", "message_count": 3, "model": "m", "memories": ["MEM-20261122-002"]},
    "chat": {"role": "user", "turn": 1},
    "insight": {
        "insight_type": "warning",
        "applies_to": "create_shipment",
        "evidence": ["task-1", "task-2"],
        "validated": True,
        "validated_by": "mem learn",
        "rule_id": "warn-0123456789ab",
    },
}
FIELDS = sorted(
    {name for fields in VALID.values() for name in fields}
    | set(BASE)
    | {"importance", "tags", "key", "effectiveness", "related_memories", "archived", "archive_reason", "metadata", "x"}
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 12),
    st.floats(width=32),
    st.sampled_from(
        [
            "",
            "a",
            "deploy",
            "MEM-20261122-003",
            "2026-11-22T10:00:00Z",
            "session-start",
            "pending",
            "user",
            "User",
            "x" * 2100,
            "with space",
            "event:ci",
            "success",
            "Success",
            "done",
            "superseded",
            "expired",
            "time:2026-11-22T10:00:00Z",
            "rotate-keys",
        ]
    ),
)
repeats = st.sampled_from(
    [
        ["deploy", "deploy"],
        ["MEM-20261122-003"] * 2,
        ["a", 1, True],
        [1, 1.0],
        [{"name": "x"}, {"name": "x"}],
        [float("nan")] * 2,
        [float("inf")] * 2,
    ]
)
values = st.one_of(
    repeats,
    st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(["name", "run", "a", "b c", "role"]), inner, max_size=3),
        ),
        max_leaves=6,
    ),
)


def test_every_kind_has_a_valid_example():
    assert set(VALID) == set(KINDS)
    for kind, fields in VALID.items():
        assert first_problem({**BASE, **fields}, kind) is None, kind
        assert not list(entry_validator(kind).iter_errors({**BASE, **fields}))


@st.composite
def entries(draw):
    """A kind and a valid entry of it with a few fields changed (its own fields the likeliest) or dropped."""
    kind = draw(st.sampled_from(sorted(VALID)))
    names = st.one_of(st.sampled_from(sorted(VALID[kind]) or FIELDS), st.sampled_from(FIELDS))
    return kind, draw(st.dictionaries(names, values, max_size=4)), draw(st.lists(names, max_size=2))


@settings(max_examples=examples(600), deadline=None)
@given(entries())
def test_the_write_check_agrees_with_jsonschema(example):
    kind, changes, dropped = example
    data = {**BASE, **VALID[kind], **changes}
    for name in dropped:
        data.pop(name, None)
    expected = not list(entry_validator(kind).iter_errors(data))
    assert (first_problem(data, kind) is None) == expected, json.dumps(data, default=str)[:300]


OBSERVATION = {
    "task_id": "t",
    "outcome": "success",
    "context": "c",
    "started_at": "2026-11-22T10:00:00Z",
    "duration_ms": 3,
    "steps": [{"tool": "a", "status": "completed", "params": {}, "duration_ms": 1, "retries": 0, "error": None}],
    "corrections": [{"field": "f", "original": 1, "corrected": 2}],
}
STEP_FIELDS = ["tool", "status", "params", "duration_ms", "retries", "error", "x"]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.dictionaries(st.sampled_from(sorted(OBSERVATION) + ["x"]), values, max_size=3),
    st.dictionaries(st.sampled_from(STEP_FIELDS), values, max_size=3),
    st.lists(st.sampled_from(sorted(OBSERVATION)), max_size=1),
)
def test_the_observation_check_agrees_with_jsonschema(changes, step, dropped):
    from jsonschema import Draft202012Validator

    from grimoire_cli.core.schemas import load_schema

    schema = load_schema("observation.schema.json")
    data = {**OBSERVATION, "steps": [{**OBSERVATION["steps"][0], **step}], **changes}
    for name in dropped:
        data.pop(name, None)
    expected = not list(Draft202012Validator(schema).iter_errors(data))
    assert (first_problem(data, schema_name="observation.schema.json") is None) == expected, json.dumps(
        data, default=str
    )[:300]


def test_a_keyword_the_write_check_does_not_know_fails_loudly():
    import pytest

    from grimoire_cli.core.schemas import _known

    with pytest.raises(ValueError, match="oneOf"):
        _known({"properties": {"a": {"items": {"oneOf": []}}}})
