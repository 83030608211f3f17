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
from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
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


# (kind, pattern, extra check on the match or None). Order matters: the
# first kind that matches a span claims it.
_RULES: list[tuple[str, re.Pattern, object]] = [
    ("private key block", re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY(?: BLOCK)?-----"), None),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"), None),
    ("AWS secret access key", re.compile(r"(?i)aws.{0,24}?(?:secret|private)?.{0,8}?key.{0,6}?[=:]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"), None),
    ("GCP API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"), None),
    ("Azure storage key", re.compile(r"(?i)AccountKey=[A-Za-z0-9+/]{80,}={0,2}"), None),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})\b"), None),
    ("GitLab token", re.compile(r"\bgl(?:pat|dt|ptt|rt)-[A-Za-z0-9_\-]{20,}"), None),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), None),
    ("PyPI token", re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"), None),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}|https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+"), None),
    ("Stripe key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b"), None),
    ("Twilio key", re.compile(r"\bSK[0-9a-f]{32}\b"), None),
    ("SendGrid key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}\b"), None),
    ("Mailgun key", re.compile(r"\bkey-[0-9a-f]{32}\b"), None),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"), None),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), lambda m: bool(re.search(r"\d", m.group(0)))),
    ("JSON Web Token", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), None),
    ("credentials in a URL", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/:@]+:([^\s/@]+)@[^\s/@]+"), lambda m: not _PLACEHOLDER.match(m.group(1))),
    ("password or secret assignment", re.compile(r"(?i)\b(?:password|passwd|pwd|passphrase|secret|token|api[_\-]?key|apikey|access[_\-]?key|client[_\-]?secret|auth[_\-]?token)[\"']?\s*(?:=|:)\s*[\"']?([^\s\"',;]+)"), lambda m: _secretish(m.group(1))),
    ("high-entropy value for a key-like name", re.compile(r"(?i)\b[\w.\-]*(?:key|secret|token|passw\w*|credential|auth)[\w.\-]*[\"']?\s*(?:=|:|=>)\s*[\"']?([A-Za-z0-9+/=_\-]{20,})"), lambda m: _entropy(m.group(1)) >= 3.5),
    ("email address", re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b(?!:)"), None),
    ("payment card number", re.compile(r"(?<![\d\-.])(?:\d[ \-]?){12,18}\d(?![\d\-.])"), lambda m: _card_ok(m.group(0))),
    ("US social security number", re.compile(r"(?<![\d\-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d\-])"), None),
    ("IBAN", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"), lambda m: _iban_ok(m.group(0))),
    ("phone number", re.compile(r"(?<![\w.\-+])(?:\+\d{1,3}[ .\-]?(?:\(\d{1,4}\)[ .\-]?)?\d{1,4}(?:[ .\-]\d{2,8}){1,4}|\(\d{3}\) ?\d{3}[ .\-]\d{4}|\d{3}[ .\-]\d{3}[ .\-]\d{4})(?![\w.\-])"), lambda m: _phone_ok(m.group(0))),
]


def scan(text: str) -> list[Finding]:
    """Every secret or PII finding in `text`, in order of position."""
    findings: list[Finding] = []
    claimed: list[tuple[int, int]] = []
    for kind, pattern, check in _RULES:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in claimed):
                continue
            if check is not None and not check(match):
                continue
            claimed.append((start, end))
            line = text.count("\n", 0, start) + 1
            col = start - (text.rfind("\n", 0, start) + 1) + 1
            findings.append(Finding(kind, line, col))
    return sorted(findings, key=lambda f: (f.line, f.col))


def scan_fields(data: dict) -> list[tuple[str, Finding]]:
    """Findings in every text field of an entry, as (field, finding)."""
    out: list[tuple[str, Finding]] = []

    def walk(value, name: str) -> None:
        if isinstance(value, str):
            out.extend((name, finding) for finding in scan(value))
        elif isinstance(value, dict):
            for key, sub in value.items():
                walk(sub, f"{name}.{key}" if name else str(key))
        elif isinstance(value, list):
            for sub in value:
                walk(sub, name)

    walk(data, "")
    return out
