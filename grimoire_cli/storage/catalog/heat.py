"""SQL for what §7 computes at read time: effective importance (decay) and
the hot tier (README: Tiers and recipes).

Nothing of it is stored: each read derives it from `born`, `importance`,
`category` and `tags`, so two clones with the same files and the same
`MEM_NOW` get the same answer, and reading never writes. Ties are broken by
id and path, never by rowid (which differs between catalogs).
"""

from __future__ import annotations

import sqlite3
from fnmatch import fnmatchcase
from functools import lru_cache

from ...settings import Decay, Tiers
from .rows import TAG_SEPARATOR

_WILD = set("*?[")


def importance_sql(decay: Decay | None, alias: str = "e") -> str:
    """Effective importance of the row `alias` at `:now` (settings.Decay.of, in SQL)."""
    if decay is None or not decay.every_days:
        return f"{alias}.importance"
    floor, every = int(decay.floor), float(decay.every_days * 86400)
    return (f"(CASE WHEN {alias}.born IS NULL OR {alias}.importance <= {floor} THEN {alias}.importance "
            f"ELSE max({floor}, {alias}.importance - CAST(max(0.0, :now - {alias}.born) / {every!r} AS INTEGER)) END)")


@lru_cache(maxsize=4096)
def _tag_glob(tags: str | None, pattern: str) -> int:
    return int(any(fnmatchcase(tag, pattern) for tag in (tags or "").split(TAG_SEPARATOR) if tag))


def register(db: sqlite3.Connection) -> None:
    """The Python function a tag pattern with wildcards is matched by."""
    db.create_function("grimoire_tag_glob", 2, _tag_glob, deterministic=True)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def retention_sql(tiers: Tiers, alias: str = "h") -> str:
    """Hours the row stays hot by age: the longest of its tags' patterns,
    else its category's, else `hot_hours`."""
    by_category = " ".join(f"WHEN {_quoted(c)} THEN {float(h)!r}" for c, h in tiers.categories)
    base = f"(CASE {alias}.category {by_category} ELSE {float(tiers.hot_hours)!r} END)" if by_category else repr(float(tiers.hot_hours))
    if not tiers.tags:
        return base
    cases = []
    for pattern, hours in sorted(tiers.tags, key=lambda pair: -pair[1]):  # first match is the longest
        if _WILD & set(pattern):
            test = f"grimoire_tag_glob({alias}.tags, {_quoted(pattern)})"
        else:
            test = f"instr({alias}.tags, {_quoted(TAG_SEPARATOR + pattern + TAG_SEPARATOR)}) > 0"
        cases.append(f"WHEN {test} THEN {float(hours)!r}")
    return f"(CASE {' '.join(cases)} ELSE {base} END)"


def hot_sql(tiers: Tiers, decay: Decay | None, inside: str, active: str) -> str:
    """Rowids of the hot entries among the rows `inside` (a condition on
    alias h) that are `active`: young or pinned, the most important
    `hot_max` of them."""
    importance = importance_sql(decay, "h")
    return (f"SELECT h.rowid FROM ranks AS h WHERE h.mapping = 1 AND {inside} AND {active} "
            f"AND ((h.born IS NOT NULL AND h.born > :now - 3600.0 * {retention_sql(tiers)}) OR {importance} >= {int(tiers.pin_importance)}) "
            f"ORDER BY {importance} DESC, h.born IS NULL, h.born DESC, h.id, h.path LIMIT {int(tiers.hot_max)}")
