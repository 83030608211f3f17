"""The `Filter` a read of the store takes, built from what a caller asks
(`mem list`, `mem query`, a namespace's list): states, categories checked
against the config, tags, a creation window, a tier."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from ..core import clock
from ..core.errors import BadInput
from ..storage.catalog.queries import Filter

if TYPE_CHECKING:
    from ..core.config import Config


def filter_of(
    config: Config,
    moment: datetime,
    states: set[str],
    categories: Iterable[str] | None,
    tags: Iterable[str] | None,
    min_confidence: float | None = None,
    floors: dict[str, float] | None = None,
    *,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    tier: str | None = None,
) -> Filter:
    """In one of `states` at `moment`, of the categories (checked against the config),
    with all the tags, created within `since`..`until` (`clock.window`), in
    the `tier` (hot, long; None or all: either); importance decays (settings.Decay)."""
    low, high = clock.window(since, until, moment)
    settings = config.settings
    if tier not in (None, "all", "hot", "long"):
        raise BadInput(f"unknown tier {tier!r}", "use hot, long or all")
    return Filter(
        at=moment.timestamp(),
        states=states,
        categories=[config.category(c).name for c in categories or []],
        tags=tags or (),
        min_confidence=min_confidence,
        floors=floors,
        since=low,
        until=high,
        decay=settings.decay,
        tier=None if tier in (None, "all") else tier,
        tiers=settings.tiers,
    )
