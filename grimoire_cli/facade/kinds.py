"""What the kinds' namespaces of the facade (`g.facts`, `g.episodes`,
`g.procedures`, `g.tasks`, `g.chat`) share."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput

if TYPE_CHECKING:
    from ..core.config import Config
    from ..storage.store import Store
    from .host import Host


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


@contextmanager
def added_on_first_use(grimoire: Host, name: str | None, kind: str) -> Iterator[bool]:
    """Within: `name` added to the config as a plain category of `kind` when
    the config lacks it and `memory_schema.new_categories` says to (tracked
    or local), the grimoire running on the new config; yields whether it
    was. A write that fails within takes the category out again: nothing
    half-written. When not added, an unknown name is refused by the write."""
    config = grimoire.config
    if name is None or config.settings.new_categories is None or name in config.categories:
        yield False
        return
    from ..kinds.presets import add_category
    from ..storage import journal

    check_category_name(name)
    if config.path is None:
        raise BadInput(f"no config file to add the category {name!r} to", "run `mem init` first")
    path, store = config.path, grimoire.store
    every = [config.base_categories, *config.scope_categories.values()]
    taken = {spec.storage_file for categories in every for spec in categories.values()}
    with store.lock():  # one writer of the config at a time
        before = path.read_bytes()
        added = add_category(path, name, kind, config.settings.new_categories == "tracked", taken)
        written = path.read_bytes()
    _reload(grimoire)
    try:
        yield True
    except BaseException:
        if added:  # taken out again, unless the config changed since
            with store.lock():
                if path.read_bytes() == written:
                    journal.write_atomic(path, before)
            _reload(grimoire)
        raise


def check_category_name(name: Any) -> None:
    """A category name as the config takes it, else bad input saying what one looks like."""
    from ..core.model import CATEGORY_RE

    if not isinstance(name, str) or not CATEGORY_RE.match(name):
        raise BadInput(
            f"bad category name {name!r}",
            "name a category with a lowercase letter, then up to 39 lowercase letters, digits, _ or -",
        )


def _reload(grimoire: Host) -> None:
    """The grimoire on its config as the file now says (a category added or taken out)."""
    from ..core.config import load_config
    from ..storage.store import Store

    config = grimoire.config
    grimoire.config = load_config(config.root, config.path, config.scope)
    grimoire.store = Store(grimoire.config, grimoire.store.runtime)
