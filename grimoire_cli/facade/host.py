"""What a namespace of the facade (`g.facts`, `g.tasks`, ...) uses of the
`Grimoire` it serves. A Protocol, not the class: `api.py` imports the
namespaces, so their importing it back, even for type checking, would be an
import cycle (tests/test_architecture.py). mypy checks `Grimoire` against it
wherever a namespace is built."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..core.config import Config
    from ..core.model import Entry
    from ..memory.adding import Added
    from ..retrieval.search import Hits
    from ..storage.store import Store


class Host(Protocol):
    config: Config
    store: Store

    def now(self) -> datetime: ...
    def add_many(self, items: Iterable[Any], *, skip_invalid: bool = False) -> Added: ...
    def list(self, *, categories: Iterable[str] | None = None) -> list[Entry]: ...
    def query(self, text: str, *, limit: int | None = None, categories: Iterable[str] | None = None) -> Hits: ...


class Namespace:
    """One namespace of the facade (`g.facts`, `g.tasks`, ...): the grimoire it serves, its config and store."""

    def __init__(self, grimoire: Host):
        self.grimoire = grimoire
        self.config, self.store = grimoire.config, grimoire.store
