"""Protea's `MemoryStore` (the Protea design's calls) over a `Grimoire`: the same
methods and rows (dicts keyed by the `memory` table's columns), newest
first (docs/adapters.md).

Each entry type is a category of `mem init --preset protea`; `task` is the
category `user_task` when SABRE's prospective tasks already hold `task`.
The generation and the metadata are kept in the entry's metadata.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..core.bounds import whole
from ..core.errors import BadInput

if TYPE_CHECKING:
    from ..api import Grimoire
    from ..core.model import Entry

ENTRY_TYPES = ("observation", "crash_log", "reflection", "directive", "task")
# get_context_for_evolution's blocks, in priority order: (entry type, how many).
EVOLUTION = (("directive", 1), ("crash_log", 2), ("reflection", 3), ("observation", 2), ("task", 2))
ALWAYS_KEPT = ("directive", "task")


class MemoryStore:
    """Protea's memory over one grimoire. `summarize` makes `compact` condense
    through consolidate.command (else from the entries' summaries)."""

    def __init__(self, grimoire: Grimoire, *, summarize: bool = False):
        self.grimoire = grimoire
        self.summarize = summarize
        self.categories = {entry_type: self._category(entry_type) for entry_type in ENTRY_TYPES}
        self.types = {category: entry_type for entry_type, category in self.categories.items()}

    def _category(self, entry_type: str) -> str:
        spec = self.grimoire.config.categories.get(entry_type)
        if entry_type == "task" and (spec is None or spec.kind != "note"):
            spec = self.grimoire.config.categories.get("user_task")
        if spec is None:
            return entry_type  # refused when used, with the preset to run
        return spec.name

    def _of(self, entry_type: str) -> str:
        if entry_type not in ENTRY_TYPES:
            raise BadInput(f"unknown entry type {entry_type!r}", f"use one of {', '.join(ENTRY_TYPES)}")
        category = self.categories[entry_type]
        if category not in self.grimoire.config.categories:
            raise BadInput(f"no category for Protea's {entry_type} entries", "run `mem init --preset protea`")
        return category

    # -- existing ----------------------------------------------------------------

    def add(self, entry_type: str, generation: int, content: str, metadata: dict[str, Any] | None = None) -> str:
        """One row: the new entry's id."""
        if isinstance(generation, bool) or not isinstance(generation, int) or generation < 0:
            raise BadInput(f"bad generation {generation!r}", "give the generation number, e.g. add('task', 12, ...)")
        if metadata is not None and not isinstance(metadata, dict):
            raise BadInput("metadata is not a mapping", "give a dict, e.g. {'score': 0.9}")
        category = self._of(entry_type)
        entry = self.grimoire.add(content, category, metadata={**(metadata or {}), "generation": generation})
        return entry.id

    def get_recent(self, limit: int = 10) -> list[dict[str, Any]]:
        """The newest rows of every type."""
        return self._rows([self._of(t) for t in ENTRY_TYPES if t in self._present()], limit)

    def get_by_type(self, entry_type: str, limit: int = 10) -> list[dict[str, Any]]:
        """The newest rows of one type."""
        return self._rows([self._of(entry_type)], limit)

    def _present(self) -> list[str]:
        return [t for t in ENTRY_TYPES if self.categories[t] in self.grimoire.config.categories]

    def _rows(self, categories: list[str], limit: int) -> list[dict[str, Any]]:
        whole(limit, "the limit")
        return [self._row(entry) for entry in self.grimoire.list(categories=categories, recent=limit)]

    def _row(self, entry: Entry) -> dict[str, Any]:
        metadata = dict(entry.data.get("metadata") or {})
        generation = metadata.pop("generation", None)
        if generation is None and metadata.get("compacted"):
            generation = self._newest_generation(entry.data.get("related_memories") or [])
        return {
            "id": entry.id,
            "generation": generation,
            "entry_type": self.types.get(entry.category, entry.category),
            "content": entry.content,
            "metadata": json.dumps(metadata),
            "timestamp": entry.timestamp,
        }

    def _newest_generation(self, condensed_ids: list[str]) -> int | None:
        """A row compact() condensed has Protea's NOT NULL generation: the newest of the rows it condensed."""
        generations = [
            (e.data.get("metadata") or {}).get("generation") for e in self.grimoire.show_many(list(condensed_ids))
        ]
        return max((g for g in generations if isinstance(g, int) and not isinstance(g, bool)), default=None)

    # -- planned -----------------------------------------------------------------

    def get_context_for_evolution(self, limit: int = 10) -> list[dict[str, Any]]:
        """The evolution blocks in priority order, each newest first, cut to `limit`."""
        rows: list[dict[str, Any]] = []
        for entry_type, count in EVOLUTION:
            if entry_type == "observation":
                rows += self._get_high_score_observations(count)
            else:
                rows += self.get_by_type(entry_type, limit=count)
        return rows[:limit]

    def _get_high_score_observations(self, limit: int = 2) -> list[dict[str, Any]]:
        """Observations with the highest `score` in their metadata, then the newest."""
        every = self._rows([self._of("observation")], 10_000)
        scored = sorted(every, key=lambda row: -_score(row))  # stable: newest first among equals
        return scored[:limit]

    def search(self, keywords: list[str], limit: int = 10) -> list[dict[str, Any]]:
        """Rows whose content holds every keyword (case-insensitive), newest first."""
        if isinstance(keywords, str) or not keywords or not all(isinstance(k, str) and k for k in keywords):
            raise BadInput("search needs a list of keywords", 'give e.g. search(["timeout", "import"])')
        whole(limit, "the limit")
        wanted = [k.lower() for k in keywords]
        rows = self._rows([self._of(t) for t in self._present()], 100_000)
        return [row for row in rows if all(k in row["content"].lower() for k in wanted)][:limit]

    def compact(self, keep_recent: int = 200, keep_types: dict[str, int] | None = None) -> dict[str, list[str]]:
        """Keep the newest `keep_recent` rows of every type together (directives
        and tasks count, and are always kept), and of each type its newest
        `keep_types[type]`; condense the rest of each type into one entry.
        The ids replaced, by entry type."""
        whole(keep_recent, "keep_recent")
        wanted = keep_types or {}
        if not isinstance(wanted, dict) or any(t not in ENTRY_TYPES for t in wanted):
            raise BadInput(f"bad keep_types {wanted!r}", "map entry types to counts, e.g. {'crash_log': 20}")
        types = [t for t in self._present() if t not in ALWAYS_KEPT]
        if not types:
            return {}
        done = self.grimoire.lifecycle.compact(
            keep={self._of(t): wanted.get(t, 0) for t in types}, keep_total=keep_recent, summarize=self.summarize
        )
        return {t: done.replaced.get(self._of(t), []) for t in types}


def _score(row: dict[str, Any]) -> float:
    score = json.loads(row["metadata"]).get("score")
    return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else float("-inf")
