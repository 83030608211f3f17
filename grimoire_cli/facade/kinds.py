"""The facade's methods for the kinds of memory (docs/agent-personas.md): keyed
facts, episodes, procedures and prospective tasks; `Grimoire` inherits them, so `api.py` stays the map of the
commands Loa's protocol defines and this file the map of the rest.

Each method is one call an agent runtime makes; SABRE's own names for them
are in `adapters/sabre.py`. The work is done by the kind's module.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput, Duplicate, NotFound

if TYPE_CHECKING:
    from ..core.config import Config
    from ..core.model import Entry
    from ..kinds.procedures import Checklist, Saved
    from ..storage.catalog.queries import Filter
    from ..storage.store import Store


def categories_of(config: Config, kind: str, category: str | None = None) -> list[str]:
    """The categories of `kind` a read covers: `category` (checked), else
    all of them; none is bad input with the preset that adds one."""
    if category is not None or not config.names_of_kind(kind):
        return [config.of_kind(kind, category).name]
    return config.names_of_kind(kind)


class KindsFacade:
    """Mixed into `Grimoire`: it provides `config`, `store`, and the methods stubbed below."""

    config: Config
    store: Store

    if TYPE_CHECKING:

        def now(self) -> datetime: ...
        def add_many(self, items: Iterable[Any], *, skip_invalid: bool = False) -> list[Entry]: ...
        def list(self, *, categories: Iterable[str] | None = None, **options: Any) -> list[Entry]: ...
        def filter(
            self,
            states: set[str],
            categories: Iterable[str] | None,
            tags: Iterable[str] | None,
            *,
            since: str | datetime | None = None,
            until: str | datetime | None = None,
        ) -> Filter: ...

    def _of_kind(self, kind: str, category: str | None = None) -> builtins.list[str]:
        return categories_of(self.config, kind, category)

    # -- procedures ----------------------------------------------------------

    def add_procedure(
        self,
        document: dict[str, Any] | str,
        *,
        where: str = "procedure",
        category: str | None = None,
        confidence: float | None = None,
        importance: int | None = None,
    ) -> Saved:
        """Keep a runbook (a mapping, or its YAML/JSON text; see kinds/procedures.py);
        it supersedes the active procedure of its name. The same version again
        writes nothing (`written` False). mem never runs a step."""
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
        )
        try:
            return Saved(self.add_many([request])[0], True)
        except Duplicate as exc:  # the add path refuses the version already active (adding.py): nothing written
            current = self._active_procedure(fields["name"])
            if current is None or current.id != exc.of or current.category != spec.name:
                raise
            return Saved(current, False)

    def _active_procedure(self, name: str) -> Entry | None:
        """The active version of the procedure `name`, if any."""
        from ..storage.catalog.queries import Filter, Order

        chosen = Filter(at=self.now().timestamp(), categories=self._of_kind("procedure"), name=name)
        rowids = self.store.ordered(chosen, Order.NEWEST, 1)
        return self.store.load(rowids).get(rowids[0]) if rowids else None

    def procedure(self, name: str, params: dict[str, str] | None = None, *, template: bool = False) -> Checklist:
        """The active procedure `name` as a checklist, its `{params}` filled in
        (BadInput naming any missing one; a `template` leaves them as written).
        Nothing is executed."""
        from ..kinds.procedures import checklist

        found = self._active_procedure(name)
        if found is None:
            raise NotFound(f"no active procedure named {name!r}", "list them with `mem procedures`")
        return checklist(found, dict(params or {}), template)

    def procedures(self, *, category: str | None = None) -> builtins.list[Entry]:
        """The active procedures, by name."""
        return sorted(
            self.list(categories=self._of_kind("procedure", category)), key=lambda entry: str(entry.data.get("name"))
        )

    # -- the store ---------------------------------------------------------------

    def categories(self) -> builtins.list[dict[str, Any]]:
        """Each category of this scope: name, kind, ttl, floor, tracked, file."""
        return [
            {
                "name": c.name,
                "kind": c.kind,
                "ttl": c.ttl,
                "confidence_required": c.confidence_required,
                "tracked": c.tracked,
                "file": self.config.relative(self.store.category_path(c.name)),
            }
            for c in self.config.categories.values()
        ]
