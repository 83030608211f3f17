"""Splicing entries in place (grimoire_cli.storage.textedit) against the
obvious algorithm it replaced: each change spliced into the list of lines
from the bottom up, every later span shifted at each step (quadratic: an
archive of 20,000 entries took minutes). Same text, spans, removals, edits
and chunk hashes on generated files."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from grimoire_cli.storage import textedit
from grimoire_cli.storage.chunks import parse_reusing
from grimoire_cli.storage.textedit import Raw, replacement_lines
from grimoire_cli.storage.yamlio import emit_entry


def _reference(text: str, ids: list, spans: list, old: dict, changes: dict) -> tuple:
    lines = text.split("\n")
    spans = list(spans)
    index_of = {entry_id: i for i, entry_id in enumerate(ids) if entry_id}
    removed: list[int] = []
    changed: dict[int, Any] = {}
    for entry_id in sorted(changes, key=lambda k: index_of[k], reverse=True):
        i = index_of[entry_id]
        start, stop = spans[i]
        old_block = lines[start - 1 : stop]
        new_data = changes[entry_id]
        replacement = replacement_lines(old_block, old, entry_id, new_data)
        lines[start - 1 : stop] = replacement
        delta = len(replacement) - len(old_block)
        if new_data is None:
            removed.append(i)
            if start - 1 < len(lines) and lines[start - 1] == "" and start - 1 < len(lines) - 1:
                del lines[start - 1]
                delta -= 1
            spans[i] = (0, -1)
        else:
            if not isinstance(new_data, Raw):
                changed[i] = new_data
            spans[i] = (start, stop + delta)
        spans[i + 1 :] = [(a + delta, b + delta) for a, b in spans[i + 1 :]]
    gone = set(removed)
    survivors = [i for i in range(len(spans)) if i not in gone]
    kept = [spans[i] for i in survivors]
    touched = {bisect_left(survivors, index_of[k]) for k in changes if index_of[k] not in gone}
    touched.update(bisect_left(survivors, i) - 1 for i in gone)
    touched.discard(-1)
    hashes = {k: textedit._kept_chunk(lines, kept, k) for k in touched}
    return "\n".join(lines), kept, removed, changed, hashes


def _entry(n: int, words: int) -> dict:
    return {
        "id": f"MEM-20260101-{n:03d}",
        "category": "fact",
        "content": " ".join(["runner disk"] * words),
        "confidence": 0.9,
        "tags": ["ci"] * (n % 2),
        "source": {"session_id": "s", "timestamp": "2026-01-01T00:00:00Z"},
    }


GAPS = ["", "\n", "# a comment\n", "\n\n", "# trailing\n\n", "  # indented\n"]
ACTIONS = st.sampled_from(["keep", "keep", "remove", "edit", "raw"])


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 6), st.sampled_from(GAPS), ACTIONS), min_size=1, max_size=25),
    st.sampled_from(GAPS),
)
def test_splicing_in_one_pass_gives_what_splicing_step_by_step_gives(plan, head):
    text = head + "".join(emit_entry(_entry(n, words)) + gap for n, (words, gap, _) in enumerate(plan, 1))
    _, placed = parse_reusing(text, "t.yaml", None)
    ids = [p.item["id"] for p in placed]
    spans = [p.span for p in placed]
    old = {p.item["id"]: p.item for p in placed}
    changes: dict[str, Any] = {}
    for (_, _, action), entry_id in zip(plan, ids):
        if action == "remove":
            changes[entry_id] = None
        elif action == "edit":
            changes[entry_id] = {**old[entry_id], "confidence": 0.5, "tags": ["db", "ci"]}
        elif action == "raw":
            changes[entry_id] = Raw([f"- id: {entry_id}", "  content: conflict", "<<<<<<< ours"])
    assert textedit._edit_lines(text, ids, spans, old, changes, "t.yaml") == _reference(text, ids, spans, old, changes)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 30), st.sampled_from(["", "supersedes", "related", "prose"])), min_size=1, max_size=15
    ),
    st.sets(st.integers(1, 40), max_size=8),
    st.booleans(),
)
def test_an_archive_finds_its_entries_in_the_committed_text_as_a_search_for_each_id_would(plan, chosen, odd):
    """archive_commit._entries parses only the chunks that name a wanted id,
    found by their id runs (a wanted id may be a prefix of a longer one: 001
    inside 0012); the same chunks as searching the text for every id."""
    from grimoire_cli.lifecycle.archive_commit import _entries

    def ident(n: int) -> str:
        return f"MEM-20260101-{n:03d}" + ("2" if n % 7 == 0 else "")

    blocks = []
    for n, (other, how) in enumerate(plan, 1):
        item = _entry(n, 2)
        item["id"] = "MEM-2026-1" if odd and n == 1 else ident(n)  # an id of another form (a hand edit)
        if how == "supersedes":
            item["supersedes"] = ident(other)
        elif how == "related":
            item["related_memories"] = [ident(other), ident(other) + "9"]
        elif how == "prose":
            item["content"] = f"see {ident(other)}0 and {ident(other)[:-1]}"
        blocks.append(emit_entry(item))
    text = "".join(blocks)
    wanted = {ident(n) for n in chosen} | ({"MEM-2026-1"} if odd else set())
    expected_ids: list = []
    found: dict = {}
    _, placed = parse_reusing(text, "t.yaml", lambda chunk: not any(w in chunk.text for w in wanted))
    for item, _, _, _ in placed:
        entry_id = item.get("id") if isinstance(item, dict) else None
        expected_ids.append(entry_id if entry_id in wanted and entry_id not in found else None)
        if expected_ids[-1] is not None:
            found[entry_id] = item
    assert _entries(text, "t.yaml", wanted) == (expected_ids, [p.span for p in placed], found)
