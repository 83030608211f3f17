"""The merge driver for `.loa.config.yaml`: settings added on both sides are united.

Two clones that each name a new category on first use
(`memory_schema.new_categories`) both append a line at the end of
`memory_schema.categories`; git's line merge calls that a conflict, and the
config left with markers is read by nothing until someone edits it by hand.
The driver (`mem merge-file`, named for this file by `.gitattributes`) runs
git's own line merge and then settles each conflicting hunk where both
sides only added lines (the base held none there): every line of ours, then
each line of theirs whose key (its mapping path within the hunk) ours lacks,
placed after theirs' previous line and ours' own additions beside it. A key
both sides set to different values stays a conflict, and so does anything
else git could not merge. The result must load as a config and hold every
category of both sides as each side defined it; otherwise it is a conflict
too, with git's markers as usual. Text is spliced, never re-emitted, so the
file keeps its comments and layout.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..core.errors import Damaged
from ..storage.yamlio import parse_document
from . import gitops

# `name:` at some indent, the start of a mapping entry (not a comment or a list item).
_KEY = re.compile(r"^(?P<indent> *)(?P<name>[^\s#:\-][^:#]*?)\s*:(?:\s|$)")
_OURS, _BASE, _SPLIT, _THEIRS = "<<<<<<< ", "||||||| ", "=======", ">>>>>>> "

Key = tuple[str, ...]


def merge_config(
    base_path: str, ours_path: str, theirs_path: str, display: str, texts: list[str]
) -> tuple[str, list[str]]:
    """Merge the three versions (`texts`: what the driver read of them, base
    first) into `ours_path` as a git driver does; the merged text and the
    conflicts left (none: it merged cleanly)."""
    cwd = Path.cwd()
    merged = gitops.run(
        ["merge-file", "-p", "--diff3", "-L", "ours", "-L", "base", "-L", "theirs", ours_path, base_path, theirs_path],
        cwd,
        check=False,
    ).stdout
    united, why = _settled(merged)
    if united is not None:
        why = _loads(united, texts, cwd / display)
    if united is None or why:
        gitops.merge_lines(cwd, ours_path, base_path, theirs_path)
        return Path(ours_path).read_text(encoding="utf-8"), [f"{display}: {why}"]
    tmp = Path(ours_path).with_name(Path(ours_path).name + ".mem-merge")
    tmp.write_text(united, encoding="utf-8")
    tmp.replace(ours_path)
    return united, []


def _settled(merged: str) -> tuple[str | None, str]:
    """git's diff3 output with every hunk settled, or None and why one cannot be."""
    out: list[str] = []
    lines = merged.splitlines(keepends=True)
    at = 0
    while at < len(lines):
        if not lines[at].startswith(_OURS):
            out.append(lines[at])
            at += 1
            continue
        parts: list[list[str]] = [[], [], []]
        part, at = 0, at + 1
        while at < len(lines) and not lines[at].startswith(_THEIRS):
            if lines[at].startswith(_BASE) and part == 0:
                part = 1
            elif lines[at].rstrip("\n") == _SPLIT and part < 2:
                part = 2
            else:
                parts[part].append(lines[at])
            at += 1
        at += 1
        ours, base, theirs = parts
        if any(line.strip() for line in base):
            return None, "both sides changed the same lines; resolve the conflict markers by hand"
        united = _united(ours, theirs, out)
        if isinstance(united, str):
            return None, united
        out.extend(united)
    return "".join(_once(out)), ""


def _once(lines: list[str]) -> list[str]:
    """The lines with a later copy of a `key: value` line dropped: both sides
    added the same setting at different places (a rebase replaying a category
    upstream has too), which git merges cleanly as two lines."""
    seen: dict[Key, Any] = {}
    kept = []
    for line, key in zip(lines, _keys(lines, []), strict=True):
        value = _value(line) if key is not None else None
        if key is not None and value not in (None, {key[-1]: None}):
            if key in seen and seen[key] == value:
                continue
            seen.setdefault(key, value)
        kept.append(line)
    return kept


def _keys(lines: list[str], before: list[str]) -> list[Key | None]:
    """Each line's mapping path in the document, `before` being the lines
    above them (None: not a `key:` line)."""
    stack: list[tuple[int, str]] = []
    keys: list[Key | None] = []
    for line in [*before, *lines]:
        found = _KEY.match(line)
        if not found:
            keys.append(None)
            continue
        indent = len(found["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, found["name"]))
        keys.append(tuple(name for _, name in stack))
    return keys[len(before) :]


def _value(line: str) -> Any:
    """What one `key: value` line says, comments aside (its text when it does not parse alone)."""
    try:
        return parse_document(line.strip(), "line")[0]
    except Damaged:
        return line.strip()


def _united(ours: list[str], theirs: list[str], before: list[str]) -> list[str] | str:
    """Lines both sides added at one place (below `before`), united; or why they cannot be."""
    result, held = list(ours), _keys(ours, before)
    theirs_keys = _keys(theirs, before)
    wanted = {key for key in theirs_keys if key is not None}
    anchor = -1
    for line, key in zip(theirs, theirs_keys, strict=True):
        if key is not None and key in held:
            at = held.index(key)
            if _value(result[at]) != _value(line):
                return f"{'.'.join(key)} is set differently on each side; keep one in the conflict markers"
            anchor = at
            continue
        if key is None and line in result[anchor + 1 :]:
            anchor = result.index(line, anchor + 1)
            continue
        # After theirs' previous line and the lines ours alone added beside it (its siblings, their children).
        at = anchor + 1
        while at < len(result) and key is not None:
            other = held[at]
            if other is None or other in wanted or other[: len(key) - 1] != key[:-1] or len(other) < len(key):
                break
            at += 1
        result.insert(at, line)
        held.insert(at, key)
        anchor = at
    return result


def _categories(data: Any) -> dict[str, Any]:
    schema = data.get("memory_schema") if isinstance(data, dict) else None
    found = schema.get("categories") if isinstance(schema, dict) else None
    return dict(found) if isinstance(found, dict) else {}


def _loads(text: str, sides: list[str], where: Path) -> str:
    """Why the united config is not what both sides meant ("" when it is):
    it must load, and hold every category of each side as that side has it."""
    from ..core.config import build_config

    try:
        data = parse_document(text, str(where))[0]
        build_config(data, where.parent, where)
        base, *defined = [_categories(parse_document(side, str(where))[0]) for side in sides]
    except Damaged as exc:
        return f"the united config does not load ({exc.message}); resolve the conflict markers by hand"
    merged = _categories(data)
    for categories in defined:
        for name, spec in categories.items():
            if name not in merged and name in base:
                continue  # removed on the other side
            if merged.get(name) != spec and base.get(name) != spec:
                return f"category {name} is not as either side defined it; resolve the conflict markers by hand"
    return ""
