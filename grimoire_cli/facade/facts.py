"""`g.facts`: keyed facts (docs/agent-personas.md), a JSON-able value under a
dotted key, superseded when it changes. SABRE's own names for these calls are
in `adapters/sabre.py`; the work is done by `kinds/facts.py`.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..core.bounds import MAX_PATTERN
from ..core.bounds import text as bounds_text
from ..core.errors import BadInput, NotFound
from .host import Namespace

if TYPE_CHECKING:
    from ..core.config import Config
    from ..core.model import Entry
    from ..kinds.facts import Remembered


class Facts(Namespace):
    """The keyed facts of the grimoire it serves."""

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
        from .kinds import added_on_first_use

        options = {"confidence": confidence, "tags": list(tags), "session_id": session_id, "agent": agent}
        with added_on_first_use(self.grimoire, category, "note") as added:
            if added:  # the category is new: the grimoire runs on the config naming it
                self.config, self.store = self.grimoire.config, self.grimoire.store
            return self._remember(key, value, ttl, category, refresh, options)

    def _remember(
        self, key: str, value: Any, ttl: str | None, category: str | None, refresh: bool, options: dict[str, Any]
    ) -> Remembered:
        from ..kinds.facts import Remembered, holder

        # The key is checked by the add it makes, after the guard's scan: `bad key 'AKIA…'` would quote a secret.
        current = holder(self.store, key, self.grimoire.now()) if isinstance(key, str) else None
        request = _fact_request(self.config, key, value, category, ttl, current, refresh, **options)
        if request is None:
            return Remembered(current, False)  # type: ignore[arg-type]
        return Remembered(self.grimoire.add_many([request])[0], True)

    def recall_entry(self, key: str) -> Entry:
        """The active entry holding `key` (NotFound: missing or expired); counts the read."""
        from ..kinds.facts import recall

        return recall(self.store, key, self.grimoire.now())

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

    def list(self, pattern: str | None = None, *, categories: Iterable[str] | None = None) -> builtins.list[Entry]:
        """Active keyed entries whose key matches the glob `pattern`, by key."""
        from ..kinds.facts import facts

        if pattern is not None:
            bounds_text(pattern, "the pattern", MAX_PATTERN, "a glob over keys, like 'db.*'")
        names = [self.config.category(c).name for c in categories or []]
        return facts(self.store, pattern, names, self.grimoire.now())

    def accesses(self, ids: Iterable[str]) -> dict[str, tuple[int, float]]:
        """How often each entry was recalled and when last (count, POSIX time)."""
        from ..kinds.facts import accesses

        return accesses(self.store, list(ids))

    def note_cache(self, category: str, hit: bool) -> None:
        """Count a hit (True) or a miss of a cache in `category` (shown by `mem stats`)."""
        from ..kinds.facts import note_cache

        note_cache(self.store, category, hit)

    def cache_counts(self) -> dict[str, Any]:
        """{hits, misses, categories: {name: {hits, misses}}} of the caches so far."""
        from ..kinds.facts import cache_counts

        return cache_counts(self.store)

    def cached(
        self, key: str, ttl: str = "1h", *, category: str | None = None
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A decorator: the value remembered under `key` (formatted with the
        call's arguments, e.g. "db.{table}.schema") while it lasts, else the
        function's result, remembered for `ttl`. Exceptions are not cached;
        a result is guarded like any memory (a secret is refused). Hits and
        misses are counted per category (`mem stats`). Default
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
                self.note_cache(local, found is not missing)
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
