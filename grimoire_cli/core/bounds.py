"""The ranges of the numbers a caller gives (how many results, a token
budget, a minimum usage, a confidence floor) and the length of a search text.

The library checks them before any work, and the MCP tool schemas publish the
same ones (integrations/registry.py), so the CLI, MCP and the Python API
refuse an out-of-range value with the same one line, exit 2. Without them a
number past SQLite's 64-bit integers (2**70 as a limit) or a glob longer than
SQLite takes (50,000 characters) failed inside the catalog, with a traceback.
"""

from __future__ import annotations

import math

from .errors import BadInput

# Results, entries kept, the newest N, a minimum usage: far beyond any grimoire,
# far inside SQLite's integers.
MAX_COUNT = 1_000_000
MIN_BUDGET = 20  # tokens: less holds no entry
MAX_BUDGET = 1_000_000
MAX_PATTERN = 1000  # characters of a glob over keys (a key holds at most 200)
MAX_TEXT = 10_000  # characters of a search text (a query, an action, a topic)


def whole(value: object, name: str, low: int = 1, high: int = MAX_COUNT, hint: str | None = None) -> int:
    """`value` when it is a whole number from `low` to `high`, else bad input naming `name`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadInput(f"{name} must be a whole number from {low} to {high}, not {shown(value)}", hint)
    return value


def fraction(value: object, name: str) -> float:
    """`value` when it is a number from 0 to 1, else bad input naming `name`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not 0 <= value <= 1:
        raise BadInput(f"{name} must be a number from 0 to 1, not {shown(value)}")
    return value


def text(value: object, name: str, most: int = MAX_TEXT, hint: str = "search with a few words") -> str:
    """`value` when it is a text of at most `most` characters, else bad input naming `name`."""
    if not isinstance(value, str):
        raise BadInput(f"{name} must be a text, not {type(value).__name__}")
    if len(value) > most:
        raise BadInput(f"{name} is {len(value)} characters, over the limit of {most}", hint)
    return value


def shown(value: object) -> str:
    """The value as the error quotes it: cut short (a caller's value may be long)."""
    try:
        quoted = repr(value)
    except ValueError:  # an int past Python's 4,300 digits for a text
        return "a number of more than 4300 digits"
    return quoted if len(quoted) <= 40 else quoted[:37] + "..."
