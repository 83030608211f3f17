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
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable

from .model import Entry

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


@dataclass
class Hit:
    entry: Entry
    score: float
    parts: dict[str, float] = field(default_factory=dict)

    def to_dict(self, explain: bool = False) -> dict:
        data = self.entry.to_dict()
        data["score"] = round(self.score, 6)
        if explain:
            data["explain"] = {k: round(v, 6) for k, v in self.parts.items()}
        return data


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(text)]


class Index:
    """An in-memory FTS5 index over a list of entries."""

    def __init__(self, entries: Iterable[Entry]):
        self.entries = list(entries)
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE fts USING fts5(summary, content, tags, tokenize='porter unicode61')")
        self.db.executemany(
            "INSERT INTO fts(rowid, summary, content, tags) VALUES (?, ?, ?, ?)",
            [(i, e.summary, e.content if e.content != e.summary else "", " ".join(e.tags)) for i, e in enumerate(self.entries)],
        )
        self._known: set[str] | None = None
        self._vocabulary: list[str] = []

    def _words_known(self) -> set[str]:
        """Every word of the indexed texts (built on the first query)."""
        if self._known is None:
            known: set[str] = set()
            for entry in self.entries:
                known.update(words(entry.summary))
                known.update(words(entry.content))
                known.update(entry.tags)
            self._known = known
            self._vocabulary = sorted(known)
        return self._known

    def terms(self, text: str) -> list[str]:
        """Query terms: stop words dropped, unknown words mapped to a near vocabulary word."""
        raw = [w for w in words(text) if w not in STOP_WORDS] or words(text)
        known = self._words_known()
        out = []
        for word in raw:
            if word not in known and len(word) >= 4 and not word.isdigit():
                word = _nearest(word, self._vocabulary) or word
            out.append(word)
        return list(dict.fromkeys(out))

    def bm25(self, text: str) -> dict[int, float]:
        """rowid -> positive BM25 relevance for every entry matching a term."""
        terms = self.terms(text)
        if not terms:
            return {}
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        weights = ", ".join(str(w) for w in FIELD_WEIGHTS)
        try:
            rows = self.db.execute(f"SELECT rowid, bm25(fts, {weights}) FROM fts WHERE fts MATCH ?", (match,)).fetchall()
        except sqlite3.OperationalError:
            return {}
        return {rowid: -score for rowid, score in rows}


def _nearest(word: str, vocabulary: list[str]) -> str | None:
    """The vocabulary word one edit away (a swap counts as one), if any."""
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    found = process.extractOne(word, vocabulary, scorer=OSA.distance, score_cutoff=1)
    return found[0] if found else None


def prior(entry: Entry) -> float:
    return 0.10 * (entry.confidence - 0.5) + 0.05 * (entry.importance - 5) / 5 + TIER_BONUS.get(entry.tier, 0.0)


def recency(entry: Entry, moment: datetime) -> float:
    age = entry.age_days(moment)
    return 0.0 if age is None else 0.5 ** (max(0.0, age) / 30)


def rank(index: Index, text: str, moment: datetime, recency_weight: float, limit: int) -> list[Hit]:
    relevance = index.bm25(text)
    if not relevance:
        return []
    best = max(relevance.values()) or 1.0
    hits = []
    for rowid, value in relevance.items():
        entry = index.entries[rowid]
        rel = value / best
        rec = recency(entry, moment)
        pri = prior(entry)
        score = (1 - recency_weight) * rel + recency_weight * rec + pri
        hits.append(Hit(entry, score, {"bm25": value, "relevance": rel, "recency": rec, "prior": pri, "tier": TIER_BONUS.get(entry.tier, 0.0)}))
    hits.sort(key=lambda h: (-h.score, h.entry.id))
    return hits[:limit]
