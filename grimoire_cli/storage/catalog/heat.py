"""SQL for what §7 computes at read time: effective importance (decay) and
the hot tier (docs/tiers-and-consolidation.md); and a tag filter, exact or a pattern.

Nothing of it is stored: each read derives it from `born`, `importance`,
`category` and `tags`, so two clones with the same files and the same
`MEM_NOW` get the same answer, and reading never writes. Ties are broken by
id and path, never by rowid (which differs between catalogs). Every value
from the config is a bound parameter, never text in the SQL.
"""

from __future__ import annotations

import json
import sqlite3
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any

from ...core.settings import Decay, Tiers
from .rows import TAG_SEPARATOR

WILD = frozenset("*?[")  # the characters that make a tag a glob pattern


def decay_params(decay: Decay | None) -> dict[str, Any]:
    """The parameters `importance_sql` names (none when decay is off)."""
    if decay is None or not decay.every_days:
        return {}
    return {"dfloor": decay.floor, "devery": float(decay.every_days) * 86400.0}


def importance_sql(decay: Decay | None, alias: str = "e") -> str:
    """Effective importance of the row `alias` at `:now` (settings.Decay.of, in SQL)."""
    if decay is None or not decay.every_days:
        return f"{alias}.importance"
    return (
        f"(CASE WHEN {alias}.born IS NULL OR {alias}.importance <= :dfloor THEN {alias}.importance "
        f"ELSE max(:dfloor, {alias}.importance - CAST(max(0.0, :now - {alias}.born) / :devery AS INTEGER)) END)"
    )


@lru_cache(maxsize=4096)
def _tag_glob(tags: str | None, pattern: str) -> int:
    return int(any(fnmatchcase(tag, pattern) for tag in (tags or "").split(TAG_SEPARATOR) if tag))


def tag_sql(tag: str, name: str, params: dict[str, Any]) -> str:
    """The condition that a row has `tag`: a topic ending in `*` (`herm*`) is a
    prefix, other wildcards a glob (`grimoire_tag_glob`: registered by `register`)."""
    if not WILD & set(tag):
        params[name] = TAG_SEPARATOR + tag + TAG_SEPARATOR
        return f"instr(e.tags, :{name}) > 0"
    prefix = tag[:-1]
    if tag.endswith("*") and not WILD & set(prefix):  # the common case, without a Python call per row
        params[name] = TAG_SEPARATOR + prefix
        return f"instr(e.tags, :{name}) > 0"
    params[name] = tag
    return f"grimoire_tag_glob(e.tags, :{name})"


def register(db: sqlite3.Connection) -> None:
    """The Python function a tag pattern with wildcards is matched by."""
    db.create_function("grimoire_tag_glob", 2, _tag_glob, deterministic=True)


def _retention_sql(tiers: Tiers, params: dict[str, Any], alias: str = "h") -> str:
    """Hours the row stays hot by age: the longest of its tags' patterns,
    else its category's, else `hot_hours` (values added to `params`)."""
    params["hhot"] = float(tiers.hot_hours)
    cases = []
    for i, (category, hours) in enumerate(tiers.categories):
        params[f"hcat{i}"], params[f"hcath{i}"] = category, float(hours)
        cases.append(f"WHEN :hcat{i} THEN :hcath{i}")
    base = f"(CASE {alias}.category {' '.join(cases)} ELSE :hhot END)" if cases else ":hhot"
    if not tiers.tags:
        return base
    tests = []
    for i, (pattern, hours) in enumerate(
        sorted(tiers.tags, key=lambda pair: -pair[1])
    ):  # the first match is the longest
        params[f"htag{i}"], params[f"htagh{i}"] = pattern, float(hours)
        if WILD & set(pattern):
            tests.append(f"WHEN grimoire_tag_glob({alias}.tags, :htag{i}) THEN :htagh{i}")
        else:
            params[f"htag{i}"] = TAG_SEPARATOR + pattern + TAG_SEPARATOR
            tests.append(f"WHEN instr({alias}.tags, :htag{i}) > 0 THEN :htagh{i}")
    return f"(CASE {' '.join(tests)} ELSE {base} END)"


def hot_sql(
    tiers: Tiers,
    decay: Decay | None,
    inside: str,
    active: str,
    aged_before: float | None = None,
    aged_ids: list[str] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Rowids of the hot entries among the rows `inside` (a condition on
    alias h) that are `active`: young (and, after a recorded aging, born
    after `aged_before` and not among `aged_ids`) or pinned, the most
    important `hot_max` of them; and the parameters it adds."""
    params: dict[str, Any] = {"hpin": tiers.pin_importance, "hmax": tiers.hot_max, **decay_params(decay)}
    importance = importance_sql(decay, "h")
    young = f"h.born > :now - 3600.0 * {_retention_sql(tiers, params)}"
    if aged_before is not None:
        params["haged"] = aged_before
        young += " AND h.born > :haged"
    if aged_ids:
        params["hagedids"] = json.dumps(aged_ids)
        young += " AND h.id NOT IN (SELECT value FROM json_each(:hagedids))"
    sql = (
        f"SELECT h.rowid FROM ranks AS h WHERE h.mapping = 1 AND {inside} AND {active} "
        f"AND ((h.born IS NOT NULL AND {young}) OR {importance} >= :hpin) "
        f"ORDER BY {importance} DESC, h.born IS NULL, h.born DESC, h.id, h.path LIMIT :hmax"
    )
    return sql, params
