"""Instruction-shaped text: what in a memory reads as an order to the agent
that recalls it, not as a note about the project (memory poisoning).

Memories reach every agent session of the repository (the SessionStart
hook, `mem context`, the MCP context) and arrive through git: one merged
pull request can plant an order there. So:

- `scan_fields` finds text that overrides earlier instructions, imitates a
  role or system message, or pipes a download into a shell: refused on
  every write path (request.py), reported by `mem validate`
  (entry_rules.py), left out of the context block (context.py), unless
  the entry carries `metadata.accept_instructions: true`
  (`mem add --accept-instructions`: a person's decision, visible in review);
- `neutralise` renders the role and system markup of an entry that is
  shown (an accepted one) with look-alike characters, so it cannot pass
  for a real turn or tag; what is stored is never changed.

The rules are few and specific: a memory that talks about these things in
prose ("never pipe curl into sh") passes; one that quotes them is refused
until accepted.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from .scan import Finding, named_texts

ACCEPT = "accept_instructions"  # the metadata key that accepts an entry's instruction-shaped text


class _Rule(NamedTuple):
    kind: str
    pattern: re.Pattern
    literals: tuple[str, ...]  # the lower-cased text holds one of them wherever the rule matches


_EARLIER = r"(?:previous|prior|above|earlier|preceding|former|original|initial|system)"
# Orders, not rules: "disregard the earlier rules on tabs" is how a decision changes.
_ORDERS = r"(?:instructions?|prompts?|directives)"
# Role and system markup of chat formats: tags a model reads as a turn or a
# system message (`<system>`, `</assistant>`, `<system-reminder>`,
# `<function_calls>`, `<invoke name=…>`), special tokens (`<|im_start|>`),
# Llama's `[INST]` and `<<SYS>>`. `<user>` and `<tool>` are left out: they
# are common placeholders (`ssh <user>@host`).
_ROLE_TAG = (
    r"<\s*/?\s*(?:system(?:[-_][\w-]+)?|assistant|human|im_start|im_end|function_calls|function_results|invoke|"
    r"tool_use|tool_result|antml:[\w-]+)(?:\s[^<>\n]{0,80})?\s*/?>"
)
_SPECIAL_TOKEN = r"<\|[\w-]{1,40}\|>"
_LLAMA = r"\[/?INST\]|<<\s*/?SYS\s*>>"
# A turn prefix where a transcript starts a turn: at the start of a line.
_TURN = r"(?m:^[ \t]*(?:Human|Assistant)[ \t]*:)"
_MARKUP = re.compile(f"(?i:{_ROLE_TAG}|{_SPECIAL_TOKEN})|{_LLAMA}|{_TURN}")
_DOWNLOADER = r"(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)"
_SHELL = r"(?:(?:ba|z|da|k|fi)?sh|python[\d.]*|perl|ruby|node|iex|invoke-expression|pwsh|powershell)"

_RULES = (
    _Rule(
        "override of earlier instructions",
        re.compile(
            rf"(?i)\b(?:ignore|disregard|forget|override)\b[\s,]+(?:(?:all|any|every|the|your|these|those)\s+){{0,3}}"
            rf"{_EARLIER}\s+{_ORDERS}\b|\byou\s+are\s+now\s+(?:in\s+)?(?:an?\s+|the\s+)?(?:[\w-]+\s+){{0,2}}?"
            r"(?:mode|assistant|ai|agent|model|persona|jailbroken|unrestricted|unfiltered|dan)\b"
        ),
        ("ignore", "disregard", "forget", "override", "you"),
    ),
    _Rule("role or system markup", _MARKUP, ("<", "[inst]", "[/inst]", "human", "assistant")),
    _Rule(
        "download piped into a shell",
        re.compile(
            rf"(?i)\b{_DOWNLOADER}\b[^|\n]{{0,300}}?\|\s*(?:sudo\s+(?:-\S+\s+)*)?{_SHELL}\b"
            rf"|\b(?:iex|invoke-expression)\b\s*\(?\s*\(?\s*(?:{_DOWNLOADER}\b|new-object\s+(?:system\.)?net\.webclient)"
            rf"|\b(?:(?:ba|z|k)?sh|source|eval)\s+(?:-c\s+)?[\"']?(?:<\(|\$\()\s*(?:curl|wget)\b"
        ),
        ("curl", "wget", "iwr", "irm", "invoke-", "iex"),
    ),
)

# Look-alikes for the characters that make markup markup (`<system>` is
# rendered `‹system›`, `[INST]` `［INST］`, a line's `Human:` `Human꞉`).
_LOOK_ALIKE = str.maketrans({"<": "\u2039", ">": "\u203a", "[": "\uff3b", "]": "\uff3d", ":": "\ua789"})


def scan(text: str) -> list[Finding]:
    """Every instruction-shaped span of `text`, in order of position."""
    lower = text.lower()
    found = []
    for rule in _RULES:
        if not any(literal in lower for literal in rule.literals):
            continue  # the rule cannot match: most text skips most rules
        for match in rule.pattern.finditer(text):
            start = match.start() + len(match.group()) - len(match.group().lstrip())
            line = text.count("\n", 0, start) + 1
            found.append(Finding(rule.kind, line, start - text.rfind("\n", 0, start)))
    return sorted(found, key=lambda f: (f.line, f.col))


def accepted(data: dict[str, Any]) -> bool:
    """Whether a person accepted this entry's instruction-shaped text."""
    metadata = data.get("metadata")
    return isinstance(metadata, dict) and metadata.get(ACCEPT) is True


def scan_fields(data: dict[str, Any], skip: tuple[str, ...] = ()) -> list[tuple[str, Finding]]:
    """Findings in every text of an entry (but the top-level fields in
    `skip`), as (field, finding); none for an accepted entry."""
    if accepted(data):
        return []
    found: list[tuple[str, Finding]] = []
    for name, value in data.items():
        if name not in skip:
            found.extend((field, finding) for field, text in named_texts(value, str(name)) for finding in scan(text))
    return found


def neutralise(text: str) -> str:
    """`text` with its role and system markup in look-alike characters."""
    if not any(literal in text.lower() for literal in _RULES[1].literals):
        return text
    return _MARKUP.sub(lambda match: match.group().translate(_LOOK_ALIKE), text)
