"""Property tests: whatever `mem add` accepts reads back exactly; edits keep comments."""

import random
from collections import Counter

from conftest import examples
from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from grimoire_cli import Grimoire
from grimoire_cli.core.errors import BadInput, Refused
from grimoire_cli.storage.yamlio import emit_entry, parse_entries

YAML_NASTY = [
    "- ",
    ": ",
    "#",
    "---",
    "...",
    "!!python/object",
    "*alias",
    "&anchor",
    "{",
    "[",
    "|",
    ">",
    "'",
    '"',
    "\\",
    "\r\n",
    "\t",
    " ",
    "\n",
    "%",
    "@",
    "`",
    "null",
    "true",
    "0x1F",
    "1e3",
    "~",
    "\u2028",
    "\x85",
    "é",
    "🙂",
]
texts = st.lists(st.one_of(st.sampled_from(YAML_NASTY), st.text(min_size=1, max_size=12)), min_size=1, max_size=12).map(
    "".join
)


@settings(max_examples=examples(300), deadline=None)
@given(texts)
def test_emitted_entry_parses_back_identical(text):
    data = {
        "id": "MEM-20261122-001",
        "category": "fact",
        "summary": "s",
        "content": text,
        "confidence": 0.9,
        "ttl": "permanent",
        "tags": ["a"],
        "source": {"session_id": text[:20] or "s", "timestamp": "2026-11-22T10:00:00Z"},
    }
    entries, _ = parse_entries(emit_entry(data), "<test>")
    assert entries == [data]


# At least this share of the texts tried must be accepted. Measured with a
# fresh repo per run (30 runs at the ci count, 300 at the dev count): 20% to
# 75% of the texts tried were accepted, median 34% at the ci count (most
# refusals are control characters, which `texts` draws often). Half the lowest
# share seen leaves room for unlucky draws; a guard that refused most texts
# would fall below it.
MIN_ACCEPTED_SHARE = 0.10


def test_add_then_show_is_byte_identical(repo):
    """Whatever `add` accepts reads back exactly. A refused text (empty, a
    control character, a duplicate in the one shared repo, a guard finding)
    is not an example: `assume` makes Hypothesis draw another in its place, so
    the run checks its full count of accepted texts. Hypothesis's health check
    fails a run that refuses nearly everything from the start; the share
    checked at the end fails one that starts refusing later."""
    tally = Counter()

    @settings(max_examples=examples(120), deadline=None)
    @given(texts)
    def add_then_show(text):
        tally["tried"] += 1
        grimoire = Grimoire.open(repo)
        try:
            entry = grimoire.add(text, category="preference")
        except (BadInput, Refused) as refusal:
            event(f"refused: {type(refusal).__name__}")
            entry = None
        assume(entry is not None)
        tally["accepted"] += 1
        fresh = Grimoire.open(repo)
        assert fresh.show(entry.id).content == text
        assert fresh.validate().ok

    add_then_show()
    assert tally["accepted"] >= MIN_ACCEPTED_SHARE * tally["tried"], tally


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40))
def test_apply_keeps_comments_elsewhere(repo, comment):
    grimoire = Grimoire.open(repo)
    path = grimoire.config.storage_dir / "learnings.yaml"
    entry = grimoire.add(f"learning number {len(grimoire.entries())} {comment!r}", category="learning")
    text = path.read_text()
    marked = text + f"# {comment.replace(chr(10), ' ')}\n"
    path.write_text(marked)
    grimoire = Grimoire.open(repo)
    grimoire.apply(entry.id, True)
    after = path.read_text()
    assert after.endswith(f"# {comment.replace(chr(10), ' ')}\n")
    assert after.splitlines()[:3] == marked.splitlines()[:3]
    assert grimoire.validate().ok


# Plain-looking words with a line break at the end: `$` in a regex matches
# before a final newline, which once let "hello\n" out unquoted (read back
# as "hello"), for values and keys alike.
ENDING_IN_NEWLINE = st.sampled_from(["hello\n", "A\n", "MEM-20261122-001\n", "ci\n", "a b\n", "x\n\n"])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
    st.text(max_size=20),
    ENDING_IN_NEWLINE,
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.dictionaries(st.one_of(st.text(min_size=1, max_size=8), ENDING_IN_NEWLINE), scalars, max_size=3),
)


def test_values_ending_in_a_line_break_read_back_exactly():
    from grimoire_cli.core.model import KEY_RE, TTL_RE, parse_id

    data = {
        "id": "MEM-20261122-001",
        "content": "hello\n",
        "summary": "A\n",
        "metadata": {"k": "v\n", "A\n": "MEM-20261122-001\n"},
    }
    entries, _ = parse_entries(emit_entry(data), "<test>")
    assert entries == [data]
    # Nor do the checks of ids, keys and ttls let a final line break through.
    assert parse_id("MEM-20261122-001\n") is None
    assert not KEY_RE.match("db.host\n") and not TTL_RE.match("30d\n")


entry_fields = st.dictionaries(st.from_regex(r"[a-z_]{1,10}", fullmatch=True), values, max_size=6)
# Fields of each kind for `always_exact`, so both branches below run under any profile.
EXACT_FIELDS = {
    "summary": "plain words",
    "confidence": 0.9,
    "importance": 3,
    "tags": ["ci", "db"],
    "metadata": {"owner": "ops"},
}
PARSE_CHECKED_FIELDS = {"content": "two\nlines", "confidence": 1e-05}


def test_what_emit_trusts_without_parsing_parses_back_identical():
    """`emit_entry` skips its parse check for values it deems exact by
    construction: check that here. The rest it parses back itself (storing
    JSON should its text ever differ): that must read back identical too."""
    from grimoire_cli.storage.yamlio import always_exact

    kinds = Counter()

    @settings(max_examples=examples(300), deadline=None)
    @given(entry_fields)
    @example(EXACT_FIELDS)
    @example(PARSE_CHECKED_FIELDS)
    def emit_then_parse(fields):
        data = {"id": "MEM-20261122-001", **fields}
        kind = "trusted" if always_exact(data) else "parse-checked"
        kinds[kind] += 1
        event(kind)
        entries, _ = parse_entries(emit_entry(data), "<test>")
        assert entries == [data], kind

    emit_then_parse()
    assert kinds["trusted"] and kinds["parse-checked"], kinds


def test_blocks_trusted_without_parsing_parse_back_identical():
    """An in-place edit skips the parse when its block is the emitter's own text,
    key by key in any order: such a block must read back as the data."""
    from grimoire_cli.storage.yamlio import always_exact, emit_fields, is_exact_emission

    kinds = Counter()

    @settings(max_examples=examples(300), deadline=None)
    @given(entry_fields, st.randoms(use_true_random=False))
    @example(EXACT_FIELDS, random.Random(1))
    @example(PARSE_CHECKED_FIELDS, random.Random(1))
    def shuffle_then_check(fields, rng):
        data = {"id": "MEM-20261122-001", **fields}
        keys = list(data)
        rng.shuffle(keys)
        lines = emit_fields({key: data[key] for key in keys})
        lines[0] = "- " + lines[0][2:]
        trusted = is_exact_emission(lines, data)
        kinds["trusted" if trusted else "parsed"] += 1
        event("trusted" if trusted else "parsed")
        assert trusted == always_exact(data)
        if trusted:
            entries, _ = parse_entries("\n".join(lines) + "\n", "<test>")
            assert entries == [data]
            # Any other text for the same data is not trusted: one changed line, a comment, a dropped line.
            assert not is_exact_emission([*lines, "  # a comment"], data)
            assert not is_exact_emission(lines[:-1], data)
            assert not is_exact_emission([lines[0] + " "] + lines[1:], data)
        else:
            # Data of a kind not written exactly is never trusted, whatever the
            # text: not even what `emit_entry` writes and verifies for it.
            own = emit_entry(data)
            assert not is_exact_emission(own.rstrip("\n").split("\n"), data)
            assert parse_entries(own, "<test>")[0] == [data]

    shuffle_then_check()
    assert kinds["trusted"] and kinds["parsed"], kinds
