"""What `query` and `list` narrow by beyond `retrieval.filters.filter_of`'s
shape: a memory's source, Samaritan's user / session / directive (docs/adapters.md).
An entry's `source` mapping says where it was written (session, agent, file);
who it came from is an integration's word, so it sits in the entry's
`metadata`, as `metadata.source` (the Samaritan adapter writes it there)."""

from __future__ import annotations

from ..core import bounds
from ..core.errors import BadInput
from ..storage.catalog.queries import Filter

MAX_SOURCE = 200


def by_source(chosen: Filter, source: str | None) -> Filter:
    """`chosen` keeping only entries whose `metadata.source` is `source` (None: as it is)."""
    if source is None:
        return chosen
    bounds.text(source, "--source", MAX_SOURCE, hint="give who it came from, e.g. --source user")
    if not source.strip():
        raise BadInput("--source is empty", "give who it came from, e.g. --source user")
    return chosen.but(metadata=(*chosen.metadata, ("source", source)))
