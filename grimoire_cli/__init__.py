"""grimoire: typed, validated, expiring long-term memory in git-tracked YAML.

`from grimoire_cli import Grimoire` is the library entry point, and the
result types its methods return can be imported from here too. Importing
this package loads nothing heavy (no Typer, rich, jsonschema or git): each
name is imported on first use.
"""

from __future__ import annotations

__version__ = "0.1.0"

# name -> the module that defines it
_EXPORTS = {
    "Grimoire": "api",
    "ImportResult": "memory.importing",
    "Entry": "core.model",
    "GrimoireError": "core.errors",
    "Request": "memory.request",
    "Added": "memory.adding",
    "Rejected": "memory.adding",
    "Hit": "retrieval.search",
    "Context": "retrieval.context",
    "ArchiveResult": "lifecycle.archiving",
    "CheckResult": "lifecycle.archiving",
    "Review": "lifecycle.rules",
    "Report": "memory.validate",
    "Problem": "memory.validate",
    "Stats": "retrieval.stats",
    "InitResult": "memory.scaffold",
}
__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(name)
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)
