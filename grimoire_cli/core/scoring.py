"""The pure parts of ranking, shared by the catalog (which indexes and
scores in SQL) and `search` (which builds queries): how text splits into
words, which words are too common to search, how recency decays, and the
weights of the blend (`search` documents the formula).
"""

from __future__ import annotations

import re

TIER_BONUS = {"high": 0.10, "medium": 0.03, "unrated": 0.0, "low": -0.05, "ineffective": -0.15}
FIELD_WEIGHTS = (1.0, 1.0, 0.5, 1.0)  # summary, content, tags, aliases: bm25() column weights
RECENCY_HALF_LIFE_DAYS = 30

# Neighbours (issue 38.3): a match written right before or after one of the
# query's best matches, in the same file and sitting, is lifted by part of
# that match's relevance: a question's answer is often the next entry, in
# other words than the question's. Measured on LoCoMo dev (benchmarks/README.md);
# wider, heavier or lent by more matches lowered a category.
NEIGHBOUR_WEIGHT = 0.2  # of a lending match's relevance, added per lender
NEIGHBOUR_SPAN = 3  # entries either side in the file
NEIGHBOUR_LENDERS = 20  # the best matches by the blend that lend
NEIGHBOUR_WINDOW_SECONDS = 3600  # written within an hour of each other: one sitting

# Coverage (issue 38.3, `search.covered`): the best matches gain
# retrieval.coverage_weight × the share of the query's terms each holds, so an
# entry holding several of them passes one that repeats a single rare one.
# Only the best COVERAGE_POOL by the rest of the score are re-ordered (one
# index lookup per term and match), whatever the limit: 20 or 50 gave LoCoMo
# dev the same R@5 and MRR and a lower R@10.
COVERAGE_POOL = 10

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
    """Lowercased words with Latin accents folded (`fold`), as the
    vocabulary for typo correction keeps them."""
    if text.isascii():  # lowercasing ASCII moves no word boundary: one pass
        return _WORD_RE.findall(text.lower())
    found = _WORD_RE.findall(text)
    # Lowered together, in C: a space between words ends a word for the one
    # context-dependent rule (Greek final sigma) as a word's end does, and
    # no character lowers to a space.
    return fold(" ".join(found).lower()).split(" ") if found else []


_FOLDED: dict[int, str] | None = None
# Latin-1 Supplement to Latin Extended-B, and Latin Extended Additional (Vietnamese).
_LATIN_RANGES = (range(0x00C0, 0x0250), range(0x1E00, 0x1F00))


def fold(text: str) -> str:
    """Latin letters without their accents (`café` -> `cafe`, `ễ` -> `e`),
    as the index's tokenizer folds them (remove_diacritics 2), so a word typed
    without its accents is a known word, not one the typo correction maps to
    its unaccented neighbour (`creme` to `crime` instead of `crème`)."""
    global _FOLDED
    if _FOLDED is None:
        _FOLDED = _folding_table()
    return text.translate(_FOLDED)


def _folding_table() -> dict[int, str]:
    """Each Latin letter that is an ASCII letter and combining marks only."""
    import unicodedata

    table = {}
    for code in (c for r in _LATIN_RANGES for c in r):
        parts = unicodedata.normalize("NFD", chr(code))
        if len(parts) > 1 and parts[0].isascii() and all(unicodedata.combining(c) for c in parts[1:]):
            table[code] = parts[0]
    return table


# A word joined by `_`, `-` or `.`, or with a lower-to-upper case change
# (camelCase): the compounds whose parts and joined form are also indexed.
_TOKEN_RE = re.compile(r"\w+(?:[.\-]\w+)*")
_COMPOUND_HINT_RE = re.compile(r"\w[.\-_]\w|[a-z][A-Z]")
_CAMEL_RE = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_PART_SPLIT_RE = re.compile(r"[_.\-\s]+")


# Scripts written without spaces between words (Han, kana, Thai, Lao,
# Khmer, Myanmar): the tokenizer keeps a whole run as one token, so a word
# inside it is found through the run's character pairs instead.
SPACELESS_RE = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]+"
)


def grams(run: str) -> list[str]:
    """A spaceless run's overlapping character pairs, then its last character
    (so that a one-character query, asked as a prefix, finds every character)."""
    return [run[i : i + 2] for i in range(len(run) - 1)] + [run[-1]]


def aliases(text: str) -> str:
    """What the index holds for a text beside the text: each identifier's
    joined form, and the parts of a camelCase one (the tokenizer already
    splits the others at `_`, `-` and `.`: indexing their parts again would
    count those words twice, which measurably lowered LoCoMo); and the
    `grams` of each run of a spaceless script."""
    out = []
    for parts, camel in identifiers(text):
        if camel:
            out.extend(parts)
        out.append("".join(parts))
    if not text.isascii():
        for run in SPACELESS_RE.findall(text):
            out.extend(grams(run))
    return " ".join(out)


def identifiers(text: str) -> list[tuple[list[str], bool]]:
    """The parts (lowercased) of each identifier in a text: snake_case,
    camelCase, kebab-case and dotted keys, and each compound segment of a
    dotted key on its own (`retrieval.recency_weight` also gives
    `recency_weight`), so that `create shipment`, `create_shipment` and
    `createShipment` find each other; each with whether it has a camelCase
    boundary. Compounds of digits alone (dates, versions) are left out."""
    if not _COMPOUND_HINT_RE.search(text):
        return []  # most prose, found in one pass: a cold build indexes every entry
    out: list[tuple[list[str], bool]] = []
    for match in _TOKEN_RE.finditer(text):
        token = match.group()
        if not _COMPOUND_HINT_RE.search(token):
            continue
        for piece in [token, *(token.split(".") if "." in token else [])]:
            split = _CAMEL_RE.sub(" ", piece)
            parts = [p.lower() for p in _PART_SPLIT_RE.split(split) if p]
            if len(parts) > 1 and not "".join(parts).isdigit() and all(parts != seen for seen, _ in out):
                out.append((parts, split != piece))
    return out


def recency_of(born: float | None, epoch: float) -> float:
    """0.5 ** (age in days / 30); 0 when the age is unknown. Also called from SQL."""
    if born is None:
        return 0.0
    return float(0.5 ** (max(0.0, (epoch - born) / 86400) / RECENCY_HALF_LIFE_DAYS))
