"""Exact and near duplicates among one category's active entries (the add
pipeline's check, adding.py): a near duplicate is 90 % alike by
rapidfuzz's `fuzz.ratio` of the normalised texts."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import Any

from ..core.model import normalize_text

NEAR = 90  # fuzz.ratio at or above which a new memory is a near duplicate


def alike_lengths(length: int) -> tuple[int, int]:
    """Lengths a text can have and still be NEAR-alike one of `length`.

    fuzz.ratio is 100 * (1 - d / (a + b)) with the edit distance d at least
    |a - b|, so 90 needs 9a/11 <= b <= 11a/9; one more each side for rounding.
    """
    return 9 * length // 11 - 1, -(-11 * length // 9) + 1


class Duplicates:
    """Exact and near (fuzz.ratio >= 90) duplicate lookup among one category's active entries.

    Holds (id, normalised content) pairs, so checking a batch of n items
    against m entries costs n lookups, not n * m normalisations. The texts
    are kept in order of length: a near lookup compares only those whose
    length could make them NEAR alike (`alike_lengths`), and a removal is
    noted, not spliced out, so neither costs a pass over all of them.
    """

    def __init__(self, pairs: Iterable[tuple[str, str]]):
        self._lengths: list[int] = []  # sorted; the texts, ids and arrival order below follow it
        self._texts: list[str] = []
        self._ids: list[str] = []
        self._order: list[int] = []
        self.exact: dict[str, list[str]] = {}
        self._removed: set[str] = set()
        for entry_id, text in pairs:
            self.add(entry_id, text)

    def add(self, entry_id: str, text: str) -> None:
        self._removed.discard(entry_id)
        place = bisect_right(self._lengths, len(text))
        self._order.insert(place, len(self._order))
        self._lengths.insert(place, len(text))
        self._texts.insert(place, text)
        self._ids.insert(place, entry_id)
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
        shortest, longest = alike_lengths(len(text))
        start, stop = bisect_left(self._lengths, shortest), bisect_right(self._lengths, longest)
        if start >= stop:
            return None, None, 0.0
        from rapidfuzz import fuzz, process

        found = [
            (score, self._order[start + index], self._ids[start + index])
            for _, score, index in process.extract(
                text, self._texts[start:stop], scorer=fuzz.ratio, score_cutoff=NEAR, limit=None
            )
        ]
        # The best score, then the earliest added: as one pass over the texts in arrival order finds it.
        for score, _, entry_id in sorted(found, key=lambda hit: (-hit[0], hit[1])):
            if entry_id != skip and entry_id not in self._removed:
                return None, entry_id, score
        return None, None, 0.0
