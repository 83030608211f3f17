"""Secret and PII guard: what must never be stored in a grimoire.

`scan` finds secrets and personal data (the rules are in `rules.py`);
`scan_fields` does it for a whole entry, one finding per secret; `redact`
replaces each one with `[redacted: <kind>]`; `strip_private` removes the
`<private>…</private>` sections a user marks as never to be stored.

Each finding names its kind and position and never carries the matched
value, so messages built from it cannot leak the secret they report.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any, NamedTuple

from ..core.errors import BadInput
from . import gitleaks as guard_gitleaks
from .rules import RULES, Rule


class Finding(NamedTuple):
    """What was found and where (never the value found)."""

    kind: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"line {self.line}, col {self.col}: {self.kind}"


class _Compiled:
    """A rule with its regexes compiled on first use: most commands never run
    most rules, and compiling them all would cost every process that
    imports this."""

    __slots__ = ("_pattern", "_shape", "rule")

    def __init__(self, rule: Rule):
        self.rule = rule
        self._pattern: re.Pattern | None = None
        self._shape: re.Pattern | None = None

    @property
    def pattern(self) -> re.Pattern:
        if self._pattern is None:
            self._pattern = re.compile(self.rule.pattern)
        return self._pattern

    def has_shape(self, text: str) -> bool:
        if self.rule.shape is None:
            return True
        if self._shape is None:
            # With the pattern's case-insensitivity, which also folds `ſ`, `ı`, `İ` and `K` to ASCII.
            self._shape = re.compile(self.rule.shape, re.I if self.rule.pattern.startswith("(?i)") else 0)
        return self._shape.search(text) is not None


_COMPILED = [_Compiled(rule) for rule in RULES]
# The gates' literals, each checked once per text (many rules share one):
# (literal, whether its case matters, the positions of the rules it opens).
_LITERALS: list[tuple[str, bool, tuple[int, ...]]] = []
for _literal in dict.fromkeys(w for rule in RULES for w in rule.literals):
    _LITERALS.append(
        (_literal, not _literal.islower(), tuple(i for i, rule in enumerate(RULES) if _literal in rule.literals))
    )
_UNGATED = tuple(i for i, rule in enumerate(RULES) if not rule.literals)
# What `re`'s case-insensitive matching takes for an ASCII letter beyond its
# two cases (`(?i)s` matches `ſ`): folded before a case-insensitive literal
# is looked for, so a `paſſword = …` the rule reports opens its gate.
# (`translate` is slow on any text that is not ASCII, a summary's `…` included: only where one is.)
_FOLD = str.maketrans({"\u017f": "s", "\u0131": "i", "\u0130": "i", "\u212a": "k"})
_FOLDED = re.compile("[\u017f\u0131\u0130\u212a]")


_DIGIT = re.compile(r"\d")


def _digits(text: str) -> int:
    """How many characters of `text` a pattern's `\\d` matches (any decimal digit, not only ASCII)."""
    return len(_DIGIT.findall(text))


class _Field(NamedTuple):
    """Where one field lies in the joined text of an entry's fields, and how many digits it holds."""

    start: int
    end: int
    digits: int


def _runnable(text: str, gated: bool = True, fields: list[_Field] | None = None) -> list[_Compiled]:
    """The rules whose gate this text passes (all of them, ungated), in rule
    order. `fields`: where the fields `text` joins lie, when no match of a
    digit-gated rule can cross from one to the next; a rule's digits must
    then be in one field."""
    if not gated:
        return _COMPILED
    lower = text.translate(_FOLD).lower() if not text.isascii() and _FOLDED.search(text) else text.lower()
    opened = set(_UNGATED)
    for literal, sensitive, rules in _LITERALS:
        if literal in (text if sensitive else lower):
            opened.update(rules)
    if not opened:
        return []
    digits = max((field.digits for field in fields), default=0) if fields is not None else _digits(text)
    return [_COMPILED[i] for i in sorted(opened) if digits >= RULES[i].digits and _COMPILED[i].has_shape(text)]


class _Span(NamedTuple):
    kind: str
    start: int  # of the secret itself (see `_secret`)
    end: int


def _secret(match: re.Match) -> tuple[int, int]:
    """Where the secret is in a match: its value group, else the whole match."""
    names = match.re.groupindex
    if "v1" in names:
        return match.span("v1") if match.group("v1") is not None else match.span("v2")
    if match.re.groups and match.group(1) is not None:
        return match.span(1)
    return match.span()


def _matches(compiled: _Compiled, text: str, fields: list[_Field] | None) -> Iterator[re.Match]:
    """The rule's matches in `text`, in order. A digit-gated rule with
    `fields` given is run only over the fields with its digits: its matches
    lie in one field, and a search from a field's start to the line break
    after it sees what a search of the whole text sees there."""
    needs = compiled.rule.digits
    if not needs or fields is None:
        yield from compiled.pattern.finditer(text)
        return
    for field in fields:
        if field.digits >= needs:
            yield from compiled.pattern.finditer(text, field.start, field.end + 1)


def _spans(text: str, rules: list[_Compiled], fields: list[_Field] | None = None, gated: bool = True) -> list[_Span]:
    """Every finding, in rule order (grimoire's rules, then gitleaks' for what
    they leave); a span claimed by one rule is not claimed again."""
    found: list[_Span] = []
    claimed: list[tuple[int, int]] = []
    for compiled in rules:
        check = compiled.rule.check
        for match in _matches(compiled, text, fields):
            start, end = match.span()
            if any(start < b and a < end for a, b in claimed):
                continue
            if check is not None and not check(match):
                continue
            claimed.append((start, end))
            found.append(_Span(compiled.rule.kind, *_secret(match)))

    def taken(start: int, end: int) -> bool:
        return any(start < b and a < end for a, b in claimed)

    for kind, start, end, secret_start, secret_end in guard_gitleaks.matches(text, gated, taken):
        claimed.append((start, end))
        found.append(_Span(kind, secret_start, secret_end))
    return found


def _finding(kind: str, text: str, start: int, base: int = 0) -> Finding:
    line = text.count("\n", base, start) + 1
    col = start - max(text.rfind("\n", base, start) + 1, base) + 1
    return Finding(kind, line, col)


def scan(text: str, gated: bool = True) -> list[Finding]:
    """Every secret or PII finding in `text`, in order of position."""
    findings = [_finding(span.kind, text, span.start) for span in _spans(text, _runnable(text, gated), gated=gated)]
    return sorted(findings, key=lambda f: (f.line, f.col))


def redact(text: str) -> tuple[str, list[Finding]]:
    """`text` with each secret replaced by `[redacted: <kind>]` (an
    assignment keeps its name, a URL its user and host), and the findings."""
    spans = sorted(_spans(text, _runnable(text)), key=lambda span: span.start)
    findings = [_finding(span.kind, text, span.start) for span in spans]
    for span in reversed(spans):
        text = text[: span.start] + f"[redacted: {span.kind}]" + text[span.end :]
    return text, findings


# Fields are scanned joined by this separator: no rule can match across it
# (none matches a newline followed by NUL), so each finding lies in one field.
# The rules with a digit gate match no line break at all (no `\s`, `.` or
# negated class), so their digits lie in one field too.
_SEPARATOR = "\n\x00\n"
# A timestamp in the form the schema gives `source.timestamp` and
# `expires_at`: no rule finds anything in one (short runs of ASCII digits
# joined by `-`, `T`, `:`, one `.` and `Z`; tests/test_guard.py scans such
# stamps with every rule), so an entry's stamps are not scanned, and
# their 14 digits do not open the digit gates (cards, phones) for its prose.
_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?Z")


def redact_all(texts: list[str]) -> tuple[list[str], int]:
    """`redact` of many texts at once (one gate, one pass of each rule over
    them all: a record of many short fields costs one text's work), and how
    many secrets there were."""
    if any("\x00" in text for text in texts):  # the separator could occur: one by one
        done = [redact(text) for text in texts]
        return [text for text, _ in done], sum(len(found) for _, found in done)
    joined, found = redact(_SEPARATOR.join(texts))
    return (joined.split(_SEPARATOR) if texts else []), len(found)


def named_texts(value: Any, name: str = "") -> Iterator[tuple[str, str]]:
    """Every string in `value`, in order, with its dotted field name (list items take their list's)."""
    if isinstance(value, str):
        yield name, value
    elif isinstance(value, dict):
        for key, sub in value.items():
            yield from named_texts(sub, f"{name}.{key}" if name else str(key))
    elif isinstance(value, list):
        for sub in value:
            yield from named_texts(sub, name)


def scan_fields(data: dict, gated: bool = True) -> list[tuple[str, Finding]]:
    """Findings in every text field of an entry, as (field, finding), one per
    secret: a secret repeated in a later field (a summary derived from the
    content) is reported where it first appears, in field order."""
    texts = [(name, text) for name, text in named_texts(data) if not (gated and _STAMP.fullmatch(text))]
    # One gate and one pass of each rule over the whole entry, not per field.
    joined = _SEPARATOR.join(text for _, text in texts)
    fields = []
    offset = 0
    for _, text in texts:
        fields.append(_Field(offset, offset + len(text), _digits(text)))
        offset += len(text) + len(_SEPARATOR)
    scope = fields if gated else None  # ungated, every rule runs over the whole text
    rules = _runnable(joined, gated, scope)
    starts = [field.start for field in fields]
    seen: set[tuple[str, str]] = set()
    out: list[tuple[int, Finding]] = []
    for span in sorted(_spans(joined, rules, scope, gated), key=lambda span: span.start):
        secret = (span.kind, joined[span.start : span.end])
        if secret in seen:
            continue
        seen.add(secret)
        field = bisect_right(starts, span.start) - 1
        out.append((field, _finding(span.kind, joined, span.start, starts[field])))
    return [(texts[field][0], finding) for field, finding in out]


_PRIVATE = re.compile(r"<private>.*?</private>", re.S | re.I)
_PRIVATE_TAG = re.compile(r"</?private>", re.I)


def strip_private(text: str) -> str:
    """`text` without its `<private>…</private>` sections (never stored); a
    tag without its partner is refused, with its position."""
    opened = None  # the `<private>` of the section being read
    for tag in _PRIVATE_TAG.finditer(text):
        # As the non-greedy `_PRIVATE` pairs them: a `<private>` inside an
        # open section is part of it; a `</private>` closes it.
        if tag.group().lower() == "<private>":
            opened = opened or tag
        elif opened is not None:
            opened = None
        else:
            _unpaired(text, tag, "<private>")
    if opened is not None:
        _unpaired(text, opened, "</private>")
    kept, last = [], 0
    for section in _PRIVATE.finditer(text):
        before = text[last : section.start()]
        if before.endswith((" ", "\t")) and text[section.end() : section.end() + 1] in (" ", "\t"):
            before = before[:-1]  # a section mid-sentence leaves one space, not two
        kept.append(before)
        last = section.end()
    kept.append(text[last:])
    return "".join(kept)


def _unpaired(text: str, tag: re.Match, partner: str) -> None:
    where = _finding("", text, tag.start())
    raise BadInput(
        f"{tag.group().lower()} at line {where.line}, col {where.col} has no {partner}",
        "close the private section (it is removed before writing), or remove the tag",
    )
