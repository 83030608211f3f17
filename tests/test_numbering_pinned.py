"""Which ids a merge renumbers, and to what (git/numbering.py), in process:
the text blocks a merge reads out of three commits, as `trees.ids_in` gives
them. Pinned: the exact mapping for each case a merge meets (one id minted on
both sides, one memory under two ids, a rename an earlier pick made), the
identity that says two blocks hold one memory, and the fresh numbers. What
`make mutation` runs for numbering.py, beside test_merge_pinned.py."""

from __future__ import annotations

import hashlib

from grimoire_cli.git.numbering import (
    Numbers,
    _arrived,
    _other_memory,
    _same_memories,
    identity,
    memory_of,
    renames_since,
    renumbering,
)


def mid(number: str, day: str = "20261122") -> str:
    return f"MEM-{day}-{number}"


def block(number: str, text: str, after: str = "", category: str = "fact", session: str = "s", day: str = "20261122"):
    """An entry's text block as a scan of its file cuts it (no trailing newline); `after`: fields past its source."""
    return (
        f"- id: {mid(number, day)}\n  category: {category}\n  summary: {text}\n  content: {text}\n"
        f'  confidence: 0.9\n  source:\n    session_id: {session}\n    timestamp: "2026-11-22T10:00:00Z"\n{after}'
    ).rstrip()


SUPERSEDED = "  superseded_by: MEM-20261122-009\n"
APPLIED = "  effectiveness: {applications: 2, successes: 1, score: 50}\n"


# -- the identity of a memory ---------------------------------------------------------------------------


def test_a_memorys_identity_is_its_category_content_and_source_lines():
    text = block("001", "the cache is redis", "  related_memories:\n  - MEM-20261122-004\n" + APPLIED)
    assert identity(text) == (
        "  category: fact\n  content: the cache is redis\n  source:\n    session_id: s\n"
        '    timestamp: "2026-11-22T10:00:00Z"'
    )
    # No lifecycle change and no renumbering touches it; the summary and confidence are not part of it.
    assert identity(block("007", "the cache is redis", SUPERSEDED + APPLIED)) == identity(text)
    assert identity(text.replace("summary: the cache", "summary: our cache")) == identity(text)
    assert identity(text.replace("confidence: 0.9", "confidence: 0.5")) == identity(text)
    # Each part of it makes another memory.
    assert identity(block("001", "the cache is valkey")) != identity(text)
    assert identity(block("001", "the cache is redis", category="decision")) != identity(text)
    assert identity(block("001", "the cache is redis", session="t")) != identity(text)


def test_a_content_holding_colons_and_a_comment_line_before_the_fields_keep_the_identity():
    text = block("001", "ratio: 3:1")
    assert identity(text) == (
        '  category: fact\n  content: ratio: 3:1\n  source:\n    session_id: s\n    timestamp: "2026-11-22T10:00:00Z"'
    )
    # A comment written at the margin after the id line (a hand edit) is no part of the memory.
    commented = text.replace("\n  category:", "\n# moved here from decisions\n  category:", 1)
    assert identity(commented) == identity(text)


def test_a_fields_deeper_lines_belong_to_it_and_trailing_blanks_are_dropped():
    text = (
        "- id: MEM-20261122-001\n  category: fact  \n  summary: |\n    summary line\n  content: |\n"
        "    first line\n    second line   \n  tags:\n  - a\n  source:\n    content: not the entry's\n"
        "  confidence: 0.9"
    )
    assert identity(text) == (
        "  category: fact\n  content: |\n    first line\n    second line\n  source:\n    content: not the entry's"
    )


def test_an_entry_without_a_content_field_has_no_identity():
    assert identity("- id: MEM-20261122-001\n  category: fact\n  summary: x") is None
    # A `content` key inside another field is no content; nor is a field whose name only starts with it.
    assert identity("- id: MEM-20261122-001\n  source:\n    content: x\n  contents: y") is None
    assert identity("- id: MEM-20261122-001") is None
    # The id line is not a field, even one that looks like the content.
    assert identity("  content: x\n  category: fact") is None


def test_a_memorys_key_is_a_short_hash_of_its_identity_or_of_its_block():
    text = block("001", "the cache is redis")
    assert memory_of(text) == hashlib.sha1(identity(text).encode()).hexdigest()[:16]
    assert memory_of(block("005", "the cache is redis", SUPERSEDED)) == memory_of(text)
    bare = "- id: MEM-20261122-001\n  summary: no content"
    assert memory_of(bare) == hashlib.sha1(bare.encode()).hexdigest()[:16]
    assert len(memory_of(bare)) == 16


# -- fresh numbers --------------------------------------------------------------------------------------


def test_fresh_numbers_follow_the_highest_taken_of_their_day():
    numbers = Numbers([mid("010"), mid("002"), mid("001", "20261123"), "not an id", mid("000"), 42, mid("3", "2026")])
    assert numbers.highest == {"20261122": 10, "20261123": 1}
    assert numbers.fresh("20261122") == mid("011")
    assert numbers.fresh("20261122") == mid("012")  # a number given is taken
    assert numbers.fresh("20261123") == mid("002", "20261123")
    assert numbers.fresh("20261124") == mid("001", "20261124")
    assert Numbers([]).fresh("20261122") == mid("001")
    assert Numbers([mid("1000")]).fresh("20261122") == mid("1001")


# -- one memory or two ------------------------------------------------------------------------------------


def test_an_id_holds_another_memory_where_its_identity_changed_or_it_was_not_there():
    was = {mid("001"): block("001", "redis")}
    assert _other_memory(mid("002"), block("002", "redis"), was) is True  # not there
    assert _other_memory(mid("001"), block("001", "redis"), was) is False  # the same block
    assert _other_memory(mid("001"), block("001", "redis", SUPERSEDED), was) is False  # a lifecycle change
    assert _other_memory(mid("001"), block("001", "valkey"), was) is True
    assert _other_memory(mid("001"), block("001", "redis"), {}) is True


def test_the_memories_a_side_holds_where_base_held_none_or_another():
    base = {mid("001"): block("001", "redis"), mid("002"): block("002", "old")}
    side = {
        mid("001"): block("001", "redis", APPLIED),  # base's memory, applied since
        mid("002"): block("002", "new"),  # another memory under base's id
        mid("003"): block("003", "added"),
        mid("004"): "- id: MEM-20261122-004\n  summary: no content",  # no identity: not a memory to match
    }
    assert _arrived(base, side) == {identity(side[mid("002")]): mid("002"), identity(side[mid("003")]): mid("003")}
    assert _arrived(base, {}) == {}


def test_a_memory_both_sides_added_under_two_ids_takes_the_keeping_sides_id():
    base = {mid("001"): block("001", "redis")}
    ours = {**base, mid("002"): block("002", "picked"), mid("003"): block("003", "ours alone")}
    theirs = {**base, mid("004"): block("004", "picked", APPLIED), mid("003"): block("003", "ours alone")}
    assert _same_memories(base, ours, theirs, ours_yield=False) == {mid("004"): mid("002")}
    assert _same_memories(base, ours, theirs, ours_yield=True) == {mid("002"): mid("004")}
    # Under one id on both sides: nothing to rename.
    assert _same_memories(base, ours, {**base, mid("002"): block("002", "picked")}, ours_yield=False) == {}


# -- the mapping --------------------------------------------------------------------------------------


def test_an_id_both_sides_minted_for_two_memories_is_renumbered_past_every_taken_id():
    base = {mid("001"): block("001", "redis")}
    ours = {**base, mid("003"): block("003", "ours' third"), mid("002"): block("002", "ours' second")}
    theirs = {**base, mid("002"): block("002", "theirs' second"), mid("003"): block("003", "theirs' third")}
    # In id order, past the highest taken on any side and in `also_taken`: the same in every file of a merge.
    assert renumbering(base, ours, theirs) == {mid("002"): mid("004"), mid("003"): mid("005")}
    assert renumbering(base, ours, theirs, also_taken=[mid("007"), mid("020", "20261121")]) == {
        mid("002"): mid("008"),
        mid("003"): mid("009"),
    }
    assert renumbering(base, ours, theirs, also_taken=iter([mid("007")])) == {
        mid("002"): mid("008"),
        mid("003"): mid("009"),
    }
    # The driver that knows who yields maps the same collisions alike.
    for yielding in (False, True):
        assert renumbering(base, ours, theirs, ours_yield=yielding) == {mid("002"): mid("004"), mid("003"): mid("005")}


def test_a_fresh_id_keeps_the_day_of_the_id_it_replaces():
    base = {mid("001"): block("001", "redis")}
    ours = {**base, mid("001", "20261121"): block("001", "ours", day="20261121")}
    theirs = {**base, mid("001", "20261121"): block("001", "theirs", day="20261121")}
    assert renumbering(base, ours, theirs) == {mid("001", "20261121"): mid("002", "20261121")}


def test_an_id_both_sides_hold_for_one_memory_is_not_renumbered():
    base = {mid("001"): block("001", "redis")}
    picked = block("002", "picked")
    # A cherry-pick: the same block, or the same memory applied or superseded since on one side.
    assert renumbering(base, {**base, mid("002"): picked}, {**base, mid("002"): picked}) == {}
    applied = block("002", "picked", APPLIED)
    assert renumbering(base, {**base, mid("002"): picked}, {**base, mid("002"): applied}) == {}
    # A collision after it, in id order, is still renumbered.
    ours = {**base, mid("002"): picked, mid("003"): block("003", "ours' own")}
    theirs = {**base, mid("002"): applied, mid("003"): block("003", "theirs' own")}
    assert renumbering(base, ours, theirs) == {mid("003"): mid("004")}
    # Base's own id, changed on both sides, is no collision: the driver merges it (or marks a conflict).
    assert renumbering(base, {mid("001"): block("001", "ours'")}, {mid("001"): block("001", "theirs'")}) == {}


def test_a_memory_both_sides_added_under_two_ids_becomes_one_when_the_driver_knows_who_yields():
    base = {mid("001"): block("001", "redis")}
    ours = {**base, mid("002"): block("002", "picked"), mid("003"): block("003", "ours' own")}
    # Theirs renumbered the pick to 003 and minted 002 for its own: 002 and 003 collide, 003 is ours' 002's memory.
    theirs = {**base, mid("003"): block("003", "picked", APPLIED), mid("002"): block("002", "theirs' own")}
    assert renumbering(base, ours, theirs, ours_yield=False) == {mid("003"): mid("002"), mid("002"): mid("004")}
    assert renumbering(base, ours, theirs, ours_yield=True) == {mid("002"): mid("003"), mid("003"): mid("004")}
    # Without the driver's word (the fixup's own count of collisions), only collisions: both fresh.
    assert renumbering(base, ours, theirs) == {mid("002"): mid("004"), mid("003"): mid("005")}


def test_theirs_ids_an_earlier_picks_rename_took_map_to_ours_copy_or_a_fresh_id():
    base = {mid("001"): block("001", "redis")}
    ours = {**base, mid("006"): block("006", "upstream's", APPLIED)}
    clashing = {mid("005"): block("005", "upstream's"), mid("004"): block("004", "the branch's own")}
    assert renumbering(base, ours, dict(base), clashing=clashing) == {mid("005"): mid("006"), mid("004"): mid("007")}
    assert renumbering(base, ours, dict(base), also_taken=[mid("010")], clashing=clashing) == {
        mid("005"): mid("006"),
        mid("004"): mid("011"),
    }
    assert renumbering(base, ours, dict(base), clashing={}) == {}


# -- renames since base --------------------------------------------------------------------------------------


def test_a_base_memory_a_side_holds_under_another_id_is_a_rename():
    base = {mid("001"): block("001", "redis"), mid("002"): block("002", "pushed"), mid("003"): block("003", "kept")}
    side = {
        mid("001"): block("001", "redis", APPLIED),  # the same memory, applied: no rename
        mid("002"): block("002", "another memory"),  # 002 now names another memory...
        mid("005"): block("005", "pushed", SUPERSEDED),  # ...and base's 002 is here
        # 003 is gone from this side (archived): no rename, nothing to follow
    }
    assert renames_since(base, side) == {mid("002"): mid("005")}
    assert renames_since(base, {**side, mid("003"): block("003", "kept")}) == {mid("002"): mid("005")}
    assert renames_since(base, dict(base)) == {}
    # A base memory still under its own id is no rename, though the side holds a copy of it under another.
    copied = {**base, mid("006"): block("006", "pushed", APPLIED)}
    assert renames_since(base, copied) == {}
    assert renames_since({}, side) == {}
    # A base block with no identity is followed nowhere, even to a side's block without one.
    bare = {mid("004"): "- id: MEM-20261122-004\n  summary: x"}
    assert renames_since(bare, {mid("006"): "- id: MEM-20261122-006\n  summary: x"}) == {}
