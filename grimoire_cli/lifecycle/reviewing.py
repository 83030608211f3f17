"""`mem review`'s queue, read from the catalog.

The entries needing attention (low, ineffective, expiring soon) are found
by SQL, as `check` finds them. The near-duplicate pairs of a category take
every active text of it compared (seconds at 10k entries), so each
category's pairs are kept in the catalog (derived state, like validate's
results) under a key of what they were computed from: the content hashes of
the files holding its active entries, how many of them each holds and their
catalog rows (the pairs name rows). With the files unchanged, time only takes
entries out of the active set in order of expiry (or gives them back), so
those counts name the set. An unchanged category is not compared again; a
write recomputes the categories it touched.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ..core.model import Entry
from ..storage.catalog.catalog import Catalog
from ..storage.catalog.queries import Filter
from ..storage.store import Store
from .rules import _ARCHIVE, _FIXES, NearDuplicate, Review, alike_pairs, queue_page, review_sections

THRESHOLD = 90  # fuzz.ratio of a near-duplicate pair
# Of the pairs kept: change it when what `alike_pairs` finds or how a pair is
# kept changes, so no catalog answers with pairs an older rule found.
# near-2: each category's pairs are one flat list (see `_computed`).
VERSION = "near-2"
# A kept pair's fields, flat: (rowid, rowid, score, id, id) after one another.
# One list of numbers and strings per category, not a list per pair: the
# review page read ~10k pairs a request, and their lists, each pair's tuple and
# every paired entry loaded whole lived long enough to reach the garbage
# collector's oldest generation, whose full collections (13-66 ms measured over the
# server's heap) made the page's p95 2.5x its p50. Numbers and strings are not
# tracked by the collector.
FIELDS = 5
# category -> (path, its active entries: how many, the first one's place, their rows) in file order
Spread = dict[str, list[tuple[str, int, int, str]]]
# Each category's pairs as kept (flat, FIELDS a pair) and what resolves them, in `rules.near_duplicates`' order
Pairs = list[tuple[list[Any], str]]
# A category's pairs computed, to keep under (its report's name, its key)
Unkept = tuple[str, str, list[Any]]


def review(store: Store, moment: datetime) -> Review:
    """What `mem review` lists at `moment`, as `rules.review` finds it over
    every active entry (in file order), without reading each one whole."""
    with store.reading():  # the queue's rows, the pairs' and their load read one state (storage/handed.py)
        attention, pairs, unkept = _queue(store, moment)
        loaded = store.load(list(dict.fromkeys(row for flat, _ in pairs for row in _rows(flat))))
    _keep(store, unkept)
    result = review_sections(attention, moment, _warn_days(store))
    result.duplicates = [
        NearDuplicate(loaded[a], loaded[b], score, fix)
        for flat, fix in pairs
        for a, b, score, _, _ in _each(flat)
        if a in loaded and b in loaded
    ]
    return result


def review_page(store: Store, moment: datetime, first: int, last: int | None) -> tuple[list[dict[str, Any]], int]:
    """`review(store, moment).page(first, last)`, reading whole only the
    entries shown: the queue's order and the pairs need only their ids."""
    with store.reading():  # the rows and their load read one state (storage/handed.py)
        attention, pairs, unkept = _queue(store, moment)
        sections = review_sections(attention, moment, _warn_days(store))
        queued: dict[str, Entry | int] = {}  # id -> its entry, or its row while only its id was needed
        for entry in sections.entries():
            queued.setdefault(entry.id, entry)
        for flat, _ in pairs:
            for k in range(0, len(flat), FIELDS):
                queued.setdefault(flat[k + 4], flat[k + 1])  # the pair's second entry, as `Review.entries` orders
        shown = list(queued.values())[first:last]
        loaded = store.load([row for row in shown if isinstance(row, int)])
    _keep(store, unkept)
    entries = [e for e in (row if isinstance(row, Entry) else loaded.get(row) for row in shown) if e is not None]
    wanted = {entry.id for entry in entries}
    near = [  # only the pairs of the entries shown: a page names a few hundred of ~10k
        (flat[k + 3], flat[k + 4], flat[k + 2], fix)
        for flat, fix in pairs
        for k in range(0, len(flat), FIELDS)
        if flat[k + 3] in wanted or flat[k + 4] in wanted
    ]
    return queue_page(entries, sections, near), len(queued)


def _warn_days(store: Store) -> int:
    return int(store.config.lifecycle["warn_before_archive_days"])


def _queue(store: Store, moment: datetime) -> tuple[list[Entry], Pairs, list[Unkept]]:
    """The active entries needing attention (low, ineffective, expiring soon)
    in file order, each category's near-duplicate pairs, kept or computed, and
    the computed ones to keep (`_keep`, once the block's reads are done)."""
    kinds = {name: spec.kind for name, spec in store.config.categories.items()}
    active = Filter(at=moment.timestamp())
    horizon = moment.timestamp() + _warn_days(store) * 86400

    def read(catalog: Catalog, paths: list[str]) -> tuple[list[Any], Spread, dict[str, str], list[str]]:
        return (
            catalog.needing_attention(paths, active, horizon),
            _spread(catalog.spread(paths, active), paths),
            catalog.file_hashes(paths),
            paths,
        )

    lights, spread, hashes, paths = store.ask(read, include_archive=False, skip_damaged=True)
    fixes = {name: _FIXES.get(kind, _ARCHIVE) for name, kind in kinds.items()}
    pairs: Pairs = []
    unkept: list[Unkept] = []
    for category, where in spread.items():
        flat, computed = _pairs(store, category, where, hashes, active)
        pairs.append((flat, fixes.get(category, _FIXES["note"])))
        unkept += [computed] if computed is not None else []
    loaded = store.load([light.rowid for light in lights])
    order = {path: n for n, path in enumerate(paths)}
    attention = sorted(
        (loaded[light.rowid] for light in lights if light.rowid in loaded),
        key=lambda entry: (order.get(entry.file or "", len(order)), entry.line or 0),
    )
    return attention, pairs, unkept


def _keep(store: Store, unkept: list[Unkept]) -> None:
    """Keep the pairs computed, after the block: a write inside it gives up the snapshot, and when another
    process changed entries meanwhile the rows held would be refused (storage/handed.py). A report keyed
    by the files' state that has changed since is kept for a state that no longer is, and read by none."""
    for name, key, found in unkept:
        store.reads.keep_report(name, key, found)


def _each(flat: list[Any]) -> Iterator[tuple[int, int, float, str, str]]:
    """The (rowid, rowid, score, id, id) of each pair of a kept flat list."""
    for k in range(0, len(flat), FIELDS):
        yield flat[k], flat[k + 1], flat[k + 2], flat[k + 3], flat[k + 4]


def _rows(flat: list[Any]) -> Iterator[int]:
    for k in range(0, len(flat), FIELDS):
        yield flat[k]
        yield flat[k + 1]


def _spread(rows: list[tuple[str, str, int, int, str]], paths: list[str]) -> Spread:
    """Each category's files in the store's order, the categories in the order
    their first active entry comes (as `rules.near_duplicates` meets them)."""
    order = {path: n for n, path in enumerate(paths)}
    out: Spread = {}
    for category, path, count, first, numbers in sorted(rows, key=lambda row: (order[row[1]], row[3])):
        out.setdefault(category, []).append((path, count, first, numbers))
    return out


def _pairs(
    store: Store, category: str, where: list[tuple[str, int, int, str]], hashes: dict[str, str], active: Filter
) -> tuple[list[Any], Unkept | None]:
    """One category's near-duplicate pairs (flat, FIELDS a pair), kept or computed; computed, the report to keep."""
    name = f"review near-duplicates of {category}"  # no file's path begins so: paths begin with the storage folder
    made = json.dumps([VERSION, THRESHOLD, [[path, hashes.get(path), count, rows] for path, count, _, rows in where]])
    key = hashlib.blake2b(made.encode(), digest_size=20).hexdigest()
    kept = store.reads.report(name, key)
    if isinstance(kept, list):
        return kept, None
    found = _computed(store, category, active)
    return found, (name, key, found)


def _computed(store: Store, category: str, active: Filter) -> list[Any]:
    """One category's pairs, its active entries' texts compared in file order:
    (rowid, rowid, score, id, id) of each, flat. The ids are the rows' while
    the report's key holds (it names the files' contents)."""
    chosen = active.but(categories=[category])

    def read(catalog: Catalog, paths: list[str]) -> tuple[list[tuple[int, str, int, str]], dict[int, str | None]]:
        placed = catalog.placed(paths, chosen)
        order = {path: n for n, path in enumerate(paths)}
        placed.sort(key=lambda row: (order[row[1]], row[2]))
        return placed, catalog.norms([row[0] for row in placed])

    placed, norms = store.ask(read, include_archive=False, skip_damaged=True)
    texts = [norms.get(rowid) or "" for rowid, _, _, _ in placed]
    flat: list[Any] = []
    for i, j, score in alike_pairs(texts, THRESHOLD):
        flat += (placed[i][0], placed[j][0], score, placed[i][3], placed[j][3])
    return flat
