"""`mem stats`: counts per category and state, tiers, oldest and newest, size."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..storage.catalog.queries import STATES, Filter
from ..storage.store import Store


class Stats:
    """The figures of `mem stats`; `lines()` is its text, `to_dict()` its JSON."""

    __slots__ = (
        "accessed",
        "accesses",
        "bytes",
        "cache",
        "categories",
        "entries",
        "newest",
        "oldest",
        "split",
        "tiers",
    )

    def __init__(
        self,
        entries: int,
        categories: dict[str, dict[str, int]],
        tiers: dict[str, int],
        oldest: str | None,
        newest: str | None,
        size: int,
        accessed: int = 0,
        accesses: int = 0,
        split: dict[str, int] | None = None,
        cache: dict[str, Any] | None = None,
    ):
        self.entries, self.categories, self.tiers = entries, categories, tiers
        self.oldest, self.newest, self.bytes = oldest, newest, size
        # Reads by `recall` (kept in the catalog): entries read at least once, and reads in all.
        self.accessed, self.accesses = accessed, accesses
        # Active entries by memory tier (tiers.py): hot ones `mem context` may inject, long-term ones found by query.
        self.split = split or {"hot": 0, "long": 0}
        # The auto-cache's hits and misses, in all and per category (kinds/facts.cache_counts).
        self.cache = cache or {"hits": 0, "misses": 0, "categories": {}}

    def to_dict(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "categories": self.categories,
            "tiers": self.tiers,
            "oldest": self.oldest,
            "newest": self.newest,
            "bytes": self.bytes,
            "accessed": self.accessed,
            "accesses": self.accesses,
            "split": self.split,
            "cache": self.cache,
        }

    def lines(self) -> list[str]:
        out = [f"{self.entries} entr{'y' if self.entries == 1 else 'ies'}, {self.bytes:,} bytes on disk"]
        if self.oldest:
            out.append(f"oldest {self.oldest}, newest {self.newest}")
        for category, states in sorted(self.categories.items()):
            out.append(f"  {category:<12} " + ", ".join(f"{count} {state}" for state, count in sorted(states.items())))
        if self.tiers:
            out.append("tiers: " + ", ".join(f"{count} {tier}" for tier, count in sorted(self.tiers.items())))
        out.append(f"memory: {self.split['hot']} hot, {self.split['long']} long-term")
        if self.accesses:
            out.append(
                f"recalled: {self.accesses} time{'' if self.accesses == 1 else 's'}, {self.accessed} entr{'y' if self.accessed == 1 else 'ies'}"
            )
        if self.cache["categories"]:
            per_category = ", ".join(f"{name} {_hits(c)}" for name, c in sorted(self.cache["categories"].items()))
            out.append(f"cache: {_hits(self.cache)} ({per_category})")
        return out


def _hits(counts: dict[str, int]) -> str:
    hits, misses = counts["hits"], counts["misses"]
    return f"{hits} hit{'' if hits == 1 else 's'}, {misses} miss{'' if misses == 1 else 'es'}"


def stats(store: Store, moment: datetime) -> Stats:
    """The figures of `mem stats` at `moment`, counted by the catalog: no entry is read whole."""
    every = Filter(at=moment.timestamp(), states=STATES)
    by_category: dict[str, dict[str, int]] = {}
    tiers: dict[str, int] = {}
    # A read: a damaged file is passed over (noted in store.skipped), as list and query do
    for category, state, tier, count in store.reads.tallies(every):
        states = by_category.setdefault(category, {})
        states[state] = states.get(state, 0) + count
        tiers[tier] = tiers.get(tier, 0) + count
    oldest, newest = store.reads.oldest_newest(every)
    size = sum(file.path.stat().st_size for file in store.files() if file.path.exists())
    accessed, accesses = store.reads.access_totals()
    from ..kinds.facts import cache_counts
    from .tiers import sizes

    hot, long = sizes(store, moment)
    return Stats(
        sum(tiers.values()),
        by_category,
        tiers,
        oldest,
        newest,
        size,
        accessed,
        accesses,
        {"hot": hot, "long": long},
        cache_counts(store),
    )
