"""`mem scan`: text checked against the guard without storing anything.

Each input line is one text (or, as JSON Lines, one object whose `text`
may span lines); each gets a verdict naming the kinds found — what
`mem add` would refuse it for — and never the secret itself.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from ..core.errors import BadInput
from .instructions import scan as instruction_shaped
from .scan import scan, strip_private

UNPAIRED_PRIVATE = "unpaired <private> tag"


class Verdict(NamedTuple):
    line: int  # of the input, from 1
    kinds: list[str]  # what was found, each kind once, in order of position

    @property
    def refused(self) -> bool:
        return bool(self.kinds)

    def to_dict(self) -> dict:
        return {"line": self.line, "refused": self.refused, "kinds": self.kinds}


def kinds_in(text: str) -> list[str]:
    """The kinds of secret, personal data and instruction-shaped text `mem add` would refuse `text` for."""
    try:
        kept = strip_private(text)
    except BadInput:
        return [UNPAIRED_PRIVATE]
    found = sorted(scan(kept) + instruction_shaped(kept), key=lambda finding: (finding.line, finding.col))
    return list(dict.fromkeys(finding.kind for finding in found))


def _texts(raw: str, jsonl: bool) -> list[str]:
    """The texts of the input's lines (a blank line is an empty text); `BadInput` naming the first bad JSON line."""
    lines = raw.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline ending the last line
    lines = [line.removesuffix("\r") for line in lines]
    if not jsonl:
        return lines
    return [_text_of(line, number) if line.strip() else "" for number, line in enumerate(lines, 1)]


def _text_of(line: str, number: int) -> str:
    hint = 'give one JSON object a line, with "text" a string: {"text": "..."}'
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise BadInput(f"line {number}: not JSON ({error.msg})", hint) from None
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        raise BadInput(f'line {number}: not an object with a string "text"', hint)
    return value["text"]


def scan_input(raw: str, jsonl: bool = False) -> list[Verdict]:
    """One verdict per line of `raw`, in order; all lines are read before any
    verdict, so bad input yields none."""
    return [Verdict(number, kinds_in(text)) for number, text in enumerate(_texts(raw, jsonl), 1)]
