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
from datetime import datetime
from typing import Any

from ..storage.catalog.catalog import Catalog
from ..storage.catalog.queries import Filter
from ..storage.store import Store
from .rules import _ARCHIVE, _FIXES, NearDuplicate, Review, alike_pairs, review_sections

THRESHOLD = 90  # fuzz.ratio of a near-duplicate pair
# Of the pairs kept: change it when what `alike_pairs` finds changes, so no
# catalog answers with pairs an older rule found.
VERSION = "near-1"
# category -> (path, its active entries: how many, the first one's place, their rows) in file order
Spread = dict[str, list[tuple[str, int, int, str]]]


def review(store: Store, moment: datetime) -> Review:
    """What `mem review` lists at `moment`, as `rules.review` finds it over
    every active entry (in file order), without reading each one whole."""
    warn_days = store.config.lifecycle["warn_before_archive_days"]
    kinds = {name: spec.kind for name, spec in store.config.categories.items()}
    active = Filter(at=moment.timestamp())
    horizon = moment.timestamp() + warn_days * 86400

    def read(catalog: Catalog, paths: list[str]) -> tuple[list[Any], Spread, dict[str, str], list[str]]:
        return (
            catalog.needing_attention(paths, active, horizon),
            _spread(catalog.spread(paths, active), paths),
            catalog.file_hashes(paths),
            paths,
        )

    lights, spread, hashes, paths = store.ask(read, include_archive=False, skip_damaged=True)
    fixes = {name: _FIXES.get(kind, _ARCHIVE) for name, kind in kinds.items()}
    pairs = [
        (a, b, score, fixes.get(category, _FIXES["note"]))
        for category, where in spread.items()
        for a, b, score in _pairs(store, category, where, hashes, active)
    ]
    loaded = store.load(list(dict.fromkeys([*(light.rowid for light in lights), *(r for p in pairs for r in p[:2])])))
    order = {path: n for n, path in enumerate(paths)}
    attention = sorted(
        (loaded[light.rowid] for light in lights if light.rowid in loaded),
        key=lambda entry: (order.get(entry.file or "", len(order)), entry.line or 0),
    )
    result = review_sections(attention, moment, warn_days)
    result.duplicates = [
        NearDuplicate(loaded[a], loaded[b], score, fix) for a, b, score, fix in pairs if a in loaded and b in loaded
    ]
    return result


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
) -> list[tuple[int, int, float]]:
    """(rowid, rowid, score) of one category's near-duplicate pairs, kept or computed."""
    name = f"review near-duplicates of {category}"  # no file's path begins so: paths begin with the storage folder
    made = json.dumps([VERSION, THRESHOLD, [[path, hashes.get(path), count, rows] for path, count, _, rows in where]])
    key = hashlib.blake2b(made.encode(), digest_size=20).hexdigest()
    kept = store.reads.report(name, key)
    if kept is not None:
        return [(a, b, score) for a, b, score in kept]
    found = _computed(store, category, active)
    store.reads.keep_report(name, key, found)
    return found


def _computed(store: Store, category: str, active: Filter) -> list[tuple[int, int, float]]:
    """One category's pairs, its active entries' texts compared in file order."""
    chosen = active.but(categories=[category])

    def read(catalog: Catalog, paths: list[str]) -> tuple[list[tuple[int, str, int]], dict[int, str | None]]:
        placed = catalog.placed(paths, chosen)
        order = {path: n for n, path in enumerate(paths)}
        placed.sort(key=lambda row: (order[row[1]], row[2]))
        return placed, catalog.norms([row[0] for row in placed])

    placed, norms = store.ask(read, include_archive=False, skip_damaged=True)
    texts = [norms.get(rowid) or "" for rowid, _, _ in placed]
    return [(placed[i][0], placed[j][0], score) for i, j, score in alike_pairs(texts, THRESHOLD)]
