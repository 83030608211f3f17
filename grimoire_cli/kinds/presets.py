"""Presets: the categories another memory design needs, added to a config
by `mem init --preset NAME`.

The config is the user's file, comments and alignment included, so a
preset is added as text: its lines go at the end of the
`memory_schema.categories` block (which is first written out in full when
the config relies on the default five, since a categories block replaces
the defaults). The result is parsed and checked before it replaces the
file. Categories the config already has are left as they are.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..config import CONFIG_NAME, DEFAULT_CATEGORIES, build_config
from ..errors import BadInput, Damaged
from ..storage import journal
from ..storage.yamlio import parse_document

# name -> (a comment line, {category: (its flow mapping, a comment)})
PRESETS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "sabre": ("SABRE (mem init --preset sabre): a persona's memory; one scope per persona (mem --scope NAME)", {
        "semantic": ("{storage_file: semantic.yaml, ttl: permanent, confidence_required: 0.5}",
                     "keyed facts: mem remember / recall / facts"),
        "episode": ("{kind: episode, storage_file: episodes.yaml, ttl: 180d, confidence_required: 0.5}",
                    "what happened: event, context, what was learned"),
        "procedure": ("{kind: procedure, storage_file: procedures.yaml, ttl: permanent, confidence_required: 0.7}",
                      "runbooks: named steps with parameters; mem never runs a step"),
        "task": ("{kind: task, storage_file: tasks.yaml, ttl: 30d, confidence_required: 0.5}",
                 "prospective: mem task add / tasks / due; archived 30d after done"),
        "cache": ("{storage_file: cache.yaml, ttl: 1h, confidence_required: 0.5, tracked: false}",
                  "short-lived values (g.cached): local, never committed"),
    }),
}
_KEY_LINE = re.compile(r"^(\s*)([A-Za-z_][\w-]*):(?:\s*(#.*)?)?$")


def check_preset(name: str) -> tuple[str, dict[str, tuple[str, str]]]:
    try:
        return PRESETS[name]
    except KeyError:
        raise BadInput(f"unknown preset {name!r}", f"use one of: {', '.join(PRESETS)}") from None


def add_preset(config_path: Path, name: str) -> list[str]:
    """Add the preset's categories the config lacks; the names added."""
    title, categories = check_preset(name)
    text = config_path.read_text(encoding="utf-8")
    raw, _ = parse_document(text, str(config_path))
    raw = raw or {}
    schema = raw.get("memory_schema") if isinstance(raw, dict) else None
    present = schema.get("categories") if isinstance(schema, dict) else None
    if present is not None and not isinstance(present, dict):
        raise Damaged(str(config_path), None, "memory_schema.categories is not a mapping", "fix the config", "config")
    have = set(present or DEFAULT_CATEGORIES)
    missing = [c for c in categories if c not in have]
    if not missing:
        return []
    lines = [f"# {title}"] + [f"{c}: {categories[c][0]}  # {categories[c][1]}" for c in missing]
    if present is None:  # the defaults were implied: a categories block must name them
        lines = [f"{name}: {{{', '.join(f'{k}: {v}' for k, v in spec.items())}}}" for name, spec in DEFAULT_CATEGORIES.items()] + lines
    new = _insert(text, lines, present is None, config_path)
    build_config(parse_document(new, str(config_path))[0], config_path.parent, config_path)  # refuses what would not load
    journal.write_atomic(config_path, new.encode("utf-8"))
    return missing


def _insert(text: str, lines: list[str], new_block: bool, where: Path) -> str:
    """`text` with `lines` added as children of memory_schema.categories
    (written as a new `categories:` block under memory_schema when `new_block`)."""
    rows = text.split("\n")
    schema = _block(rows, 0, len(rows), "memory_schema", "")
    if schema is None and any(row.startswith("memory_schema:") for row in rows):
        raise BadInput(f"cannot add to memory_schema in {where.name}: it is not written as a block",
                       "write memory_schema and its categories one key per line, then run this again")
    if schema is None:
        body = "\n".join(["memory_schema:", "  categories:", *("    " + line for line in lines)])
        return text + ("" if text.endswith("\n") or not text else "\n") + body + "\n"
    start, end = schema
    child = _child_indent(rows, start, end, "  ")
    if new_block:
        rows[start + 1:start + 1] = [f"{child}categories:", *(child + "  " + line for line in lines)]
        return "\n".join(rows)
    found = _block(rows, start + 1, end, "categories", child)
    if found is None:
        raise BadInput(f"cannot add to memory_schema.categories in {where.name}: it is not written as a block",
                       f"write each category on its own line under `categories:`, then run this again (see {CONFIG_NAME} of `mem init`)")
    cat_start, cat_end = found
    grand = _child_indent(rows, cat_start, cat_end, child + "  ")
    last = cat_end
    while last > cat_start + 1 and not rows[last - 1].strip():
        last -= 1  # after the block's last line, before the blank lines that end it
    rows[last:last] = [grand + line for line in lines]
    return "\n".join(rows)


def _block(rows: list[str], start: int, end: int, key: str, indent: str) -> tuple[int, int] | None:
    """(first line, line after the block) of `key:` opening a block mapping
    at `indent` within rows[start:end]; None if absent or not a block."""
    for number in range(start, end):
        match = _KEY_LINE.match(rows[number])
        if match and match.group(2) == key and match.group(1) == indent:
            stop = number + 1
            while stop < end:
                line = rows[stop]
                if line.strip() and not line.lstrip().startswith("#") and len(line) - len(line.lstrip()) <= len(indent):
                    break
                stop += 1
            return number, stop
    return None


def _child_indent(rows: list[str], start: int, end: int, default: str) -> str:
    for line in rows[start + 1:end]:
        if line.strip() and not line.lstrip().startswith("#"):
            return line[: len(line) - len(line.lstrip())]
    return default
