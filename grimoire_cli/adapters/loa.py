"""Loa's memory protocol (the Loa design's calls) over a `Grimoire`. Loa names
operations, not functions; these are its operations by their descriptive
names, taking and returning Loa's entries as mappings (the fields of
the design's section 2.2, which are the grimoire's own: docs/adapters.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput

if TYPE_CHECKING:
    from ..api import Grimoire
    from ..core.model import Entry
    from ..retrieval.search import Hit, Hits

OUTCOMES = {"success": True, "failure": False}
# What Loa's oracle searches ("learnings are indexed and searchable").
ORACLE_CATEGORIES = ["learning"]


def oracle_hits(grimoire: Grimoire, text: str, **filters: Any) -> Hits:
    """The learnings ranked for `text`, for Loa's oracle: refused while
    retrieval.integrate_with_oracle is false (Loa keeps its memory out of the oracle then)."""
    if not grimoire.config.retrieval.get("integrate_with_oracle", True):
        raise BadInput(
            "retrieval.integrate_with_oracle is false: memory is kept out of Loa's oracle",
            "set memory_schema.retrieval.integrate_with_oracle: true in .loa.config.yaml",
        )
    return grimoire.query(text, categories=ORACLE_CATEGORIES, **filters)


def oracle_record(hit: Hit) -> dict[str, Any]:
    """One hit as the oracle reads it (one JSON object a line, docs/adapters.md)."""
    entry = hit.entry
    return {
        "id": entry.id,
        "score": round(hit.score, 3),
        "summary": entry.summary,
        "content": entry.content,
        "tags": list(entry.tags),
        "confidence": entry.confidence,
    }


class Loa:
    """Loa's operations over one grimoire (the default config is Loa's)."""

    def __init__(self, grimoire: Grimoire):
        self.grimoire = grimoire

    def create(
        self,
        content: str,
        category: str,
        confidence: float | None = None,
        source: dict[str, Any] | None = None,
        tags: Iterable[str] = (),
    ) -> dict[str, Any]:
        """A new memory: id, one-line summary, confidence, source, expiry when not permanent, tags."""
        given = source or {}
        if not isinstance(given, dict):
            raise BadInput("source is not a mapping", "give {session_id, agent, phase}")
        entry = self.grimoire.add(
            content,
            category,
            confidence=confidence,
            tags=list(tags),
            session_id=given.get("session_id"),
            agent=given.get("agent"),
            phase=given.get("phase"),
        )
        return entry.to_dict()

    def retrieve(
        self,
        category: str | None = None,
        tags: Iterable[str] | None = None,
        query: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Active memories of the category and tags (ranked by `query` when
        given, else newest first), confidence floors and expiry applied, at
        most retrieval.max_per_query."""
        categories = [category] if category else None
        if query is not None:
            hits = self.grimoire.query(query, categories=categories, tags=tags, limit=limit)
            return [hit.entry.to_dict() for hit in hits]
        most = int(limit or self.grimoire.config.retrieval["max_per_query"])
        kept = [e for e in self.grimoire.list(categories=categories, tags=tags) if self._trusted(e)]
        return [e.to_dict() for e in kept[:most]]

    def _trusted(self, entry: Entry) -> bool:
        """At or above the lower of retrieval.min_confidence and its category's floor (as `mem query` filters)."""
        spec = self.grimoire.config.categories.get(entry.category)
        floor = float(self.grimoire.config.retrieval["min_confidence"])
        if spec is not None:
            floor = min(floor, spec.confidence_required)
        return entry.confidence >= floor

    def update(self, old_id: str, content: str) -> dict[str, Any]:
        """A new entry superseding `old_id` (kept for audit, `superseded_by` set)."""
        return self.grimoire.supersede(old_id, content).to_dict()

    def archive(self) -> list[str]:
        """Move the expired (and ineffective) entries to the archive, in one commit; their ids."""
        return list(self.grimoire.archive().archived)

    def purge_archive(self) -> list[str]:
        """Remove what was archived longer ago than archive.retention_days
        (Loa's "keep for a configurable period"), in one commit; their ids."""
        return list(self.grimoire.purge().purged or [])

    def session_start_check(self) -> dict[str, Any]:
        """Archive what expired (auto_archive) and say what expires within warn_before_archive_days."""
        return self.grimoire.check().to_dict()

    def record_application(self, memory_id: str, outcome: str | bool) -> dict[str, Any]:
        """One application and whether it helped (`success`/`failure` or a bool); the new effectiveness."""
        if not isinstance(outcome, bool):
            if outcome not in OUTCOMES:
                raise BadInput(f"bad outcome {outcome!r}", "give success or failure")
            outcome = OUTCOMES[outcome]
        return dict(self.grimoire.apply(memory_id, outcome).data["effectiveness"])

    def oracle_query(self, text: str, limit: int | None = None) -> list[dict[str, Any]]:
        """The learnings ranked for `text` (what Loa's oracle searches); refused
        while retrieval.integrate_with_oracle is false."""
        return [hit.entry.to_dict() for hit in oracle_hits(self.grimoire, text, limit=limit)]
