"""Reading the catalog: entries chosen by a `Filter`, in a named `Order`,
or ranked for a query. Callers never write SQL; this module and the
indexer are the only places that do.

Every read takes the relative paths of the files it covers (the store
passes the ones it has just checked), so a file skipped as damaged, or the
archive when not asked for, never answers.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from ...core.scoring import (
    FIELD_WEIGHTS,
    NEIGHBOUR_LENDERS,
    NEIGHBOUR_SPAN,
    NEIGHBOUR_WEIGHT,
    NEIGHBOUR_WINDOW_SECONDS,
    RECENCY_HALF_LIFE_DAYS,
    TIER_BONUS,
    recency_of,
)
from ...core.settings import Decay, Tiers
from ..layout import Layout
from .connection import Connection
from .heat import WILD, decay_params, hot_sql, importance_sql, register, tag_sql
from .rows import LIGHT_COLUMNS, Light, Row

STATES = ("active", "expired", "superseded", "archived")
_STATES_OF = {
    "active": "({t}.archived = 0 AND {t}.superseded_by IS NULL AND ({t}.expires IS NULL OR {t}.expires > :now))",
    "expired": "({t}.archived = 0 AND {t}.superseded_by IS NULL AND {t}.expires IS NOT NULL AND {t}.expires <= :now)",
    "superseded": "({t}.archived = 0 AND {t}.superseded_by IS NOT NULL)",
    "archived": "({t}.archived = 1)",
}
_STATE_SQL = {state: sql.format(t="e") for state, sql in _STATES_OF.items()}
TIERS = ("hot", "long")


class Filter:
    """Which entries a read wants: in one of `states` at POSIX time `at`, of
    one of the categories (any when empty) and none of the `excluded` ones,
    with all the tags, at or above the confidence (for a category in
    `floors`, at or above its floor there instead), with the key (or a key
    matching the glob `key_glob`), with the kind's name (an episode's event,
    a procedure's name), born in [`since`, `until`] (POSIX seconds), with
    normalized content of a length in `lengths` (inclusive; only for reads
    of the entries table).

    Importance is the effective one under `decay` (None: as stored), in
    orders and in `min_importance`; `tier` (hot or long) keeps the entries
    of that tier under `tiers` (heat.py); `match` an FTS5 expression they match;
    `metadata` (key, value) pairs their `metadata` holds, each value as text."""

    __slots__ = (
        "at",
        "categories",
        "decay",
        "excluded",
        "floors",
        "key",
        "key_glob",
        "lengths",
        "match",
        "metadata",
        "min_confidence",
        "min_importance",
        "name",
        "since",
        "states",
        "tags",
        "tier",
        "tiers",
        "until",
    )

    def __init__(
        self,
        *,
        at: float,
        states: Iterable[str] = ("active",),
        categories: Iterable[str] = (),
        tags: Iterable[str] = (),
        min_confidence: float | None = None,
        floors: Mapping[str, float] | None = None,
        key: str | None = None,
        lengths: tuple[int, int] | None = None,
        key_glob: str | None = None,
        name: str | None = None,
        since: float | None = None,
        until: float | None = None,
        decay: Decay | None = None,
        min_importance: int | None = None,
        tier: str | None = None,
        tiers: Tiers | None = None,
        match: str | None = None,
        excluded: Iterable[str] = (),
        metadata: Iterable[tuple[str, str]] = (),
    ):
        self.states = frozenset(states)
        unknown = self.states - set(STATES)
        if unknown:
            raise ValueError(f"unknown states: {sorted(unknown)}")
        self.at = at
        self.categories = sorted(set(categories))
        self.excluded = sorted(set(excluded))
        self.tags = sorted(set(tags))
        self.min_confidence = min_confidence
        self.floors = dict(floors or {})
        self.key = key
        self.lengths = lengths
        self.key_glob = key_glob
        self.name = name
        self.since = since
        self.until = until
        if tier is not None and (tier not in TIERS or tiers is None):
            raise ValueError(f"tier {tier!r} needs one of {TIERS} and the tiers' settings")
        self.decay, self.min_importance, self.tier, self.tiers, self.match = decay, min_importance, tier, tiers, match
        self.metadata = tuple(sorted(set(metadata)))

    @property
    def globbed(self) -> bool:
        """Some tag is a pattern: the SQL calls `grimoire_tag_glob`."""
        return any(WILD & set(tag) for tag in self.tags)

    def but(self, **changes: Any) -> Filter:
        """This filter with some fields changed."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return Filter(**fields)

    def sql(self, table: str) -> tuple[str, dict[str, Any]]:
        """The condition over the columns of `table` aliased `e`, and its parameters."""
        if self.lengths is not None and table != "entries":
            raise ValueError("a filter on content lengths reads the entries table")
        parts = ["(" + " OR ".join(_STATE_SQL[s] for s in sorted(self.states)) + ")" if self.states else "0"]
        params: dict[str, Any] = {"now": self.at, **decay_params(self.decay)}  # orders and ranks may use the decay
        if self.categories:
            params.update({f"cat{i}": c for i, c in enumerate(self.categories)})
            parts.append(f"e.category IN ({', '.join(f':cat{i}' for i in range(len(self.categories)))})")
        if self.excluded:
            params.update({f"xcat{i}": c for i, c in enumerate(self.excluded)})
            parts.append(f"e.category NOT IN ({', '.join(f':xcat{i}' for i in range(len(self.excluded)))})")
        for i, tag in enumerate(self.tags):
            parts.append(tag_sql(tag, f"tag{i}", params))
        if self.min_confidence is not None:
            params["floor"] = self.min_confidence
            if self.floors:
                cases = []
                for i, (category, floor) in enumerate(sorted(self.floors.items())):
                    params[f"fcat{i}"], params[f"fval{i}"] = category, floor
                    cases.append(f"WHEN :fcat{i} THEN :fval{i}")
                parts.append(f"e.confidence >= CASE e.category {' '.join(cases)} ELSE :floor END")
            else:
                parts.append("e.confidence >= :floor")
        if self.key is not None:
            params["key"] = self.key
            parts.append("e.key = :key")
        if self.key_glob is not None:
            params["kglob"] = self.key_glob
            parts.append("e.key GLOB :kglob")
        if self.name is not None:
            params["name"] = self.name
            parts.append("e.name = :name")
        if self.since is not None:
            params["since"] = self.since
            parts.append("e.born >= :since")
        if self.until is not None:
            params["until"] = self.until
            parts.append("e.born <= :until")
        if self.lengths is not None:
            params["low"], params["high"] = self.lengths
            parts.append("e.nlen BETWEEN :low AND :high")
        if self.min_importance is not None:
            params["minimp"] = self.min_importance
            parts.append(f"{importance_sql(self.decay)} >= :minimp")
        if self.match is not None:
            params["fmatch"] = self.match
            parts.append("e.rowid IN (SELECT rowid FROM fts WHERE fts MATCH :fmatch)")
        for i, (key, value) in enumerate(self.metadata):
            # Read from the entry's JSON (no column holds metadata): only a read that asks pays for it.
            params[f"mpath{i}"], params[f"mval{i}"] = f'$.metadata."{key}"', value
            parts.append(
                f"e.rowid IN (SELECT rowid FROM entries WHERE json_valid(data) "
                f"AND CAST(json_extract(data, :mpath{i}) AS TEXT) = :mval{i})"
            )
        return " AND ".join(parts), params


class Order:
    """The orderings a read can ask for, by name."""

    NEWEST = "newest"  # creation time, newest first; unreadable times last
    PRIORITY = "priority"  # `mem context` without a query (see context.py)
    IMPORTANCE = "importance"  # effective importance, then newest first
    INDEXED = "indexed"  # the order rows were indexed in (not file order once rows are reused)


def _order_sql(order: str, decay: Decay | None) -> str:
    importance = importance_sql(decay)
    if order == Order.NEWEST:
        return "e.born IS NULL, e.born DESC, e.seq DESC, e.id DESC"
    if order == Order.PRIORITY:
        # Decisions and preferences first, then importance, effectiveness tier,
        # confidence and recency (unknown age last).
        return (
            f"CASE e.category WHEN 'decision' THEN 0 WHEN 'preference' THEN 1 ELSE 2 END, {importance} DESC, "
            "CASE e.tier "
            + " ".join(f"WHEN '{name}' THEN {-bonus!r}" for name, bonus in TIER_BONUS.items())
            + " ELSE 0.0 END, "
            "e.confidence DESC, e.born IS NULL, e.born DESC, e.id, e.rowid"
        )
    if order == Order.IMPORTANCE:
        return f"{importance} DESC, e.born IS NULL, e.born DESC, e.id, e.rowid"
    if order == Order.INDEXED:
        return "e.rowid"
    raise ValueError(f"unknown order {order!r}")


class Ranked:
    """One ranked row: the score of `search`'s blend and its parts
    (`neighbours`: what the best matches next to it added; `coverage`: what
    the share of the query's terms it holds added, `search.covered`)."""

    __slots__ = ("bm25", "coverage", "id", "neighbours", "prior", "recency", "relevance", "rowid", "score")

    def __init__(
        self,
        rowid: int,
        id: str,
        bm25: float,
        relevance: float,
        recency: float,
        prior: float,
        neighbours: float,
        score: float,
    ):
        self.rowid, self.id, self.bm25, self.relevance, self.recency, self.prior = (
            rowid,
            id,
            bm25,
            relevance,
            recency,
            prior,
        )
        self.neighbours, self.score = neighbours, score
        self.coverage = 0.0


# CTEs can be forced into a table from SQLite 3.35 (2021); an older one may
# compute a CTE again where it is read: slower, the same answer.
MATERIALIZE = sqlite3.sqlite_version_info >= (3, 35)
_CHUNK = 500  # ids or rowids per IN (...) list


class Queries(Connection):
    """The catalog's reads."""

    def _where(self, paths: list[str], chosen: Filter | None, table: str = "ranks") -> tuple[str, dict[str, Any]]:
        named = {f"path{i}": path for i, path in enumerate(paths)}
        inside = f"e.path IN ({', '.join(':' + k for k in named)})" if named else "0"
        if chosen is None:
            return f"e.mapping = 1 AND {inside}", named
        condition, params = chosen.sql(table)
        if chosen.globbed:
            self._functions()
        if chosen.tier is not None and chosen.tiers is not None:
            # The hot set is the grimoire's (these files'), whatever else the filter keeps.
            self._functions()
            hot, more = hot_sql(
                chosen.tiers,
                chosen.decay,
                inside.replace("e.path", "h.path"),
                _STATES_OF["active"].format(t="h"),
                *self._aged(),
            )
            condition += f" AND e.rowid {'IN' if chosen.tier == 'hot' else 'NOT IN'} ({hot})"
            params = {**params, **more}
        return f"e.mapping = 1 AND {inside} AND {condition}", {**named, **params}

    def _aged(self) -> tuple[float | None, list[str]]:
        """The cut `mem age --older-than` recorded and the ids a capped aging
        moved (storage/aging.py), read at every tier read: another process may have moved them."""
        if self.local_dir is None:
            return None, []
        from ..aging import FILE, read

        return read(self.local_dir / FILE)

    def lights(self, paths: list[str], chosen: Filter | None = None) -> list[Light]:
        """The filter and rank fields of the chosen entries, without their JSON."""
        where, params = self._where(paths, chosen)
        return [
            Light(*row) for row in self.read(f"SELECT {', '.join(LIGHT_COLUMNS)} FROM ranks AS e WHERE {where}", params)
        ]

    def needing_attention(self, paths: list[str], chosen: Filter, horizon: float) -> list[Light]:
        """`lights` of the chosen entries that expire by `horizon` (POSIX
        seconds) or whose tier is low or ineffective: what `mem check` reports,
        found by SQL instead of reading every entry's fields into Python."""
        where, params = self._where(paths, chosen)
        return [
            Light(*row)
            for row in self.read(
                f"SELECT {', '.join(LIGHT_COLUMNS)} FROM ranks AS e WHERE {where} "
                "AND ((e.expires IS NOT NULL AND e.expires <= :attention_horizon) OR e.tier IN ('low', 'ineffective'))",
                {**params, "attention_horizon": horizon},
            )
        ]

    def ordered(self, paths: list[str], chosen: Filter, order: str, limit: int | None = None) -> list[int]:
        """Rowids of the chosen entries in a named order."""
        where, params = self._where(paths, chosen)
        sql = f"SELECT e.rowid FROM ranks AS e WHERE {where} ORDER BY {_order_sql(order, chosen.decay)}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [row[0] for row in self.read(sql, params)]

    def ordered_counted(self, paths: list[str], chosen: Filter, order: str, limit: int) -> tuple[list[int], int]:
        """`ordered` (at most `limit`) and how many are chosen in all, in one pass."""
        where, params = self._where(paths, chosen)
        rows = self.read(
            f"SELECT e.rowid, count(*) OVER () FROM ranks AS e WHERE {where} ORDER BY {_order_sql(order, chosen.decay)} "
            f"LIMIT {int(limit)}",
            params,
        )
        return [row[0] for row in rows], rows[0][1] if rows else 0

    def count(self, paths: list[str], chosen: Filter) -> int:
        where, params = self._where(paths, chosen)
        found: int = self.read(f"SELECT count(*) FROM ranks AS e WHERE {where}", params)[0][0]
        return found

    def tallies(self, paths: list[str], chosen: Filter) -> list[tuple[str, str, str, int]]:
        """(category, state, effectiveness tier, how many) of the chosen entries: `mem stats`'s counts."""
        where, params = self._where(paths, chosen)
        state = " ".join(f"WHEN {_STATE_SQL[name]} THEN '{name}'" for name in ("archived", "superseded", "expired"))
        return self.read(
            f"SELECT e.category, CASE {state} ELSE 'active' END, e.tier, count(*) FROM ranks AS e WHERE {where} "
            "GROUP BY 1, 2, 3",
            params,
        )

    def oldest_newest(self, paths: list[str], chosen: Filter) -> tuple[str | None, str | None]:
        """The ids of the first and the last of the chosen entries in `model.sort_key`'s
        order (unreadable creation times first, then the id's number, then the id)."""
        where, params = self._where(paths, chosen)
        ends = []
        for order in ("e.born IS NOT NULL, e.born, e.seq, e.id", _order_sql(Order.NEWEST, None)):
            row = self.read(f"SELECT e.id FROM ranks AS e WHERE {where} ORDER BY {order} LIMIT 1", params)
            ends.append(row[0][0] if row else None)
        return ends[0], ends[1]

    def ids(self, paths: list[str], chosen: Filter) -> list[str]:
        """Ids of the chosen entries."""
        where, params = self._where(paths, chosen)
        return [row[0] for row in self.read(f"SELECT id FROM ranks AS e WHERE {where}", params)]

    def shared_ids(self, these: list[str], others: list[str]) -> set[str]:
        """Ids an entry of the files `these` shares with an entry of the files `others`."""
        if not these or not others:
            return set()
        a = ", ".join("?" * len(these))
        b = ", ".join("?" * len(others))
        # The few rows of `these` drive the join; each is looked up by id.
        sql = (
            f"SELECT DISTINCT a.id FROM entries a JOIN entries b INDEXED BY entries_id ON b.id = a.id "
            f"WHERE a.path IN ({a}) AND a.mapping = 1 AND b.path IN ({b}) AND b.mapping = 1"
        )
        return {row[0] for row in self.read(sql, [*these, *others])}

    def normalized(self, paths: list[str], chosen: Filter) -> list[tuple[str, str]]:
        """(id, normalized content) of the chosen entries, for duplicate checks."""
        where, params = self._where(paths, chosen, "entries")
        return [
            (entry_id, norm)
            for entry_id, norm in self.read(f"SELECT id, norm FROM entries AS e WHERE {where}", params)
            if norm is not None
        ]

    def highest_per_day(self, paths: list[str]) -> list[tuple[str, int]]:
        """(day, the highest number of an id of that day) over the entries of `paths`."""
        marks = ", ".join("?" * len(paths))
        return self.read(
            f"SELECT substr(id, 5, 8), max(CAST(substr(id, 14) AS INTEGER)) FROM entries WHERE path IN ({marks}) "
            f"AND id GLOB 'MEM-[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9]*' GROUP BY 1",
            paths,
        )

    def ids_of_day(self, paths: list[str], day: str) -> list[str]:
        """Ids minted on one day (`MEM-<day>-...`)."""
        marks = ", ".join("?" * len(paths))
        prefix = f"MEM-{day}-"
        # A range, not LIKE, so the id index is used ('.' follows '-'); INDEXED
        # BY, because left alone SQLite walks every row of the paths instead.
        return [
            r[0]
            for r in self.read(
                f"SELECT id FROM entries INDEXED BY entries_id WHERE path IN ({marks}) AND id >= ? AND id < ?",
                [*paths, prefix, prefix[:-1] + "."],
            )
        ]

    def rank(
        self, paths: list[str], expression: str, chosen: Filter, *, recency_weight: float, limit: int | None
    ) -> tuple[list[Ranked], int]:
        """The chosen entries that match the FTS5 `expression`, best first, and
        how many matched in all. The blend of `search` in SQL, so only the rows
        asked for leave SQLite."""
        self._functions()
        where, params = self._where(paths, chosen)
        weights = ", ".join(repr(float(w)) for w in FIELD_WEIGHTS)
        tiers = " ".join(f"WHEN '{name}' THEN {bonus!r}" for name, bonus in TIER_BONUS.items())
        # The index drives the join (CROSS JOIN keeps that order), so bm25()
        # is computed only for the matches the filters keep.
        matches = f"""
            SELECT e.rowid AS rowid, e.id AS id, -bm25(fts, {weights}) AS b, {self._recency_sql()} AS rec,
                   0.1 * (e.confidence - 0.5) + 0.05 * ({importance_sql(chosen.decay)} - 5) / 5.0 + (CASE e.tier {tiers} ELSE 0.0 END) AS pri,
                   e.born AS born
            FROM fts CROSS JOIN ranks AS e ON e.rowid = fts.rowid
            WHERE fts MATCH :match AND {where}
        """
        sql = _ranking_sql(matches, MATERIALIZE)
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        neighbours = {
            "near_weight": NEIGHBOUR_WEIGHT,
            "near_span": NEIGHBOUR_SPAN,
            "near_lenders": NEIGHBOUR_LENDERS,
            "near_window": NEIGHBOUR_WINDOW_SECONDS,
            # Only the best `keep` by the blend, and the rows lent to, can be in the first `limit`.
            "keep": -1 if limit is None else max(int(limit), NEIGHBOUR_LENDERS),
        }
        try:
            rows = self.read(
                sql, {**params, **neighbours, "w": recency_weight, "epoch": chosen.at, "match": expression}
            )
        except sqlite3.OperationalError:
            return [], 0  # an expression FTS5 cannot parse matches nothing
        return [Ranked(*row[:8]) for row in rows], rows[0][8] if rows else 0

    def _recency_sql(self) -> str:
        """`scoring.recency_of` as SQL: the built-in pow() when this SQLite has
        it (it is C's pow, as Python's ** is), else the Python function."""
        if self._has_pow is None:
            try:
                self.db.execute("SELECT pow(0.5, 2.0)").fetchone()
                self._has_pow = True
            except sqlite3.OperationalError:
                self._has_pow = False
        if self._has_pow:
            return f"(CASE WHEN e.born IS NULL THEN 0.0 ELSE pow(0.5, max(0.0, (:epoch - e.born) / 86400.0) / {float(RECENCY_HALF_LIFE_DAYS)!r}) END)"
        return "grimoire_recency(e.born, :epoch)"

    def _functions(self) -> None:
        if not self._has_functions:
            self.db.create_function("grimoire_recency", 2, recency_of, deterministic=True)
            register(self.db)
            self._has_functions = True

    # -- whole entries -------------------------------------------------------

    def load(self, rowids: list[int]) -> dict[int, Row]:
        """The rows with these rowids (call after a read that synced)."""
        out: dict[int, Row] = {}
        for chunk in range(0, len(rowids), _CHUNK):
            part = rowids[chunk : chunk + _CHUNK]
            sql = f"SELECT e.rowid, e.path, s.start, e.data FROM entries e JOIN spans s ON s.rowid = e.rowid WHERE e.rowid IN ({', '.join('?' * len(part))})"
            for rowid, path, start, data in self.read(sql, part):
                out[rowid] = Row(rowid, path, start, json.loads(data))
        return out

    def file_entries(self, path: str) -> list[Row]:
        """Every row of one file, in file order."""
        rows = self.read(
            "SELECT s.rowid, s.path, s.start, e.data FROM spans s JOIN entries e ON e.rowid = s.rowid WHERE s.path=? ORDER BY s.idx",
            (path,),
        )
        return [Row(rowid, where, start, json.loads(data)) for rowid, where, start, data in rows]

    def by_ids(self, ids: Iterable[str]) -> list[Row]:
        """Every row with one of these ids, by file, then in file order."""
        wanted = list(ids)
        out: list[Row] = []
        for chunk in range(0, len(wanted), _CHUNK):
            part = wanted[chunk : chunk + _CHUNK]
            sql = (
                f"SELECT e.rowid, e.path, s.start, e.data FROM entries e JOIN spans s ON s.rowid = e.rowid "
                f"WHERE e.id IN ({', '.join('?' * len(part))}) ORDER BY e.path, s.idx"
            )
            out.extend(Row(rowid, path, start, json.loads(data)) for rowid, path, start, data in self.read(sql, part))
        return out

    def layout(self, path: str) -> Layout:
        """Where each item of one file sits, in order (what a text edit needs)."""
        rows = self.read("SELECT id, start, stop, offset FROM spans WHERE path=? ORDER BY idx", (path,))
        return Layout(
            [entry_id for entry_id, _, _, _ in rows],
            [(start, stop) for _, start, stop, _ in rows],
            [offset for _, _, _, offset in rows],
        )

    # -- words ---------------------------------------------------------------

    def knows(self, word: str, paths: list[str]) -> bool:
        """Whether any of these files holds the word."""
        marks = ", ".join("?" * len(paths))
        return bool(paths) and bool(
            self.read(f"SELECT 1 FROM words WHERE word=? AND path IN ({marks}) LIMIT 1", (word, *paths))
        )

    def matches_any(self, expression: str, paths: list[str]) -> bool:
        """Whether an entry of these files matches the FTS5 `expression`."""
        marks = ", ".join("?" * len(paths))
        sql = (
            f"SELECT 1 FROM fts CROSS JOIN entries AS e ON e.rowid = fts.rowid WHERE fts MATCH ? AND e.mapping = 1 "
            f"AND e.path IN ({marks}) LIMIT 1"
        )
        try:
            return bool(paths) and bool(self.read(sql, (expression, *paths)))
        except sqlite3.OperationalError:
            return False  # an expression FTS5 cannot parse matches nothing

    def vocabulary(self) -> list[str]:
        return [r[0] for r in self.read("SELECT DISTINCT word FROM words ORDER BY word")]

    def terms_held(self, terms: list[str], rowids: list[int]) -> dict[int, int]:
        """How many of the FTS5 `terms` each of these rows matches (none: absent).
        A lookup per term and row, which FTS5 answers by seeking the row in
        the term's matches: `rowid IN (...)` read all of every term's matches."""
        held: dict[int, int] = {}
        for term in terms:
            for rowid in rowids:
                if self.read("SELECT 1 FROM fts WHERE fts MATCH ? AND rowid = ?", (term, rowid)):
                    held[rowid] = held.get(rowid, 0) + 1
        return held


def _ranking_sql(matches: str, materialize: bool) -> str:
    """Blend and order the scored `matches` (rowid, id, b, rec, pri, born).

    The matches are scored once into a table (`materialize`), then read for
    their best bm25 and count, then for the best `:keep` by the blend, by a
    bounded sort.

    Neighbours: each of the best `:near_lenders` matches lends `:near_weight`
    of its relevance to every match within `:near_span` entries of it in its
    file (the spans' index finds them) written within `:near_window` seconds
    of it (CROSS JOIN: from the few lenders out, whatever the planner guesses
    of their number). Only the kept matches and the few lent to can come
    first in the end, so the last order sorts those alone; the matches are
    read once more only to find the lent-to ones past the kept (a probe per
    row). Sorting every match again cost 28 % more at 100k dense entries.
    """
    table = "MATERIALIZED " if materialize else ""
    rel = "CASE WHEN t.top > 0 THEN {0}.b / t.top ELSE {0}.b END"
    blend = "(1 - :w) * ({rel}) + :w * {row}.rec + {row}.pri"
    return f"""
        WITH m AS {table}({matches}), t AS (SELECT max(b) AS top, count(*) AS n FROM m),
        kept AS {table}(
            SELECT m.rowid AS rowid, m.id AS id, m.b AS b, m.rec AS rec, m.pri AS pri, m.born AS born FROM m, t
            ORDER BY {blend.format(rel=rel.format("m"), row="m")} DESC, m.id, m.rowid LIMIT :keep
        ),
        lenders AS (
            SELECT kept.rowid AS rowid, {rel.format("kept")} AS rel, kept.born AS born FROM kept, t
            ORDER BY {blend.format(rel=rel.format("kept"), row="kept")} DESC, kept.id, kept.rowid LIMIT :near_lenders
        ),
        lent AS {table}(
            SELECT near.rowid AS rowid, :near_weight * sum(lenders.rel) AS near
            FROM lenders CROSS JOIN spans AS here ON here.rowid = lenders.rowid
            CROSS JOIN spans AS near ON near.path = here.path AND near.idx BETWEEN here.idx - :near_span AND here.idx + :near_span
            CROSS JOIN ranks AS other ON other.rowid = near.rowid
            WHERE near.rowid != here.rowid AND other.born BETWEEN lenders.born - :near_window AND lenders.born + :near_window
            GROUP BY near.rowid
        ),
        candidates AS (
            SELECT rowid, id, b, rec, pri FROM kept
            UNION ALL
            SELECT rowid, id, b, rec, pri FROM m
            WHERE rowid IN (SELECT rowid FROM lent) AND rowid NOT IN (SELECT rowid FROM kept)
        )
        SELECT rowid, id, b, rel, rec, pri, near, (1 - :w) * rel + :w * rec + pri + near AS score, n FROM (
            SELECT c.rowid AS rowid, c.id AS id, c.b AS b, {rel.format("c")} AS rel, c.rec AS rec, c.pri AS pri, t.n AS n,
                   coalesce((SELECT near FROM lent WHERE lent.rowid = c.rowid), 0.0) AS near
            FROM candidates AS c, t
        ) ORDER BY score DESC, id, rowid
    """
