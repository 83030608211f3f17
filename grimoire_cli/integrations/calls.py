"""The grimoire as a set of named calls an agent makes: each with a JSON
Schema for its arguments, a description a model can act on, and a result in
the JSON shape `mem … --json` prints. The MCP server (`mcp_server`) serves
exactly these; nothing here imports an SDK, so the table is tested and used
without one.

A long-lived server opens the grimoire for every call through `Opener`, so
it sees what other processes wrote between two calls, as a fresh `mem`
command would.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput

# Importing them registers their calls, in the order tools/list gives them.
# isort: off
from . import memory_calls, kind_calls, learning_calls  # noqa: F401

# isort: on
from .registry import CALLS, Call, check_arguments

if TYPE_CHECKING:
    from ..api import Grimoire

__all__ = ["CALLS", "Call", "Opener", "invoke"]


def invoke(grimoire_of: Callable[[], Grimoire], name: str, arguments: dict[str, Any] | None) -> Any:
    """Run call `name` with `arguments` (checked against its schema first) on
    the grimoire `grimoire_of()` opens; its JSON-ready result. Errors are the
    library's (`GrimoireError`), with the message `mem` would print."""
    call = CALLS.get(name)
    if call is None:
        raise BadInput(f"unknown tool {name!r}", "list the tools (tools/list) and call one of them")
    arguments = arguments or {}
    check_arguments(call, arguments)
    return call.run(grimoire_of(), **arguments)


class Opener:
    """The grimoire for the next call, as a new process would find it.

    Opening anew costs ~3 ms at 10k entries (the config parsed, the catalog
    connected, its record of every file read), a third of what a round trip
    over MCP may add. So the last grimoire is kept while its config and
    catalog are the same files (`_stamp`) and its store is refreshed: every
    grimoire file is stat'ed again, and a changed one re-read, before the
    call reads anything.
    """

    def __init__(self, open_grimoire: Callable[[], Grimoire], opened: Grimoire | None = None):
        self._open = open_grimoire
        self._grimoire: Grimoire | None = opened  # one the caller opened already, kept while its files are
        self._stamp: tuple[Any, ...] = _stamp(opened) if opened is not None else ()

    def __call__(self) -> Grimoire:
        grimoire = self._grimoire
        if grimoire is not None and self._stamp == _stamp(grimoire):
            grimoire.store.refresh()
            return grimoire
        grimoire = self._grimoire = self._open()
        self._stamp = _stamp(grimoire)
        return grimoire


def _stamp(grimoire: Grimoire) -> tuple[Any, ...]:
    """What says the config is the file this grimoire parsed (inode, size,
    modification time) and the catalog the database it connected to (inode:
    it changes with every write, but is replaced only when rebuilt)."""
    from ..storage.catalog.connection import DB_FILE

    config, catalog = _stat(grimoire.config.path), _stat(grimoire.store.cache / DB_FILE)
    return (config and (config.st_ino, config.st_size, config.st_mtime_ns), catalog and catalog.st_ino)


def _stat(path: os.PathLike[str] | None) -> os.stat_result | None:
    try:
        return os.stat(path) if path is not None else None
    except OSError:
        return None
