"""Which catalog the rows a command holds came from.

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
a convention the code does not check. A library caller that neither locks
nor refreshes gets the error once, at its first read after the failure.
"""

from __future__ import annotations


class Handed:
    """The catalog (by its `switches`) whose rows were handed out since the last fresh start."""

    __slots__ = ("at",)

    def __init__(self) -> None:
        self.at: int | None = None  # None: no rows held

    def forget(self) -> None:
        self.at = None

    def mixes(self, switches: int) -> bool:
        """Whether rows read now, from the catalog after `switches` moves, would
        be mixed with rows of another catalog; if not, they are held too."""
        if self.at is None:
            self.at = switches
        return self.at != switches
