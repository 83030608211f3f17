"""Hot and long-term memory (Samaritan's short-term table and its aging):
the split of the active entries at a moment, and `mem age`.

The split is computed (storage/catalog/heat.py), never written: it moves
by itself as entries age. `mem age` shows it, may tighten it for one run
(`--older-than`, `--max`), and says which entries moved since the last
`mem age` looked: that earlier split is kept in the grimoire's cache
(volatile bookkeeping, like `check`'s reported ids), so reading leaves
every tracked file as it was.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..core.clock import iso
from ..core.settings import Tiers
from ..storage import journal
from ..storage.catalog.queries import Filter
from ..storage.store import Store

LAST_SPLIT = "age-split.json"


def in_tier(store: Store, moment: datetime, tier: str, tiers: Tiers | None = None) -> list[str]:
    """The ids of the active entries in one tier (hot or long), sorted."""
    settings = store.config.settings
    chosen = Filter(at=moment.timestamp(), decay=settings.decay, tier=tier, tiers=tiers or settings.tiers)
    return sorted(store.ids(chosen))


def split(store: Store, moment: datetime, tiers: Tiers | None = None) -> tuple[list[str], list[str]]:
    """(hot ids, long-term ids) of the active entries, each sorted."""
    return in_tier(store, moment, "hot", tiers), in_tier(store, moment, "long", tiers)


def sizes(store: Store, moment: datetime) -> tuple[int, int]:
    """How many active entries `split` puts in each tier (hot, long): the
    hot ones counted, the rest long-term, no id read."""
    settings = store.config.settings
    at = moment.timestamp()
    hot = store.count(Filter(at=at, decay=settings.decay, tier="hot", tiers=settings.tiers))
    return hot, store.count(Filter(at=at)) - hot


class Aged:
    """What `mem age` found: the split, what moved since the last run
    (None on the first), the settings it was computed with."""

    __slots__ = ("dry_run", "hot", "long", "moved_to_hot", "moved_to_long", "recorded", "since", "tiers")

    def __init__(
        self,
        hot: list[str],
        long: list[str],
        moved_to_long: list[str] | None,
        moved_to_hot: list[str] | None,
        since: str | None,
        tiers: Tiers,
        dry_run: bool,
        recorded: bool = False,
    ):
        self.hot, self.long, self.moved_to_long, self.moved_to_hot = hot, long, moved_to_long, moved_to_hot
        self.since, self.tiers, self.dry_run, self.recorded = since, tiers, dry_run, recorded

    def to_dict(self) -> dict[str, Any]:
        return {
            "hot": len(self.hot),
            "long": len(self.long),
            "hot_ids": self.hot,
            "moved_to_long": self.moved_to_long,
            "moved_to_hot": self.moved_to_hot,
            "since": self.since,
            "dry_run": self.dry_run,
            "recorded": self.recorded,
            "settings": {
                "hot_hours": self.tiers.hot_hours,
                "pin_importance": self.tiers.pin_importance,
                "hot_max": self.tiers.hot_max,
            },
        }


def age(
    store: Store,
    moment: datetime,
    *,
    older_than_hours: float | None = None,
    most: int | None = None,
    dry_run: bool = False,
) -> Aged:
    """The split now (tightened for this run by the options), compared with
    the one the last `mem age` recorded; recorded in turn unless `dry_run`
    or tightened (a split for one run is no baseline for the next)."""
    tiers = store.config.settings.tiers.tightened(older_than_hours, most)
    hot, long = split(store, moment, tiers)
    last = journal.kept(store.cache, LAST_SPLIT)
    before_hot: set[str] | None
    before_long: set[str] | None
    since: str | None
    try:
        before_hot, before_long, since = set(last["hot"]), set(last["long"]), str(last["at"])  # type: ignore[index]
    except (KeyError, TypeError):  # none yet, or not a split
        before_hot = before_long = since = None
    moved_to_long = sorted(before_hot & set(long)) if before_hot is not None else None
    moved_to_hot = sorted(before_long & set(hot)) if before_long is not None else None
    # Bookkeeping only: when it cannot be kept, the next run reports against an older split.
    recorded = (
        not dry_run
        and older_than_hours is None
        and most is None
        and journal.keep(store.cache, LAST_SPLIT, {"at": iso(moment), "hot": hot, "long": long})
    )
    return Aged(hot, long, moved_to_long, moved_to_hot, since, tiers, dry_run, recorded)
