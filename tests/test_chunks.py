"""Parsing a file chunk by chunk gives what parsing it whole gives, or declines.

Files are built from emitted entries and hand-written oddities (comments,
blank lines, literal blocks that keep their trailing newlines, flow style,
a dash alone on its line, content that spans chunks); then edited at random.
"""

from __future__ import annotations

import re

from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from grimoire_cli.core.errors import Damaged
from grimoire_cli.storage.chunks import KNOWN, anchor_or_alias, parse_chunked, parse_whole
from grimoire_cli.storage.yamlio import emit_entry, parse_entries

ODD_BLOCKS = [
    "- # a comment after the dash\n  id: MEM-20260101-900\n  content: odd one\n",
    "-\n  id: MEM-20260101-901\n  content: dash alone\n",
    "- id: MEM-20260101-902\n  content: |+\n    keeps its trailing lines\n\n",
    "- {id: MEM-20260101-903, content: flow mapping}\n",
    "- id: MEM-20260101-904\n  tags:\n  - a\n  - b\n",
    '- id: MEM-20260101-905\n  content: "quoted\n    over two lines"\n',
    "- just a string\n",
    "- id: MEM-20260101-906\n  content: plain scalar\n    over two lines\n",
]
NOISE = ["# a comment\n", "\n", "  # an indented comment\n", "#\n", "# a carriage\r return\n"]
BREAKERS = [
    "  \xa0\n",
    "# \x01\n",
    "---\n",
    "%YAML 1.2\n",
    "key: value\n",
    "- id: [unclosed\n",
    "\t- tab\n",
    "- &a anchor\n",
    "- *a\n",
    "  stray: indented\n",
    "x\r\n",
]


def entry(n: int, content: str) -> str:
    return emit_entry(
        {
            "id": f"MEM-20260101-{n:03d}",
            "category": "fact",
            "content": content,
            "confidence": 0.9,
            "source": {"session_id": "s", "timestamp": "2026-01-01T00:00:00Z"},
        }
    )


pieces = st.one_of(
    st.builds(entry, st.integers(1, 400), st.text(min_size=1, max_size=30)),
    st.sampled_from(ODD_BLOCKS),
    st.sampled_from(NOISE),
    st.sampled_from(BREAKERS),
)
files = st.lists(pieces, max_size=12).map("".join)


def whole(text: str):
    try:
        items, spans = parse_entries(text, "<t>")
    except Damaged:
        return None
    return items, spans


@settings(max_examples=examples(400), deadline=None)
@given(files, files, st.booleans())
def test_chunked_parse_equals_the_whole_parse(before, after, trailing_newline):
    """Rows known from `before` are reused for `after`; the rest are parsed.
    Wherever the whole file parses, the result is the same items and spans."""
    if not trailing_newline:
        after = after.rstrip("\n")
    try:
        known_rows = parse_chunked(before, "<t>", {})
    except Damaged:
        known_rows = []
    known: dict[bytes, int] = {}
    data_of: dict[bytes, list] = {}
    for item, _, digest, _ in known_rows:
        known[digest] = known.get(digest, 0) + 1
        data_of.setdefault(digest, []).append(item)
    expected = whole(after)
    try:
        placed = parse_chunked(after, "<t>", known)
    except Damaged:
        assert expected is None
        return
    assert expected is not None, "chunks parsed what the whole parser refuses"
    items = [data_of[digest].pop(0) if item is KNOWN else item for item, _, digest, _ in placed]
    assert (items, [span for _, span, _, _ in placed]) == expected
    # The hashes and offsets are those of the whole parse's chunks too (the slow path).
    assert [p[2:] for p in placed] == [(chunk.digest, chunk.offset) for _, chunk in parse_whole(after, "<t>")[1]]
    # An offset is where the entry's first line starts in the file's bytes.
    data = after.encode("utf-8", "surrogatepass")
    for _, (start, _), _, offset in placed:
        assert offset == len("\n".join(after.split("\n")[: start - 1]).encode("utf-8", "surrogatepass")) + (
            1 if start > 1 else 0
        )
        assert data[offset:].startswith(b"-")


def test_an_edit_reparses_only_the_chunks_it_touched():
    text = "".join(entry(n, f"note {n}") for n in range(1, 50))
    known: dict[bytes, int] = {}
    for _, _, digest, _ in parse_chunked(text, "<t>", {}):
        known[digest] = known.get(digest, 0) + 1
    edited = text.replace("note 7\n", "note 7 edited\n") + "# a comment at the end\n" + entry(60, "new")
    placed = parse_chunked(edited, "<t>", known)
    parsed = [item["content"] for item, _, _, _ in placed if item is not KNOWN]
    assert parsed == ["note 7 edited", "note 49", "new"]  # the last old chunk now holds the comment
    assert len(placed) == 50


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet=st.sampled_from(list("&* \t\n\r[{,a-\x85\u2028\xa0")), max_size=20))
def test_the_anchor_check_finds_what_the_plain_expression_finds(text):
    """`anchor_or_alias` is a faster form of one regular expression; both say the same of any text."""
    assert anchor_or_alias(text) == bool(re.search(r"(?:^|[\s\[{,])[&*]\S", text, re.M))
