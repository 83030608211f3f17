"""Where the JSON Schemas live, and their compiled validators (lazy)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any


def schema_dir() -> Path:
    """`grimoire_cli/schemas` in a wheel; the checkout's `schemas/` in development."""
    packaged = Path(__file__).resolve().parent.parent / "schemas"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent.parent / "schemas"


def json_value(text: str | bytes) -> object:
    """A JSON text's value, as the schemas mean JSON: `NaN` and `Infinity`
    (Python's, not JSON's) are refused like any other error (ValueError)."""

    def refuse(constant: str) -> object:
        raise ValueError(f"{constant} is not a JSON number")

    return json.loads(text, parse_constant=refuse)


@cache
def load_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((schema_dir() / name).read_text(encoding="utf-8"))
    return schema


def entry_schema(kind: str = "note") -> dict[str, Any]:
    """The schema of an entry of a category of `kind`: memory.schema.json
    with the kind's fields (kinds.schema.json) added and required."""
    base = load_schema("memory.schema.json")
    kinds = load_schema("kinds.schema.json")["$defs"]
    extra = kinds[kind]
    return {
        **base,
        "required": [*base["required"], *extra["required"]],
        "properties": {**base["properties"], **extra["properties"]},
        "$defs": {**base["$defs"], **{k: v for k, v in kinds.items() if "properties" not in v}},
    }


@cache
def entry_validator(kind: str = "note") -> Any:
    """A compiled Draft 2020-12 validator for one entry of a category of `kind`."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(entry_schema(kind))


# -- the write path's check --------------------------------------------------
# Importing jsonschema costs ~90 ms, more than the rest of a write. A kind's
# entry is checked on the way in by this interpreter of the few keywords the
# entry schemas use; tests/test_schemas.py holds it and jsonschema to the
# same verdicts, so `mem validate` asks jsonschema only about an entry this
# finds a problem in, for its messages. A keyword it does not know fails
# loudly, so a schema that grows one cannot be half-checked.
_KNOWN = {
    "$ref",
    "$defs",
    "$schema",
    "$id",
    "title",
    "description",
    "type",
    "enum",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "items",
    "minItems",
    "maxItems",
    "maxProperties",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
}
# The size keywords, what each counts, and the type it applies to.
_SIZES = (("maxLength", "characters", str), ("maxItems", "items", list), ("maxProperties", "keys", dict))
_TYPES = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
}


def _search(pattern: str, text: str) -> bool:
    import re

    return re.search(pattern, text) is not None


def _same(a: object, b: object) -> bool:
    """JSON equality: true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b and not (isinstance(a, (list, dict)) or isinstance(b, (list, dict)))


def _repeats(values: list[Any]) -> bool:
    """Whether two items are JSON-equal: one pass over a list of scalars
    (a summary's related_memories may list thousands of ids), pairwise otherwise."""
    if all(value is None or isinstance(value, (str, int, float)) for value in values):
        keys = [(isinstance(value, bool), value) for value in values]  # true is not 1
        return len(set(keys)) < len(keys)
    return any(_same(a, b) for i, a in enumerate(values) for b in values[i + 1 :])


def size_message(value: object, schema: dict[str, Any]) -> str | None:
    """`N characters, over the limit of M` (or items, or keys) when `value`
    is larger than one of the schema's size keywords allows, else None."""
    for keyword, unit, kind in _SIZES:
        if keyword in schema and isinstance(value, kind) and len(value) > schema[keyword]:
            return f"{len(value)} {unit}, over the limit of {schema[keyword]}"
    return None


def _resolved(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _over_limit(
    value: object, schema: dict[str, Any], root: dict[str, Any], path: tuple[Any, ...]
) -> tuple[tuple[Any, ...], str] | None:
    """The first value (depth first) larger than its schema allows: a text,
    a list or a mapping, or a mapping's key; nothing else is checked."""
    schema = _resolved(schema, root)
    message = size_message(value, schema)
    if message is not None:
        return path, message
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            found = _over_limit(item, schema["items"], root, (*path, index))
            if found:
                return found
    if isinstance(value, dict):
        properties, extra, names = (
            schema.get("properties", {}),
            schema.get("additionalProperties"),
            schema.get("propertyNames"),
        )
        for name, item in value.items():
            long_name = size_message(name, _resolved(names, root)) if isinstance(names, dict) else None
            if long_name is not None:
                return path, f"a key of {long_name}"
            sub = properties.get(name, extra)
            found = _over_limit(item, sub, root, (*path, name)) if isinstance(sub, dict) else None
            if found:
                return found
    return None


def limit_problem(data: dict[str, Any], kind: str = "note") -> str | None:
    """`field: N characters, over the limit of M` for the first field of an
    entry of a category of `kind` larger than the entry schemas allow (a
    text, a list, a mapping, at any depth), else None. Cheap, and it looks
    at nothing else: a write asks it before any other check of a big value."""
    schema = _compiled(kind)
    found = _over_limit(data, schema, schema, ())
    if found is None:
        return None
    path, message = found
    return f"{'.'.join(str(p) for p in path) or 'the entry'}: {message}"


def _problems(
    value: object, schema: dict[str, Any], root: dict[str, Any], path: tuple[Any, ...]
) -> list[tuple[tuple[Any, ...], str]]:
    if not schema:
        return []
    if "$ref" in schema:
        return _problems(value, root["$defs"][schema["$ref"].rsplit("/", 1)[1]], root, path)
    out: list[tuple[tuple[Any, ...], str]] = []
    wanted = schema.get("type")
    if wanted is not None and not (
        _TYPES[wanted](value) if isinstance(wanted, str) else any(_TYPES[t](value) for t in wanted)
    ):
        return [(path, f"{value!r} is not of type {wanted!r}")]
    too_large = size_message(value, schema)
    if too_large is not None:  # said alone: what is inside an oversized value is not worth checking (nor quoting)
        return [(path, too_large)]
    if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
        out.append((path, f"{value!r} is not one of {schema['enum']!r}"))
    if isinstance(value, str):
        if "pattern" in schema and not _search(schema["pattern"], value):
            out.append((path, f"{value!r} does not match {schema['pattern']!r}"))
        if len(value) < schema.get("minLength", 0):
            out.append((path, f"{value!r} is too short"))
    if ("minimum" in schema or "maximum" in schema) and _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            out.append((path, f"{value!r} is less than the minimum of {schema['minimum']!r}"))
        if "maximum" in schema and value > schema["maximum"]:
            out.append((path, f"{value!r} is greater than the maximum of {schema['maximum']!r}"))
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(
                (path, f"{value!r} should be non-empty" if schema["minItems"] == 1 else f"{value!r} is too short")
            )
        if schema.get("uniqueItems") and _repeats(value):
            out.append((path, f"{value!r} has non-unique elements"))
        if "items" in schema:
            for index, item in enumerate(value):
                out += _problems(item, schema["items"], root, (*path, index))
    if isinstance(value, dict):
        out += [(path, f"{name!r} is a required property") for name in schema.get("required", []) if name not in value]
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if "propertyNames" in schema:
                long_name = size_message(name, _resolved(schema["propertyNames"], root))
                out += (
                    [(path, f"a key of {long_name}")]
                    if long_name
                    else [(path, message) for _, message in _problems(name, schema["propertyNames"], root, path)]
                )
            if name in properties:
                out += _problems(item, properties[name], root, (*path, name))
            elif extra is False:
                out.append((path, f"Additional properties are not allowed ({name!r} was unexpected)"))
            elif isinstance(extra, dict):
                out += _problems(item, extra, root, (*path, name))
    return out


def first_problem(data: dict[str, Any], kind: str = "note", schema_name: str | None = None) -> tuple[str, str] | None:
    """(dotted path, message) of the first problem of an entry of a category
    of `kind` (or of `data` against the schema file `schema_name`, by path,
    as `validate` orders them), or None when it is valid."""
    schema = _compiled(kind) if schema_name is None else _named(schema_name)
    found = _problems(data, schema, schema, ())
    if not found:
        return None
    path, message = min(found, key=lambda pair: [str(p) for p in pair[0]])
    return ".".join(str(p) for p in path), message


def entry_fields() -> list[str]:
    """The fields memory.schema.json names (a kind's own are kinds.schema.json's)."""
    return list(_named("memory.schema.json")["properties"])


def field_problems(name: str, value: object, loose: dict[str, Any] | None = None) -> list[str]:
    """`path: message` for each problem of one field of an entry, against
    memory.schema.json, or against `loose[name]` when given there (a
    `source.` name for a field of source)."""
    schema = _named("memory.schema.json")
    loose = loose or {}
    if name == "source" and isinstance(value, dict):
        # Field by field: an import may leave session_id and timestamp for mem to fill in.
        fields = schema["properties"]["source"]["properties"]
        found = [
            problem
            for sub, item in value.items()
            if item is not None
            for problem in _problems(item, loose.get(f"source.{sub}") or fields.get(sub, {}), schema, ("source", sub))
        ]
    else:
        found = _problems(value, loose.get(name) or schema["properties"][name], schema, (name,))
    return [f"{'.'.join(str(p) for p in path)}: {message}" for path, message in found]


def _known(schema: object) -> None:
    """Every keyword of a schema (at any depth) one the interpreter knows."""
    if isinstance(schema, dict):
        unknown = set(schema) - _KNOWN
        if unknown:
            raise ValueError(f"schema keyword(s) the write check does not know: {sorted(unknown)}")
        for key, value in schema.items():
            if key in ("properties", "$defs"):
                for sub in value.values():
                    _known(sub)
            elif key in ("items", "additionalProperties", "propertyNames"):
                _known(value)


@cache
def _compiled(kind: str) -> dict[str, Any]:
    schema = entry_schema(kind)
    _known(schema)
    return schema


@cache
def _named(name: str) -> dict[str, Any]:
    schema = load_schema(name)
    _known(schema)
    return schema
