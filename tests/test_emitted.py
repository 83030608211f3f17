"""Reading an entry back from the emitter's layout without YAML
(storage/emitted.py): whatever `decode` accepts, the YAML parser reads as
exactly the same data; and what `mem` writes, `decode` accepts."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
from conftest import examples
from hypothesis import event, example, given, settings
from hypothesis import strategies as st
from test_chunks import files
from test_yaml_fast import documents

from grimoire_cli.core.errors import Damaged
from grimoire_cli.storage import emitted, yamlio
from grimoire_cli.storage.chunks import parse_chunked


def typed(value):
    """A value with every scalar's type spelled out: 1, 1.0 and True are equal to Python, not to YAML."""
    if isinstance(value, dict):
        return ("map", [(key, typed(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("seq", [typed(item) for item in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def yaml_reading(text: str):
    """The single item YAML reads from `text`, or None."""
    try:
        items, _ = yamlio.parse_entries(text, "<t>")
    except Damaged:
        return None
    return items[0] if len(items) == 1 else None


KEYS = st.one_of(
    st.sampled_from(
        ["id", "content", "tags", "source", "a b", "x.y", "n(1)", "null", "True", "1", "é", "a: b", "-x", ""]
    ),
    st.text(max_size=6),
)
CHARS = st.characters(exclude_categories=())  # surrogates and control characters included
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.sampled_from([0.95, 1e-05, 1e20, -0.0, 12.5]),
    st.text(CHARS, max_size=20),
    st.sampled_from(
        [
            "permanent",
            "yes",
            "No",
            "null",
            "~",
            "007",
            "1_000",
            "0x1F",
            "1e3",
            "2026-01-01",
            "a b",
            "a  b",
            "a ",
            " a",
            'say "hi"',
            "back\\slash",
            "tab\there",
            "two\nlines",
            "ends\n",
            "\u2028",
            "\ufeff",
            "🙂",
            "#x",
            "a #b",
            "a: b",
        ]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=8,
)
ENTRIES = st.dictionaries(KEYS, VALUES, min_size=1, max_size=6)


# Entries as `mem` writes them: printable text (quotes, backslashes, tabs,
# any script), numbers, nested mappings.
WRITTEN = st.dictionaries(
    st.sampled_from(["id", "content", "summary", "tags", "source", "confidence", "ttl", "metadata", "a b", "x.y"]),
    st.recursive(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.sampled_from([0.95, 0.5, 12.25]),
            st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=30),
        ),
        lambda inner: st.dictionaries(st.sampled_from(["session_id", "timestamp", "k"]), inner, max_size=3),
        max_leaves=6,
    ),
    min_size=1,
    max_size=8,
)


def mutations(text: str) -> st.SearchStrategy[str]:
    """`text` with one small edit: a character inserted, removed or replaced."""
    at = st.integers(0, max(len(text) - 1, 0))
    odd = st.sampled_from(list(" \t\n\"'\\#:-[]{},&*|>!%@`0aZé\x85\u2028") + ["  ", "- ", ": ", "\n  ", "\n- ", "\n#"])
    return st.one_of(
        st.tuples(at, odd).map(lambda pair: text[: pair[0]] + pair[1] + text[pair[0] :]),
        at.map(lambda i: text[:i] + text[i + 1 :]),
        st.tuples(at, odd).map(lambda pair: text[: pair[0]] + pair[1] + text[pair[0] + 1 :]),
    )


def emit(data) -> str:
    """The emitter's text for `data` (a lone surrogate it cannot write: the JSON of it, which YAML refuses)."""
    try:
        return yamlio.emit_entry(data)
    except Damaged:
        return "- " + json.dumps(data) + "\n"


emitted_texts = st.one_of(ENTRIES, WRITTEN).map(emit)
edited_texts = emitted_texts.flatmap(lambda text: st.one_of(st.just(text), mutations(text)))


# At least this share of the texts tried must be read without YAML, or the
# differential test below would be comparing next to nothing. Measured: about
# a fifth at the ci count (most drawn texts are hand-written or mutated ones).
MIN_READ_SHARE = 0.05


def test_what_decode_accepts_yaml_reads_the_same():
    tally = Counter()

    @settings(max_examples=examples(1500), deadline=None)
    @given(st.one_of(edited_texts, documents, files))
    @example("- id: x\n  k: 1\n")
    @example("- id: x\n  k: 1.0\n")
    @example("- id: x\n  ok: true\n  no: [a, 1, null]\n")
    @example('- id: x\n  s: "\\ud800"\n')
    @example('- id: x\n  s: "\\u00e9"\n')
    @example("- id: x\n  m:\n    a: 1\n  # a comment\n")
    @example("- id: x\n  m:\n\n")
    @example("- id: x\n  t: a  b\n")
    @example("- id: x\n  id: y\n")
    @example("- id: x\n# a carriage\r return\n")
    @example("- id: x\n# a bell \x07\n")
    @example("- id: x\n# a BOM \ufeff\n")
    @example("- " + "a" * 1100 + ": 1\n")  # past YAML's 1,024-character implicit key
    @example("- a: " + "1" * 5000 + "\n")  # past Python's 4,300-digit integers
    # Past the loader's nesting depth
    @example("- " + "".join(f"{'  ' * n}k{n}:\n" for n in range(70))[:-2] + " deep\n")
    def check(text):
        tally["tried"] += 1
        decoded = emitted.decode(text)
        event("read without YAML" if decoded is not None else "left to YAML")
        if decoded is not None:
            tally["read"] += 1
            assert typed(yaml_reading(text)) == typed(decoded), text

    check()
    assert tally["read"] >= MIN_READ_SHARE * tally["tried"], tally


@pytest.mark.parametrize("preamble", ["# \x01\n", "#\x7f\n", "  \x1c\n", "  \xa0\n", "  \u3000\n", "# a\rb\n"])
def test_lines_before_the_first_entry_are_read_as_yaml_reads_them(preamble):
    """No chunk holds them, so no chunk's reading would see what is wrong there."""
    text = preamble + "".join(yamlio.emit_entry({"id": f"MEM-20260101-{n:03d}", "content": "x"}) for n in range(1, 4))
    errors = errors_of(text)
    assert len(errors) == 2 and errors[0] == errors[1], errors
    assert (
        parse_chunked("# fine\n\n   \n  # indented\n" + text[len(preamble) :], "f.yaml", {})[0].item["id"]
        == "MEM-20260101-001"
    )


@settings(max_examples=examples(600), deadline=None)
@given(WRITTEN, st.lists(st.sampled_from(["ci", "db", "deploy", "a.b", "x-y"]), max_size=4))
def test_what_mem_writes_decode_reads_without_yaml(data, tags):
    """Entries as `mem` writes them (printable text with quotes, backslashes
    and tabs; numbers; nested mappings; plain tags) are all read here."""
    data = dict(data, tags=tags)
    text = yamlio.emit_entry(data)
    decoded = emitted.decode(text)
    assert decoded == data and typed(decoded) == typed(yaml_reading(text)), text


def test_layouts_left_to_yaml():
    """Each is valid YAML of one entry that `decode` declines, so the parser
    reads it (and says where it is wrong, when it is)."""
    for text in (
        "- id: x\n  content: |\n    two\n    lines\n",  # a literal block
        "- id: x  # a comment\n",
        "- id: x\n  # inside\n  k: 1\n",
        '- "id": x\n',
        '- id: x\n  tags: ["a b", c]\n',
        "- id: x\n  tags:\n  - a\n",
        "-   id: x\n",
        "- {id: x}\n",
        "- id: 'x'\n",
        '- id: "\\x07"\n',
        "- id: x\n  k: 1.50\n",
        "- id: x\n  k: +1\n",
        "- id: x\n  on: off\n",
    ):
        assert yaml_reading(text) is not None, text
        assert emitted.decode(text) is None, text


def test_trailing_comments_and_blank_lines_belong_to_the_chunk_not_the_entry():
    text = "- id: MEM-20260101-001\n  k: 1\n\n# about the next one\n#\n"
    assert emitted.decode(text) == {"id": "MEM-20260101-001", "k": 1}
    assert emitted.decode(text + "  stray: 2\n") is None


def printable(ch: str) -> bool:
    """YAML's printable characters, less the line breaks NEL, LS and PS and
    the byte order mark: what the emitter writes as itself."""
    code = ord(ch)
    return (
        0x20 <= code <= 0x7E
        or (0xA0 <= code <= 0xD7FF and code not in (0x2028, 0x2029))
        or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
        or code >= 0x10000
    )


def test_quote_escapes_exactly_the_unprintable_characters():
    """The regular expressions of `quote` and of literal blocks against their definition, over every code point."""

    def reference(ch: str) -> str:
        if ch in '"\\':
            return "\\" + ch
        if ch == "\n":
            return "\\n"
        if ch == "\t":
            return "\\t"
        if printable(ch):
            return ch
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    every = "".join(map(chr, range(0x110000)))
    assert yamlio.quote(every) == '"' + "".join(map(reference, every)) + '"'
    literal_ok = "".join(ch for ch in every if ch in "\n\t" or printable(ch))
    assert yamlio._PRINTABLE_TEXT.match(literal_ok)
    assert not any(yamlio._PRINTABLE_TEXT.match(ch) for ch in every if not (ch in "\n\t" or printable(ch)))


def errors_of(text: str) -> list[str]:
    """The errors of reading `text` through chunks and through the whole parse (each, if it has one)."""
    errors = []
    for parse in (lambda: parse_chunked(text, "f.yaml", {}), lambda: yamlio.parse_entries(text, "f.yaml")):
        try:
            parse()
        except Damaged as exc:
            errors.append(str(exc))
    return errors


def test_a_file_mixing_written_and_hand_written_entries_reads_as_yaml_reads_it():
    written = "".join(
        yamlio.emit_entry({"id": f"MEM-20260101-{n:03d}", "content": f"note {n}", "confidence": 0.9})
        for n in range(1, 10)
    )
    hand = "- id: MEM-20260101-050\n  content: |\n    line one\n    line two\n  tags:\n    - a\n"
    text = written + hand + written.replace("MEM-20260101-0", "MEM-20260101-1")
    placed = parse_chunked(text, "<t>", {})
    items, spans = yamlio.parse_entries(text, "<t>")
    assert [p.item for p in placed] == items and [p.span for p in placed] == spans
    broken = written + "- id: MEM-20260101-051\n  content: [unclosed\n" + written
    errors = errors_of(broken)
    assert len(errors) == 2 and errors[0] == errors[1] and errors[0].startswith("f.yaml:30: not valid YAML"), errors
