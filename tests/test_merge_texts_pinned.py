"""One file's three-way merge (git/merge.py `merge_texts`) given the renames
its merge brings, in process: a memory one side renumbered since base (a pull
that renumbered an unpublished id) merged with the other side's change to it,
whichever side yields. Pinned: the exact merged text. What `make mutation`
runs for merge.py, beside test_merge_pinned.py."""

from __future__ import annotations

import pytest
from test_merge_pinned import APPLIED, ARCHIVED, FACTS, HEAD, driven, entry, fact, items

from grimoire_cli.core.errors import Damaged
from grimoire_cli.git.echoes import memory_key
from grimoire_cli.git.merge import _by_id, _held_elsewhere, merge_texts, merged_lifecycle, renamed
from grimoire_cli.storage.yamlio import parse_entries

SUPERSEDED = "  superseded_by: MEM-20261122-009\n"
APPLIED_ONCE = APPLIED.format(1, 1, 100, "2026-11-22T10:00:00Z")
APPLIED_BLOCK = (
    "  effectiveness:\n    applications: 1\n    successes: 1\n    score: 100\n"
    '    last_applied: "2026-11-22T10:00:00Z"\n'
)
REDIS = entry("001", "redis")
BASE = HEAD + REDIS + entry("002", "pushed")
MOVED = {"MEM-20261122-002": "MEM-20261122-004"}
ONWARD = {"MEM-20261122-004": "MEM-20261122-006"}


def merged(ours: str, theirs: str, **renames) -> tuple[str, list[str], dict[str, str], str]:
    result = merge_texts(BASE, ours, theirs, "facts.yaml", **renames)
    assert result.text.startswith(HEAD + REDIS)
    return result.text[len(HEAD + REDIS) :], result.conflicts, result.renumbered, result.side


THEIRS_MOVED = HEAD + REDIS + entry("004", "pushed", SUPERSEDED)
OURS_APPLIED = HEAD + REDIS + entry("002", "pushed", APPLIED_ONCE)


@pytest.mark.parametrize(
    ("renames", "expected"),
    [
        # Ours' copy takes theirs' new id, and both sides' changes meet in it.
        ({"moved": ({}, MOVED)}, (entry("004", "pushed", SUPERSEDED + APPLIED_BLOCK), [], {}, "theirs")),
        # Theirs yields and this merge renames its new id again: the memory ends under the last id.
        (
            {"moved": ({}, MOVED), "mapping": ONWARD},
            (entry("006", "pushed", SUPERSEDED + APPLIED_BLOCK), [], ONWARD, "theirs"),
        ),
        # Ours yields: the mapping is for ours' own new ids; theirs' moved memory keeps the id theirs gave it.
        (
            {"moved": ({}, MOVED), "mapping": ONWARD, "ours_yields": True},
            (entry("004", "pushed", SUPERSEDED + APPLIED_BLOCK), [], {}, "ours"),
        ),
    ],
)
def test_a_memory_theirs_renumbered_since_base_meets_ours_change_under_the_id_it_ends_with(renames, expected):
    assert merged(OURS_APPLIED, THEIRS_MOVED, **renames) == expected


OURS_MOVED = HEAD + REDIS + entry("004", "pushed", APPLIED_ONCE)
THEIRS_SUPERSEDED = HEAD + REDIS + entry("002", "pushed", SUPERSEDED)


@pytest.mark.parametrize(
    ("renames", "expected"),
    [
        # Theirs' copy and base take ours' new id: ours' text is kept, theirs' supersede added.
        ({"moved": (MOVED, {})}, (entry("004", "pushed", APPLIED_ONCE + SUPERSEDED), [], {}, "theirs")),
        # Theirs yields: the mapping is for theirs' own new ids, not the id ours moved its memory to.
        (
            {"moved": (MOVED, {}), "mapping": ONWARD},
            (entry("004", "pushed", APPLIED_ONCE + SUPERSEDED), [], {}, "theirs"),
        ),
        # Ours yields, and this merge renames none of ours' ids that matter here: the moved memory keeps its id.
        (
            {"moved": (MOVED, {}), "mapping": {"MEM-20261122-007": "MEM-20261122-008"}, "ours_yields": True},
            (entry("004", "pushed", APPLIED_ONCE + SUPERSEDED), [], {}, "ours"),
        ),
        # Ours yields and this merge renames ours' new id again: ours' copy is written anew under it.
        (
            {"moved": (MOVED, {}), "mapping": ONWARD, "ours_yields": True},
            (entry("006", "pushed", SUPERSEDED + APPLIED_BLOCK), [], ONWARD, "ours"),
        ),
    ],
)
def test_a_memory_ours_renumbered_since_base_meets_theirs_change_under_the_id_it_ends_with(renames, expected):
    assert merged(OURS_MOVED, THEIRS_SUPERSEDED, **renames) == expected


def test_without_the_renames_one_sides_change_to_a_renumbered_memory_is_lost():
    # What the renames prevent: ours' 002 reads as removed by theirs, theirs' 004 as new.
    assert merged(OURS_APPLIED, THEIRS_MOVED) == (entry("004", "pushed", SUPERSEDED), [], {}, "theirs")


# -- two copies of one memory that share no base --------------------------------------------------------


def test_two_copies_lifecycles_merge_as_if_both_came_from_the_memory_as_added():
    kept = {"id": "MEM-20261122-002", "content": "pushed", "effectiveness": {"applications": 1, "successes": 1}}
    other = {"id": "MEM-20261122-005", "content": "pushed", "effectiveness": {"applications": 2, "successes": 1}}
    assert merged_lifecycle(kept, other) == {"effectiveness": {"applications": 3, "successes": 2, "score": 67}}
    # Two different successors: the kept copy's stands (the conflict is the merge's to report, not this copy's).
    first, second = {**kept, "superseded_by": "MEM-20261122-008"}, {**other, "superseded_by": "MEM-20261122-009"}
    assert merged_lifecycle(first, second)["superseded_by"] == "MEM-20261122-008"
    assert merged_lifecycle({"id": "MEM-20261122-002", "content": "x"}, {"content": "x"}) == {}


# -- a version that is no grimoire list ----------------------------------------------------------------------


@pytest.mark.parametrize("side", ["base", "ours", "theirs"])
def test_a_damaged_version_is_named_by_its_side(side):
    texts = {"base": BASE, "ours": BASE, "theirs": BASE, side: HEAD + "- id: MEM-20261122-003\n  summary: [x\n"}
    with pytest.raises(Damaged, match=rf"^facts\.yaml \({side}\):"):
        merge_texts(texts["base"], texts["ours"], texts["theirs"], "facts.yaml")


# -- ids renamed in one entry ------------------------------------------------------------------------------


def test_an_entry_is_renamed_in_its_id_its_supersede_links_and_its_related_memories():
    mapping = {f"MEM-20261122-00{n}": f"MEM-20261122-01{n}" for n in range(1, 5)}
    item = {
        "id": "MEM-20261122-001",
        "supersedes": "MEM-20261122-002",
        "superseded_by": "MEM-20261122-003",
        "related_memories": ["MEM-20261122-004", "MEM-20261122-005", {"hand": "edited"}, 7],
        "content": "MEM-20261122-001",
    }
    assert renamed(item, mapping) == {
        "id": "MEM-20261122-011",
        "supersedes": "MEM-20261122-012",
        "superseded_by": "MEM-20261122-013",
        "related_memories": ["MEM-20261122-014", "MEM-20261122-005", {"hand": "edited"}, 7],
        "content": "MEM-20261122-001",  # text is never renamed
    }
    assert item["id"] == "MEM-20261122-001"  # a copy: the side's own entry is left as read
    assert renamed("- a list item that is no entry", mapping) == "- a list item that is no entry"
    assert renamed({"id": ["MEM-20261122-001"], "related_memories": "MEM-20261122-001"}, mapping) == {
        "id": ["MEM-20261122-001"],
        "related_memories": "MEM-20261122-001",
    }


def test_a_damaged_copy_of_a_memory_held_in_another_file_is_named_by_the_file_merged():
    archived = entry("005", "picked", "  archived: true\n")
    damaged = "- id: MEM-20261122-005\n  summary: [x"
    with pytest.raises(Damaged, match=r"^archive\.yaml:"):
        merge_texts(HEAD, HEAD + archived, HEAD, "archive.yaml", same={"MEM-20261122-005": (archived, damaged)})


# -- what a file holds, by id ------------------------------------------------------------------------------


def test_only_mappings_with_an_id_are_entries_by_id():
    entry_ = {"id": "MEM-20261122-001", "content": "x"}
    assert _by_id([entry_, {"id": 5}, {"summary": "no id"}, "a plain list item", None]) == {"MEM-20261122-001": entry_}


def test_memories_both_sides_added_that_one_side_only_holds_here_are_held_elsewhere():
    a = {name: {"id": name, "side": "ours"} for name in ("both", "in base", "ours only")}
    b = {name: {"id": name, "side": "theirs"} for name in ("both", "theirs only")}
    o = {"in base": {"id": "in base"}}
    same = {
        name: ("ours' block", "theirs' block") for name in ("both", "in base", "neither", "ours only", "theirs only")
    }
    # (id, the copy here, the side holding the other copy: 1 theirs, 0 ours)
    assert _held_elsewhere(same, o, a, b) == [("ours only", a["ours only"], 1), ("theirs only", b["theirs only"], 0)]
    assert _held_elsewhere({}, o, a, b) == []


def test_a_side_that_changed_a_memory_the_other_renumbered_changed_it_from_base_under_the_new_id():
    # Base is renamed too: ours' edit is a change from base, not a second version beside theirs'.
    edited = HEAD + REDIS + entry("002", "pushed").replace("summary: pushed", "summary: pushed and edited")
    for renames in ({"moved": ({}, MOVED)}, {"moved": ({}, MOVED), "ours_yields": True}):
        text, conflicts, _, _ = merged(edited, THEIRS_MOVED, **renames)
        assert conflicts == []
        assert text == entry("004", "pushed", SUPERSEDED).replace("summary: pushed", "summary: pushed and edited")


def test_applies_both_sides_hold_through_a_copied_commit_count_once():
    def applied(applications: int) -> str:
        return HEAD + entry("001", "redis", f"  effectiveness: {{applications: {applications}, successes: 1}}\n")

    # Base applied it once; ours twice since, theirs once since, and that one apply is a commit both hold a copy of.
    key = memory_key(parse_entries(applied(1), "f")[0][0])
    result = merge_texts(applied(1), applied(3), applied(2), "facts.yaml", echoed={key: (1, 0)})
    assert result.conflicts == [] and parse_entries(result.text, "f")[0][0]["effectiveness"] == {
        "applications": 3,
        "successes": 1,
        "score": 33,
    }
    # Another memory's echoes leave it alone: both sides' applies add up.
    result = merge_texts(applied(1), applied(3), applied(2), "facts.yaml", echoed={"another memory": (1, 0)})
    assert parse_entries(result.text, "f")[0][0]["effectiveness"]["applications"] == 4


def test_a_list_item_that_is_no_entry_stays_where_ours_has_it():
    note = "- a plain note\n"
    ours = HEAD + REDIS + note + entry("002", "ours")
    result = merge_texts(
        HEAD + REDIS,
        ours,
        HEAD + REDIS + entry("002", "theirs"),
        "facts.yaml",
        mapping={"MEM-20261122-002": "MEM-20261122-003"},
    )
    assert (result.conflicts, result.renumbered) == ([], {"MEM-20261122-002": "MEM-20261122-003"})
    assert result.text == ours + entry("003", "theirs")


def test_a_conflict_shows_ours_as_this_merge_renamed_it_and_each_side_whole():
    ours_first = entry("001", "redis", "  related_memories: [MEM-20261122-002]\n  note: ours X\n")
    ours = HEAD + ours_first.replace("content: redis", "content: redis 7") + entry("002", "ours")
    theirs_first = entry("001", "redis", "  note: theirs X\n").replace("content: redis", "content: valkey")
    result = merge_texts(
        HEAD + REDIS,
        ours,
        HEAD + theirs_first + entry("002", "theirs"),
        "facts.yaml",
        mapping={"MEM-20261122-002": "MEM-20261122-003"},
        ours_yields=True,
    )
    assert (result.conflicts, result.renumbered, result.side) == (
        ["MEM-20261122-001"],
        {"MEM-20261122-002": "MEM-20261122-003"},
        "ours",
    )
    renamed_first = ours_first.replace("content: redis", "content: redis 7").replace("-002]", "-003]")
    assert result.text == (
        f"{HEAD}<<<<<<< ours\n{renamed_first}=======\n{theirs_first}>>>>>>> theirs\n"
        + entry("003", "ours")
        + entry("002", "theirs")
    )


def test_a_conflict_shows_ours_as_written_where_this_merge_renamed_nothing_in_it():
    ours_first = "- id: MEM-20261122-001  # checked by hand\n" + entry("001", "redis 7").split("\n", 1)[1]
    theirs_first = entry("001", "valkey")
    result = merge_texts(HEAD + REDIS, HEAD + ours_first, HEAD + theirs_first, "facts.yaml")
    assert result.conflicts == ["MEM-20261122-001"]
    assert result.text == f"{HEAD}<<<<<<< ours\n{ours_first}=======\n{theirs_first}>>>>>>> theirs\n"


def test_memories_both_sides_added_that_one_side_archived_stay_archived_with_both_lifecycles():
    """Ours holds both here; theirs holds them in other files (same: ours', theirs' block). The one theirs
    archived stays out of ours' active file; the one ours archived takes theirs' applies."""
    active = entry("005", "picked, archived on theirs")
    archived = entry("006", "picked, applied on theirs", ARCHIVED)
    theirs_archived = entry("005", "picked, archived on theirs", ARCHIVED)
    theirs_applied = entry("006", "picked, applied on theirs", APPLIED_ONCE)
    untouched = entry("007", "picked, left alone on theirs", ARCHIVED)  # nothing to take: kept as it is
    same = {
        "MEM-20261122-005": (active, theirs_archived),
        "MEM-20261122-006": (archived, theirs_applied),
        "MEM-20261122-007": (untouched, entry("007", "picked, left alone on theirs")),
    }
    result = merge_texts(HEAD, HEAD + active + archived + untouched, HEAD, "archive.yaml", same=same)
    assert (result.conflicts, result.renumbered) == ([], {})
    assert result.text == HEAD + entry("006", "picked, applied on theirs", ARCHIVED + APPLIED_BLOCK) + untouched


def test_an_entry_without_an_id_on_the_side_whose_keyed_entries_are_chained_is_kept(tmp_path):
    """`mem validate` names it afterwards; the driver neither drops it nor fails on it."""
    superseded = fact("001", "small", "10:00", "  superseded_by: MEM-20261122-002\n")
    ours = HEAD + superseded + fact("002", "large", "10:05", "  supersedes: MEM-20261122-001\n")
    theirs = HEAD + superseded + fact("002", "medium", "10:03", "  supersedes: MEM-20261122-001\n")
    result, merged = driven(tmp_path, HEAD + fact("001", "small", "10:00"), ours, theirs + "- content: by hand\n")
    assert result.conflicts == []
    assert [(e.get("id", "")[-3:], e["content"]) for e in items(merged)] == [
        ("001", "small"),
        ("002", "large"),
        ("003", "medium"),
        ("", "by hand"),
    ]


def test_an_item_that_is_no_entry_on_theirs_is_merged_by_lines_and_named(tmp_path):
    """Merging entry by entry would drop it: git's line merge keeps it, and the conflict says why."""
    ours = HEAD + REDIS + entry("002", "ours")
    theirs = HEAD + REDIS + "- - a list\n  - that is no entry\n"
    result, merged = driven(tmp_path, HEAD + REDIS, ours, theirs)
    assert "- - a list\n  - that is no entry\n" in merged and "<<<<<<<" in merged  # named by its first line
    assert result.conflicts == [f"{FACTS} (theirs):11: holds an item that is not an entry"]
