"""Pattern memory (the Persistent Memory System): what tasks had in common,
derived from the observation log and kept in the catalog
(`execution_log`). Three types:

- `query_pattern`: the task's goal with codes, numbers and e-mail
  addresses wildcarded (`create_shipment_for_facility_*`);
- `plan_pattern`: the tools the task ran, in order (`a → b → c`);
- `tool_sequence`: each pair of tools run one after the other (`a → b`);
- `error_pattern`: a tool and the shape of an error that failed it
  (`create_shipment: carrier timeout after <n>s`); its success rate is the
  share of those tasks that succeeded all the same, its evidence the first
  tasks that showed it.

A pattern's numbers are over the tasks that showed it: success rate (the
task's outcome), mean duration and steps, usage, first and last seen, and
the first successful task ids as evidence (an error pattern's: the first tasks showing it). Reliability is the lower bound
of the 95% Wilson interval of the success rate: 9 successes out of 10 is
less sure than 900 out of 1000, and ranks below it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..core.bounds import whole
from ..core.errors import BadInput
from ..storage.store import Store
from .execution_log import derived
from .tools import evidence_of

if TYPE_CHECKING:
    from ..storage.catalog.learned import PatternRow

TYPES = ("query_pattern", "plan_pattern", "tool_sequence", "error_pattern")


def reliability(successes: int, runs: int, z: float = 1.96) -> float:
    """The Wilson score interval's lower bound of successes / runs."""
    if runs <= 0:
        return 0.0
    p = successes / runs
    centre = p + z * z / (2 * runs)
    spread = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs))
    return max(0.0, (centre - spread) / (1 + z * z / runs))


class Pattern:
    __slots__ = (
        "evidence",
        "first_seen",
        "last_seen",
        "mean_ms",
        "mean_steps",
        "pattern",
        "successes",
        "type",
        "usage",
    )

    def __init__(self, row: PatternRow):
        self.type, self.pattern, self.usage, self.successes = row.type, row.pattern, int(row.usage), int(row.ok)
        self.mean_ms = row.duration / row.timed if row.timed else None
        self.mean_steps = row.steps / row.usage if row.usage else 0.0
        self.first_seen, self.last_seen = row.first_seen, row.last_seen
        self.evidence = evidence_of(row.evidence)

    @property
    def success_rate(self) -> float:
        return self.successes / self.usage if self.usage else 0.0

    @property
    def reliability(self) -> float:
        return reliability(self.successes, self.usage)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "pattern": self.pattern,
            "usage": self.usage,
            "successes": self.successes,
            "success_rate": round(self.success_rate, 4),
            "reliability": round(self.reliability, 4),
            "mean_duration_ms": round(self.mean_ms, 1) if self.mean_ms is not None else None,
            "mean_steps": round(self.mean_steps, 2),
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "evidence": self.evidence,
        }


def check_type(kind: str | None) -> str | None:
    if kind is not None and kind not in TYPES:
        raise BadInput(f"unknown pattern type {kind!r}", f"use one of {', '.join(TYPES)}")
    return kind


def patterns(store: Store, kind: str | None = None, min_usage: int = 1, context: str | None = None) -> list[Pattern]:
    """The patterns of the observed tasks (of one type, used at least
    `min_usage` times; shown by a task in `context`), most used first. A
    pattern's numbers are over all its tasks, whatever their context."""
    check_type(kind)
    whole(min_usage, "--min-usage")

    def read(catalog: Any) -> list[Pattern]:
        rows = catalog.pattern_rows(kind, min_usage)
        if context is not None:
            seen = catalog.patterns_in(context)
            rows = [row for row in rows if (row.type, row.pattern) in seen]
        return [Pattern(row) for row in rows]

    return derived(store, read)
