"""Which catalog the rows a command holds came from.

A read hands its caller catalog row numbers (a ranking, a listing) that a
later read of the same command uses: a load, a query's coverage, the second
ranking a hybrid query fuses. When the on-disk catalog fails, the process
moves to one in memory (`Connection.switches` counts the moves), which
numbers its rows afresh: rows of the old catalog read there would name other
entries, or none. So a read that would mix them names the cache instead
(`Store._held`). The same holds for a snapshot this process gave up for a
write of its own while another process changed entries (`Connection.moves`):
the rows read before and after it are of two states. Any answer counts as rows (a count, a word list too): the
rule stays one line, and the failure is rare. A lock's edges, a refresh (each
request of a long-lived server) and that error itself start again from
nothing held: every write reads what it changes under its lock and hands no
rows out of it (mem compact reads again under its lock what it read before),
a convention the code does not check. A library caller that neither locks
nor refreshes gets the error once, at its first read after the failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .catalog.connection import Connection


class Handed:
    """The catalog and its state (switches, moves) whose rows were handed out since the last fresh start."""

    __slots__ = ("_catalog", "at")

    def __init__(self, catalog: Connection) -> None:
        self._catalog = catalog
        self.at: tuple[int, int] | None = None  # None: no rows held

    def forget(self) -> None:
        """Nothing held: the snapshot the reads saw is given up too."""
        self.at = None
        self._catalog.release()

    def mixes(self) -> bool:
        """Whether rows read now would be mixed with rows of another catalog
        or state; if not, they are held too."""
        where = (self._catalog.switches, self._catalog.moves)
        if self.at is None:
            self.at = where
        return self.at != where

    def changed(self) -> bool:
        """Whether the rows held are of the same catalog, in a state another process has changed since."""
        return self.at is not None and self.at[0] == self._catalog.switches and self.at[1] != self._catalog.moves
