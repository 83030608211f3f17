"""An entry's free metadata as the command line gives it (`mem add --meta
K=V`, Protea's generation and the like), and what `query` and `list` narrow
by beyond `retrieval.filters.filter_of`'s shape: a memory's source,
Samaritan's user / session / directive (docs/adapters.md). An entry's
`source` mapping says where it was written (session, agent, file); who it
came from is an integration's word, so it sits in the entry's `metadata`, as
`metadata.source` (the Samaritan adapter writes it there)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..core import bounds
from ..core.errors import BadInput
from ..storage.catalog.queries import Filter

MAX_SOURCE = 200
# A metadata key the command line may set: a plain name (no dot, no quote: a filter reads it as a JSON path).
META_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,79}\Z")
# Keys mem itself reads, set by their own options: a keyed fact's typed value, the guard's acceptance.
RESERVED = {
    "value": "give a keyed fact's value as its content (--key)",
    "accept_instructions": "use --accept-instructions",
}
_WHOLE = re.compile(r"^-?(0|[1-9][0-9]{0,17})\Z")
_DECIMAL = re.compile(r"^-?(0|[1-9][0-9]{0,17})\.[0-9]{1,17}\Z")


def meta_pairs(values: list[str] | None, option: str = "--meta") -> dict[str, Any]:
    """Repeated `K=V` as metadata (a later K wins): a whole number or a
    decimal is kept as a number (`generation=12`), anything else as text."""
    out: dict[str, Any] = {}
    for pair in values or []:
        key, sep, value = pair.partition("=")
        if not sep or not META_KEY.match(key):
            raise BadInput(f"bad {option} {bounds.shown(pair)}", f"write it as key=value, like {option} generation=12")
        if key in RESERVED:
            raise BadInput(f"{option} cannot set metadata.{key}: mem reads it", RESERVED[key])
        out[key] = int(value) if _WHOLE.match(value) else float(value) if _DECIMAL.match(value) else value
    return out


def narrowed(chosen: Filter, source: str | None, meta: Mapping[str, Any] | None = None) -> Filter:
    """`chosen` keeping only entries whose `metadata.source` is `source`
    and whose metadata holds each of `meta` (values compared as text: 12 and "12" alike)."""
    pairs = list(chosen.metadata)
    if source is not None:
        bounds.text(source, "--source", MAX_SOURCE, hint="give who it came from, e.g. --source user")
        if not source.strip():
            raise BadInput("--source is empty", "give who it came from, e.g. --source user")
        pairs.append(("source", source))
    for key, value in (meta or {}).items():
        if not isinstance(key, str) or not META_KEY.match(key):
            raise BadInput(f"bad metadata key {bounds.shown(key)}", "give a plain name, like generation")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise BadInput(f"bad metadata.{key} to match: {bounds.shown(value)}", "give a text or a number")
        pairs.append((key, str(value)))
    return chosen.but(metadata=pairs)
