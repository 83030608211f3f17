"""Converting gitleaks' rules (Go RE2 syntax, TOML) to the JSON the guard
loads (Python `re` syntax): `make update-rules` runs it on a newer
`config/gitleaks.toml`.

Only what RE2 and `re` spell differently is rewritten: POSIX classes
(`[[:alnum:]]`), `\\z`, and inline flags in mid-pattern (`re` takes a
global flag only at the start, so `(?i)` there becomes a scoped `(?i:…)`
up to the end of its group). A pattern using anything else `re` does not
have (`\\Q…\\E`, `\\p{…}`, …) or that does not compile stops the
conversion with the rule's id: a rule silently dropped or changed would be
a secret silently let through.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core.errors import BadInput

_POSIX = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "space": r" \t\n\r\f\v",
    "xdigit": "0-9a-fA-F",
    "word": r"\w",
    "punct": r"!-/:-@\[-`{-~",
    "blank": r" \t",
    "cntrl": r"\x00-\x1f\x7f",
    "print": r" -~",
    "graph": r"!-~",
    "ascii": r"\x00-\x7f",
}
_UNSUPPORTED = re.compile(r"\\[QEpPCz]|\(\?[a-zA-Z]*U")
_MID_FLAGS = re.compile(r"\(\?([imsU]+)\)")


class ConversionError(BadInput):
    """A gitleaks rule this converter cannot express in Python's `re`."""


def convert_pattern(pattern: str, rule_id: str = "?") -> str:
    """`pattern` (RE2) in Python `re` syntax; `ConversionError` if it cannot be."""
    converted = pattern.replace(r"\z", r"\Z")
    for name, members in _POSIX.items():
        converted = converted.replace(f"[:{name}:]", members)
    if re.search(r"\[:\^?\w+:\]", converted):
        raise ConversionError(
            f"gitleaks rule {rule_id}: unknown POSIX class in {pattern!r}",
            "extend grimoire_cli/guard/convert.py: _POSIX",
        )
    if _UNSUPPORTED.search(converted):
        raise ConversionError(
            f"gitleaks rule {rule_id}: RE2 syntax Python's re does not have in {pattern!r}",
            "extend grimoire_cli/guard/convert.py: convert_pattern",
        )
    converted = _scope_mid_flags(converted)
    try:
        re.compile(converted)
    except re.error as error:
        raise ConversionError(
            f"gitleaks rule {rule_id}: converted pattern does not compile ({error})",
            "extend grimoire_cli/guard/convert.py: convert_pattern",
        ) from None
    return converted


def _scope_mid_flags(pattern: str) -> str:
    """Each `(?i)` not at the very start made `(?i:` … `)` up to the end of the
    group it stands in (RE2's meaning of a flag set mid-pattern)."""
    leading = re.compile(r"(?:\(\?[ims]+\))*").match(pattern).end()  # type: ignore[union-attr]  # `*` always matches
    head, body = pattern[:leading], pattern[leading:]
    while (found := _MID_FLAGS.search(body)) is not None:
        end = _group_end(body, found.end())
        rest = body[end:]
        if rest.startswith("|"):  # the flag holds in the group's later alternatives too
            rest = f"|(?{found.group(1)})" + rest[1:]
        body = body[: found.start()] + f"(?{found.group(1)}:" + body[found.end() : end] + ")" + rest
    return head + body


def _group_end(pattern: str, start: int) -> int:
    """Where the alternative open at `start` ends: its group's `)` or next
    top-level `|` (or the pattern's end), skipping escapes and character classes."""
    depth, index, in_class = 0, start, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 2] == "^":
                index += 1
            if pattern[index + 1 : index + 2] == "]":
                index += 1  # a `]` first in a class is a member
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return index
            depth -= 1
        elif char == "|" and depth == 0:
            return index
        index += 1
    return index


def _allowlist(raw: dict, rule_id: str) -> dict | None:
    """One allowlist in the guard's form; None when it can never apply to
    text (it needs a path or commit, which a memory has not)."""
    needs_path = bool(raw.get("paths") or raw.get("commits"))
    if needs_path and raw.get("condition", "OR").upper() == "AND":
        return None
    regexes = [convert_pattern(r, rule_id) for r in raw.get("regexes", [])]
    stopwords = [w.lower() for w in raw.get("stopwords", [])]
    if not regexes and not stopwords:
        return None
    return {"target": raw.get("regexTarget", "secret"), "regexes": regexes, "stopwords": stopwords}


def convert(config: dict, source: str) -> dict:
    """gitleaks' configuration (parsed TOML) as the guard's rules: one entry per
    rule with a regex (rules that only match file paths are left out)."""
    rules = []
    for raw in config["rules"]:
        if "regex" not in raw:
            continue
        allowlists = [a for a in (_allowlist(raw_list, raw["id"]) for raw_list in raw.get("allowlists", [])) if a]
        rules.append(
            {
                "id": raw["id"],
                "regex": convert_pattern(raw["regex"], raw["id"]),
                "keywords": sorted({k.lower() for k in raw.get("keywords", [])}),
                "entropy": raw.get("entropy", 0.0),
                "group": raw.get("secretGroup", 0),
                "allowlists": allowlists,
            }
        )
    glob = _allowlist(config.get("allowlist", {}), "global allowlist") or {
        "target": "secret",
        "regexes": [],
        "stopwords": [],
    }
    keywords = sorted({k for rule in rules for k in rule["keywords"]}, key=len, reverse=True)
    # The keyword search, built here once rather than in every process that scans.
    return {
        "source": source,
        "allowlist": glob,
        "keywords": "(?=(" + trie(keywords, longest=True) + "))",
        "rules": rules,
    }


def trie(words: list[str], longest: bool = False) -> str:
    """A regex matching any of `words`, shaped as their trie: `re` tries a flat
    alternation of a thousand words one by one at every position. `longest`:
    the longest word starting where it matches, else the shortest (enough to
    know one is there)."""
    tree: dict = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _branch(tree, longest)


def _branch(node: dict, longest: bool) -> str:
    ends = "" in node  # a word ends here
    if ends and not longest:
        return ""
    parts = [re.escape(char) + _branch(child, longest) for char, child in sorted(node.items()) if char]
    if not parts:
        return ""
    inner = parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
    return f"(?:{inner})?" if ends else inner


def convert_file(toml_path: Path, source: str) -> dict:
    """`convert` of a gitleaks.toml file."""
    import tomllib  # here: the guard imports this module for `trie` on every write

    try:
        config = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise BadInput(f"cannot read {toml_path}: {error}", "give the path of gitleaks' config/gitleaks.toml") from None
    return convert(config, source)
