"""Secret and PII scanner: what must never be stored in a grimoire.

Each finding names its kind and position and never carries the matched
value, so messages built from it cannot leak the secret they report.
Patterns are specific (vendor prefixes, checksums: Luhn for cards, mod-97
for IBANs) so ordinary engineering text — SHAs, UUIDs, versions, URLs
without credentials — passes.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from typing import NamedTuple


class Finding(NamedTuple):
    """What was found and where (never the value found)."""

    kind: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"line {self.line}, col {self.col}: {self.kind}"


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _iban_ok(text: str) -> bool:
    compact = text.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in moved)
    return int(number) % 97 == 1


def _entropy(value: str) -> float:
    counts = {ch: value.count(ch) for ch in set(value)}
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def _card_ok(text: str) -> bool:
    digits = re.sub(r"\D", "", text)
    return 13 <= len(digits) <= 19 and digits[0] in "3456" and _luhn(digits) and len(set(digits)) > 1


def _phone_ok(text: str) -> bool:
    digits = re.sub(r"\D", "", text)
    return 9 <= len(digits) <= 15 and len(set(digits)) > 1


_PLACEHOLDER = re.compile(r"^(<.*>|\$\{.*\}|\$\w+|\*+|x+|\.\.\.|changeme|redacted|example|none|null|true|false)$", re.I)


def _secretish(value: str) -> bool:
    """A value that looks like a real credential rather than a word."""
    if _PLACEHOLDER.match(value) or len(value) < 8:
        return False
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))
    return classes >= 3 or (classes >= 2 and len(value) >= 12 and _entropy(value) >= 3.0)


class _Pattern:
    """A regex compiled on first use: most commands never run most rules,
    and compiling all of them would cost every process that imports this."""

    __slots__ = ("pattern", "_compiled")

    def __init__(self, pattern: str):
        self.pattern = pattern
        self._compiled: re.Pattern | None = None

    def _get(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern)
        return self._compiled

    def finditer(self, text: str):
        return self._get().finditer(text)

    def search(self, text: str):
        return self._get().search(text)


# (kind, pattern, extra check on the match or None). Order matters: the
# first kind that matches a span claims it.
_RULES: list[tuple[str, _Pattern, object]] = [
    ("private key block", _Pattern(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY(?: BLOCK)?-----"), None),
    ("AWS access key id", _Pattern(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"), None),
    ("AWS secret access key", _Pattern(r"(?i)aws.{0,24}?(?:secret|private)?.{0,8}?key.{0,6}?[=:]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"), None),
    ("GCP API key", _Pattern(r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"), None),
    ("Azure storage key", _Pattern(r"(?i)AccountKey=[A-Za-z0-9+/]{80,}={0,2}"), None),
    ("GitHub token", _Pattern(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})\b"), None),
    ("GitLab token", _Pattern(r"\bgl(?:pat|dt|ptt|rt)-[A-Za-z0-9_\-]{20,}"), None),
    ("npm token", _Pattern(r"\bnpm_[A-Za-z0-9]{36}\b"), None),
    ("PyPI token", _Pattern(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"), None),
    ("Slack token", _Pattern(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}|https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+"), None),
    ("Stripe key", _Pattern(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b"), None),
    ("Twilio key", _Pattern(r"\bSK[0-9a-f]{32}\b"), None),
    ("SendGrid key", _Pattern(r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}\b"), None),
    ("Mailgun key", _Pattern(r"\bkey-[0-9a-f]{32}\b"), None),
    ("Anthropic API key", _Pattern(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"), None),
    ("OpenAI API key", _Pattern(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), lambda m: bool(re.search(r"\d", m.group(0)))),
    ("JSON Web Token", _Pattern(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), None),
    ("credentials in a URL", _Pattern(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/:@]+:([^\s/@]+)@[^\s/@]+"), lambda m: not _PLACEHOLDER.match(m.group(1))),
    ("password or secret assignment", _Pattern(r"(?i)\b(?:password|passwd|pwd|passphrase|secret|token|api[_\-]?key|apikey|access[_\-]?key|client[_\-]?secret|auth[_\-]?token)[\"']?\s*(?:=|:)\s*[\"']?([^\s\"',;]+)"), lambda m: _secretish(m.group(1))),
    ("high-entropy value for a key-like name", _Pattern(r"(?i)\b[\w.\-]*(?:key|secret|token|passw\w*|credential|auth)[\w.\-]*[\"']?\s*(?:=|:|=>)\s*[\"']?([A-Za-z0-9+/=_\-]{20,})"), lambda m: _entropy(m.group(1)) >= 3.5),
    ("email address", _Pattern(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b(?!:)"), None),
    ("payment card number", _Pattern(r"(?<![\d\-.])(?:\d[ \-]?){12,18}\d(?![\d\-.])"), lambda m: _card_ok(m.group(0))),
    ("US social security number", _Pattern(r"(?<![\d\-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d\-])"), None),
    ("IBAN", _Pattern(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"), lambda m: _iban_ok(m.group(0))),
    ("phone number", _Pattern(r"(?<![\w.\-+])(?:\+\d{1,3}[ .\-]?(?:\(\d{1,4}\)[ .\-]?)?\d{1,4}(?:[ .\-]\d{2,8}){1,4}|\(\d{3}\) ?\d{3}[ .\-]\d{4}|\d{3}[ .\-]\d{3}[ .\-]\d{4})(?![\w.\-])"), lambda m: _phone_ok(m.group(0))),
]


# Per rule, a necessary condition read off its pattern: literals it cannot
# match without (any one of them; lowercase ones are matched ignoring case),
# a least number of digits, and a short shape it must contain. Most text
# passes few gates, so it skips most regexes (the grimoire records how much
# that saves). tests/test_guard.py checks every positive sample gives
# the same findings with and without the gates.
_GATES: dict[str, tuple[tuple[str, ...], int, _Pattern | None]] = {
    "private key block": (("-----BEGIN ",), 0, None),
    "AWS access key id": (("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA"), 0, None),
    "AWS secret access key": (("aws",), 0, _Pattern(r"[A-Za-z0-9/+]{40}")),
    "GCP API key": (("AIza",), 0, None),
    "Azure storage key": (("accountkey=",), 0, None),
    "GitHub token": (("gh", "github_pat_"), 0, None),
    "GitLab token": (("glpat-", "gldt-", "glptt-", "glrt-"), 0, None),
    "npm token": (("npm_",), 0, None),
    "PyPI token": (("pypi-AgE",), 0, None),
    "Slack token": (("xox", "https://hooks.slack.com/services/T"), 0, None),
    "Stripe key": (("_live_", "_test_"), 0, None),
    "Twilio key": (("SK",), 0, None),
    "SendGrid key": (("SG.",), 0, None),
    "Mailgun key": (("key-",), 0, None),
    "Anthropic API key": (("sk-ant-",), 0, None),
    "OpenAI API key": (("sk-",), 1, None),
    "JSON Web Token": (("eyJ",), 0, None),
    "credentials in a URL": (("://",), 0, None),
    "password or secret assignment": (("passw", "pwd", "passphrase", "secret", "token", "api", "access", "client", "auth"), 0, _Pattern(r"[=:]\s*[\"']?[^\s\"',;]{8}")),
    "high-entropy value for a key-like name": (("key", "secret", "token", "passw", "credential", "auth"), 0, _Pattern(r"[A-Za-z0-9+/=_\-]{20}")),
    "email address": (("@",), 0, None),
    "payment card number": ((), 13, None),
    "US social security number": (("-",), 9, None),
    "IBAN": ((), 2, _Pattern(r"[A-Z]{2}\d{2}")),
    "phone number": ((), 4, None),
}
assert set(_GATES) == {kind for kind, _, _ in _RULES}


# Per rule: (rule, least digits, case-sensitive literals, lowercase literals, shape).
_PLAN = [
    (rule, _GATES[rule[0]][1], tuple(w for w in _GATES[rule[0]][0] if not w.islower()),
     tuple(w for w in _GATES[rule[0]][0] if w.islower()), _GATES[rule[0]][2])
    for rule in _RULES
]
_PLAN_OF = {plan[0][0]: plan for plan in _PLAN}


def _runnable(text: str, among: list | None = None) -> list[tuple[str, re.Pattern, object]]:
    """The rules (of `among`, default all) whose gate this text passes."""
    lower = text.lower()
    digits = sum(map(text.count, "0123456789"))
    out = []
    for rule, least, sensitive, insensitive, shape in _PLAN if among is None else [_PLAN_OF[r[0]] for r in among]:
        if digits < least:
            continue
        if (sensitive or insensitive) and not (any(w in text for w in sensitive) or any(w in lower for w in insensitive)):
            continue
        if shape is not None and shape.search(text) is None:
            continue
        out.append(rule)
    return out


def _spans(text: str, rules) -> list[tuple[str, int]]:
    """(kind, start) of every finding; a span claimed by one rule is not claimed again."""
    found: list[tuple[str, int]] = []
    claimed: list[tuple[int, int]] = []
    for kind, pattern, check in rules:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in claimed):
                continue
            if check is not None and not check(match):
                continue
            claimed.append((start, end))
            found.append((kind, start))
    return found


def _finding(kind: str, text: str, start: int, base: int = 0) -> Finding:
    line = text.count("\n", base, start) + 1
    col = start - max(text.rfind("\n", base, start) + 1, base) + 1
    return Finding(kind, line, col)


def scan(text: str, gated: bool = True) -> list[Finding]:
    """Every secret or PII finding in `text`, in order of position."""
    rules = _runnable(text) if gated else _RULES
    findings = [_finding(kind, text, start) for kind, start in _spans(text, rules)]
    return sorted(findings, key=lambda f: (f.line, f.col))


# Fields are scanned joined by this separator: no rule can match across it
# (none matches a newline followed by NUL), so each finding lies in one field.
_SEPARATOR = "\n\x00\n"


def scan_fields(data: dict, gated: bool = True) -> list[tuple[str, Finding]]:
    """Findings in every text field of an entry, as (field, finding)."""
    texts: list[tuple[str, str]] = []

    def walk(value, name: str) -> None:
        if isinstance(value, str):
            texts.append((name, value))
        elif isinstance(value, dict):
            for key, sub in value.items():
                walk(sub, f"{name}.{key}" if name else str(key))
        elif isinstance(value, list):
            for sub in value:
                walk(sub, name)

    walk(data, "")
    if not gated:
        return [(name, finding) for name, text in texts for finding in scan(text, gated=False)]
    # One gate and one pass of each rule over the whole entry, not per field.
    joined = _SEPARATOR.join(text for _, text in texts)
    rules = _runnable(joined)
    if not rules:
        return []
    starts = []
    offset = 0
    for _, text in texts:
        starts.append(offset)
        offset += len(text) + len(_SEPARATOR)
    per_field: dict[int, list[Finding]] = {}
    for kind, start in _spans(joined, rules):
        field = bisect_right(starts, start) - 1
        per_field.setdefault(field, []).append(_finding(kind, joined, start, starts[field]))
    return [(texts[i][0], finding) for i in sorted(per_field) for finding in sorted(per_field[i], key=lambda f: (f.line, f.col))]
