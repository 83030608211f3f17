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
from string import Template
from typing import Any, NamedTuple

from ..core.config import CONFIG_NAME, DEFAULT_CATEGORIES, build_config
from ..core.errors import BadInput, Damaged
from ..storage import journal
from ..storage.yamlio import parse_document


class Preset(NamedTuple):
    """A comment line, the categories (name -> its flow mapping, a comment),
    and the settings (a block path under memory_schema, a key, its value as
    YAML text, a comment; `$task` stands for the name its `task` got) a preset adds."""

    title: str
    categories: dict[str, tuple[str, str]]
    settings: tuple[tuple[tuple[str, ...], str, str, str], ...] = ()


_SUMMARY = (
    "{kind: summary, storage_file: summaries.yaml, ttl: permanent, confidence_required: 0.5}",
    "what mem consolidate saved from a conversation",
)
PRESETS: dict[str, Preset] = {
    "sabre": Preset(
        "SABRE (mem init --preset sabre): a persona's memory; one scope per persona (mem --scope NAME)",
        {
            "semantic": (
                "{storage_file: semantic.yaml, ttl: permanent, confidence_required: 0.5}",
                "keyed facts: mem remember / recall / facts",
            ),
            "episode": (
                "{kind: episode, storage_file: episodes.yaml, ttl: 180d, confidence_required: 0.5}",
                "what happened: event, context, what was learned",
            ),
            "procedure": (
                "{kind: procedure, storage_file: procedures.yaml, ttl: permanent, confidence_required: 0.7}",
                "runbooks: named steps with parameters; mem never runs a step",
            ),
            "task": (
                "{kind: task, storage_file: tasks.yaml, ttl: 30d, confidence_required: 0.5}",
                "prospective: mem task add / tasks / due; archived 30d after done",
            ),
            "summary": _SUMMARY,
            "cache": (
                "{storage_file: cache.yaml, ttl: 1h, confidence_required: 0.5, tracked: false}",
                "short-lived values (g.facts.cached): local, never committed",
            ),
        },
        (
            (
                (),
                "new_categories",
                "tracked",
                "SABRE's free-form categories: one the config lacks is added on first use (tracked or local)",
            ),
        ),
    ),
    "samaritan": Preset(
        "Samaritan (mem init --preset samaritan): hot and long-term memory, summarize on reset",
        {
            "summary": _SUMMARY,
        },
        (
            (("tiers",), "enabled", "true", "mem context injects hot memories only (young, or importance >= 8)"),
            (("context",), "order", "importance", "most important first"),
            (("context",), "limit", "15", "at most 15 memories in the block"),
            (("context",), "min_importance", "3", "none below importance 3 (after decay)"),
        ),
    ),
    "protea": Preset(
        "Protea (mem init --preset protea): typed memories of a self-evolving agent",
        {
            "observation": (
                "{storage_file: observations.yaml, ttl: 90d, confidence_required: 0.5}",
                "what a generation observed",
            ),
            "crash_log": (
                "{storage_file: crash_logs.yaml, ttl: 90d, confidence_required: 0.5}",
                "what crashed, and how",
            ),
            "reflection": (
                "{storage_file: reflections.yaml, ttl: permanent, confidence_required: 0.5}",
                "what the agent concluded",
            ),
            "directive": (
                "{storage_file: directives.yaml, ttl: permanent, confidence_required: 0.5}",
                "what the user asked for",
            ),
            "task": (
                "{storage_file: tasks.yaml, ttl: permanent, confidence_required: 0.5}",
                "records of finished user requests (User asked: ...; Result: ...); never compacted",
            ),
            "chat": (
                "{kind: chat, storage_file: chat.yaml, ttl: 10m, confidence_required: 0.5, tracked: false}",
                "conversation history: mem chat add / recent; local, gone after 10 minutes",
            ),
        },
        (
            (
                ("context", "recipes"),
                "evolution",
                "[{category: directive, limit: 1}, {category: crash_log, limit: 2, title: Recent Crashes}, "
                "{category: reflection, limit: 3}, {category: observation, limit: 2, order: score}, "
                "{category: $task, limit: 2, title: Recent User Tasks}]",
                "mem context --recipe evolution: Protea's tiered retrieval",
            ),
            (("compaction", "categories"), "directive", "all", "mem compact never condenses directives"),
            (("compaction", "categories"), "$task", "all", "nor task records"),
        ),
    ),
    "pms": Preset(
        "Persistent Memory System (mem init --preset pms): learning from task executions (mem observe, tools, patterns, learn)",
        {
            "insight": (
                "{kind: insight, storage_file: insights.yaml, ttl: permanent, confidence_required: 0.5}",
                "what mem learn concluded from the observation log: best practices, warnings, preferences",
            ),
        },
    ),
}
# `task` is SABRE's prospective tasks (kind task) and Protea's records of finished
# user requests (plain entries). In one config, whichever preset came first keeps
# the name: a category is never renamed under the entries it holds, and each
# system's own calls go on working (SABRE's task commands find their category by
# kind; Protea writes `-c task`). The other's gets its own name and file.
_TASKS = {  # preset: its task's kind, what its tasks are, and the name and spec they get when `task` is another's
    "sabre": (
        "task",
        "SABRE's prospective tasks (kind task)",
        "prospective_task",
        "{kind: task, storage_file: prospective_tasks.yaml, ttl: 30d, confidence_required: 0.5}",
    ),
    "protea": (
        "note",
        "Protea's records of finished user requests",
        "user_task",
        "{storage_file: user_tasks.yaml, ttl: permanent, confidence_required: 0.5}",
    ),
}
_KEY_LINE = re.compile(r"^(\s*)([A-Za-z_][\w-]*):(?:\s*(#.*)?)?$")


def check_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise BadInput(f"unknown preset {name!r}", f"use one of: {', '.join(PRESETS)}") from None


def add_preset(config_path: Path, name: str) -> tuple[list[str], list[str], list[str]]:
    """Add the preset's categories and settings the config lacks; the
    category names and the settings (dotted) added, and notes on names that
    differ from the preset's (`task`, when another preset holds it). What the
    config already says is left as it is."""
    preset = check_preset(name)
    text = config_path.read_text(encoding="utf-8")
    raw, _ = parse_document(text, str(config_path))
    raw = raw or {}
    schema = raw.get("memory_schema") if isinstance(raw, dict) else None
    present = schema.get("categories") if isinstance(schema, dict) else None
    if present is not None and not isinstance(present, dict):
        raise Damaged(str(config_path), None, "memory_schema.categories is not a mapping", "fix the config", "config")
    have = set(present or DEFAULT_CATEGORIES)
    categories, task, notes = _categories(name, preset, present or {})
    missing = [c for c in categories if c not in have]
    new = text
    if missing:
        lines = [f"# {preset.title}"] + [f"{c}: {categories[c][0]}  # {categories[c][1]}" for c in missing]
        new = _with_categories(new, lines, present is None, config_path)
    added = []
    for path, key, value, comment in preset.settings:
        key, value = Template(key).substitute(task=task), Template(value).substitute(task=task)
        if not _has(schema, (*path, key)):
            new = _add_setting(new, path, f"{key}: {value}  # {comment}", config_path)
            added.append(".".join((*path, key)))
    if new == text:
        return [], [], notes
    # Refuses what would not load
    build_config(parse_document(new, str(config_path))[0], config_path.parent, config_path)
    journal.write_atomic(config_path, new.encode("utf-8"))
    return missing, added, notes


def add_category(config_path: Path, name: str, kind: str, tracked: bool, taken_files: set[str]) -> bool:
    """Add `name` to the config's categories as a plain category of `kind`
    (memory_schema.new_categories: a category named on first use), its file
    `<name>.yaml` unless another category's file has that name; False when
    the config already has it (another process added it first)."""
    text = config_path.read_text(encoding="utf-8")
    raw, _ = parse_document(text, str(config_path))
    schema = raw.get("memory_schema") if isinstance(raw, dict) else None
    present = schema.get("categories") if isinstance(schema, dict) else None
    if isinstance(present, dict) and name in present:
        return False
    candidates = (f"{name}.yaml", *(f"{name}-{n}.yaml" for n in range(2, len(taken_files) + 3)))
    file = next(f for f in candidates if f not in taken_files)
    fields = [f"kind: {kind}"] if kind != "note" else []
    fields += [f"storage_file: {file}", "ttl: permanent", "confidence_required: 0.5"]
    fields += [] if tracked else ["tracked: false"]
    line = f"{name}: {{{', '.join(fields)}}}  # added on first use (memory_schema.new_categories)"
    new = _with_categories(text, [line], present is None, config_path)
    # Refuses what would not load
    build_config(parse_document(new, str(config_path))[0], config_path.parent, config_path)
    journal.write_atomic(config_path, new.encode("utf-8"))
    return True


def _with_categories(text: str, lines: list[str], implied: bool, where: Path) -> str:
    """`text` with `lines` added to memory_schema.categories; when the default
    five were `implied` (no categories block), they are written out first,
    since a categories block replaces the defaults."""
    if implied:
        lines = [
            f"{name}: {{{', '.join(f'{k}: {v}' for k, v in spec.items())}}}"
            for name, spec in DEFAULT_CATEGORIES.items()
        ] + lines
    return _insert(text, lines, implied, where)


def _categories(
    name: str, preset: Preset, present: dict[str, Any]
) -> tuple[dict[str, tuple[str, str]], str, list[str]]:
    """The preset's categories as this config gets them, the name its `task`
    category has here, and a note saying why when that is not `task`."""
    if "task" not in preset.categories or "task" not in present:
        return preset.categories, "task", []
    kind, what, other, spec = _TASKS[name]
    theirs = present["task"].get("kind", "note") if isinstance(present["task"], dict) else "note"
    if theirs == kind:
        return preset.categories, "task", []
    held = next((w for k, w, _, _ in _TASKS.values() if k == theirs), f"a category of kind {theirs}")
    categories = {
        (other if c == "task" else c): ((spec, line[1]) if c == "task" else line)
        for c, line in preset.categories.items()
    }
    return categories, other, [f"{what}: the category {other}, because task already holds {held}"]


def _has(schema: Any, path: tuple[str, ...]) -> bool:
    for key in path:
        if not isinstance(schema, dict) or key not in schema:
            return False
        schema = schema[key]
    return True


def _schema_block(text: str, where: Path) -> tuple[list[str], int, int]:
    """The config's lines and (first line, line after) of its memory_schema
    block, written at the end when absent; one not written as a block is refused."""
    rows = text.split("\n")
    found = _block(rows, 0, len(rows), "memory_schema", "")
    if found is None and any(row.startswith("memory_schema:") for row in rows):
        raise BadInput(
            f"cannot add to memory_schema in {where.name}: it is not written as a block",
            "write memory_schema one key per line, then run this again",
        )
    if found is None:
        rows = (text + ("" if text.endswith("\n") or not text else "\n") + "memory_schema:\n").split("\n")
        found = _block(rows, 0, len(rows), "memory_schema", "")
    return rows, *found  # type: ignore[misc]


def _add_setting(text: str, path: tuple[str, ...], line: str, where: Path) -> str:
    """`text` with `line` added in the block memory_schema.<path>, the blocks created as needed."""
    rows, start, end = _schema_block(text, where)
    indent = _child_indent(rows, start, end, "  ")
    for depth, key in enumerate(path):
        found = _block(rows, start + 1, end, key, indent)
        if found is None:
            if any(re.match(rf"^{re.escape(indent)}{re.escape(key)}:", row) for row in rows[start + 1 : end]):
                raise BadInput(
                    f"cannot add to memory_schema.{'.'.join(path[: depth + 1])} in {where.name}: it is not written as a block",
                    "write it one key per line, then run this again",
                )
            last = _last_line(rows, start, end)
            rows[last:last] = [f"{indent}{key}:"]
            start, end = last, last + 1
        else:
            start, end = found
        indent = _child_indent(rows, start, end, indent + "  ")
    last = _last_line(rows, start, end)
    rows[last:last] = [indent + line]
    return "\n".join(rows)


def _last_line(rows: list[str], start: int, end: int) -> int:
    """After a block's last line, before the blank lines that end it."""
    last = end
    while last > start + 1 and not rows[last - 1].strip():
        last -= 1
    return last


def _insert(text: str, lines: list[str], new_block: bool, where: Path) -> str:
    """`text` with `lines` added as children of memory_schema.categories
    (written as a new `categories:` block under memory_schema when `new_block`)."""
    rows, start, end = _schema_block(text, where)
    child = _child_indent(rows, start, end, "  ")
    if new_block:
        rows[start + 1 : start + 1] = [f"{child}categories:", *(child + "  " + line for line in lines)]
        return "\n".join(rows)
    found = _block(rows, start + 1, end, "categories", child)
    if found is None:
        raise BadInput(
            f"cannot add to memory_schema.categories in {where.name}: it is not written as a block",
            f"write each category on its own line under `categories:`, then run this again (see {CONFIG_NAME} of `mem init`)",
        )
    cat_start, cat_end = found
    grand = _child_indent(rows, cat_start, cat_end, child + "  ")
    last = _last_line(rows, cat_start, cat_end)
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
    for line in rows[start + 1 : end]:
        if line.strip() and not line.lstrip().startswith("#"):
            return line[: len(line) - len(line.lstrip())]
    return default
