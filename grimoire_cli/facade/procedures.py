"""`g.procedures`: procedural memory (docs/agent-personas.md), runbooks kept
by name, a new version superseding the old; mem never runs a step. SABRE's own
names for these calls are in `adapters/sabre.py`; the work is done by
`kinds/procedures.py`.
"""

from __future__ import annotations

import builtins
import json
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput, Duplicate, NotFound
from .host import Namespace
from .kinds import added_on_first_use, categories_of

if TYPE_CHECKING:
    from ..core.model import Entry
    from ..kinds.procedures import Checklist, Saved


class Procedures(Namespace):
    """The procedures of the grimoire it serves."""

    def add(
        self,
        document: dict[str, Any] | str,
        *,
        where: str = "procedure",
        category: str | None = None,
        confidence: float | None = None,
        importance: int | None = None,
        related: builtins.list[str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Saved:
        """Keep a runbook (a mapping, or its YAML/JSON text; see kinds/procedures.py);
        it supersedes the active procedure of its name. The same version again
        writes nothing (`written` False). mem never runs a step. `related`:
        ids it was learned from (they must exist); `metadata`: free data kept with it.
        SABRE's procedure YAML is read too (`kinds.procedures.from_sabre`): its
        category, learned_from and avg_execution_time fill what is not given."""
        from ..kinds.procedures import from_sabre

        document, beside = from_sabre(document, where, self.config.scope)
        category = category if category is not None else beside.get("category")
        related = related if related is not None else beside.get("related")
        metadata = metadata if metadata is not None else beside.get("metadata")
        with added_on_first_use(self.grimoire, category, "procedure") as added:
            if added:  # the category is new: the grimoire runs on the config naming it
                self.config, self.store = self.grimoire.config, self.grimoire.store
            return self._add(document, where, category, confidence, importance, related, metadata)

    def _add(
        self,
        document: dict[str, Any] | str,
        where: str,
        category: str | None,
        confidence: float | None,
        importance: int | None,
        related: builtins.list[str] | None,
        metadata: dict[str, Any] | None,
    ) -> Saved:
        from ..kinds.procedures import Saved, content_of, fields_of, parse
        from ..memory.request import Request

        spec = self.config.of_kind("procedure", category)
        if not isinstance(document, str):
            try:
                document = json.dumps(document)  # checked as a file would be (JSON is YAML)
            except (TypeError, ValueError):
                raise BadInput("the procedure is not JSON-able", "give text, lists and mappings") from None
        document = parse(document, where)
        fields = fields_of(document)
        tags = document.get("tags") or []  # parse checked they are text
        request = Request(
            content_of(fields),
            category=spec.name,
            fields=fields,
            tags=tags,
            confidence=confidence,
            importance=importance,
            related=list(related or []),
            metadata=metadata,
        )
        try:
            return Saved(self.grimoire.add_many([request])[0], True)
        except Duplicate as exc:  # the add path refuses the version already active (adding.py): nothing written
            current = self._active(fields["name"])
            if current is None or current.id != exc.of or current.category != spec.name:
                raise
            return Saved(current, False)

    def _active(self, name: str) -> Entry | None:
        """The active version of the procedure `name`, if any."""
        from ..storage.catalog.queries import Filter, Order

        chosen = Filter(
            at=self.grimoire.now().timestamp(), categories=categories_of(self.config, "procedure"), name=name
        )
        return next(iter(self.store.reads.listed(chosen, Order.NEWEST, 1).values()), None)

    def get(self, name: str, params: dict[str, str] | None = None, *, template: bool = False) -> Checklist:
        """The active procedure `name` as a checklist, its `{params}` filled in
        (BadInput naming any missing one; a `template` leaves them as written).
        Nothing is executed."""
        from ..kinds.procedures import checklist

        found = self._active(name)
        if found is None:
            raise NotFound(f"no active procedure named {name!r}", "list them with `mem procedures`")
        return checklist(found, dict(params or {}), template)

    def list(self, *, category: str | None = None) -> builtins.list[Entry]:
        """The active procedures, by name."""
        return sorted(
            self.grimoire.list(categories=categories_of(self.config, "procedure", category)),
            key=lambda entry: str(entry.data.get("name")),
        )
