"""Reading an entry back from the text `yamlio`'s emitter writes, without
the YAML parser.

Nearly every entry in a grimoire was written by `mem`, so its text is
exactly what `yamlio.emit_fields` makes of its data: block mappings indented
two spaces a level, plain or double-quoted scalars, flow lists of scalars.
`decode` inverts that layout and accepts a chunk only when every line is
exactly what the emitter would write for the value decoded from it. Such
text reads back, through YAML, as that value by construction (the argument
`yamlio.always_exact` makes for writes, which skip the parse check on it),
so the two readers cannot differ. Anything else (a hand-written layout, a
comment inside an entry, a literal block, a quoted key, a quoted item in a
list) is None: the caller parses it as YAML, with its file:line errors.

It reads a grimoire about four times faster than the YAML parser (ruamel's
C loader; PyYAML's CSafeLoader is no faster): the figures are in docs/design.md
and the loa grimoire.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .yamlio import AS_ITSELF, DECIMAL_RE, DEEPEST, LONGEST_KEY, PLAIN_RE, RESOLVED_WORDS, quote

_INT_RE = re.compile(r"-?[0-9]+\Z")
# What `quote` writes as itself: printable, and neither `"` nor `\`.
_AS_ITSELF = re.compile(rf"[{AS_ITSELF}]*\Z")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# A comment line YAML reads as one comment: printable, no line break of its own (\r, NEL, LS, PS).
COMMENT = re.compile(rf" *#[\t{AS_ITSELF}\"\\]*\Z")
# Past yamlio's limits (and for integers, well inside Python's 4,300 digits)
# the parser decides, with its error if it has one.
_LONGEST = LONGEST_KEY
_DEEPEST = 2 * DEEPEST  # indentation of the deepest mapping read here
_NOT_SCALAR = object()


def decode(text: str) -> dict[str, Any] | None:
    """The entry (a mapping) a chunk's text holds when the text is exactly
    what the emitter writes for it, followed by nothing but blank lines and
    comments at column 0; None for any other text."""
    lines = text.split("\n")
    end = len(lines)
    while end > 1 and (not lines[end - 1] or lines[end - 1][0] == "#"):
        end -= 1
        if lines[end] and not COMMENT.match(lines[end]):
            return None
    first = lines[0]
    if not first.startswith("- ") or first[2:3] == " ":
        return None
    lines[0] = "  " + first[2:]
    found, at = _mapping(lines, 0, end, 2)
    return found if at == end else None


def _mapping(lines: list[str], at: int, end: int, indent: int) -> tuple[dict[str, Any] | None, int]:
    """The block mapping whose lines start at `at` with `indent` spaces, and
    the line after it; (None, _) when a line is not the emitter's."""
    if indent > _DEEPEST:
        return None, at
    pad = " " * indent
    out: dict[str, Any] = {}
    while at < end:
        line = lines[at]
        if not line.startswith(pad):
            break
        if line[indent : indent + 1] == " ":
            return None, at
        field = line[indent:]
        colon = field.find(": ")
        if colon < 0:
            if not field.endswith(":"):
                return None, at
            key = field[:-1]
            if not _plain_key(key) or key in out:
                return None, at
            value, at = _mapping(lines, at + 1, end, indent + 2)
            if not value:  # the emitter writes an empty mapping as `{}`, and no mapping bare
                return None, at
            out[key] = value
            continue
        key, rest = field[:colon], field[colon + 2 :]
        if not _plain_key(key) or key in out:
            return None, at
        if rest[:1] == "[":
            value = _flow_list(rest)
        elif rest == "{}":
            value = {}
        else:
            value = _scalar(rest)
        if value is _NOT_SCALAR:
            return None, at
        out[key] = value
        at += 1
    return out, at


_KEYS: dict[str, bool] = {}  # a grimoire's keys are few and repeated: each is checked once


def _plain_key(key: str) -> bool:
    """A key as the emitter writes it unquoted (`yamlio.scalar` of a str)."""
    ok = _KEYS.get(key)
    if ok is None:
        ok = len(key) <= _LONGEST and bool(PLAIN_RE.match(key)) and key.lower() not in RESOLVED_WORDS
        if len(_KEYS) < 4096:
            _KEYS[key] = ok
    return ok


def _flow_list(text: str) -> Any:
    """A flow list of plain scalars, numbers, booleans and nulls (`[a, 1]`)."""
    if not text.endswith("]") or '"' in text or "[" in text[1:] or "{" in text:
        return _NOT_SCALAR
    inner = text[1:-1]
    if not inner:
        return []
    out = []
    for part in inner.split(", "):
        value = _scalar(part)
        if value is _NOT_SCALAR:
            return _NOT_SCALAR
        out.append(value)
    return out


def _scalar(text: str) -> Any:
    """The value whose `yamlio.scalar` text is exactly `text`, or _NOT_SCALAR."""
    first = text[:1]
    if first == '"':
        return _quoted(text)
    if PLAIN_RE.match(text):
        if text.lower() not in RESOLVED_WORDS:
            return text
        return {"null": None, "true": True, "false": False}.get(text, _NOT_SCALAR)
    if _INT_RE.match(text) and len(text) <= _LONGEST:
        number = int(text)
        return number if str(number) == text else _NOT_SCALAR
    if DECIMAL_RE.match(text):
        real = float(text)
        return real if repr(real) == text else _NOT_SCALAR
    return _NOT_SCALAR


def _quoted(text: str) -> Any:
    """The string a double-quoted scalar written by `yamlio.quote` holds."""
    if len(text) < 2 or text[-1] != '"':
        return _NOT_SCALAR
    inner = text[1:-1]
    if _AS_ITSELF.match(inner):
        return inner  # no escape and nothing to escape: quote(inner) is text
    try:
        value = json.loads(text)  # JSON's escapes that `quote` writes mean the same in YAML
    except ValueError:
        return _NOT_SCALAR
    if not isinstance(value, str) or _SURROGATE.search(value) or quote(value) != text:
        return _NOT_SCALAR
    return value
