"""Ranked retrieval: BM25 (SQLite FTS5, porter stemmer) with typo tolerance,
blended with recency, confidence, importance and effectiveness tier.

The blend, per candidate that matched at least one query term:

    relevance = bm25 / best bm25 of this query          (0..1]
    recency   = 0.5 ** (age_days / 30)                  (1 today, 0.5 a month ago)
    prior     = 0.10 * (confidence - 0.5)
              + 0.05 * (effective importance - 5) / 5   (decayed: settings.Decay)
              + tier bonus (high +0.10, medium +0.03, low -0.05, ineffective -0.15)
    blend     = (1 - w) * relevance + w * recency + prior   (w = retrieval.recency_weight)
    neighbours = 0.2 * the relevance of each of the 20 best matches by the blend
                written within 3 entries of it in its file and an hour of it
    coverage  = c * the share of the query's terms it holds, for the 10 best
                by blend + neighbours                   (c = retrieval.coverage_weight)
    score     = blend + neighbours + coverage

Relevance dominates; the other parts order near-ties. Neighbours lift the
matches written in the same sitting as the best ones (a question's answer is
often the next entry, worded unlike the question); they never add an entry
that does not match (`scoring.NEIGHBOUR_WEIGHT` and the rest). Coverage
re-orders the best few after the SQL (`covered`). Whole-text fuzzy
ratios (rapidfuzz WRatio) are never used: they rank like random (the
grimoire records the measurement).

The index is the catalog's FTS5 table, kept between commands; the blend
runs in SQL (`queries.Queries.rank`, weights in `scoring`), so only the
hits asked for are decoded. The best bm25 is taken over the entries that
pass the filters; the vocabulary for typo correction is every word of
every entry in the catalog. With semantic search on (`ranked(semantic=)`,
retrieval.semantic), this ranking is fused with the entries nearest the
text by meaning (semantic.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from ..core.model import Entry
from ..core.scoring import COVERAGE_POOL, SPACELESS_RE, STOP_WORDS, TIER_BONUS, grams, identifiers, recency_of, words
from ..storage.catalog.queries import STATES, Filter, Order, Ranked

if TYPE_CHECKING:
    from ..storage.store import Store


class Hit:
    """One ranked entry, its score and the score's parts."""

    __slots__ = ("entry", "parts", "scope", "score")

    def __init__(self, entry: Entry, score: float, parts: dict[str, float] | None = None, scope: str | None = None):
        self.entry = entry
        self.score = score
        self.parts = {} if parts is None else parts
        self.scope = scope  # set by a query across scopes

    def __repr__(self) -> str:
        return f"Hit(entry={self.entry!r}, score={self.score!r}, parts={self.parts!r})"

    def to_dict(self, explain: bool = False, moment: datetime | None = None) -> dict:
        """The entry object with its `score` (and `explain`: the parts); with
        `moment`, also its state and tier (`Entry.view`)."""
        data = self.entry.view(moment) if moment is not None else self.entry.to_dict()
        data["score"] = round(self.score, 6)
        if self.scope is not None:
            data["scope"] = self.scope
        if explain:
            data["explain"] = {k: round(v, 6) for k, v in self.parts.items()}
        return data


# Shorter words are not typo-corrected (one edit away is most of the
# vocabulary) and, unknown, are searched as prefixes only from this length.
_MIN_CORRECTED = 4
_MIN_PREFIX = 2


def terms(store: Store, text: str) -> list[str]:
    """Query terms as FTS5 fragments: stop words dropped, unknown words mapped
    to a near vocabulary word; an unknown word with no near one (a partial
    word, or one too short to correct) that matches nothing as it is (not
    even through the stemmer) is searched as a prefix; a camelCase or
    snake_case identifier (`scoring.identifiers`) as its parts and its joined
    form; a run of a script without spaces as its character pairs."""
    compounds = identifiers(text)
    joined = {"".join(parts) for parts, _ in compounds}
    raw = [w for w in words(text) if w not in STOP_WORDS] or words(text)
    snake = {w.replace("_", "") for w in raw if "_" in w} & joined  # asked below as their parts and joined form
    vocabulary: list[str] | None = None
    out: list[str] = []
    for word in raw:
        if word.replace("_", "") in snake:
            continue
        if not word.isascii() and SPACELESS_RE.search(word):
            # Its runs are asked below, whole (a Thai word splits at its tone marks).
            out.extend(_quoted(piece) for piece in SPACELESS_RE.split(word) if piece)
            continue
        term = _quoted(word)
        if word.isdigit() or _known(store, word):
            out.append(term)
            continue
        nearest = None
        if len(word) >= _MIN_CORRECTED:
            if vocabulary is None:
                vocabulary = store.reads.vocabulary()
            nearest = _nearest(word, vocabulary)
        if nearest is not None:
            term = _quoted(nearest)
        elif len(word) >= _MIN_PREFIX and not store.reads.matches_any(term):
            term += "*"
        out.append(term)
    for parts, camel in compounds:
        # A camelCase or snake_case word finds its parts written next to each
        # other (a phrase) and its joined form. Kebab-case and dotted words
        # are already asked as their words, which find every spelling (the
        # index holds joined and camelCase parts); asking the joined form too
        # counted them twice and lowered LoCoMo.
        if camel or "".join(parts) in snake:
            out.extend((_quoted(" ".join(parts)), _quoted("".join(parts))))
    if not text.isascii():
        for run in SPACELESS_RE.findall(text):
            # As the index holds it (`scoring.aliases`): the phrase of its
            # character pairs; a lone character as a prefix of them.
            out.append(_quoted(" ".join(grams(run)[:-1])) if len(run) > 1 else _quoted(run) + "*")
    return list(dict.fromkeys(out))


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def _known(store: Store, word: str) -> bool:
    """Whether a word is in the vocabulary (active and archived entries); the
    archive is read only for a word the active files do not hold (a first
    command after a clone need not index an archive to run a query)."""
    if store.reads.knows(word, include_archive=False):
        return True
    return store.reads.knows(word)


def expression(store: Store, text: str) -> str | None:
    """The FTS5 query for a text: its terms OR-ed."""
    found = terms(store, text)
    if not found:
        return None
    return " OR ".join(found)


def _nearest(word: str, vocabulary: list[str]) -> str | None:
    """The vocabulary word one edit away (a swap counts as one), if any."""
    if not vocabulary:
        return None
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    found = process.extractOne(word, vocabulary, scorer=OSA.distance, score_cutoff=1)
    return found[0] if found else None


class Hits(list):
    """Hits best first. When there are none, `filtered_out` says how many
    entries match the text but were left out, per filter that left them out
    (`confidence`, `expired`, `superseded`, `archived`, `category`, `tag`,
    `time`, `tier`, `importance`;
    each counted with only that filter lifted; `together` when no one filter
    alone let any through, but all lifted at once do). `notes`: what the
    ranking fell back on (semantic search unavailable), one line each; Hits
    made from other Hits keep theirs."""

    def __init__(
        self,
        found: Iterable[Hit] = (),
        filtered_out: dict[str, int] | None = None,
        notes: list[str] | None = None,
    ):
        super().__init__(found)
        self.filtered_out: dict[str, int] = {} if filtered_out is None else filtered_out
        self.notes: list[str] = list(getattr(found, "notes", ())) if notes is None else notes


def filtered_out(
    store: Store, text: str, chosen: Filter, *, recency_weight: float, include_archive: bool
) -> dict[str, int]:
    """How many entries match `text` outside `chosen`, per filter that kept them out.
    Only asked when a query found nothing, to say why."""
    lifted = {}
    if chosen.min_confidence is not None:
        lifted["confidence"] = (chosen.but(min_confidence=None, floors={}), include_archive)
    for state in ("expired", "superseded"):
        if state not in chosen.states:
            lifted[state] = (chosen.but(states=chosen.states | {state}), include_archive)
    if "archived" not in chosen.states:
        lifted["archived"] = (chosen.but(states=chosen.states | {"archived"}), True)
    if chosen.categories or chosen.excluded:
        lifted["category"] = (chosen.but(categories=(), excluded=()), include_archive)
    if chosen.tags:
        lifted["tag"] = (chosen.but(tags=()), include_archive)
    if chosen.since is not None or chosen.until is not None:
        lifted["time"] = (chosen.but(since=None, until=None), include_archive)
    if chosen.tier is not None:
        lifted["tier"] = (chosen.but(tier=None), include_archive)
    if chosen.min_importance is not None:
        lifted["importance"] = (chosen.but(min_importance=None), include_archive)
    if chosen.metadata:
        lifted["metadata"] = (chosen.but(metadata=()), include_archive)

    def matches(wider: Filter, archive: bool) -> int:
        return ranked(store, text, wider, recency_weight=recency_weight, limit=1, include_archive=archive).total

    counts = {reason: n for reason, (wider, archive) in lifted.items() if (n := matches(wider, archive))}
    if not counts and len(lifted) > 1:
        everything = chosen.but(
            min_confidence=None,
            floors={},
            states=STATES,
            categories=(),
            excluded=(),
            tags=(),
            since=None,
            until=None,
            tier=None,
            min_importance=None,
            metadata=(),
        )
        if n := matches(everything, True):
            counts["together"] = n
    return counts


class Ranking(list):
    """Ranked rows (`queries.Ranked`) best first, not yet loaded; `total`
    counts every match, also those past a limit; `notes` as `Hits.notes`."""

    total: int = 0

    def __init__(self, rows: Iterable[Ranked] = (), total: int = 0, notes: list[str] | None = None):
        super().__init__(rows)
        self.total = total
        self.notes: list[str] = [] if notes is None else notes


def ranked(
    store: Store,
    text: str,
    chosen: Filter,
    *,
    recency_weight: float,
    limit: int | None,
    include_archive: bool,
    query: str | None = None,
    semantic: bool | None = False,
) -> Ranking:
    """The chosen entries that match the text, best first (not loaded);
    `query`: the text's FTS5 expression, when the caller has worked it out.
    `semantic`: fused with the entries nearest the text (retrieval/semantic.py;
    None: as retrieval.semantic says)."""
    if semantic is None:
        semantic = bool(store.config.retrieval["semantic"])
    if semantic:
        return _hybrid(store, text, chosen, recency_weight, limit, include_archive, query)
    return _lexical(store, text, chosen, recency_weight, limit, include_archive, query)


def _hybrid(
    store: Store,
    text: str,
    chosen: Filter,
    recency_weight: float,
    limit: int | None,
    include_archive: bool,
    query: str | None,
) -> Ranking:
    """The lexical ranking fused with the semantic one; the lexical alone, with a note, when no model can serve."""
    from .semantic import CANDIDATES, fused, model_of, nearest

    model = model_of(store)
    if isinstance(model, str):
        lexical = _lexical(store, text, chosen, recency_weight, limit, include_archive, query)
        lexical.notes.append(model)
        return lexical
    near = nearest(store, model, text, chosen, include_archive=include_archive)
    wider = None if limit is None else max(limit, CANDIDATES)
    lexical = _lexical(store, text, chosen, recency_weight, wider, include_archive, query)
    rows, total = fused(lexical, lexical.total, near, float(store.config.retrieval["semantic_weight"]), limit)
    return Ranking(rows, total)


def _lexical(
    store: Store,
    text: str,
    chosen: Filter,
    recency_weight: float,
    limit: int | None,
    include_archive: bool,
    query: str | None,
) -> Ranking:
    out = Ranking()
    query = query or expression(store, text)
    if query is None:
        return out
    weight = float(store.config.retrieval["coverage_weight"])
    # Coverage re-orders the best COVERAGE_POOL, so as many are read whatever the limit.
    wider = limit if not weight or limit is None else max(limit, COVERAGE_POOL)
    rows, total = store.reads.ranked(
        query, chosen, recency_weight=recency_weight, limit=wider, include_archive=include_archive
    )
    if weight and rows:
        rows = covered(store, query, rows, weight, include_archive=include_archive)
    out.extend(rows if limit is None else rows[:limit])
    out.total = total
    return out


# A term of `expression`: one double-quoted FTS5 string ("" inside for a
# quote), a prefix query with its `*`; terms are joined by OR.
_TERM_RE = re.compile(r'"(?:[^"]|"")*"\*?')


def covered(store: Store, query: str, rows: list[Ranked], weight: float, *, include_archive: bool) -> list[Ranked]:
    """Coverage (issue 38.3): the best `scoring.COVERAGE_POOL` rows gain
    `weight` × the share of the FTS5 `query`'s terms each holds
    (`Ranked.coverage`), and are sorted again. BM25 adds up what each term
    is worth, so an entry repeating one rare word of a question can pass
    one that holds several of them, which more often answers it. A query
    of one term orders nothing: nothing is added."""
    terms = list(dict.fromkeys(_TERM_RE.findall(query)))
    if len(terms) < 2:
        return rows
    pool, rest = rows[:COVERAGE_POOL], rows[COVERAGE_POOL:]
    held = store.reads.terms_held(terms, [row.rowid for row in pool], include_archive=include_archive)
    for row in pool:
        row.coverage = weight * held.get(row.rowid, 0) / len(terms)
        row.score += row.coverage
    return sorted(pool, key=lambda row: (-row.score, row.id, row.rowid)) + rest


def hits(store: Store, scored: list[Ranked]) -> Hits:
    """Load the entries of ranked rows, keeping their order (and a `Ranking`'s notes)."""
    entries = store.load([s.rowid for s in scored])
    return Hits(
        (Hit(entries[s.rowid], s.score, _parts(s, entries[s.rowid])) for s in scored if s.rowid in entries),
        notes=list(getattr(scored, "notes", ())),
    )


def _parts(scored: Ranked, entry: Entry) -> dict[str, float]:
    """The score's parts; a hybrid ranking's row (semantic.Fused) adds its
    ranks and cosine, and has no lexical parts when only its meaning found it."""
    fusion: dict[str, float] = getattr(scored, "fusion", {})
    tier = {"tier": TIER_BONUS.get(entry.tier, 0.0)}
    if fusion and "lexical_rank" not in fusion:
        return {**tier, **fusion}
    lexical = {
        "bm25": scored.bm25,
        "relevance": scored.relevance,
        "recency": scored.recency,
        "prior": scored.prior,
        "neighbours": scored.neighbours,
        "coverage": scored.coverage,
    }
    return {**lexical, **tier, **fusion}


def ranked_or_newest(
    store: Store, text: str | None, chosen: Filter, moment: datetime, *, recency_weight: float, limit: int
) -> list[Hit]:
    """The chosen entries that match `text`, best first (BM25 blended with
    recency, as `mem query`); without a text, newest first, each scored by
    its recency alone (`mem episodes`). Its reads see one state (`Store.reading`)."""
    with store.reading():
        if text is not None and text.strip():
            return hits(
                store, ranked(store, text, chosen, recency_weight=recency_weight, limit=limit, include_archive=False)
            )
        rowids = store.ordered(chosen, Order.NEWEST, limit)
        loaded = store.load(rowids)
    epoch = moment.timestamp()
    return [
        Hit(loaded[r], recency_of(loaded[r].born, epoch), {"recency": recency_of(loaded[r].born, epoch)})
        for r in rowids
        if r in loaded
    ]
