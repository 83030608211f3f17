"""Which catalog the rows a command holds came from, and the one state of it
a read that hands rows to the next one sees.

A read hands its caller catalog row numbers (a ranking, a listing) that a
later read of the same command uses: a load, a query's coverage, the second
ranking a hybrid query fuses. When the on-disk catalog fails, the process
moves to one in memory (`Connection.switches` counts the moves), which
numbers its rows afresh: rows of the old catalog read there would name other
entries, or none. So a read that would mix them names the cache instead
(`Store._held`). Any answer counts as rows (a count, a word list too): the
rule stays one line, and the failure is rare. A lock's edges, a refresh (each
request of a long-lived server) and that error itself start again from
nothing held: every write reads what it changes under its lock and hands no
rows out of it (mem compact reads again under its lock what it read before),
a convention the code does not check.

Another process can re-index a file between two reads, and the catalog
numbers a new row as the largest + 1, so a row given up can come back as
another entry's. The reads of a `reading` block (a query: its ranking,
coverage and load) see one snapshot of the catalog (`Connection.hold`, taken
at the first read's check of the files, let go when the block ends, so a
long-lived caller sees what others wrote by its next call and never pins
the WAL). A write of this process's own inside the block gives the snapshot
up and takes a new one; when another process changed entries in between
(`Connection.others_changes`), the rows read before and after are of two
states, and are refused as above.

So every load sits in one block with the read that handed its rows
(`Reads.listed` is the common pair: a listing and its load); a `Store.load`
outside one is a mistake of mem's code, refused every time (not only when
the race happens), so the tests meet it. The other reads that take rows (a
query's coverage, its fused ranking, the due tasks a context pins) sit in
the query's block too, unchecked. A block holds no write of its own where it
can help it (`mem review` keeps its pairs after its block).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .catalog.connection import Connection


class Handed:
    """The catalog and its state (switches, others' changes) whose rows were handed out since the last fresh start."""

    __slots__ = ("_catalog", "_reading", "at")

    def __init__(self, catalog: Connection) -> None:
        self._catalog = catalog
        self._reading = False
        self.at: tuple[int, int] | None = None  # None: no rows held

    def forget(self) -> None:
        """Nothing held: the snapshot the reads saw is given up too."""
        self.at = None
        self._catalog.release()

    def mixes(self) -> bool:
        """Whether rows read now would be mixed with rows of another catalog
        or state; if not, they are held too."""
        where = (self._catalog.switches, self._catalog.others_changes)
        if self.at is None:
            self.at = where
        return self.at != where

    def changed(self) -> bool:
        """Whether the rows held are of the same catalog, in a state another process has changed since."""
        return (
            self.at is not None and self.at[0] == self._catalog.switches and self.at[1] != self._catalog.others_changes
        )

    @contextmanager
    def reading(self) -> Iterator[None]:
        """The reads inside see one state of the catalog; it starts and ends
        with nothing held. Inside another block, that block's."""
        if self._reading:
            yield
            return
        self.forget()
        self._reading = True
        try:
            yield
        finally:
            self._reading = False
            self.forget()

    def inside(self) -> bool:
        """Whether a `reading` block is open (`Store.load` is refused outside one)."""
        return self._reading

    def hold(self) -> None:
        """A read checked the files: inside a `reading` block, its snapshot is taken (or kept)."""
        if self._reading:
            self._catalog.hold()
