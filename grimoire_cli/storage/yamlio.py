"""YAML in and out: safe C-speed parsing with line spans, and a small,
verified emitter for entries.

Reading never round-trips: grimoire files are parsed with ruamel's safe
loader (its C parser when available) and each top-level item's line span is
kept, so later edits can splice text. Writing emits one entry at a time as
text and checks that it parses back to exactly the same data.
"""

from __future__ import annotations

import gc
import json
import re
from datetime import date, datetime
from typing import Any

from ..core.clock import iso
from ..core.errors import Damaged
from ..core.model import SURROGATE_RE, ordered

MAX_DEPTH = 64


# -- the layout of a grimoire file's lines ------------------------------------


# An entry's id line, found in a file's text without parsing it: an item's
# first line (`- id: MEM-...`), or any line holding the `id` key; a comment
# or a carriage return may end it.
ENTRY_ID_LINE = re.compile(r"^- +id: *['\"]?(MEM-\d{8}-\d+)['\"]?[ \t]*(?:#[^\n]*)?\r?$", re.M)
ANY_ID_LINE = re.compile(r"^(?:- +| +)id: *['\"]?(MEM-\d{8}-\d+)['\"]?[ \t]*(?:#[^\n]*)?\r?$", re.M)


def is_item_line(line: str) -> bool:
    """Whether a line opens a top-level sequence item (`- ...` or `-` alone)."""
    return line == "-" or line.startswith("- ")


def last_line(lines: list[str], start: int, stop: int) -> int:
    """The last line of an item's text: trailing blank lines and comments at
    column 0 are left out (they are about what follows)."""
    end = stop - 1
    while end > start and (not lines[end].strip() or lines[end].startswith("#")):
        end -= 1
    return end


# -- parsing -------------------------------------------------------------------


def _loader() -> Any:
    from ruamel.yaml import YAML

    try:
        yaml = YAML(typ="safe", pure=False)
    except Exception:  # pragma: no cover - no C extension on this platform
        yaml = YAML(typ="safe", pure=True)
    yaml.Resolver = _resolver_class()
    return yaml


_RESOLVER = None


def _resolver_class() -> type:
    """ruamel's safe resolver, asking for the document's YAML version once.

    The stock resolver works the version out again for every scalar, through
    attribute lookups that fail and raise; profiled, that was a third of the
    time spent parsing a 2,000-entry file. A `%YAML` directive still counts:
    it comes before any scalar, so the first answer is the document's.
    """
    global _RESOLVER
    if _RESOLVER is None:
        from ruamel.yaml.resolver import VersionedResolver

        class OnceVersionedResolver(VersionedResolver):
            _chosen = None

            @property
            def versioned_resolver(self) -> Any:
                if self._chosen is None:
                    self._chosen = VersionedResolver.versioned_resolver.fget(self)  # type: ignore[attr-defined]
                return self._chosen

        _RESOLVER = OnceVersionedResolver
    return _RESOLVER


def _plain(value: Any) -> Any:
    """Dates that YAML resolved by itself go back to the strings they were."""
    if isinstance(value, datetime):
        return iso(value) if value.tzinfo else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _check_tree(node: Any, where: str) -> None:
    """Refuse aliases (alias bombs) and absurd nesting before constructing."""
    seen: set[int] = set()
    stack = [(node, 0)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise Damaged(
                where,
                current.start_mark.line + 1,
                f"nesting deeper than {MAX_DEPTH} levels",
                "grimoire entries are flat mappings",
                "yaml",
            )
        if id(current) in seen:
            raise Damaged(
                where,
                current.start_mark.line + 1,
                "YAML anchors/aliases are not allowed in grimoire files",
                "write the value out in full",
                "yaml",
            )
        seen.add(id(current))
        value = current.value
        if isinstance(value, list):
            for child in value:
                if isinstance(child, tuple):
                    stack.append((child[0], depth + 1))
                    stack.append((child[1], depth + 1))
                else:
                    stack.append((child, depth + 1))


_YAML = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT, _TIMESTAMP, _SEQ, _MAP = (
    _YAML + name for name in ("str", "null", "bool", "int", "float", "timestamp", "seq", "map")
)


class _Unusual(Exception):
    """A document `_built` leaves to ruamel's constructor."""


def _built(root: Any, constructor: Any) -> Any:
    """The data of a composed document as `_plain(construct_document(...))`
    gives it, in one pass over the nodes for the tags entries use: str,
    null, bool, int, float, timestamp, seq and map. It raises on anything
    else (an alias, a merge or duplicate key, a key that is not a scalar,
    another tag, nesting past MAX_DEPTH), and the caller then runs ruamel's
    constructor and `_check_tree`, which say what is wrong, if anything.
    (ruamel's generic construction was 40 % of a parse.)"""
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    seen: set[int] = set()

    def tag_of(node: Any) -> str:
        tag = node.ctag
        return tag.suffix if tag.handle is None else str(tag)

    def scalar(node: Any, tag: str) -> Any:
        if tag == _STR:
            return node.value
        if tag == _NULL:
            return None
        if tag == _BOOL:
            return constructor.construct_yaml_bool(node)
        if tag == _INT:
            return constructor.construct_yaml_int(node)
        if tag == _FLOAT:
            return constructor.construct_yaml_float(node)
        if tag == _TIMESTAMP:
            return constructor.construct_yaml_timestamp(node)
        raise _Unusual

    def build(node: Any, depth: int) -> Any:
        if depth > MAX_DEPTH or id(node) in seen:
            raise _Unusual
        seen.add(id(node))
        kind = type(node)
        tag = tag_of(node)
        if kind is ScalarNode:
            value = scalar(node, tag)
            if isinstance(value, datetime):
                return iso(value) if value.tzinfo else value.isoformat()
            return value.isoformat() if isinstance(value, date) else value
        if kind is SequenceNode and tag == _SEQ:
            return [build(child, depth + 1) for child in node.value]
        if kind is not MappingNode or tag != _MAP:
            raise _Unusual
        out: dict[Any, Any] = {}
        keys: set[Any] = set()  # as constructed: 1, 1.0 and true are one key to ruamel
        for key_node, value_node in node.value:
            if type(key_node) is not ScalarNode or id(key_node) in seen:
                raise _Unusual
            seen.add(id(key_node))
            key = scalar(key_node, tag_of(key_node))
            text = key if isinstance(key, str) else str(key)
            if key in keys or text in out:
                raise _Unusual  # a duplicate key: ruamel's error (or a str() collision: its data)
            keys.add(key)
            out[text] = build(value_node, depth + 1)
        return out

    return build(root, 0)


def parse_document(text: str, where: str) -> tuple[Any, Any]:
    """(data, root node) of one YAML document; Damaged with file:line on error."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    loader = _loader()
    collecting = gc.isenabled()
    gc.disable()  # a parse allocates many objects and no cycles: the collector only costs time
    try:
        node = loader.compose(text)
        if node is None:
            return None, None
        try:
            return _built(node, loader.constructor), node
        except Exception:  # anything unusual: ruamel's constructor, and its error if any
            pass
        _check_tree(node, where)
        data = loader.constructor.construct_document(node)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        raise Damaged(
            where, line, f"not valid YAML: {problem}", "fix the file by hand or restore it with git", "yaml"
        ) from None
    except (YAMLError, RecursionError, ValueError) as exc:
        raise Damaged(
            where, 1, f"not valid YAML: {type(exc).__name__}", "fix the file by hand or restore it with git", "yaml"
        ) from None
    finally:
        if collecting:
            # What the parse allocated survives as data (no cycles, freed by reference counts): frozen, the
            # collector never walks it. Re-enabled alone, its first pass walked every object the parse made
            # (a 20k-entry file: ~1.4 s of a 5 s parse, charged to whatever allocated next).
            gc.freeze()
            gc.enable()
    return _plain(data), node


def parse_entries(text: str, where: str) -> tuple[list[Any], list[tuple[int, int]]]:
    """Items of a grimoire file and each one's 1-based inclusive line span.

    A file of only comments is an empty list; anything but a sequence is
    Damaged. A span runs from the item's first line to its last line of
    text, so comments between entries stay with the entry that follows.
    """
    data, node = parse_document(text, where)
    if data is None:
        return [], []
    if not isinstance(data, list):
        line = node.start_mark.line + 1
        raise Damaged(
            where,
            line,
            f"a grimoire file must be a YAML list of entries, found a {type(data).__name__}",
            "start each entry with '- id: ...'",
            "yaml",
        )
    lines = text.split("\n")
    starts = [_dash_line(lines, child.start_mark.line) for child in node.value]
    spans = []
    for index, start in enumerate(starts):
        stop = starts[index + 1] if index + 1 < len(starts) else len(lines)
        spans.append((start + 1, last_line(lines, start, stop) + 1))
    return data, spans


def _dash_line(lines: list[str], start: int) -> int:
    """The line of an item's dash, which may come before its node's first
    line (`-` alone, or `- # a comment`, then the mapping)."""
    if start >= len(lines) or is_item_line(lines[start]):
        return start
    back = start
    while back > 0 and lines[back][:1] in ("", " ", "#"):
        back -= 1
    if is_item_line(lines[back]):
        return back
    while start > 0 and not lines[start].lstrip().startswith("-") and lines[start - 1].strip() == "-":
        start -= 1  # an indented sequence
    return start


# --- emitting -----------------------------------------------------------------

PLAIN_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_./()+-]*(?: [A-Za-z0-9_./()+-]+)*\Z")
RESOLVED_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


# The characters `quote` writes as themselves (a character class, as regex
# escapes): YAML's printable characters but the line breaks NEL, LS and PS and
# the byte order mark, and neither `"` nor a backslash.
AS_ITSELF = r"\x20\x21\x23-\x5b\x5d-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"
_PRINTABLE_TEXT = re.compile(rf'[\n\t"\\{AS_ITSELF}]*\Z')  # what a literal block may hold
# Well inside YAML's limits (an implicit key of 1,024 characters, the
# loader's nesting depth of 64): a longer key or deeper mapping is never
# taken as exact, by the emitter or by `emitted`, so the parser decides.
LONGEST_KEY = 1000
DEEPEST = 16
_ESCAPED = re.compile(f"[^{AS_ITSELF}]")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}


def _escape(found: re.Match[str]) -> str:
    ch = found.group()
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def quote(text: str) -> str:
    """A YAML double-quoted scalar that reads back exactly as `text`."""
    return '"' + _ESCAPED.sub(_escape, text) + '"'


def scalar(value: Any) -> str:
    """One scalar in the form that reads back as the same value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        # `1e-05` is a string to YAML 1.1; `1.0e-05` a float to both versions.
        return text.replace("e", ".0e", 1) if "e" in text and "." not in text else text
    text = str(value)
    if PLAIN_RE.match(text) and text.lower() not in RESOLVED_WORDS:
        return text
    return quote(text)


def _literal_ok(text: str) -> bool:
    if "\n" not in text.rstrip("\n") or text.startswith((" ", "\t", "\n")):
        return False
    if not _PRINTABLE_TEXT.match(text):
        return False
    # Lines that are only blanks, or start with a tab, would not survive.
    return all(line.strip() or not line for line in text.split("\n")) and not any(
        line.startswith("\t") for line in text.split("\n")
    )


def _literal(text: str, indent: int) -> list[str]:
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    chomp = "-" if trailing == 0 else "" if trailing == 1 else "+"
    pad = " " * indent
    lines = [f"|{chomp}"]
    lines.extend(pad + line if line else "" for line in body.split("\n"))
    lines.extend("" for _ in range(max(0, trailing - 1)))
    return lines


def _field(key: str, value: Any, indent: int) -> list[str]:
    pad = " " * indent
    name = scalar(key)
    if isinstance(value, dict):
        if not value:
            return [f"{pad}{name}: {{}}"]
        lines = [f"{pad}{name}:"]
        for sub_key, sub_value in value.items():
            lines.extend(_field(str(sub_key), sub_value, indent + 2))
        return lines
    if isinstance(value, list):
        return [f"{pad}{name}: {_flow(value)}"]
    if isinstance(value, str) and _literal_ok(value):
        block = _literal(value, indent + 2)
        return [f"{pad}{name}: {block[0]}", *block[1:]]
    return [f"{pad}{name}: {scalar(value)}"]


def _flow(value: Any) -> str:
    """A list or mapping in flow style, every scalar in its exact form."""
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{scalar(str(key))}: {_flow(item)}" for key, item in value.items()) + "}"
    return scalar(value)


_SURROGATE_PAIR = re.compile(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})")


def emit_fields(data: dict[str, Any], indent: int = 2) -> list[str]:
    lines: list[str] = []
    for key, value in data.items():
        lines.extend(_field(key, value, indent))
    return lines


DECIMAL_RE = re.compile(r"^-?[0-9]+\.[0-9]+\Z")


def always_exact(value: Any, _depth: int = 0) -> bool:
    """Whether the emitter's text for `value` reads back as `value` by construction.

    Plain scalars (a letter first, no YAML indicator, never a reserved word),
    double-quoted scalars (every character escaped as needed), integers,
    decimals with a dot (floats in YAML 1.1 and 1.2 alike), flow lists of
    those and block mappings of them. Literal blocks, exponent floats and
    JSON-in-YAML are left to `emit_entry`'s parse check. The round-trip
    property tests parse what this lets through.
    """
    if value is None or isinstance(value, (bool, int)):
        return True
    if isinstance(value, float):
        return bool(DECIMAL_RE.match(repr(value)))
    if isinstance(value, str):
        return not _literal_ok(value) and not SURROGATE_RE.search(value)
    if isinstance(value, list):
        return all(not isinstance(item, (dict, list)) and always_exact(item) for item in value)
    if isinstance(value, dict):
        # A key past YAML's limit, or nesting toward the loader's, is not read
        # back at all: the parse check says so.
        return _depth < DEEPEST and all(
            isinstance(key, str) and len(key) <= LONGEST_KEY and always_exact(key) and always_exact(item, _depth + 1)
            for key, item in value.items()
        )
    return False


def is_exact_emission(lines: list[str], data: dict[str, Any]) -> bool:
    """Whether `lines` are, field by field in some order, what the emitter
    writes for `data`, with every value of a kind it writes exactly.

    Such a block reads back as `data` by construction (the same argument as
    `emit_entry`'s; a mapping's key order does not change what it holds), so
    an in-place edit that yields one needs no parse to be verified.
    """
    if not lines or not lines[0].startswith("- ") or not always_exact(data):
        return False
    left = {key: _field(key, value, 2) for key, value in data.items()}
    rest = ["  " + lines[0][2:], *lines[1:]]
    position = 0
    while position < len(rest):
        for key, group in left.items():
            if rest[position : position + len(group)] == group:
                position += len(group)
                del left[key]
                break
        else:
            return False
    return not left


def emit_entry(data: dict[str, Any]) -> str:
    """Text of one top-level sequence item (ends with a newline), verified.

    Verified by parsing it back, unless every value is of a kind the emitter
    writes exactly by construction: that spares a plain `mem add` the YAML
    parser's import.
    """
    lines = emit_fields(ordered(data))
    lines[0] = "- " + lines[0][2:]
    text = "\n".join(lines) + "\n"
    if always_exact(data):
        return text
    loaded, _ = parse_entries(text, "<new entry>")
    if loaded != [json.loads(json.dumps(ordered(data)))]:
        # The emitter is meant to be exact; if it ever is not, store the
        # entry as JSON (valid YAML), which is exact by construction.
        # JSON writes a character past U+FFFF as a surrogate pair, which YAML refuses: one \U escape instead.
        text = (
            "- "
            + _SURROGATE_PAIR.sub(
                lambda m: "\\U%08x" % (0x10000 + ((int(m[1], 16) - 0xD800) << 10) + int(m[2], 16) - 0xDC00),
                json.dumps(ordered(data), ensure_ascii=True),
            )
            + "\n"
        )
    return text
