"""Ranked retrieval: BM25 (SQLite FTS5, porter stemmer) with typo tolerance,
blended with recency, confidence, importance and effectiveness tier.

The blend, per candidate that matched at least one query term:

    relevance = bm25 / best bm25 of this query          (0..1]
    recency   = 0.5 ** (age_days / 30)                  (1 today, 0.5 a month ago)
    prior     = 0.10 * (confidence - 0.5)
              + 0.05 * (importance - 5) / 5
              + tier bonus (high +0.10, medium +0.03, low -0.05, ineffective -0.15)
    score     = (1 - w) * relevance + w * recency + prior   (w = retrieval.recency_weight)

Relevance dominates; the other parts order near-ties. Whole-text fuzzy
ratios (rapidfuzz WRatio) are never used: measured, they rank like random.

The index is the catalog's FTS5 table, kept between commands; the blend
runs in SQL (`Catalog.rank`), so only the hits asked for are decoded. The
best bm25 is taken over the entries that pass the filters; the vocabulary
for typo correction is every word of every entry in the catalog.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from .model import Entry

if TYPE_CHECKING:
    from .store import Store

TIER_BONUS = {"high": 0.10, "medium": 0.03, "unrated": 0.0, "low": -0.05, "ineffective": -0.15}
FIELD_WEIGHTS = (1.0, 1.0, 0.5)  # summary, content, tags: bm25() column weights
_WORD_RE = re.compile(r"\w+", re.UNICODE)
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between both
    but by can could did do does doing down during each few for from further had has have having he her here hers
    herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves""".split()
)


class Hit:
    """One ranked entry, its score and the score's parts."""

    __slots__ = ("entry", "score", "parts")

    def __init__(self, entry: Entry, score: float, parts: dict[str, float] | None = None):
        self.entry = entry
        self.score = score
        self.parts = {} if parts is None else parts

    def __repr__(self) -> str:
        return f"Hit(entry={self.entry!r}, score={self.score!r}, parts={self.parts!r})"

    def to_dict(self, explain: bool = False) -> dict:
        data = self.entry.to_dict()
        data["score"] = round(self.score, 6)
        if explain:
            data["explain"] = {k: round(v, 6) for k, v in self.parts.items()}
        return data


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(text)]


def terms(store: "Store", text: str) -> list[str]:
    """Query terms: stop words dropped, unknown words mapped to a near vocabulary word."""
    raw = [w for w in words(text) if w not in STOP_WORDS] or words(text)
    vocabulary: list[str] | None = None
    out = []
    for word in raw:
        if len(word) >= 4 and not word.isdigit() and not store.knows(word):
            if vocabulary is None:
                vocabulary = store.vocabulary()
            word = _nearest(word, vocabulary) or word
        out.append(word)
    return list(dict.fromkeys(out))


def expression(store: "Store", text: str) -> str | None:
    """The FTS5 query for a text: its terms OR-ed, each quoted."""
    found = terms(store, text)
    if not found:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in found)


def _nearest(word: str, vocabulary: list[str]) -> str | None:
    """The vocabulary word one edit away (a swap counts as one), if any."""
    if not vocabulary:
        return None
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    found = process.extractOne(word, vocabulary, scorer=OSA.distance, score_cutoff=1)
    return found[0] if found else None


def recency_of(born: float | None, epoch: float) -> float:
    """0.5 ** (age in days / 30); 0 when the age is unknown. Called from SQL."""
    if born is None:
        return 0.0
    return 0.5 ** (max(0.0, (epoch - born) / 86400) / 30)


class Scored(NamedTuple):
    """A ranked catalog row, not yet loaded."""

    rowid: int
    id: str
    score: float
    parts: dict[str, float]


class Ranking(list):
    """Scored rows best first; `total` counts every match, also those past a limit."""

    total: int = 0


def ranked(store: "Store", text: str, where: str, params: dict, moment: datetime, recency_weight: float,
           limit: int | None, include_archive: bool) -> Ranking:
    """Entries passing the filter that match the text, best first (not loaded)."""
    out = Ranking()
    query = expression(store, text)
    if query is None:
        return out
    rows = store.rank(query, FIELD_WEIGHTS, where, params, moment.timestamp(), recency_weight, TIER_BONUS, limit, include_archive)
    out.extend(Scored(rowid, entry_id, score, {"bm25": b, "relevance": rel, "recency": rec, "prior": pri})
               for rowid, entry_id, b, rel, rec, pri, score, _ in rows)
    out.total = rows[0][7] if rows else 0
    return out


def hits(store: "Store", scored: list[Scored]) -> list[Hit]:
    """Load the entries of scored rows, keeping their order."""
    entries = store.load([s.rowid for s in scored])
    return [Hit(entries[s.rowid], s.score, {**s.parts, "tier": TIER_BONUS.get(entries[s.rowid].tier, 0.0)})
            for s in scored if s.rowid in entries]
