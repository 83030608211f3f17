"""SABRE's auto-caching (the SABRE design's decorators) over a `Sabre`:
`@auto_cache` (cache-through), `@cacheable`, `@no_cache`, and `helpers()`,
what SABRE's runtime does for the helpers nobody decorated: a call slower
than a threshold (1 s) is persisted for an hour, a faster one stays in
working memory (this process). Used by `sabre.py`; docs/adapters.md."""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import re
import time
import types
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..core.errors import BadInput

if TYPE_CHECKING:
    from ..api import Grimoire

# How a callable was marked: "cached" (auto_cache, cacheable: already cached through) or "never" (no_cache).
MARK = "__sabre_cache__"
DEFAULT_CATEGORY = "cache"  # auto_cache's default: the category hits and misses are counted under
WORKING_LIMIT = 256  # fast results kept in working memory, the oldest dropped first


@dataclass
class WorkingMemory:
    """What the timed helpers left in this process: the latest result of
    each fast call by cache key (never persisted, never served: a fast call
    runs again) and, for each slow call whose result could not be persisted
    (not JSON-able, a secret, empty), `name: reason` (the latest WORKING_LIMIT of each)."""

    results: OrderedDict[str, Any] = field(default_factory=OrderedDict)
    refused: deque[str] = field(default_factory=lambda: deque(maxlen=WORKING_LIMIT))

    def keep(self, key: str, result: Any) -> None:
        self.results.pop(key, None)
        self.results[key] = result
        while len(self.results) > WORKING_LIMIT:
            self.results.popitem(last=False)


class Sabre(Protocol):
    """What this module uses of `sabre.Sabre` (a Protocol: sabre.py imports this module)."""

    grimoire: Grimoire
    working: WorkingMemory

    def recall_fact(self, key: str) -> Any: ...

    def _placed(self, category: str | None, kind: str, *, writing: bool = False) -> tuple[str | None, list[str]]: ...


def marked(function: Callable[..., Any], mark: str) -> Callable[..., Any]:
    """`function` carrying `mark`; a callable that takes no attribute (a builtin) is wrapped first."""
    try:
        setattr(function, MARK, mark)
        return function
    except (AttributeError, TypeError):
        return marked(functools.wraps(function)(lambda *args, **kwargs: function(*args, **kwargs)), mark)


def cache_through(sabre: Sabre, function: Callable[..., Any], ttl: str, category: str) -> Callable[..., Any]:
    """`@auto_cache`: the result kept for `ttl` (a grimoire ttl, `1h`), served while it lasts."""
    local = _local_category(sabre)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = cache_key(function, args, kwargs)
        found = sabre.recall_fact(key)
        sabre.grimoire.facts.note_cache(category, found is not None)  # counted per SABRE category
        if found is not None:
            return _without_stamp(found)
        result = function(*args, **kwargs)
        _persist(sabre, key, result, ttl, category, local)
        return result

    return marked(wrapper, "cached")


def instrument(sabre: Sabre, target: Any, threshold: float, ttl: str) -> Any:
    """`target` (a function, a mapping of names to helpers, a module, a class
    or an object) with each public function timed (see `timed`); what is
    marked (`@no_cache`, `@auto_cache`, `@cacheable`) stays as it is."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not threshold >= 0:
        raise BadInput(f"bad threshold {threshold!r}", "give the threshold in seconds, e.g. threshold=1.0")

    def wrap(function: Callable[..., Any]) -> Callable[..., Any]:
        return timed(sabre, function, threshold, ttl)

    if isinstance(target, Mapping):
        return {name: _instrumented(value, wrap) for name, value in target.items()}
    if inspect.isroutine(target):
        return _instrumented(target, wrap)
    return Timed(target, wrap)


def timed(sabre: Sabre, function: Callable[..., Any], threshold: float, ttl: str) -> Callable[..., Any]:
    """Served from the cache when a slow call left its result there (a hit);
    else run and timed: slower than `threshold` seconds, the result is
    persisted for `ttl` as `@auto_cache()` would (a miss); faster, it
    stays in working memory. A result that cannot be persisted is still returned."""
    local = _local_category(sabre)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = cache_key(function, args, kwargs)
        found = sabre.recall_fact(key)
        if found is not None:
            sabre.grimoire.facts.note_cache(DEFAULT_CATEGORY, True)
            return _without_stamp(found)
        started = time.perf_counter()
        result = function(*args, **kwargs)
        if time.perf_counter() - started < threshold:
            sabre.working.keep(key, result)
            return result
        sabre.grimoire.facts.note_cache(DEFAULT_CATEGORY, False)
        try:
            _persist(sabre, key, result, ttl, DEFAULT_CATEGORY, local)
        except BadInput as refusal:  # the cache is the runtime's shortcut: its call still succeeds
            sabre.working.refused.append(f"{function.__qualname__}: {refusal}")
        return result

    return marked(wrapper, "cached")


class Timed:
    """A module, class or object whose public functions are timed (`timed`),
    wrapped on first use; everything else is the target's own."""

    def __init__(self, target: Any, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]):
        self._target, self._wrap = target, wrap
        self._wrapped: dict[str, Callable[..., Any]] = {}

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name.startswith("_") or not inspect.isroutine(value) or getattr(value, MARK, None):
            return value
        if name not in self._wrapped:
            self._wrapped[name] = self._wrap(value)
        return self._wrapped[name]

    def __repr__(self) -> str:
        return f"<timed {self._target!r}>"


def cache_key(function: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> str:
    """`cache.<function>.h<digest of its module and the arguments>`: a dotted
    lowercase key; the module keeps `db.query(sql)` and `warehouse.query(sql)` apart."""
    name = re.sub(r"[^a-z0-9_]+", "_", function.__qualname__.lower()).strip("_") or "call"
    arguments = json.dumps([function.__module__, args, kwargs], sort_keys=True, default=repr)
    return f"cache.{name}.h{hashlib.sha256(arguments.encode()).hexdigest()[:16]}"


def _instrumented(value: Any, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Any:
    """A helper as the runtime gets it: a function timed, a module, class or
    object proxied, plain data (a number, a list) and marked functions as they are."""
    if getattr(value, MARK, None):
        return value
    if inspect.isroutine(value):
        return wrap(value)
    if isinstance(value, (types.ModuleType, type)) or type(value).__module__ != "builtins":
        return Timed(value, wrap)
    return value


def _local_category(sabre: Sabre) -> str | None:
    """The first local category (tracked: false): a cache is not committed."""
    return next((c.name for c in sabre.grimoire.config.categories.values() if not c.tracked), None)


def _persist(sabre: Sabre, key: str, result: Any, ttl: str, category: str, local: str | None) -> None:
    """Remember `result` under `key` in the local category (else `category`'s), `category` kept as a tag."""
    placed, tags = sabre._placed(local or category, "note")
    tags = tags or ([category] if category and category != placed else [])
    sabre.grimoire.facts.remember(key, result, ttl=ttl, category=placed, tags=tags)


def _without_stamp(value: Any) -> Any:
    return {k: v for k, v in value.items() if k != "_cached_at"} if isinstance(value, dict) else value
