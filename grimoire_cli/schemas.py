"""Where the JSON Schemas live, and their compiled validators (lazy)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path


def schema_dir() -> Path:
    """`grimoire_cli/schemas` in a wheel; the checkout's `schemas/` in development."""
    packaged = Path(__file__).parent / "schemas"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "schemas"


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    return json.loads((schema_dir() / name).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def entry_validator():
    """A compiled Draft 2020-12 validator for one memory entry."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema("memory.schema.json"))
