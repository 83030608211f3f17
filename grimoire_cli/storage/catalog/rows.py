"""The rows of the catalog as named data: what is derived from an entry to
filter and rank it, and what reads hand back.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, NamedTuple

from ...core.model import Entry, epoch, normalize_text, parse_id, state_of
from ...core.scoring import aliases, words

# Tags are kept as one string, each tag between separators, so a tag filter
# is an `instr` in SQL (no JSON1 needed from the platform's SQLite).
TAG_SEPARATOR = "\x1f"


class Derived(NamedTuple):
    """The columns of `entries` computed from one item (beside its path and JSON)."""

    mapping: int  # 1 when the item is a mapping (an entry); other rows are never read as entries
    archived: int
    id: str | None
    category: str | None
    key: str | None
    # What a kind names an entry by: an episode's event, a procedure's name, a summary's session, an insight's
    # rule
    name: str | None
    confidence: float
    importance: int
    tier: str
    born: float | None  # source.timestamp as POSIX seconds
    expires: float | None
    superseded_by: str | None
    tags: str  # see TAG_SEPARATOR
    seq: int  # the id's number
    norm: str | None  # normalized content, for duplicate checks
    nlen: int | None


COLUMNS = ", ".join(Derived._fields)
NOT_AN_ENTRY = Derived(0, 0, None, None, None, None, 0.0, 5, "unrated", None, None, None, "", 0, None, None)


def _number(read: Callable[[], Any], default: Any) -> Any:
    try:
        return read()
    except (TypeError, ValueError):
        return default


def derive(item: Any, archived_file: bool) -> Derived:
    """The filter and rank columns of one item read from a file."""
    if not isinstance(item, dict):
        return NOT_AN_ENTRY._replace(archived=int(archived_file))
    norm = normalize_text(item["content"]) if isinstance(item.get("content"), str) else None
    entry = Entry(item, archived_file=archived_file)
    tags = [t for t in (item.get("tags") or []) if isinstance(t, str)] if isinstance(item.get("tags"), list) else []
    return Derived(
        mapping=1,
        archived=int(entry.archived),
        id=str(item.get("id") or ""),
        category=str(item.get("category") or ""),
        key=item.get("key") if isinstance(item.get("key"), str) else None,
        name=_name_of(item),
        confidence=_number(lambda: entry.confidence, 0.0),
        importance=_number(lambda: entry.importance, 5),
        tier=_number(lambda: entry.tier, "unrated"),
        born=epoch(entry.timestamp if isinstance(item.get("source"), dict) else None),
        expires=entry.expires,
        superseded_by=item.get("superseded_by")
        if isinstance(item.get("superseded_by"), str) and item.get("superseded_by")
        else None,
        tags=TAG_SEPARATOR + TAG_SEPARATOR.join(tags) + TAG_SEPARATOR if tags else "",
        seq=(parse_id(item["id"]) or ("", 0))[1] if isinstance(item.get("id"), str) else 0,
        norm=norm,
        nlen=len(norm) if norm is not None else None,
    )


def _name_of(item: dict[str, Any]) -> str | None:
    for field in ("event", "name", "session_id", "rule_id"):
        if isinstance(name := item.get(field), str):
            return name
    return None


def kind_texts(item: dict[str, Any]) -> list[str]:
    """The texts of a kind's fields that search looks at (docs/agent-personas.md): an
    episode's event, lesson and context values, a task's text and context
    values, a procedure's name, description and steps (what they run, too)."""
    out: list[str] = []

    def take(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append(str(value))
        elif isinstance(value, list):
            for part in value:
                take(part)
        elif isinstance(value, dict):
            for part in value.values():
                take(part)

    for field in ("event", "learned", "task", "name", "description", "context", "applies_to"):
        take(item.get(field))
    for step in steps if isinstance(steps := item.get("steps"), list) else []:
        if isinstance(step, dict):
            for field in ("name", "description", "run", "condition"):
                take(step.get(field))
    return out


def texts(item: Any) -> tuple[str, str, str, str]:
    """(summary, content, tags, aliases) as indexed for search; the content
    column also holds the kind's texts the content does not already say, the
    aliases column the parts and joined forms of their identifiers
    (`scoring.aliases`)."""
    if not isinstance(item, dict):
        return "", "", "", ""
    summary = given if isinstance(given := item.get("summary"), str) else ""
    content = given if isinstance(given := item.get("content"), str) else ""
    tags = given if isinstance(given := item.get("tags"), list) else []
    indexed = content if content != summary else ""
    extra = [text for text in kind_texts(item) if text not in content]
    if extra:
        indexed = "\n".join([indexed, *extra]) if indexed else "\n".join(extra)
    tag_text = " ".join(t for t in tags if isinstance(t, str))
    return summary, indexed, tag_text, aliases("\n".join((summary, indexed, tag_text)))


def word_set(item: Any, indexed: tuple[str, str, str, str] | None = None) -> set[str]:
    """The words of an item the typo correction may map a query word to
    (`indexed`: its `texts`, when the caller has them)."""
    if not isinstance(item, dict):
        return set()
    summary, content, _, joined = indexed or texts(item)
    out = set(words(summary + "\n" + content + "\n" + joined))
    if isinstance(item.get("tags"), list):
        out.update(t for t in item["tags"] if isinstance(t, str))
    return out


def stored(item: Any) -> str:
    """The stored form of an entry; "null" for what JSON cannot hold (a hand-written !!binary)."""
    try:
        return json.dumps(item)
    except (TypeError, ValueError):
        return "null"


class Prepared(NamedTuple):
    """What the catalog stores for one new item beside its words, computed
    from it alone (so worker processes can compute it; see `storage.parallel`)."""

    derived: Derived
    data: str  # `stored`
    texts: tuple[str, str, str, str]


def prepare(item: Any, archived_file: bool) -> Prepared:
    """The rows of one item read from a file."""
    data = stored(item)
    return Prepared(derive(item if data != "null" else None, archived_file), data, texts(item))


def word_counts(sets: Iterable[Iterable[str]]) -> dict[str, int]:
    """How many of the items each word occurs in (`sets`: each item's `word_set`)."""
    counts: Counter[str] = Counter()  # counting in C: a cold build counts millions of words
    for found in sets:
        counts.update(found)
    return dict(counts)


class Row(NamedTuple):
    """An entry as a read returns it: where it is and its stored mapping."""

    rowid: int
    path: str
    line: int
    data: Any


LIGHT_COLUMNS = (
    "rowid",
    "id",
    "category",
    "confidence",
    "importance",
    "tier",
    "born",
    "expires",
    "superseded_by",
    "archived",
    "tags",
    "key",
)


class Light:
    """The filter and rank fields of one entry, read without its JSON; built
    from a row of LIGHT_COLUMNS, in that order."""

    __slots__ = (
        "archived",
        "born",
        "category",
        "confidence",
        "expires",
        "id",
        "importance",
        "key",
        "rowid",
        "superseded_by",
        "tag_text",
        "tier",
    )

    def __init__(
        self,
        rowid: int,
        id: str | None,
        category: str | None,
        confidence: float,
        importance: int,
        tier: str,
        born: float | None,
        expires: float | None,
        superseded_by: str | None,
        archived: int,
        tags: str,
        key: str | None,
    ):
        self.rowid, self.id, self.category, self.confidence = rowid, id or "", category or "", confidence
        self.importance, self.tier, self.born, self.expires = importance, tier, born, expires
        self.superseded_by, self.archived, self.tag_text, self.key = superseded_by, bool(archived), tags, key

    @property
    def tags(self) -> list[str]:
        return [t for t in self.tag_text.split(TAG_SEPARATOR) if t]

    def state(self, epoch: float) -> str:
        return state_of(self, epoch)

    def is_expired(self, moment: datetime) -> bool:
        return self.expires is not None and self.expires <= moment.timestamp()

    def is_active(self, moment: datetime) -> bool:
        return state_of(self, moment.timestamp()) == "active"
