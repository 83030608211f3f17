"""The facade's methods for the kinds of memory (docs/agent-personas.md): keyed
facts, episodes, procedures and prospective tasks; `Grimoire` inherits them, so `api.py` stays the map of the
commands Loa's protocol defines and this file the map of the rest.

Each method is one call an agent runtime makes; SABRE's own names for them
are in `adapters/sabre.py`. The work is done by the kind's module.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.bounds import MAX_PATTERN, whole
from ..core.bounds import text as bounds_text
from ..core.errors import BadInput, Duplicate, NotFound

if TYPE_CHECKING:
    from ..core.config import Config
    from ..core.model import Entry
    from ..kinds.facts import Remembered
    from ..kinds.procedures import Checklist, Saved
    from ..retrieval.search import Hit
    from ..storage.catalog.queries import Filter
    from ..storage.store import Store


class KindsFacade:
    """Mixed into `Grimoire`: it provides `config`, `store`, and the methods stubbed below."""

    config: Config
    store: Store

    if TYPE_CHECKING:

        def now(self) -> datetime: ...
        def add_many(self, items: Iterable[Any], *, skip_invalid: bool = False) -> list[Entry]: ...
        def list(self, *, categories: Iterable[str] | None = None, **options: Any) -> list[Entry]: ...
        def _filter(
            self,
            states: set[str],
            categories: Iterable[str] | None,
            tags: Iterable[str] | None,
            *,
            since: str | datetime | None = None,
            until: str | datetime | None = None,
        ) -> Filter: ...

    def _of_kind(self, kind: str, category: str | None = None) -> builtins.list[str]:
        """The categories of `kind` a read covers: `category` (checked), else
        all of them; none is bad input with the preset that adds one."""
        if category is not None or not self.config.names_of_kind(kind):
            return [self.config.of_kind(kind, category).name]
        return self.config.names_of_kind(kind)

    # -- prospective tasks ---------------------------------------------------

    def add_task(
        self,
        text: str,
        *,
        due: str | None = None,
        on: str | None = None,
        next_session: bool = False,
        condition: str | None = None,
        context: dict[str, Any] | None = None,
        category: str | None = None,
        tags: Iterable[str] = (),
        importance: int | None = None,
    ) -> Entry:
        """Schedule a task with one trigger: `due` (+1h or an ISO time), `on`
        (an event `fire` names), `next_session`, or `condition` (an expression
        over the context `due_tasks` is given, kinds/conditions.py)."""
        from ..kinds.tasks import fields_for
        from ..memory.request import Request

        spec = self.config.of_kind("task", category)
        fields = fields_for(
            text, self.now(), due=due, on=on, next_session=next_session, condition=condition, context=context
        )
        return self.add_many(
            [Request(text, category=spec.name, fields=fields, tags=list(tags), importance=importance)]
        )[0]

    def tasks(self, *, every: bool = False) -> builtins.list[Entry]:
        """Pending tasks, due first (with `every`, ended ones not yet archived too)."""
        from ..kinds.tasks import tasks

        self.config.of_kind("task")
        return tasks(self.store, self.now(), every=every)

    def due_tasks(self, *, context: dict[str, Any] | None = None) -> builtins.list[Entry]:
        """Pending tasks whose time, event or session has come, and, given a
        `context`, the condition tasks whose condition holds against it."""
        from ..kinds.tasks import due

        self.config.of_kind("task")
        return due(self.store, self.now(), context)

    def end_task(self, entry_id: str, status: str = "done") -> Entry:
        """Mark a pending task done or cancelled (an edit in place); it is
        archived once the category's ttl has passed."""
        from ..kinds.tasks import ended, task_entry
        from ..memory.adding import update

        if status not in ("done", "cancelled"):
            raise BadInput(f"bad status {status!r}", "a task ends done or cancelled")
        with self.store.lock():
            entry = task_entry(self.store, entry_id)
            entry.data = ended(entry, status, self.now())
            update(self.store, entry_id, entry.data)
        return entry

    def fire(self, event: str) -> builtins.list[Entry]:
        """Make the pending tasks waiting for `event` due now; those tasks."""
        from ..kinds.tasks import check_event, fired, tasks
        from ..memory.adding import update_many

        check_event(event)
        self.config.of_kind("task")
        with self.store.lock():
            waiting = tasks(self.store, self.now())
            changes = fired(waiting, event, self.now())
            if changes:
                update_many(self.store, changes)
        for entry in waiting:
            entry.data = changes.get(entry.id, entry.data)
        return [entry for entry in waiting if entry.id in changes]

    # -- episodes ------------------------------------------------------------

    def add_episode(
        self,
        event: str,
        *,
        context: dict[str, Any] | None = None,
        learned: str | None = None,
        outcome: str = "unknown",
        category: str | None = None,
        tags: Iterable[str] = (),
        importance: int | None = None,
        session_id: str | None = None,
        agent: str | None = None,
    ) -> Entry:
        """Record that `event` happened: in what `context`, how it ended, what was learned."""
        from ..kinds.episodes import content_of, fields_for
        from ..memory.request import Request

        spec = self.config.of_kind("episode", category)
        fields = fields_for(event, context=context, learned=learned, outcome=outcome)
        return self.add_many(
            [
                Request(
                    content_of(fields),
                    category=spec.name,
                    fields=fields,
                    tags=list(tags),
                    importance=importance,
                    session_id=session_id,
                    agent=agent,
                )
            ]
        )[0]

    def episodes(
        self,
        text: str | None = None,
        *,
        event: str | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        limit: int = 10,
        category: str | None = None,
    ) -> builtins.list[Hit]:
        """Active episodes matching `text` best first (BM25 over event, lesson
        and context, blended with recency), else newest first; of one `event`,
        created within `since`..`until` (30d, 48h, an ISO date or time)."""
        from ..kinds.tasks import check_event
        from ..retrieval.search import ranked_or_newest

        whole(limit, "the limit")
        if text is not None:
            bounds_text(text, "the query")
        chosen = self._filter({"active"}, self._of_kind("episode", category), None, since=since, until=until)
        chosen = chosen.but(name=check_event(event)) if event is not None else chosen
        return ranked_or_newest(
            self.store,
            text,
            chosen,
            self.now(),
            recency_weight=float(self.config.retrieval["recency_weight"]),
            limit=limit,
        )

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

    # -- keyed facts ---------------------------------------------------------

    def remember(
        self,
        key: str,
        value: Any,
        *,
        ttl: str | None = None,
        category: str | None = None,
        confidence: float | None = None,
        tags: Iterable[str] = (),
        session_id: str | None = None,
        agent: str | None = None,
        refresh: bool = False,
    ) -> Remembered:
        """Keep a JSON-able `value` under a dotted `key`, superseding the
        key's active entry; an unchanged value writes nothing (`written` False)
        unless `refresh`, which writes it again so its ttl counts from now."""
        from ..kinds.facts import Remembered, holder

        # The key is checked by the add it makes, after the guard's scan: `bad key 'AKIA…'` would quote a secret.
        current = holder(self.store, key, self.now()) if isinstance(key, str) else None
        request = _fact_request(
            self.config,
            key,
            value,
            category,
            ttl,
            current,
            refresh,
            confidence=confidence,
            tags=list(tags),
            session_id=session_id,
            agent=agent,
        )
        if request is None:
            return Remembered(current, False)  # type: ignore[arg-type]
        return Remembered(self.add_many([request])[0], True)

    def recall_entry(self, key: str) -> Entry:
        """The active entry holding `key` (NotFound: missing or expired); counts the read."""
        from ..kinds.facts import recall

        return recall(self.store, key, self.now())

    def recall(self, key: str, default: Any = NotFound) -> Any:
        """The value remembered under `key`; `default` when it is missing or
        expired (without one, NotFound)."""
        from ..kinds.facts import value_of

        try:
            return value_of(self.recall_entry(key))
        except NotFound:
            if default is NotFound:
                raise
            return default

    def facts(self, pattern: str | None = None, *, categories: Iterable[str] | None = None) -> builtins.list[Entry]:
        """Active keyed entries whose key matches the glob `pattern`, by key."""
        from ..kinds.facts import facts

        if pattern is not None:
            bounds_text(pattern, "the pattern", MAX_PATTERN, "a glob over keys, like 'db.*'")
        names = [self.config.category(c).name for c in categories or []]
        return facts(self.store, pattern, names, self.now())

    def accesses(self, ids: Iterable[str]) -> dict[str, tuple[int, float]]:
        """How often each entry was recalled and when last (count, POSIX time)."""
        from ..kinds.facts import accesses

        return accesses(self.store, list(ids))

    def cached(
        self, key: str, ttl: str = "1h", *, category: str | None = None
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A decorator: the value remembered under `key` (formatted with the
        call's arguments, e.g. "db.{table}.schema") while it lasts, else the
        function's result, remembered for `ttl`. Exceptions are not cached;
        a result is guarded like any memory (a secret is refused). Default
        category: the first local one (tracked: false); without one, name a
        category (a cache of tracked facts would be committed)."""
        import functools
        import inspect

        from ..core.model import check_key

        local = category or next((c.name for c in self.config.categories.values() if not c.tracked), None)
        if local is None:
            raise BadInput(
                "no local category (tracked: false) to cache in",
                "run `mem init --preset sabre` (it adds `cache`), or pass category=",
            )
        self.config.category(local)

        def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
            signature = inspect.signature(function)

            @functools.wraps(function)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                name = check_key(key.format(**bound.arguments))  # before the call: a bad key must not cost a run
                missing = object()
                found = self.recall(name, missing)
                if found is not missing:
                    return found
                result = function(*args, **kwargs)
                self.remember(name, result, ttl=ttl, category=local)
                return result

            return wrapper

        return decorate


def _fact_request(
    config: Config,
    key: str,
    value: Any,
    category: str | None,
    ttl: str | None,
    current: Entry | None,
    refresh: bool,
    **options: Any,
) -> Any:
    """The add request that remembers `value` under `key` (checked by the
    caller), or None when `current` already holds that value in that category
    (unless `refresh`: the same value written again restarts its ttl)."""
    from ..core.model import fact_summary
    from ..kinds.facts import fact_category, same_value, value_of, value_text
    from ..memory.request import Request

    text = value_text(value)
    spec = fact_category(config, category or (current.category if current is not None else None))
    if (
        not refresh
        and current is not None
        and current.category == spec.name
        and same_value(value_of(current), value)
        and (ttl is None or ttl == current.data.get("ttl"))
    ):
        return None
    metadata = None if isinstance(value, str) else {"value": value}
    if refresh and current is not None:
        # Superseding by id, as `mem supersede` does: the same text under the same key is not a duplicate here.
        options.update(supersedes=current.id, dedupe=False)
    return Request(
        text, category=spec.name, key=key, ttl=ttl, summary=fact_summary(key, text), metadata=metadata, **options
    )
