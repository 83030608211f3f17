"""Keyed facts (SABRE's semantic memory): a JSON-able value under a dotted key.

A fact is an ordinary entry with a `key`: its content is the value as text
(a string as it is, anything else as JSON), and a value that is not a
string is also kept typed in `metadata.value`, so `recall` gives back what
was remembered. Remembering a key again supersedes the active entry (the
history stays); remembering the value it already has writes nothing.
Reading a fact counts an access in the catalog, never in a file, so
`mem recall` leaves `git status` clean.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, NamedTuple

from ..core.config import Category, Config
from ..core.errors import BadInput, NotFound
from ..core.model import Entry, check_key
from ..storage.catalog.queries import Filter, Order
from ..storage.store import Store

# Where `remember` writes without -c: SABRE's preset category, else Loa's facts.
DEFAULT_CATEGORIES = ("semantic", "fact")
_GLOB_SAFE = re.compile(r"^[a-z0-9_.*?\[\]!-]+\Z")


class Remembered(NamedTuple):
    """What `remember` did: the entry now holding the key, and whether it was
    written (False: the key already held that value)."""

    entry: Entry
    written: bool

    def to_dict(self, moment: datetime) -> dict[str, Any]:
        return {**self.entry.view(moment), "written": self.written, "value": value_of(self.entry)}


def check_pattern(pattern: str) -> str:
    """A glob over keys (`db.*`, `user.?.name`)."""
    if not _GLOB_SAFE.match(pattern):
        raise BadInput(f"bad key pattern {pattern!r}", "use a key with * and ? wildcards, like db.*")
    return pattern


def value_text(value: Any) -> str:
    """The text a value is stored and searched as; BadInput when it is not JSON-able."""
    if isinstance(value, str):
        if not value.strip():
            raise BadInput("the value is empty", "give the fact's value")
        return value
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise BadInput(
            f"the value is not JSON-able ({exc})",
            "remember text, numbers, booleans, null, lists or mappings with text keys",
        ) from None


def value_of(entry: Entry) -> Any:
    """The value an entry holds: `metadata.value` when typed, else its content."""
    metadata = entry.data.get("metadata")
    if isinstance(metadata, dict) and "value" in metadata:
        return metadata["value"]
    return entry.content


def same_value(a: Any, b: Any) -> bool:
    # 1 and 1.0 and True compare equal in Python; as remembered values they differ.
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def fact_category(config: Config, name: str | None) -> Category:
    if name is not None:
        return config.category(name)
    for candidate in DEFAULT_CATEGORIES:
        if candidate in config.categories:
            return config.categories[candidate]
    raise BadInput(
        "no category for facts (neither 'semantic' nor 'fact' is configured)",
        "name one with -c, or run `mem init --preset sabre`",
    )


def holder(store: Store, key: str, moment: datetime) -> Entry | None:
    """The active entry with this key, if any."""
    chosen = Filter(at=moment.timestamp(), key=key)
    return next(iter(store.reads.listed(chosen, Order.INDEXED, 1).values()), None)


def recall(store: Store, key: str, moment: datetime) -> Entry:
    """The active entry holding `key` (NotFound when none: missing or expired);
    the read is counted in the catalog."""
    entry = holder(store, check_key(key), moment)
    if entry is None:
        raise NotFound(f"no active fact with key {key!r} (missing or expired)", "list keys with `mem facts`")
    store.reads.note_access(entry.id, moment.timestamp())
    return entry


def facts(store: Store, pattern: str | None, categories: list[str], moment: datetime) -> list[Entry]:
    """Active keyed entries whose key matches the glob, by key."""
    chosen = Filter(at=moment.timestamp(), categories=categories, key_glob=check_pattern(pattern) if pattern else "*")
    return sorted(store.reads.listed(chosen, Order.INDEXED).values(), key=lambda entry: entry.key or "")


def note_cache(store: Store, category: str, hit: bool) -> None:
    """Count an auto-cache hit or miss in `category`, in the catalog (local,
    never a tracked file: a cache read leaves `git status` clean)."""
    store.reads.note_cache(category, hit)


def cache_counts(store: Store) -> dict[str, Any]:
    """The auto-cache's hits and misses in all and per category (`mem stats`)."""
    per_category = {
        name: {"hits": hits, "misses": misses} for name, (hits, misses) in store.reads.cache_counts().items()
    }
    return {
        "hits": sum(c["hits"] for c in per_category.values()),
        "misses": sum(c["misses"] for c in per_category.values()),
        "categories": per_category,
    }


def accesses(store: Store, ids: list[str]) -> dict[str, tuple[int, float]]:
    """Access counts and last access (POSIX time) by id, best effort."""
    return store.reads.accesses(ids)
