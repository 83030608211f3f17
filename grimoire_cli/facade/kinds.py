"""What the kinds' namespaces of the facade (`g.facts`, `g.episodes`,
`g.procedures`, `g.tasks`, `g.chat`) share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.config import Config
    from ..storage.store import Store


def categories_of(config: Config, kind: str, category: str | None = None) -> list[str]:
    """The categories of `kind` a read covers: `category` (checked), else
    all of them; none is bad input with the preset that adds one."""
    if category is not None or not config.names_of_kind(kind):
        return [config.of_kind(kind, category).name]
    return config.names_of_kind(kind)


def described(config: Config, store: Store) -> list[dict[str, Any]]:
    """Each category of a scope: name, kind, ttl, floor, tracked, file (`g.categories`)."""
    return [
        {
            "name": c.name,
            "kind": c.kind,
            "ttl": c.ttl,
            "confidence_required": c.confidence_required,
            "tracked": c.tracked,
            "file": config.relative(store.category_path(c.name)),
        }
        for c in config.categories.values()
    ]
