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


def entry_schema(kind: str = "note") -> dict:
    """The schema of an entry of a category of `kind`: memory.schema.json
    with the kind's fields (kinds.schema.json) added and required."""
    base = load_schema("memory.schema.json")
    kinds = load_schema("kinds.schema.json")["$defs"]
    extra = kinds[kind]
    return {**base, "required": [*base["required"], *extra["required"]], "properties": {**base["properties"], **extra["properties"]},
            "$defs": {**base["$defs"], **{k: v for k, v in kinds.items() if "properties" not in v}}}


@lru_cache(maxsize=None)
def entry_validator(kind: str = "note"):
    """A compiled Draft 2020-12 validator for one entry of a category of `kind`."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(entry_schema(kind))
