"""The pure parts of ranking, shared by the catalog (which indexes and
scores in SQL) and `search` (which builds queries): how text splits into
words, which words are too common to search, how recency decays, and the
weights of the blend (`search` documents the formula).
"""

from __future__ import annotations

import re

TIER_BONUS = {"high": 0.10, "medium": 0.03, "unrated": 0.0, "low": -0.05, "ineffective": -0.15}
FIELD_WEIGHTS = (1.0, 1.0, 0.5)  # summary, content, tags: bm25() column weights
RECENCY_HALF_LIFE_DAYS = 30

_WORD_RE = re.compile(r"\w+", re.UNICODE)
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between both
    but by can could did do does doing down during each few for from further had has have having he her here hers
    herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves""".split()
)


def words(text: str) -> list[str]:
    """Lowercased words, as the vocabulary for typo correction keeps them."""
    if text.isascii():  # lowercasing ASCII moves no word boundary: one pass
        return _WORD_RE.findall(text.lower())
    found = _WORD_RE.findall(text)
    # Lowered together, in C: a space between words ends a word for the one
    # context-dependent rule (Greek final sigma) as a word's end does, and
    # no character lowers to a space.
    return " ".join(found).lower().split(" ") if found else []


def recency_of(born: float | None, epoch: float) -> float:
    """0.5 ** (age in days / 30); 0 when the age is unknown. Also called from SQL."""
    if born is None:
        return 0.0
    return 0.5 ** (max(0.0, (epoch - born) / 86400) / RECENCY_HALF_LIFE_DAYS)
