"""The facade's methods for the kinds of memory (README: Kinds): keyed
facts now; `Grimoire` inherits them, so `api.py` stays the map of the
commands Loa's protocol defines and this file the map of the rest.

Each method is one call an agent runtime makes (SABRE's helpers are named
in the README); the work is done by the kind's module.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..errors import NotFound

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

    # -- keyed facts ---------------------------------------------------------

    def remember(self, key: str, value: Any, *, ttl: str | None = None, category: str | None = None,
                 confidence: float | None = None, tags: Iterable[str] = (), session_id: str | None = None,
                 agent: str | None = None) -> "Remembered":
        """Keep a JSON-able `value` under a dotted `key`, superseding the
        key's active entry; an unchanged value writes nothing (`written` False)."""
        from .facts import Remembered, holder, request_for

        current = holder(self.store, key, self.now()) if isinstance(key, str) else None
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
        category: the first local one (tracked: false), else `remember`'s."""
        import functools
        import inspect

        local = category or next((c.name for c in self.config.categories.values() if not c.tracked), None)

        def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
            signature = inspect.signature(function)

            @functools.wraps(function)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                name = key.format(**bound.arguments)
                missing = object()
                found = self.recall(name, missing)
                if found is not missing:
                    return found
                result = function(*args, **kwargs)
                self.remember(name, result, ttl=ttl, category=local)
                return result

            return wrapper

        return decorate
