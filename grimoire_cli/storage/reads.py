"""The reads feature modules make of the catalog, each by a name that says
what it reads (`store.reads.vocabulary()`), instead of a lambda over the
catalog at the call: the catalog's SQL and its brought-up-to-date files stay
behind `Store.ask`, and what the catalog merely keeps (read counts,
validate's reports) behind `Store.kept`, whose failure is the default.

Apart from store.py (past 450 lines), so the store stays one idea: its files.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from ..core.model import Entry
    from .catalog.catalog import Catalog
    from .catalog.queries import Filter
    from .catalog.rows import Light, Row

T = TypeVar("T")


class Asks(Protocol):
    """What the reads need of a store (`Store` itself; named here, as store.py imports this module)."""

    def ask(
        self, query: Callable[[Catalog, list[str]], T], *, include_archive: bool = ..., skip_damaged: bool = ...
    ) -> T: ...

    def kept(self, ask: Callable[[Catalog], T], default: T) -> T: ...

    def ordered(
        self, chosen: Filter, order: str, limit: int | None = ..., *, include_archive: bool = ...
    ) -> list[int]: ...

    def load(self, rowids: list[int]) -> dict[int, Entry]: ...

    @property
    def reading(self) -> Callable[[], AbstractContextManager[None]]: ...


class Reads:
    """A store's named reads (`Store.reads`)."""

    __slots__ = ("_store",)

    def __init__(self, store: Asks):
        self._store = store

    # -- words and full-text search ---------------------------------------------------

    def vocabulary(self) -> list[str]:
        """Every word the index holds (active and archived entries), sorted."""
        return self._store.ask(lambda catalog, _: catalog.vocabulary())

    def knows(self, word: str, *, include_archive: bool = True) -> bool:
        """Whether an entry holds the word."""
        return self._store.ask(lambda catalog, paths: catalog.knows(word, paths), include_archive=include_archive)

    def terms_held(self, terms: list[str], rowids: list[int], *, include_archive: bool) -> dict[int, int]:
        """How many of the FTS5 `terms` each of these catalog rows matches (none: absent)."""
        return self._store.ask(lambda catalog, _: catalog.terms_held(terms, rowids), include_archive=include_archive)

    def matches_any(self, expression: str) -> bool:
        """Whether an entry (active or archived) matches the FTS5 `expression`."""
        return self._store.ask(lambda catalog, paths: catalog.matches_any(expression, paths))

    def ranked(
        self, expression: str, chosen: Filter, *, recency_weight: float, limit: int | None, include_archive: bool
    ) -> tuple[list[Any], int]:
        """The chosen entries matching `expression`, best first (at most `limit`), and how many match in all."""
        return self._store.ask(
            lambda catalog, paths: catalog.rank(paths, expression, chosen, recency_weight=recency_weight, limit=limit),
            include_archive=include_archive,
        )

    def vectors(
        self, chosen: Filter, model: str, embed: Callable[[list[str]], list[bytes]], *, include_archive: bool
    ) -> list[tuple[int, str, bytes]]:
        """(rowid, id, float32 vector by `model`) of the chosen entries; those not yet embedded are, by `embed`."""
        return self._store.ask(
            lambda catalog, paths: catalog.vectors(paths, chosen, model, embed), include_archive=include_archive
        )

    def listed(
        self, chosen: Filter, order: str, limit: int | None = None, *, include_archive: bool = False
    ) -> dict[int, Entry]:
        """The entries `chosen` selects by catalog row, in a named `Order` (at most `limit`): the rows and
        their load read one state (storage/handed.py)."""
        with self._store.reading():
            rowids = self._store.ordered(chosen, order, limit, include_archive=include_archive)
            loaded = self._store.load(rowids)
        return {row: loaded[row] for row in rowids if row in loaded}

    # -- the active entries' fields, without their JSON ---------------------------------

    def lights(self, chosen: Filter | None = None, *, skip_damaged: bool = True) -> list[Light]:
        """The filter and rank fields of the chosen active entries (all of them: None)."""
        return self._store.ask(
            lambda catalog, paths: catalog.lights(paths, chosen), include_archive=False, skip_damaged=skip_damaged
        )

    def needing_attention(self, chosen: Filter, horizon: float, *, skip_damaged: bool = False) -> list[Light]:
        """`lights` of the chosen active entries that expire by `horizon` (POSIX seconds) or whose tier is low or
        ineffective (what `mem check` reports); a damaged file is an error, unless `skip_damaged` (a view)."""
        return self._store.ask(
            lambda catalog, paths: catalog.needing_attention(paths, chosen, horizon),
            include_archive=False,
            skip_damaged=skip_damaged,
        )

    def tallies(self, chosen: Filter) -> list[tuple[str, str, str, int]]:
        """(category, state, tier, how many) of the chosen entries, the archive included (`mem stats`)."""
        return self._store.ask(lambda catalog, paths: catalog.tallies(paths, chosen), include_archive=True)

    def oldest_newest(self, chosen: Filter) -> tuple[str | None, str | None]:
        """The ids of the chosen entries first and last in `mem list`'s order, the archive included."""
        return self._store.ask(lambda catalog, paths: catalog.oldest_newest(paths, chosen), include_archive=True)

    def ordered_counted(self, chosen: Filter, order: str, limit: int) -> tuple[list[int], int]:
        """Rows of the chosen active entries in a named `Order` (at most `limit`), and how many are chosen in all."""
        return self._store.ask(
            lambda catalog, paths: catalog.ordered_counted(paths, chosen, order, limit), include_archive=False
        )

    def normalized(self, chosen: Filter) -> list[tuple[str, str]]:
        """(id, normalized content) of the chosen active entries, for duplicate checks."""
        return self._store.ask(lambda catalog, paths: catalog.normalized(paths, chosen), include_archive=False)

    # -- ids ------------------------------------------------------------------------------

    def ids_of_day(self, day: str) -> list[str]:
        """Ids minted on one day (`MEM-<day>-...`), in every file and the archive."""
        return self._store.ask(lambda catalog, paths: catalog.ids_of_day(paths, day))

    def highest_per_day(self) -> list[tuple[str, int]]:
        """(day, the highest number of an id of that day) over every file; a damaged one passed over."""
        return self._store.ask(lambda catalog, paths: catalog.highest_per_day(paths), skip_damaged=True)

    def rows_by_file(self, files: set[str]) -> dict[str, list[Row]]:
        """Every row of each of these files (relative paths), in file order, by file."""
        return self._store.ask(lambda catalog, paths: {p: catalog.file_entries(p) for p in paths if p in files})

    def shared_with_tracked(self, local: set[str]) -> set[str]:
        """Ids an entry of the `local` files shares with an entry of a tracked (not local) file."""
        return self._store.ask(
            lambda catalog, paths: catalog.shared_ids(
                [p for p in paths if p in local], [p for p in paths if p not in local]
            )
        )

    # -- what the catalog keeps (best effort: its failure is the default) ---------------

    def note_access(self, entry_id: str, at: float) -> None:
        """Count a read of the entry (`mem recall`), at POSIX time `at`."""
        self._store.kept(lambda catalog: catalog.record_access(entry_id, at), None)

    def accesses(self, ids: list[str]) -> dict[str, tuple[int, float]]:
        """(count, last access as POSIX time) by id, for the ids read at least once."""
        return self._store.kept(lambda catalog: catalog.accesses(ids), {})

    def access_totals(self) -> tuple[int, int]:
        """(entries read at least once, reads in all)."""
        return self._store.kept(lambda catalog: catalog.access_totals(), (0, 0))

    def note_cache(self, category: str, hit: bool) -> None:
        """Count a hit (or a miss) of the auto-cache in `category`."""
        self._store.kept(lambda catalog: catalog.record_cache(category, hit), None)

    def cache_counts(self) -> dict[str, tuple[int, int]]:
        """(hits, misses) of the auto-cache by category."""
        return self._store.kept(lambda catalog: catalog.cache_counts(), {})

    def report(self, path: str, key: str) -> Any | None:
        """The validation result kept for a file, if it was made under `key`."""
        return self._store.kept(lambda catalog: catalog.report(path, key), None)

    def keep_report(self, path: str, key: str, value: Any) -> None:
        self._store.kept(lambda catalog: catalog.keep_report(path, key, value), None)

    def chunk_reports(self, path: str, version: str) -> dict[bytes, Any]:
        """The results kept for a file's entries, by chunk hash, if made under `version`."""
        return self._store.kept(lambda catalog: catalog.chunk_reports(path, version), {})

    def keep_chunk_reports(self, path: str, version: str, rows: list[tuple[bytes, Any]]) -> None:
        self._store.kept(lambda catalog: catalog.keep_chunk_reports(path, version, rows), None)
