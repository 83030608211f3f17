"""`mem stats`: counts per category and state, tiers, oldest and newest, size."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..core.model import sort_key
from ..storage.store import Store


class Stats:
    """The figures of `mem stats`; `lines()` is its text, `to_dict()` its JSON."""

    __slots__ = ("accessed", "accesses", "bytes", "categories", "entries", "newest", "oldest", "split", "tiers")

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
    ):
        self.entries, self.categories, self.tiers = entries, categories, tiers
        self.oldest, self.newest, self.bytes = oldest, newest, size
        # Reads by `recall` (kept in the catalog): entries read at least once, and reads in all.
        self.accessed, self.accesses = accessed, accesses
        # Active entries by memory tier (tiers.py): hot ones `mem context` may inject, long-term ones found by query.
        self.split = split or {"hot": 0, "long": 0}

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
        return out


def stats(store: Store, moment: datetime) -> Stats:
    """The figures of `mem stats` at `moment`."""
    # A read: a damaged file is passed over (noted in store.skipped), as list and query do
    entries = store.entries(skip_damaged=True)
    by_category: dict[str, dict[str, int]] = {}
    tiers: dict[str, int] = {}
    for entry in entries:
        states = by_category.setdefault(entry.category, {})
        state = entry.state(moment)
        states[state] = states.get(state, 0) + 1
        tiers[entry.tier] = tiers.get(entry.tier, 0) + 1
    ordered = sorted(entries, key=sort_key)
    size = sum(file.path.stat().st_size for file in store.files() if file.path.exists())
    accessed, accesses = store.reads.access_totals()
    from .tiers import split

    hot, long = split(store, moment)
    return Stats(
        len(entries),
        by_category,
        tiers,
        ordered[0].id if ordered else None,
        ordered[-1].id if ordered else None,
        size,
        accessed,
        accesses,
        {"hot": len(hot), "long": len(long)},
    )
