"""gitleaks' maintained rules (vendored in guard/data/, MIT; converted to
Python's `re` by convert.py) run as gitleaks runs them: a rule runs only
on text holding one of its keywords, its secret must reach its entropy
floor, and its allowlists and the global one (placeholders, template
variables, stopwords) let a match through.

Loaded and compiled on first use: most processes never scan, and most
scans open few rules. One combined keyword search decides first whether a
text needs any rule at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import NamedTuple

from .convert import trie
from .rules import entropy, names_a_setting, names_no_secret, random_looking

# Beside this module (importlib.resources would cost more to import than the rules to load).
_RULES_FILE = Path(__file__).resolve().parent / "data" / "gitleaks_rules.json"


class Allowlist:
    """Regexes and stopwords that excuse a match; `target` says what they are
    checked against: the secret, the whole match or its line."""

    __slots__ = ("_raw", "_regexes", "_stopwords", "target")

    def __init__(self, raw: dict):
        self.target = raw["target"]
        self._raw = raw
        self._regexes: re.Pattern | None = None
        self._stopwords: re.Pattern | None = None

    # Compiled on first use, as the rules are: most processes check no match.
    @property
    def regexes(self) -> re.Pattern | None:
        if self._regexes is None and self._raw["regexes"]:
            # One search for all the regexes: each in its group, a leading flag scoped to it.
            self._regexes = re.compile("|".join(f"(?:{_scoped(p)})" for p in self._raw["regexes"]))
        return self._regexes

    @property
    def stopwords(self) -> re.Pattern | None:
        if self._stopwords is None and self._raw["stopwords"]:
            # One search for all the stopwords (generic-api-key has over a thousand).
            self._stopwords = re.compile(trie(self._raw["stopwords"]))
        return self._stopwords

    def allows(self, secret: str, match: re.Match) -> bool:
        if self.target == "match":
            subject = match.group()
        elif self.target == "line":
            text = match.string
            subject = text[text.rfind("\n", 0, match.start()) + 1 : _line_end(text, match.end())]
        else:
            subject = secret
        # The stopwords first: one search of the short secret, where the regexes (generic-api-key's
        # are a long case-insensitive alternation) search the whole match or line.
        if self.stopwords is not None and self.stopwords.search(secret.lower()) is not None:
            return True
        return self.regexes is not None and self.regexes.search(subject) is not None


def _scoped(pattern: str) -> str:
    """`pattern` with its leading global flags (`(?i)…`) scoped to it (`(?i:…)`), so it can join others."""
    flags = re.match(r"\(\?([ims]+)\)", pattern)
    return f"(?{flags.group(1)}:{pattern[flags.end() :]})" if flags else pattern


def _line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    return len(text) if end < 0 else end


class GitleaksRule:
    """One rule; its regex (Go's ASCII-only `\\w`, `\\d`, `\\b`) compiled on first use."""

    __slots__ = ("_pattern", "allowlists", "floor", "group", "keywords", "kind", "source")

    def __init__(self, raw: dict):
        self.kind = raw["id"]
        self.source = raw["regex"]
        self.keywords = raw["keywords"]
        self.floor = raw["entropy"]
        self.group = raw["group"]
        self.allowlists = [Allowlist(a) for a in raw["allowlists"]]
        self._pattern: re.Pattern | None = None

    @property
    def pattern(self) -> re.Pattern:
        if self._pattern is None:
            self._pattern = re.compile(self.source, re.ASCII)
        return self._pattern

    def secret_span(self, match: re.Match) -> tuple[int, int]:
        """The secret in a match as gitleaks takes it: the rule's secret group,
        else the first group that matched something, else the whole match."""
        if self.group:
            return match.span(self.group)
        for index in range(1, (match.re.groups or 0) + 1):
            if match.group(index):
                return match.span(index)
        return match.span()


class Ruleset(NamedTuple):
    source: str  # which gitleaks, from which commit, under which licence
    rules: list[GitleaksRule]
    allowlist: Allowlist
    # At each position of a text, the longest keyword starting there: one
    # pass finds them all, since a keyword that is a prefix of a longer one
    # found is opened with it (`opens`).
    keywords: re.Pattern


@cache
def _opens(keyword: str) -> frozenset[int]:
    """The rules a keyword found opens: its own and those of every keyword inside it."""
    return frozenset(i for i, rule in enumerate(ruleset().rules) if any(k in keyword for k in rule.keywords))


@cache
def ruleset() -> Ruleset:
    raw = json.loads(_RULES_FILE.read_text(encoding="utf-8"))
    rules = [GitleaksRule(rule) for rule in raw["rules"]]
    return Ruleset(raw["source"], rules, Allowlist(raw["allowlist"]), re.compile(raw["keywords"]))


def runnable(text: str, gated: bool = True) -> list[GitleaksRule]:
    """The rules whose keywords `text` holds (in any case), in rule order.
    Ungated, each rule's keywords are looked for one by one instead of by the
    one combined search: a keyword is part of a rule (gitleaks never runs a
    rule on text without one; `sourcegraph-access-token` would take any 40
    hex digits), so only the speed-up is left out."""
    rules = ruleset()
    if not gated:
        lower = text.lower()
        return [rule for rule in rules.rules if any(k in lower for k in rule.keywords)]
    found = set(rules.keywords.findall(text.lower()))
    if not found:
        return []
    opened = set().union(*(_opens(keyword) for keyword in found))
    return [rules.rules[i] for i in sorted(opened)]


def matches(
    text: str, gated: bool = True, taken: Callable[[int, int], bool] | None = None
) -> Iterator[tuple[str, int, int, int, int]]:
    """(kind, match start, match end, secret start, secret end) of every
    rule's finding in `text`, rule by rule; a match whose span `taken`
    says is already claimed is skipped before its entropy and allowlists
    are checked (the costly part: most matches are assignments grimoire's
    own rules found first)."""
    for rule in runnable(text, gated):
        for match in rule.pattern.finditer(text):
            if taken is not None and taken(*match.span()):
                continue
            start, end = rule.secret_span(match)
            secret = text[start:end]
            if not _could_be_secret(rule, secret, match):
                continue
            pair = _ASSIGNMENT.fullmatch(secret)
            if pair is not None and not _pair_could_be_secret(rule, pair["name"], pair["value"], match):
                continue
            if names_a_setting(_assigned_name(match, start), secret):
                continue  # as grimoire's own rules read `password_policy: min12-upper-digit`
            yield rule.kind, match.start(), match.end(), start, end


def _could_be_secret(rule: GitleaksRule, secret: str, match: re.Match) -> bool:
    """Whether `secret` passes the rule's entropy floor and no allowlist excuses it."""
    if not secret or (rule.floor and entropy(secret) < rule.floor):
        return False
    excused = ruleset().allowlist
    return not (excused.allows(secret, match) or any(allowlist.allows(secret, match) for allowlist in rule.allowlists))


# A secret that is itself `name=value`: generic-api-key reads
# `service=api, root_cause=bad migration` as the keyword `api`, the operator
# `,` and, for its secret, the next pair of the list, name and all
# (`root_cause=bad`). A name is plain words, as long as gitleaks' names
# (letters, `_`, `.`, `-`: what generic-api-key's allowlist takes for no
# secret): a token holding `=` has digits before it (Atlassian's
# `ATATT3…=C639…`). `=` opens no value: padding (`aGk==`) is none.
_ASSIGNMENT = re.compile(r"(?P<name>[A-Za-z_][A-Za-z_.-]{0,49})=(?P<value>[^=].*)", re.S)


def _pair_could_be_secret(rule: GitleaksRule, name: str, value: str, match: re.Match) -> bool:
    """Whether the next pair of a list holds a secret: its value passes the
    rule's checks (`bad` is below any entropy floor) and, as grimoire's own
    rules read an assignment they did not claim (the name means no secret:
    `job`, `trace_id`), only a random value is one (`nightly-etl_v3` is not)."""
    return _could_be_secret(rule, value, match) and random_looking(value) and not names_no_secret(name, value)


_NAME = re.compile(r"[\w.-]+", re.ASCII)


def _assigned_name(match: re.Match, secret_start: int) -> str:
    """The name a match assigns its secret to: what it starts with before the
    secret, up to a space, quote or operator ('' when it starts with the secret)."""
    name = _NAME.match(match.string, match.start(), secret_start)
    return name.group() if name else ""
