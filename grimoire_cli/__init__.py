"""grimoire: typed, validated, expiring long-term memory in git-tracked YAML.

`from grimoire_cli import Grimoire` is the library entry point; importing
this package loads nothing heavy (no Typer, rich, jsonschema or git).
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["Grimoire", "Entry", "GrimoireError", "__version__"]


def __getattr__(name: str):
    # Lazy: `import grimoire_cli` stays cheap for the CLI's fast paths.
    if name == "Grimoire":
        from .api import Grimoire

        return Grimoire
    if name == "Entry":
        from .model import Entry

        return Entry
    if name == "GrimoireError":
        from .errors import GrimoireError

        return GrimoireError
    raise AttributeError(name)
