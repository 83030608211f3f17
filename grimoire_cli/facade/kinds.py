"""What the kinds' namespaces of the facade (`g.facts`, `g.episodes`,
`g.procedures`, `g.tasks`, `g.chat`) share."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.config import Config


def categories_of(config: Config, kind: str, category: str | None = None) -> list[str]:
    """The categories of `kind` a read covers: `category` (checked), else
    all of them; none is bad input with the preset that adds one."""
    if category is not None or not config.names_of_kind(kind):
        return [config.of_kind(kind, category).name]
    return config.names_of_kind(kind)
