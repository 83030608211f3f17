"""Exact and near duplicates among one category's active entries (the add
pipeline's check, adding.py): a near duplicate is 90 % alike by
rapidfuzz's `fuzz.ratio` of the normalised texts.

A single lookup compares the text with every entry of a length that could
be that alike. A bulk write (thousands of lookups) would then cost n x m
comparisons, and no exact index exists for 90 % (texts that alike need
share only ~40 % of their character 3-grams). So a table built `indexed`
keeps each text's words and SKETCH of its pairs of adjacent words (`keys`):
a lookup whose length window holds more than TOP texts compares only the
TOP that share the most of its RAREST rarest keys (reading at most POSTINGS
postings). Measured against the full scan (benchmarks/bench_near.py, 10k
zipf texts, 2,772 near copies made by six kinds of edit): 3 missed, all
torn by ~20 typos scattered over most of their words (docs/reference.md).
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterable
from itertools import compress, pairwise
from typing import Any
from zlib import crc32

from ..core.model import normalize_text

NEAR = 90  # fuzz.ratio at or above which a new memory is a near duplicate
TOP = 32  # texts an indexed lookup compares at most (a window that small is compared whole)
RAREST = 16  # keys of the query an indexed lookup reads, rarest first
POSTINGS = 1024  # postings it reads at most: a text of common words only stops early
# Pairs of adjacent words a text is indexed by: those of the lowest hash, so
# two texts sharing most pairs share most of these; every pair took 2.7x the
# memory (92 MB for 20k zipf texts, against 34).
SKETCH = 16
FEW = 3  # words: a text of no more is compared with its whole window
_WORD = re.compile(r"\w+")


def alike_lengths(length: int) -> tuple[int, int]:
    """Lengths a text can have and still be NEAR-alike one of `length`.

    fuzz.ratio is 100 * (1 - d / (a + b)) with the edit distance d at least
    |a - b|, so 90 needs 9a/11 <= b <= 11a/9; one more each side for rounding.
    """
    return 9 * length // 11 - 1, -(-11 * length // 9) + 1


def keys(text: str) -> set[str | int]:
    """The words of a text and SKETCH of its pairs of adjacent words, those
    of the lowest hash (the same pairs of two texts that share most of them):
    a few edits leave most of them, and a pair is rare where its words are common."""
    words = _WORD.findall(text)
    pairs = sorted({crc32(f"{a} {b}".encode()) for a, b in pairwise(words)})
    return {*words, *pairs[:SKETCH]}


def few_words(text: str) -> bool:
    """Whether one edit may leave the text no key it shared (`cache ttl` ->
    `cachettl`): such a text is compared with its whole window."""
    return len(_WORD.findall(text)) <= FEW


class Duplicates:
    """Exact and near (fuzz.ratio >= 90) duplicate lookup among one category's active entries.

    Holds (id, normalised content) pairs, so checking a batch of n items
    against m entries costs n lookups, not n * m normalisations. A near
    lookup compares only texts whose length could make them NEAR alike
    (`alike_lengths`): all of them, or with `indexed` (a bulk write) at most
    TOP chosen by their keys (see the module). A removal is noted, not
    spliced out, so neither costs a pass over all of them.
    """

    def __init__(self, pairs: Iterable[tuple[str, str]], *, indexed: bool = False):
        self._texts: list[str] = []  # in arrival order: a text's place is its number below
        self._ids: list[str] = []
        # Lengths and postings are arrays, holding their numbers inline: a list's would be int objects strewn over
        # a bulk write's large heap, a cache miss each time a lookup reads one.
        self._lengths: array[int] = array("I")  # number -> the length of its text
        self._by_length: dict[int, list[int]] = {}  # length -> the numbers of the texts that long
        self._index: dict[str | int, array[int]] | None = {} if indexed else None  # key -> its holders, ascending
        self.exact: dict[str, list[str]] = {}
        self._removed: set[str] = set()
        self.extend(pairs)

    def add(self, entry_id: str, text: str) -> None:
        self._removed.discard(entry_id)
        number = len(self._texts)
        self._texts.append(text)
        self._ids.append(entry_id)
        self._lengths.append(len(text))
        self._by_length.setdefault(len(text), []).append(number)
        if self._index is not None:
            for key in keys(text):
                holders = self._index.get(key)
                if holders is None:
                    self._index[key] = array("i", (number,))
                else:
                    holders.append(number)
        self.exact.setdefault(text, []).append(entry_id)

    def extend(self, pairs: Iterable[tuple[str, str]]) -> None:
        for pair in pairs:
            self.add(*pair)

    def remove(self, entry_id: str) -> None:
        self._removed.add(entry_id)

    def of(self, data: dict[str, Any], *, near: bool = True) -> tuple[str | None, str | None, float]:
        """(exact duplicate id, nearest near duplicate id, its score), ignoring
        the entry it supersedes; without `near`, exact duplicates only."""
        text = normalize_text(data["content"])
        skip = data.get("supersedes")
        for entry_id in self.exact.get(text, []):
            if entry_id != skip and entry_id not in self._removed:
                return entry_id, None, 100.0
        if not near:
            return None, None, 0.0
        # The best score, then the earliest added: as one pass over the texts in arrival order finds it.
        for score, number in sorted(self.alike(text), key=lambda hit: (-hit[0], hit[1])):
            entry_id = self._ids[number]
            if entry_id != skip and entry_id not in self._removed:
                return None, entry_id, score
        return None, None, 0.0

    def alike(self, text: str, threshold: float = NEAR, *, held: bool = False) -> list[tuple[float, int]]:
        """(score, number) of the texts compared that are `threshold` alike
        (NEAR or more), removed ones included; `held`: the text is one of the
        table's own (it is among them, and a key only it holds finds no other)."""
        numbers = self._compared(text, held)
        if not numbers:
            return []
        from rapidfuzz import fuzz, process

        return [
            (score, numbers[place])
            for _, score, place in process.extract(
                text, [self._texts[n] for n in numbers], scorer=fuzz.ratio, score_cutoff=threshold, limit=None
            )
        ]

    def _at_most_top(self, window: list[int]) -> bool:
        """Whether the texts of these lengths are TOP or fewer: counted until they pass it, as a large
        category's window passes it at once."""
        held = 0
        for length in window:
            held += len(self._by_length[length])
            if held > TOP:
                return False
        return True

    def _compared(self, text: str, held: bool = False) -> list[int]:
        """The numbers of the texts a lookup of `text` compares it with."""
        shortest, longest = alike_lengths(len(text))
        window = [length for length in range(max(shortest, 0), longest + 1) if length in self._by_length]
        if self._index is None or few_words(text) or self._at_most_top(window):
            return [number for length in window for number in self._by_length[length]]
        index = self._index
        least = 2 if held else 1  # the holders a key must have to be read
        ordered = sorted(
            (key for key in keys(text) if len(index.get(key, ())) >= least), key=lambda key: len(index[key])
        )
        shared: Counter[int] = Counter()
        read = 0
        for key in ordered[:RAREST]:
            if read and read + len(index[key]) > POSTINGS:
                break
            # Even the rarest key may be a common word (no pair of the text is held twice): its latest POSTINGS
            # holders only, or each lookup of a large batch would read a list growing with it (quadratic: issue 43).
            holders = index[key][-POSTINGS:]
            read += len(holders)
            shared.update(holders)
        return self._ranked(shared, read, shortest, longest)

    def _ranked(self, shared: Counter[int], read: int, shortest: int, longest: int) -> list[int]:
        """The TOP of `shared` (holder -> keys held, from `read` postings) holding the most that are of a like
        length, ties in the order first met: as in most_common(), which sorts every holder, while nearly all of
        them hold one key alone; and the lengths are read only until TOP are found. The postings read grow with the
        category until POSTINGS, and sorting them all grew add_many's cost per item with it (issue 43)."""
        lengths, chosen = self._lengths, []
        if len(shared) < read:  # some hold several: those first, the most first (a stable sort keeps the order met)
            several = sorted(compress(shared, map((1).__lt__, shared.values())), key=shared.__getitem__, reverse=True)
            for number in several:
                if shortest <= lengths[number] <= longest:
                    chosen.append(number)
                    if len(chosen) == TOP:
                        return chosen
        for number, held in shared.items():
            if held == 1 and shortest <= lengths[number] <= longest:
                chosen.append(number)
                if len(chosen) == TOP:
                    break
        return chosen
