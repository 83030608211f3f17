"""The one-pass construction of a parsed document (yamlio._built) gives
exactly what ruamel's constructor, the alias and depth checks and `_plain`
give, or steps aside: same data, same errors with file:line."""

from __future__ import annotations

from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from test_chunks import files

from grimoire_cli.core.errors import Damaged
from grimoire_cli.storage import yamlio

SCALARS = [
    "plain text",
    "yes",
    "No",
    "on",
    "true",
    "TRUE",
    "False",
    "null",
    "Null",
    "~",
    "",
    "0",
    "-0",
    "007",
    "0x1F",
    "0o17",
    "0b101",
    "1_000",
    "+5",
    "-12",
    "3.14",
    "1e3",
    "1.5e-3",
    ".inf",
    "-.Inf",
    ".NaN",
    "1:30",
    "12:30:00",
    "2026-01-01",
    "2026-01-01T10:00:00Z",
    "2026-01-01 10:00:00",
    "2026-01-01T10:00:00+02:00",
    "2026-1-1",
    '"1"',
    "'x y'",
    '"a\\tb"',
    "!!str 5",
    "!!int '7'",
    "!!float 3",
    "!!bool yes",
    "!!null ''",
    "!!binary aGVsbG8=",
    "!custom x",
    "&a anchored",
    "*a",
    "[1, two, 3.0]",
    "{a: 1, b: [x]}",
    "{a: 1, a: 2}",
    "!!set {a, b}",
    "!!omap [a: 1]",
    "|\n    literal\n",
    ">-\n    folded\n",
]
KEYS = [
    "id",
    "content",
    "tags",
    "1",
    "1.5",
    "true",
    "null",
    "~",
    "2026-01-01",
    '"quoted"',
    "a b",
    "<<",
    "? complex",
    "&k key",
    "*k",
    "[x]",
    "content",
]

scalar = st.sampled_from(SCALARS)


def mapping(depth: int) -> st.SearchStrategy[str]:
    value = scalar if depth >= 2 else st.one_of(scalar, scalar, st.deferred(lambda: nested(depth + 1)))
    key = st.one_of(
        st.sampled_from(["id", "content", "tags", "n", "a b", "1.5"]),
        st.sampled_from(["id", "summary", "x", "1", "true", "1.0"]),
        st.sampled_from(KEYS),
    )
    return st.lists(st.tuples(key, value), min_size=1, max_size=5, unique_by=lambda pair: pair[0]).map(
        lambda pairs: "".join(
            f"{'  ' * depth}{key}: {text}\n" if not text.startswith("\n") else f"{'  ' * depth}{key}:{text}"
            for key, text in pairs
        )
    )


def nested(depth: int) -> st.SearchStrategy[str]:
    items = st.lists(scalar, min_size=1, max_size=3).map(
        lambda values: "".join(f"\n{'  ' * depth}- {v}" for v in values) + "\n"
    )
    maps = mapping(depth).map(lambda text: "\n" + text)
    return st.one_of(items, maps)


documents = st.lists(mapping(1), min_size=1, max_size=4).map(
    lambda maps: "".join("-" + m[1:] if m.startswith(" ") else "- " + m for m in maps)
)


def outcome(text: str):
    try:
        return ("ok", yamlio.parse_document(text, "f.yaml")[0])
    except Damaged as exc:
        return ("damaged", str(exc))


def reference(text: str):
    """The same parse with the one-pass construction turned off."""
    kept = yamlio._built

    def refuse(*_):
        raise yamlio._Unusual

    yamlio._built = refuse
    try:
        return outcome(text)
    finally:
        yamlio._built = kept


def same(a, b) -> bool:
    """Equal, NaN included (NaN != NaN)."""
    return repr(a) == repr(b) and type(a) is type(b)


@settings(max_examples=examples(600), deadline=None)
@given(st.one_of(documents, files))
def test_one_pass_construction_equals_ruamels(text):
    assert same(outcome(text), reference(text)), text


def test_plain_entries_take_the_one_pass_and_odd_ones_do_not():
    entry = "- id: MEM-20260101-001\n  content: a b\n  confidence: 0.9\n  tags: [x, y]\n  n: 3\n  ok: true\n  at: 2026-01-01T10:00:00Z\n"
    loader = yamlio._loader()
    assert yamlio._built(loader.compose(entry), loader.constructor) == [
        {
            "id": "MEM-20260101-001",
            "content": "a b",
            "confidence": 0.9,
            "tags": ["x", "y"],
            "n": 3,
            "ok": True,
            "at": "2026-01-01T10:00:00Z",
        }
    ]
    for odd in (
        "- &a x\n- *a\n",
        "- {a: 1, a: 2}\n",
        "- !!binary aGVsbG8=\n",
        "- {<<: {a: 1}, b: 2}\n",
        "- {1: a, '1': b}\n",
    ):
        loader = yamlio._loader()
        try:
            yamlio._built(loader.compose(odd), loader.constructor)
        except yamlio._Unusual:
            continue
        raise AssertionError(f"{odd!r} was built in one pass")
