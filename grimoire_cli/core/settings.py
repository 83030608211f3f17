"""The settings of tiers, forgetting and consolidation
(docs/tiers-and-consolidation.md), read from `memory_schema` and checked:
`tiers`, `decay`, `context`, `consolidate` and `compaction`; and the `MEM_*`
environment variables, each read and checked here (`environment`).

Each is a small immutable value with the defaults DESIGN §7 names, so a
config that says nothing behaves exactly as before these settings existed:
tiers off (every active entry may be injected), importance decaying one
point a week above 3, today's `mem context` ranking.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from .errors import Damaged

_NAMES = {
    int: "a whole number",
    float: "a number",
    str: "a text",
    bool: "true or false",
    dict: "a mapping",
    list: "a list",
}


def expect(value: Any, kind: type | tuple[type, ...], where: str, name: str) -> Any:
    """`value`, refused as a config error when it is not of `kind`."""
    # bool is an int in Python; a number field given `true` is still wrong.
    if isinstance(value, bool) and kind in ((int, float), int, float):
        raise Damaged(where, None, f"{name} must be a number, not {value!r}", "fix the config", "config")
    if not isinstance(value, kind):
        kinds = (kind,) if isinstance(kind, type) else kind
        wanted = (
            "a number" if set(kinds) == {int, float} else " or ".join(_NAMES.get(k, f"a {k.__name__}") for k in kinds)
        )
        raise Damaged(where, None, f"{name} must be {wanted}, not {type(value).__name__}", "fix the config", "config")
    return value


BIGGEST = 10**9  # no setting needs more (hours, days, counts); bigger is a typo, or infinity


def _number(value: Any, where: str, name: str, low: float = 0, integer: bool = False) -> Any:
    expect(value, int if integer else (int, float), where, name)
    if value != value or value > BIGGEST:  # NaN, infinity, or a number no float holds
        raise Damaged(
            where,
            None,
            f"{name} must be a number up to {BIGGEST:,}, not {value!r}",
            "fix the config (for 'always', a large number of hours will do)",
            "config",
        )
    if value < low:
        raise Damaged(where, None, f"{name} must be at least {low:g}, not {value!r}", "fix the config", "config")
    return value


class Tiers(NamedTuple):
    """Hot and long-term memory (computed): an active entry is hot while
    younger than its retention (hours: `hot_hours`, a category's, or the
    longest of its tags' patterns) or while its effective importance is at
    least `pin_importance`; at most `hot_max` are hot, the least important
    ageing first. `enabled` makes `mem context` inject hot entries only."""

    enabled: bool = False
    hot_hours: float = 48
    pin_importance: int = 8
    hot_max: int = 100
    categories: tuple[tuple[str, float], ...] = ()  # (category, hours)
    tags: tuple[tuple[str, float], ...] = ()  # (tag glob, hours)

    def tightened(self, older_than_hours: float | None = None, most: int | None = None) -> Tiers:
        """These tiers with no retention above `older_than_hours` and at most
        `most` hot (`mem age`'s options: tighter for one run, never looser)."""
        tiers = self
        if older_than_hours is not None:
            tiers = tiers._replace(
                hot_hours=min(tiers.hot_hours, older_than_hours),
                categories=tuple((c, min(h, older_than_hours)) for c, h in tiers.categories),
                tags=tuple((t, min(h, older_than_hours)) for t, h in tiers.tags),
            )
        if most is not None:
            tiers = tiers._replace(hot_max=min(tiers.hot_max, most))
        return tiers


class Decay(NamedTuple):
    """Effective importance = stored − 1 per `every_days` of age, never below
    `floor`, and never below the stored value when that is ≤ floor. 0 days: off."""

    every_days: float = 7
    floor: int = 3

    def of(self, importance: int, age_seconds: float | None) -> int:
        """The effective importance of a stored one at an age (None: unknown, no decay)."""
        if not self.every_days or age_seconds is None or importance <= self.floor:
            return importance
        # Division then truncation, as the catalog's SQL computes it (storage/catalog/heat.py).
        return max(self.floor, importance - int(max(0.0, age_seconds) / float(self.every_days * 86400)))


ORDERS = ("recent", "importance", "score")
CONTEXT_ORDERS = ("priority", "importance", "recent")


class Section(NamedTuple):
    """One section of a context recipe: up to `limit` entries of `category`
    (None: of every category, as Protea's `get_recent` reads them) in `order`
    (recent, importance, or score: the query's ranking, else `mem context`'s)."""

    category: str | None
    limit: int
    order: str = "recent"
    title: str | None = None

    @property
    def heading(self) -> str:
        return self.title or self.category or ALL_CATEGORIES


ALL_CATEGORIES = "all categories"  # the heading of a section over every category, when it has no title


class ContextSettings(NamedTuple):
    """`mem context` without a recipe: `order` (priority: today's), at most
    `limit` entries (None: as many as fit), only effective importance ≥
    `min_importance`; `recipe` is the one used when none is named."""

    order: str = "priority"
    limit: int | None = None
    min_importance: int | None = None
    recipe: str | None = None
    recipes: tuple[tuple[str, tuple[Section, ...]], ...] = ()

    def named(self, name: str) -> tuple[Section, ...] | None:
        return dict(self.recipes).get(name)


class Consolidate(NamedTuple):
    """`mem consolidate`: the summarizer `command` (argv as one string, run
    without a shell), its `timeout` in seconds, the last `max_turns` turns
    kept, transcripts under `min_messages` skipped."""

    command: str | None = None
    timeout: float = 120
    max_turns: int = 60
    min_messages: int = 4


class Compaction(NamedTuple):
    """`mem compact`: the newest `keep` active entries of a category stay;
    `categories` overrides it per category (None: keep all, never compacted)."""

    keep: int = 200
    categories: tuple[tuple[str, int | None], ...] = ()

    def keep_of(self, category: str) -> int | None:
        return dict(self.categories).get(category, self.keep)


class Learning(NamedTuple):
    """`mem learn`'s rules: a pattern of `min_usage` tasks or more, succeeding
    more often than `min_success`, is a best practice; an error in more than
    `error_share` of a tool's runs is a warning; `min_corrections`
    consistent corrections of one field in one context are a preference."""

    min_usage: int = 5
    min_success: float = 0.9
    error_share: float = 0.1
    min_corrections: int = 3


class Archive(NamedTuple):
    """Loa's archive retention: an archived entry is purged by `mem archive
    --purge` once archived this many days ago (None: never)."""

    retention_days: int | None = None


class Settings(NamedTuple):
    tiers: Tiers = Tiers()
    decay: Decay = Decay()
    context: ContextSettings = ContextSettings()
    consolidate: Consolidate = Consolidate()
    compaction: Compaction = Compaction()
    learning: Learning = Learning()
    auto_capture: frozenset[str] = frozenset()  # the flags that are on (Loa's: decisions, errors, learnings)
    archive: Archive = Archive()
    # A category a fact or procedure names that the config lacks: added on first
    # use as `tracked` or `local` (SABRE's free-form categories); None: refused.
    new_categories: str | None = None


def _section(raw: Any, where: str, label: str) -> dict[str, Any]:
    section: dict[str, Any] = expect(raw if raw is not None else {}, dict, where, label)
    return section


def _unknown(raw: dict[Any, Any], known: tuple[str, ...], where: str, label: str) -> None:
    extra = sorted(str(k) for k in raw if k not in known)
    if extra:
        raise Damaged(
            where, None, f"{label}: unknown setting {extra[0]!r}", f"use one of: {', '.join(known)}", "config"
        )


def _hours_map(raw: Any, where: str, label: str) -> tuple[tuple[str, float], ...]:
    raw = _section(raw, where, label)
    return tuple(
        (expect(name, str, where, f"{label} key"), float(_number(hours, where, f"{label}.{name}")))
        for name, hours in raw.items()
    )


def build_settings(schema: dict[str, Any], where: str) -> Settings:
    """The settings of one `memory_schema` mapping, checked (a config error names the key)."""
    raw = _section(schema.get("tiers"), where, "memory_schema.tiers")
    _unknown(raw, Tiers._fields, where, "memory_schema.tiers")
    tiers = Tiers(
        enabled=expect(raw.get("enabled", False), bool, where, "tiers.enabled"),
        hot_hours=float(_number(raw.get("hot_hours", 48), where, "tiers.hot_hours")),
        pin_importance=_number(raw.get("pin_importance", 8), where, "tiers.pin_importance", integer=True),
        hot_max=_number(raw.get("hot_max", 100), where, "tiers.hot_max", integer=True),
        categories=_hours_map(raw.get("categories"), where, "tiers.categories"),
        tags=_hours_map(raw.get("tags"), where, "tiers.tags"),
    )
    raw = _section(schema.get("decay"), where, "memory_schema.decay")
    _unknown(raw, Decay._fields, where, "memory_schema.decay")
    decay = Decay(
        float(_number(raw.get("every_days", 7), where, "decay.every_days")),
        _number(raw.get("floor", 3), where, "decay.floor", integer=True),
    )
    context = _context(_section(schema.get("context"), where, "memory_schema.context"), where)
    raw = _section(schema.get("consolidate"), where, "memory_schema.consolidate")
    _unknown(raw, Consolidate._fields, where, "memory_schema.consolidate")
    command = raw.get("command")
    consolidate = Consolidate(
        command=expect(command, str, where, "consolidate.command") if command is not None else None,
        timeout=float(_number(raw.get("timeout", 120), where, "consolidate.timeout", low=1)),
        max_turns=_number(raw.get("max_turns", 60), where, "consolidate.max_turns", low=1, integer=True),
        min_messages=_number(raw.get("min_messages", 4), where, "consolidate.min_messages", low=1, integer=True),
    )
    raw = _section(schema.get("compaction"), where, "memory_schema.compaction")
    _unknown(raw, Compaction._fields, where, "memory_schema.compaction")
    per = _section(raw.get("categories"), where, "compaction.categories")
    compaction = Compaction(
        keep=_number(raw.get("keep", 200), where, "compaction.keep", low=1, integer=True),
        categories=tuple(
            (
                name,
                None if value == "all" else _number(value, where, f"compaction.categories.{name}", low=1, integer=True),
            )
            for name, value in per.items()
        ),
    )
    raw = _section(schema.get("learning"), where, "memory_schema.learning")
    _unknown(raw, Learning._fields, where, "memory_schema.learning")
    learning = Learning(
        min_usage=_number(raw.get("min_usage", 5), where, "learning.min_usage", low=1, integer=True),
        min_success=float(_share(raw.get("min_success", 0.9), where, "learning.min_success")),
        error_share=float(_share(raw.get("error_share", 0.1), where, "learning.error_share")),
        min_corrections=_number(raw.get("min_corrections", 3), where, "learning.min_corrections", low=1, integer=True),
    )
    raw = _section(schema.get("auto_capture"), where, "memory_schema.auto_capture")
    _unknown(raw, ("decisions", "errors", "learnings"), where, "memory_schema.auto_capture")
    auto_capture = frozenset(name for name, on in raw.items() if expect(on, bool, where, f"auto_capture.{name}"))
    raw = _section(schema.get("archive"), where, "memory_schema.archive")
    _unknown(raw, Archive._fields, where, "memory_schema.archive")
    days = raw.get("retention_days")
    archive = Archive(None if days is None else _number(days, where, "archive.retention_days", low=1, integer=True))
    new_categories = schema.get("new_categories")
    if new_categories not in (None, "tracked", "local"):
        raise Damaged(
            where,
            None,
            f"memory_schema.new_categories must be tracked or local, not {new_categories!r}",
            "fix the config (leave it out to refuse categories the config lacks)",
            "config",
        )
    return Settings(tiers, decay, context, consolidate, compaction, learning, auto_capture, archive, new_categories)


def _share(value: Any, where: str, name: str) -> float:
    _number(value, where, name)
    if value > 1:
        raise Damaged(where, None, f"{name} must be from 0 to 1, not {value!r}", "fix the config", "config")
    share: float = value
    return share


def _context(raw: dict[str, Any], where: str) -> ContextSettings:
    _unknown(raw, ContextSettings._fields, where, "memory_schema.context")
    order = raw.get("order", "priority")
    if order not in CONTEXT_ORDERS:
        raise Damaged(
            where,
            None,
            f"context.order {order!r} is not an order mem knows",
            f"use one of: {', '.join(CONTEXT_ORDERS)}",
            "config",
        )
    limit = raw.get("limit")
    least = raw.get("min_importance")
    recipes = []
    for name, sections in _section(raw.get("recipes"), where, "context.recipes").items():
        label = f"context.recipes.{name}"
        expect(name, str, where, "a recipe name")
        if not expect(sections, list, where, label):
            raise Damaged(
                where, None, f"{label} has no sections", "list sections like {category: directive, limit: 1}", "config"
            )
        recipes.append((name, tuple(_recipe_section(item, where, f"{label}[{i}]") for i, item in enumerate(sections))))
    recipe = raw.get("recipe")
    if recipe is not None and recipe not in dict(recipes):
        raise Damaged(
            where,
            None,
            f"context.recipe {recipe!r} is not one of context.recipes",
            "name a recipe defined there",
            "config",
        )
    return ContextSettings(
        order=order,
        limit=_number(limit, where, "context.limit", low=1, integer=True) if limit is not None else None,
        min_importance=_number(least, where, "context.min_importance", low=1, integer=True)
        if least is not None
        else None,
        recipe=recipe,
        recipes=tuple(recipes),
    )


def _recipe_section(item: Any, where: str, label: str) -> Section:
    item = expect(item, dict, where, label)
    _unknown(item, Section._fields, where, label)
    order = item.get("order", "recent")
    if order not in ORDERS:
        raise Damaged(
            where,
            None,
            f"{label}.order {order!r} is not an order mem knows",
            f"use one of: {', '.join(ORDERS)}",
            "config",
        )
    title = item.get("title")
    category = item.get("category")  # none: every category
    return Section(
        category=expect(category, str, where, f"{label}.category") if category is not None else None,
        limit=_number(item.get("limit", 1), where, f"{label}.limit", low=1, integer=True),
        order=order,
        title=expect(title, str, where, f"{label}.title") if title is not None else None,
    )


# A scope's name: a lowercase slug (also the form MEM_SCOPE must have, core/runtime.py).
SCOPE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}\Z")
