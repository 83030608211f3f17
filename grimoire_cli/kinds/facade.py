"""The facade's methods for the kinds of memory (README: Kinds): keyed
facts and prospective tasks; `Grimoire` inherits them, so `api.py` stays the map of the
commands Loa's protocol defines and this file the map of the rest.

Each method is one call an agent runtime makes (SABRE's helpers are named
in the README); the work is done by the kind's module.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..errors import BadInput, NotFound

if TYPE_CHECKING:
    from ..config import Config
    from ..model import Entry
    from ..storage.store import Store
    from .facts import Remembered


class KindsFacade:
    """Mixed into `Grimoire`: it provides `config`, `store`, `now` and `add_many`."""

    config: "Config"
    store: "Store"

    if TYPE_CHECKING:
        def now(self) -> datetime: ...
        def add_many(self, items: Iterable[Any], *, skip_invalid: bool = False) -> list["Entry"]: ...

    # -- prospective tasks ---------------------------------------------------

    def add_task(self, text: str, *, due: str | None = None, on: str | None = None, next_session: bool = False,
                 context: dict[str, Any] | None = None, category: str | None = None, tags: Iterable[str] = (),
                 importance: int | None = None) -> "Entry":
        """Schedule a task with one trigger: `due` (+1h or an ISO time), `on`
        (an event `fire` names) or `next_session`."""
        from ..request import Request
        from .tasks import fields_for

        spec = self.config.of_kind("task", category)
        fields = fields_for(text, self.now(), due=due, on=on, next_session=next_session, context=context)
        return self.add_many([Request(text, category=spec.name, fields=fields, tags=list(tags), importance=importance)])[0]

    def tasks(self, *, every: bool = False) -> list["Entry"]:
        """Pending tasks, due first (with `every`, ended ones not yet archived too)."""
        from .tasks import tasks

        self.config.of_kind("task")
        return tasks(self.store, self.now(), every=every)

    def due_tasks(self) -> list["Entry"]:
        """Pending tasks whose time, event or session has come."""
        from .tasks import due

        self.config.of_kind("task")
        return due(self.store, self.now())

    def end_task(self, entry_id: str, status: str = "done") -> "Entry":
        """Mark a pending task done or cancelled (an edit in place); it is
        archived once the category's ttl has passed."""
        from ..adding import update
        from .tasks import ended, task_entry

        if status not in ("done", "cancelled"):
            raise BadInput(f"bad status {status!r}", "a task ends done or cancelled")
        with self.store.lock():
            entry = task_entry(self.store, entry_id)
            entry.data = ended(entry, status, self.now())
            update(self.store, entry_id, entry.data)
        return entry

    def fire(self, event: str) -> list["Entry"]:
        """Make the pending tasks waiting for `event` due now; those tasks."""
        from ..adding import update_many
        from .tasks import check_event, fired, tasks

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

    # SABRE's names for the same calls (README: Kinds).
    def schedule_task(self, text: str, **options: Any) -> "Entry":
        return self.add_task(text, **options)

    def get_pending_tasks(self) -> list["Entry"]:
        return self.tasks()

    def complete_task(self, entry_id: str) -> "Entry":
        return self.end_task(entry_id, "done")

    def cancel_task(self, entry_id: str) -> "Entry":
        return self.end_task(entry_id, "cancelled")

    # -- keyed facts ---------------------------------------------------------

    def remember(self, key: str, value: Any, *, ttl: str | None = None, category: str | None = None,
                 confidence: float | None = None, tags: Iterable[str] = (), session_id: str | None = None,
                 agent: str | None = None) -> "Remembered":
        """Keep a JSON-able `value` under a dotted `key`, superseding the
        key's active entry; an unchanged value writes nothing (`written` False)."""
        from ..model import check_key
        from .facts import Remembered, holder, request_for

        current = holder(self.store, check_key(key), self.now())
        request = request_for(self.config, key, value, category, ttl, current, confidence=confidence, tags=list(tags),
                              session_id=session_id, agent=agent)
        if request is None:
            return Remembered(current, False)  # type: ignore[arg-type]
        return Remembered(self.add_many([request])[0], True)

    def recall_entry(self, key: str) -> "Entry":
        """The active entry holding `key` (NotFound: missing or expired); counts the read."""
        from .facts import recall

        return recall(self.store, key, self.now())

    def recall(self, key: str, default: Any = NotFound) -> Any:
        """The value remembered under `key`; `default` when it is missing or
        expired (without one, NotFound)."""
        from .facts import value_of

        try:
            return value_of(self.recall_entry(key))
        except NotFound:
            if default is NotFound:
                raise
            return default

    def facts(self, pattern: str | None = None, *, categories: Iterable[str] | None = None) -> list["Entry"]:
        """Active keyed entries whose key matches the glob `pattern`, by key."""
        from .facts import facts

        names = [self.config.category(c).name for c in categories or []]
        return facts(self.store, pattern, names, self.now())

    def accesses(self, ids: Iterable[str]) -> dict[str, tuple[int, float]]:
        """How often each entry was recalled and when last (count, POSIX time)."""
        from .facts import accesses

        return accesses(self.store, list(ids))

    def cached(self, key: str, ttl: str = "1h", *, category: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A decorator: the value remembered under `key` (formatted with the
        call's arguments, e.g. "db.{table}.schema") while it lasts, else the
        function's result, remembered for `ttl`. Exceptions are not cached;
        a result is guarded like any memory (a secret is refused). Default
        category: the first local one (tracked: false); without one, name a
        category (a cache of tracked facts would be committed)."""
        import functools
        import inspect

        from ..model import check_key

        local = category or next((c.name for c in self.config.categories.values() if not c.tracked), None)
        if local is None:
            raise BadInput("no local category (tracked: false) to cache in", "run `mem init --preset sabre` (it adds `cache`), or pass category=")
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

    # SABRE's names for the same calls.
    def remember_fact(self, key: str, value: Any, **options: Any) -> "Remembered":
        return self.remember(key, value, **options)

    def recall_fact(self, key: str, default: Any = None) -> Any:
        return self.recall(key, default)

    def search_facts(self, pattern: str | None = None, **options: Any) -> list["Entry"]:
        return self.facts(pattern, **options)
