"""Lifecycle rules: effectiveness, archive fields, what is due at session start.

Pure functions over entries and a moment; `api` applies them to the store.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core.clock import iso
from ..core.errors import BadInput
from ..core.model import ARCHIVE_REASONS, Entry, normalize_text, ordered, score_of

if TYPE_CHECKING:
    from ..storage.catalog.rows import Light


def apply_outcome(data: dict[str, Any], success: bool, moment: datetime) -> dict[str, Any]:
    """The entry with one more application recorded."""
    old = data.get("effectiveness") or {}
    applications = int(old.get("applications", 0)) + 1
    successes = int(old.get("successes", 0)) + (1 if success else 0)
    new = dict(data)
    new["effectiveness"] = {
        "applications": applications,
        "successes": successes,
        "score": score_of(applications, successes),
        "last_applied": iso(moment),
    }
    return new


def check_reason(reason: str) -> str:
    """An archive reason, refused unless it is one of ARCHIVE_REASONS."""
    if reason not in ARCHIVE_REASONS:
        raise BadInput(f"bad reason {reason!r}", f"use one of: {', '.join(ARCHIVE_REASONS)}")
    return reason


def archived_data(data: dict[str, Any], reason: str, moment: datetime) -> dict[str, Any]:
    """The entry as the archive holds it (`reason` already checked)."""
    new = dict(data)
    new["archived"] = True
    new["archived_at"] = iso(moment)
    new["archive_reason"] = reason
    return ordered(new)  # in the file's order, so the catalog's row equals a re-read's


SHORT_LIFE = 86400  # seconds: see expiring_within


def expiring_within(entry: Entry | Light, moment: datetime, days: int) -> bool:
    """Whether an active entry expires within `days`. An entry that lives a
    day or less (a ttl in minutes or hours: a cache value) is never said to
    be expiring: with a warning window of days it would be from the moment
    it is written, and its expiry is the point of it."""
    if entry.expires is None or not entry.is_active(moment):
        return False
    if entry.born is not None and entry.expires - entry.born <= SHORT_LIFE:
        return False
    return entry.expires <= moment.timestamp() + days * 86400


def archive_reason(entry: Entry | Light, moment: datetime) -> str | None:
    """Why `mem archive` would move this entry by itself, if it would."""
    if entry.archived or entry.superseded_by:
        return None
    if entry.is_expired(moment):
        return "expired"
    if entry.tier == "ineffective":
        return "ineffective"
    return None


def near_duplicates(entries: list[Entry], threshold: float = 90) -> list[tuple[Entry, Entry, float]]:
    """Pairs of active entries in one category whose texts are ≥ threshold alike,
    each entry's pairs best first (the entry first listed, then the other)."""
    pairs: list[tuple[Entry, Entry, float]] = []
    by_category: dict[str, list[Entry]] = {}
    for entry in entries:
        by_category.setdefault(entry.category, []).append(entry)
    for group in by_category.values():
        pairs.extend(
            (group[i], group[j], score)
            for i, j, score in alike_pairs([normalize_text(e.content) for e in group], threshold)
        )
    return pairs


def alike_pairs(texts: list[str], threshold: float = 90) -> list[tuple[int, int, float]]:
    """(i, j, score) of the texts ≥ threshold alike, i < j, in `near_duplicates`' order."""
    found = _alike_pairs(texts, threshold)
    return [(i, j, score) for i in sorted(found) for score, j in sorted(found[i], key=lambda hit: (-hit[0], hit[1]))]


def _alike_pairs(texts: list[str], threshold: float) -> dict[int, list[tuple[float, int]]]:
    """i -> (score, j) of each pair i < j of texts ≥ threshold alike. For NEAR and
    above each text is looked up as a bulk write looks up an item
    (`Duplicates(indexed=True)`: its length window whole when small, else the
    texts sharing the most of its rarest words), not compared with every other."""
    from rapidfuzz import fuzz, process

    from ..memory.duplicates import NEAR, Duplicates

    found: dict[int, list[tuple[float, int]]] = {}
    if threshold < NEAR:
        for i, text in enumerate(texts):
            for _, score, k in process.extract(
                text, texts[i + 1 :], scorer=fuzz.ratio, score_cutoff=threshold, limit=None
            ):
                found.setdefault(i, []).append((score, i + 1 + k))
        return found
    table = Duplicates(((str(n), text) for n, text in enumerate(texts)), indexed=True)
    seen: set[tuple[int, int]] = set()
    for i, text in enumerate(texts):
        for score, j in table.alike(text, threshold, held=True):
            pair = (min(i, j), max(i, j))
            if i != j and pair not in seen:
                seen.add(pair)
                found.setdefault(pair[0], []).append((score, pair[1]))
    return found


# What resolves a near-duplicate pair, by kind: `mem supersede` writes notes only
# (an entry of another kind needs its kind's fields, which the text has not).
_FIXES = {
    "note": "supersede one: `mem supersede ID TEXT`",
    "task": "cancel one: `mem task cancel ID`",
    "episode": "if it happened once, archive one: `mem archive ID --reason manual`",
}
_ARCHIVE = "archive one: `mem archive ID --reason manual`"


class NearDuplicate(NamedTuple):
    """Two active entries of one category whose texts are `score`% alike, and what resolves the pair."""

    a: Entry
    b: Entry
    score: float
    fix: str


@dataclass
class Review:
    """What `mem review` lists: entries by section, and near-duplicate pairs."""

    low: list[Entry] = field(default_factory=list)
    ineffective: list[Entry] = field(default_factory=list)
    expiring: list[Entry] = field(default_factory=list)
    duplicates: list[NearDuplicate] = field(default_factory=list)

    def entries(self) -> list[Entry]:
        seen: dict[str, Entry] = {}
        for entry in [*self.ineffective, *self.low, *self.expiring, *(pair.b for pair in self.duplicates)]:
            seen.setdefault(entry.id, entry)
        return list(seen.values())

    def to_list(self) -> list[dict[str, Any]]:
        """Entry objects, each with `review`: the sections it is in and the
        entries it nearly duplicates (the pair's other side, with the score)."""
        return self.page(0, None)[0]

    def page(self, first: int, last: int | None) -> tuple[list[dict[str, Any]], int]:
        """`to_list()[first:last]`, and how many entries `to_list` holds: only those shown are drawn up."""
        every = self.entries()
        pairs = ((a.id, b.id, score, fix) for a, b, score, fix in self.duplicates)
        return queue_page(every[first:last], self, pairs), len(every)


def queue_page(
    shown: list[Entry], sections: Review, pairs: Iterable[tuple[str, str, float, str]]
) -> list[dict[str, Any]]:
    """`shown` (a slice of a review's entries) as `Review.to_list` draws them:
    each with the sections of `sections` it is in and its pairs among `pairs`
    (id, id, score, fix), gathered in one pass over each (by id, as the queue
    is keyed): at 10k entries there are thousands of pairs."""
    wanted = {entry.id for entry in shown}
    named: dict[str, list[str]] = {}
    for name, group in (("ineffective", sections.ineffective), ("low", sections.low), ("expiring", sections.expiring)):
        for e in group:
            if name not in named.setdefault(e.id, []):
                named[e.id].append(name)
    near: dict[str, list[dict[str, Any]]] = {}
    for a_id, b_id, score, fix in pairs:
        if a_id in wanted:
            near.setdefault(a_id, []).append({"id": b_id, "score": round(score, 1), "fix": fix})
        if b_id in wanted and b_id != a_id:
            near.setdefault(b_id, []).append({"id": a_id, "score": round(score, 1), "fix": fix})
    out = []
    for entry in shown:
        found = near.get(entry.id, [])
        listed = [*named.get(entry.id, []), *(["near-duplicate"] if found else [])]
        out.append({**entry.to_dict(), "review": {"sections": listed, "near_duplicates": found}})
    return out


def review_sections(active: Iterable[Entry], moment: datetime, warn_days: int) -> Review:
    """A review of these active entries without its near duplicates: the low, ineffective and expiring ones."""
    result = Review()
    for entry in active:
        if entry.tier == "low":
            result.low.append(entry)
        elif entry.tier == "ineffective":
            result.ineffective.append(entry)
        if expiring_within(entry, moment, warn_days):
            result.expiring.append(entry)
    return result


def review(entries: Iterable[Entry], moment: datetime, warn_days: int, kinds: dict[str, str] | None = None) -> Review:
    """What `mem review` lists; `kinds` (category -> kind) chooses what each near-duplicate pair is told to do."""
    active = [e for e in entries if e.is_active(moment)]
    result = review_sections(active, moment, warn_days)
    kinds = kinds or {}
    result.duplicates = [
        NearDuplicate(a, b, score, _FIXES.get(kinds.get(a.category, "note"), _ARCHIVE))
        for a, b, score in near_duplicates(active)
    ]
    return result
