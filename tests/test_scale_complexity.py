"""The bulk paths' cost per entry does not grow with the data (issue 43).

Nothing here is timed: each test counts calls of the function a quadratic
loop would call (an id parse, a catalog query) at two sizes, with the
profiler, so a loop that goes back over the day's ids for every new one
fails on any machine. `benchmarks/bench_scale.py` times the same paths.
"""

from __future__ import annotations

import cProfile
import json
import random
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import fresh_repo
from hypothesis import given
from hypothesis import strategies as st

from grimoire_cli import Grimoire
from grimoire_cli.core.model import parse_id
from grimoire_cli.memory.adding import WINDOWED
from grimoire_cli.memory.duplicates import POSTINGS, TOP, Duplicates
from grimoire_cli.storage.store import Store

WORDS = "cache index query deploy build runner disk memory timeout retry queue worker schema migration release branch merge".split()


def calls(action: Callable[[], object], *functions: Callable) -> list[int]:
    """How many times `action` called each of `functions` (counted by the profiler, whatever name the caller imported it by)."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        action()
    finally:
        profiler.disable()
    profiler.create_stats()
    counted = {(code[0], code[1], code[2]): stats[1] for code, stats in profiler.stats.items()}
    return [counted.get((f.__code__.co_filename, f.__code__.co_firstlineno, f.__code__.co_name), 0) for f in functions]


def lines(count: int, start: int = 0, **fields: object) -> list[str]:
    """`count` JSON Lines of distinct facts (no ids: each one is numbered), none a near duplicate of another."""
    rng = random.Random(start)
    return [
        json.dumps(
            {"content": f"note {n}: " + " ".join(rng.choice(WORDS) for _ in range(12)), "category": "fact", **fields}
        )
        for n in range(start, start + count)
    ]


def grimoire_at(tmp_path: Path, monkeypatch, name: str, holding: int = 0) -> Grimoire:
    """A fresh grimoire whose day (MEM_NOW's) already holds `holding` facts."""
    fresh_repo(tmp_path / name, monkeypatch)
    if holding:
        Grimoire.open().import_lines(lines(holding, start=10**6))
    return Grimoire.open()


def test_an_import_parses_a_bounded_number_of_ids_per_entry(tmp_path, monkeypatch):
    per_entry = []
    for size in (100, 400):
        grimoire = grimoire_at(tmp_path, monkeypatch, f"g{size}")
        parses, queries = calls(lambda: grimoire.import_lines(lines(size)), parse_id, Store.ask)
        assert len(grimoire.list()) == size
        per_entry.append((parses / size, queries))
    (small_parses, small_queries), (large_parses, large_queries) = per_entry
    # Numbering the 400th id of a day parses no more than numbering the 100th (before: every id of the day, each time).
    assert large_parses <= small_parses + 1, per_entry
    assert large_queries <= small_queries + 2, per_entry  # the catalog is asked per batch and per day, not per entry


def test_numbering_reads_the_days_ids_once(tmp_path, monkeypatch):
    counts = []
    for holding in (200, 800):
        grimoire = grimoire_at(tmp_path, monkeypatch, f"g{holding}", holding=holding)
        counts.append(calls(lambda: grimoire.import_lines(lines(50)), parse_id)[0])
        assert parse_id(grimoire.list()[0].id)[1] > holding  # numbered past the day's ids
    # Each id the day already holds is parsed a bounded number of times in all, not once per new entry.
    assert counts[1] - counts[0] <= 3 * (800 - 200), counts


def test_add_many_parses_a_bounded_number_of_ids_per_entry(tmp_path, monkeypatch):
    per_entry = []
    for size in (100, 400):
        grimoire = grimoire_at(tmp_path, monkeypatch, f"g{size}")
        items = [json.loads(line) for line in lines(size)]
        per_entry.append(calls(lambda: grimoire.add_many(items), parse_id)[0] / size)
    assert per_entry[1] <= per_entry[0] + 1, per_entry


def test_superseding_in_a_batch_does_not_rebuild_the_duplicate_lookup(tmp_path, monkeypatch):
    """Each supersede in a batch took its old entry out of every category's
    lookup by rebuilding it: a batch re-keying n facts beside a plain one cost n * m."""
    added, keyed = [], WINDOWED + 8  # a batch that reads the category's lookup once
    for holding in (100, 400):
        grimoire = grimoire_at(tmp_path, monkeypatch, f"g{holding}", holding=holding)
        grimoire.add_many([{"content": f"value {n}", "category": "fact", "key": f"k.{n}"} for n in range(keyed)])
        batch = [{"content": "a plain fact beside the keyed ones", "category": "fact"}]
        batch += [{"content": f"new value {n}", "category": "fact", "key": f"k.{n}"} for n in range(keyed)]
        added.append(calls(lambda: grimoire.add_many(batch), Duplicates.add)[0])
        assert grimoire.get("k.3").content == "new value 3"
    # Filling the lookup costs one add per entry it holds; the supersedes cost nothing more.
    assert added[1] - added[0] <= 400 - 100 + 5, added


def test_a_large_batch_still_notes_near_duplicates_and_an_import_refuses_exact_ones(repo):
    grimoire = Grimoire.open()
    items = [json.loads(line) for line in lines(WINDOWED + 8)]
    items.append(dict(items[5], content=items[5]["content"] + "!"))  # one character more: a near duplicate of item 5
    written = grimoire.add_many(items)
    assert written[-1].near_duplicate[0] == written[5].id
    result = grimoire.import_lines([json.dumps(items[7]), *lines(3, start=500)], skip_invalid=True)
    assert len(result.imported) == 3 and [line for line, _ in result.rejected] == [1]
    assert result.rejected[0][1].startswith(f"an identical memory already exists: {written[7].id}")


def test_a_long_list_of_related_ids_is_checked_for_repeats_in_one_pass(grimoire):
    """`uniqueItems` compared every pair: a condensed entry (`mem compact`) or a
    summary listing n ids cost n * n / 2 comparisons to check or validate."""
    from grimoire_cli.core import schemas

    data = grimoire.add("a condensed memory", "fact").data
    compared = []
    for count in (100, 1000):
        related = {**data, "related_memories": [f"MEM-20261122-{n:03d}" for n in range(1, count + 1)]}
        compared.append(calls(lambda: schemas.first_problem(related), schemas._same)[0])
        assert schemas.first_problem(related) is None
        repeated = {**related, "related_memories": related["related_memories"] + ["MEM-20261122-007"]}
        assert "non-unique" in schemas.first_problem(repeated)[1]
    assert compared[1] <= compared[0] + 10, compared


def test_an_entry_relating_many_asks_the_catalog_once_for_them(tmp_path, monkeypatch):
    """A condensed entry (`mem compact`) relates every entry it replaces: each
    related id was one catalog query, and kept once by a search of the list so far."""
    queries = []
    for count in (20, 80):
        grimoire = grimoire_at(tmp_path, monkeypatch, f"g{count}", holding=count)
        ids = [entry.id for entry in grimoire.list(recent=count)]
        relating = {"content": "what the others said, condensed", "category": "fact", "related": ids + ids[:3]}
        queries.append(calls(lambda: grimoire.add_many([relating]), Store.by_id)[0])
        assert grimoire.list(recent=1)[0].data["related_memories"] == ids
    assert queries[1] == queries[0], queries


def _lines_run_in(path_end: str, action: Callable[[], object]) -> int:
    """Lines executed in the module whose file ends with `path_end` (its comprehensions included): a loop over
    all entries inside a loop over all entries shows up here, whatever it calls."""
    import sys

    count = 0

    def trace(frame, event, arg):
        nonlocal count
        if not frame.f_code.co_filename.endswith(path_end):
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        action()
    finally:
        sys.settrace(None)
    return count


def _side(who: str, n: int) -> str:
    return "".join(
        f'- id: MEM-20261122-{i:03d}\n  category: fact\n  content: "{who} memory {i}"\n  confidence: 0.8\n'
        f'  ttl: permanent\n  source:\n    timestamp: "2026-11-22T10:00:00Z"\n'
        for i in range(1, n + 1)
    )


def test_the_merge_driver_grows_linearly_in_colliding_same_day_ids():
    """Both sides minted the same n ids; renumbering and merging them runs a number of lines proportional to n
    (the renumbered report rebuilt its id set per mapping item, and each fresh id reread every taken one)."""
    from grimoire_cli.git.merge import merge_texts
    from grimoire_cli.git.numbering import renumbering
    from grimoire_cli.git.trees import ids_in

    def work(n: int) -> Callable[[], object]:
        ours, theirs = _side("ours", n), _side("theirs", n)

        def merge() -> None:
            mapping = renumbering({}, ids_in(ours), ids_in(theirs))
            assert len(mapping) == n
            result = merge_texts("", ours, theirs, "facts.yaml", mapping, ours_yields=True)
            assert len(result.renumbered) == n and not result.conflicts

        return merge

    small, large = (_lines_run_in("git/merge.py", work(n)) for n in (100, 400))
    assert large < 6 * small, (small, large)  # linear: about 4 times; quadratic: about 16


@contextmanager
def compared_texts() -> Iterator[list[int]]:
    """A counter of the texts rapidfuzz compares through `process.extract` (each near-duplicate search's call)."""
    from rapidfuzz import process

    counted = [0]
    extract = process.extract

    def counting(query, choices, **options):
        counted[0] += len(choices)
        return extract(query, choices, **options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(process, "extract", counting)
        yield counted


def test_a_bulk_write_compares_each_item_with_a_bounded_number_of_entries(tmp_path, monkeypatch):
    """`add_many` of a large batch (and so `mem consolidate`) compared each item with every active entry of its
    category of a like length: n x m. It now compares at most 32 (duplicates.TOP), whatever the category holds, and still notes
    the near duplicate of an entry it holds."""
    per_item = []
    for holding in (300, 1200):
        grimoire = grimoire_at(tmp_path, monkeypatch, f"g{holding}", holding=holding)
        held = grimoire.list(recent=1)[0]
        items = [json.loads(line) for line in lines(WINDOWED + 8)]
        items.append({"content": held.content + " again", "category": "fact"})
        with compared_texts() as counted:
            written = grimoire.add_many(items)
        assert written[-1].near_duplicate[0] == held.id
        per_item.append(counted[0] / len(items))
    assert per_item[1] <= per_item[0] + 2, per_item  # before: 4 times as many (every entry of a like length)


def test_review_compares_each_entry_with_a_bounded_number_of_others(tmp_path, monkeypatch):
    """`mem review`'s near-duplicate pairs compared each entry with every longer one of its category within reach:
    all the pairs of a category of like lengths. Each is now looked up as a bulk write's item is."""
    per_entry = []
    for holding in (300, 1200):
        grimoire = grimoire_at(tmp_path, monkeypatch, f"g{holding}", holding=holding)
        held = grimoire.list(recent=1)[0]
        twin = grimoire.add(held.content + " again", "fact")
        with compared_texts() as counted:
            pairs = grimoire.review().duplicates
        assert [(a.id, b.id) for a, b, _, _ in pairs] == [(held.id, twin.id)]
        per_entry.append(counted[0] / (holding + 1))
    assert per_entry[1] <= per_entry[0] + 2, per_entry  # before: 4 times as many


class _Postings(list):
    """A posting list of the lookup's index that counts the postings a lookup takes from it."""

    taken = 0

    def __iter__(self):
        _Postings.taken += len(self)
        return super().__iter__()

    def __getitem__(self, index):
        got = super().__getitem__(index)
        _Postings.taken += len(got) if isinstance(index, slice) else 1
        return got


def test_a_lookup_reads_a_bounded_number_of_postings_however_common_its_rarest_shared_word():
    """A text whose only key held by others is a common word read that word's whole posting list, which grows with
    the batch: `add_many` of 30k zipf texts took 4.7x the time of 10k. It reads the latest POSTINGS of them."""
    taken = []
    for size in (2 * POSTINGS, 8 * POSTINGS):
        text = "shared w{0:06d}a w{0:06d}b w{0:06d}c w{0:06d}d"  # one length: all in the query's window
        table = Duplicates(((f"MEM-{n}", text.format(n)) for n in range(size)), indexed=True)
        table._index = {key: _Postings(held) for key, held in table._index.items()}  # counted where the lookup reads
        _Postings.taken = 0
        assert table.alike(text.format(999999)) == []
        taken.append(_Postings.taken)
    assert taken[1] <= POSTINGS, taken  # before: the whole list, 8,192


class _Lengths(list):
    """The lookup's text lengths, counting the ones a lookup reads."""

    read = 0

    def __getitem__(self, index):
        _Lengths.read += 1
        return super().__getitem__(index)


def test_a_lookup_reads_the_length_of_about_top_texts_not_of_every_one_sharing_a_key():
    """A lookup kept the texts of a like length among every one sharing a key (up to POSTINGS of them), then took
    the TOP sharing most: that filter grew with the category until POSTINGS, and made `add_many`'s 10x data cost
    13.8x its time. It now ranks them first and reads lengths only until TOP are found."""
    read = []
    for size in (4 * TOP, 16 * TOP):
        text = "shared w{0:06d}a w{0:06d}b w{0:06d}c w{0:06d}d"  # one length: all in the query's window
        table = Duplicates(((f"MEM-{n}", text.format(n)) for n in range(size)), indexed=True)
        table._lengths = _Lengths(table._lengths)
        _Lengths.read = 0
        assert len(table._compared(text.format(999999))) == TOP
        read.append(_Lengths.read)
    assert read == [TOP, TOP], read  # before: every text holding "shared", 128 and 512


@given(
    st.lists(st.sets(st.integers(0, 80), min_size=1, max_size=60), min_size=1, max_size=16),
    st.lists(st.integers(1, 9), min_size=81, max_size=81),
    st.integers(1, 9),
    st.integers(0, 4),
)
def test_a_lookup_ranks_its_holders_as_sorting_every_one_by_keys_held_would(postings, lengths, shortest, wider):
    """The lookup sorts only the holders of several of the keys read, not every holder (most_common() did, nearly
    all holding one key alone, and the holders read grow with the category): it must choose the same TOP, the
    most keys first, ties in the order first met, of a like length only."""
    table = Duplicates([], indexed=True)
    table._lengths = array("I", lengths)
    shared: Counter[int] = Counter()
    for holders in postings:  # each key's holders ascending, as the index keeps them
        shared.update(sorted(holders))
    longest = shortest + wider
    expected = [number for number, _ in shared.most_common() if shortest <= lengths[number] <= longest][:TOP]
    assert table._ranked(shared, sum(map(len, postings)), shortest, longest) == expected
