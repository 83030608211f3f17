"""The memory entry and its pure rules: ids, ttl, summaries, tags, tiers, states.

Nothing here touches the filesystem; every function is deterministic given
its arguments (the clock is passed in).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, cast

from .clock import iso, parse_time
from .errors import BadInput

ID_RE = re.compile(r"^MEM-(\d{8})-(\d{3,})\Z")
# A lone surrogate, which YAML cannot hold (searched in C: a check per character in Python cost a bulk write seconds).
SURROGATE_RE = re.compile(r"[\ud800-\udfff]")
TAG_RE = re.compile(r"^[a-z0-9-]+\Z")
KEY_RE = re.compile(r"^[a-z0-9_-]+(\.[a-z0-9_-]+)*\Z")
TTL_RE = re.compile(r"^(permanent|[1-9]\d{0,5}[smhd])\Z")
# Loa's five categories keep Loa's own form, so their entries stay valid against Loa's schema.
DAYS_TTL_RE = re.compile(r"^(permanent|[1-9]\d{0,5}d)\Z")
_TTL_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
LINE_RANGE_RE = re.compile(r"^[1-9]\d*-[1-9]\d*\Z")
CATEGORY_RE = re.compile(r"^[a-z][a-z0-9_-]{0,39}\Z")

MAX_CONTENT = 2000
MAX_SUMMARY = 200
MAX_TAG = 64  # schemas/memory.schema.json: a tag's maxLength
DERIVED_SUMMARY = 120
ARCHIVE_REASONS = ("expired", "superseded", "ineffective", "manual", "cleared")

# The order fields are written in; unknown fields follow in their own order.
# The fields kinds of category add (schemas/kinds.schema.json), after the content.
KIND_FIELDS = (
    "event",
    "outcome",
    "learned",
    "name",
    "description",
    "params",
    "steps",
    "task",
    "trigger",
    "status",
    "due_at",
    "done_at",
    "context",
    "session_id",
    "message_count",
    "model",
    "memories",
    "role",
    "turn",
    "insight_type",
    "applies_to",
    "evidence",
    "validated",
    "validated_by",
    "rule_id",
)
FIELD_ORDER = (
    "id",
    "category",
    "summary",
    "content",
    *KIND_FIELDS,
    "confidence",
    "ttl",
    "expires_at",
    "importance",
    "key",
    "tags",
    "source",
    "supersedes",
    "superseded_by",
    "related_memories",
    "effectiveness",
    "archived",
    "archived_at",
    "archive_reason",
    "metadata",
)


def format_id(day: str, number: int) -> str:
    """`MEM-YYYYMMDD-NNN` (at least three digits)."""
    return f"MEM-{day}-{number:03d}"


def parse_id(value: str) -> tuple[str, int] | None:
    """(day, number) of a well-formed id, else None."""
    match = ID_RE.match(value or "")
    if not match or int(match.group(2)) < 1:
        return None
    return match.group(1), int(match.group(2))


def id_day(moment: datetime) -> str:
    return moment.strftime("%Y%m%d")


def next_id(existing: Iterable[str], day: str) -> str:
    """The next free id of a day (`YYYYMMDD`), past every given id of that day."""
    highest = 0
    for value in existing:
        parsed = parse_id(value)
        if parsed and parsed[0] == day and parsed[1] > highest:
            highest = parsed[1]
    return format_id(day, highest + 1)


def is_importance(value: object) -> bool:
    """Whether a value is an importance: a whole number from 1 to 10."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 10


def check_ttl(ttl: str, days_of: str | None = None) -> str:
    """A well-formed ttl; the hint offers only days when it is for `days_of`,
    one of Loa's categories, which refuse hours and minutes."""
    ttl = str(ttl).strip()
    if not TTL_RE.match(ttl):
        raise BadInput(
            f"bad ttl {ttl!r}",
            f"Loa's {days_of} category takes 'permanent' or a number of days, like '30d'"
            if days_of
            else "use 'permanent' or a number with a unit: '30d', '12h', '10m' or '30s'",
        )
    return ttl


def check_key(key: object) -> str:
    if not isinstance(key, str) or not KEY_RE.match(key):
        raise BadInput(f"bad key {key!r}", "a key is dotted lowercase words, like db.users.schema (a-z, 0-9, '_', '-')")
    return key


def ttl_delta(ttl: str) -> timedelta | None:
    """How long a well-formed ttl lasts; None for permanent."""
    if ttl == "permanent":
        return None
    return timedelta(**{_TTL_UNITS[ttl[-1]]: int(ttl[:-1])})


def expires_at(timestamp: str, ttl: str) -> str | None:
    """`source.timestamp + ttl`, or None for permanent."""
    delta = ttl_delta(ttl)
    return None if delta is None else iso(parse_time(timestamp) + delta)


def expiry_start(data: dict[str, Any], kind: str) -> Any:
    """What an entry's ttl counts from: its `source.timestamp`; for a task,
    its `done_at` (None while it waits: a pending task never expires)."""
    if kind == "task":
        return data.get("done_at")
    source = data.get("source")
    return source.get("timestamp") if isinstance(source, dict) else None


def normalize_text(text: str) -> str:
    """Whitespace-collapsed, case-folded text: what duplicates are judged on."""
    return " ".join(text.split()).casefold()


def fact_summary(key: str, text: str) -> str:
    """A keyed fact's summary as `remember` writes it: `key = value`."""
    return derive_summary(f"{key} = {' '.join(text.split())}")


def derive_summary(content: str) -> str:
    """First sentence or line of the content, one line, at most 120 chars."""
    first = " ".join(content.strip().split("\n", 1)[0].split())
    if not first:
        first = " ".join(content.split())
    sentence = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0]
    if len(sentence) <= DERIVED_SUMMARY:
        return sentence
    cut = sentence[: DERIVED_SUMMARY - 1]
    if " " in cut[60:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-") + "…"


def normalize_tag(tag: str) -> str:
    """Lowercase slug: spaces and underscores to '-', other punctuation dropped."""
    slug = re.sub(r"[\s_]+", "-", str(tag).strip().lower())
    slug = re.sub(r"[^a-z0-9-]", "", slug)
    slug = re.sub(r"-{2,}", "-", slug).strip("-")
    if not slug or not TAG_RE.match(slug):
        raise BadInput(f"bad tag {tag!r}", "tags are words of a-z, 0-9 and '-'")
    return slug


def tool_tag(tool: str) -> str:
    """The tag naming a tool (a warning's, a known solution's): its slug, cut
    to a tag's length (a tool's name may be longer)."""
    return normalize_tag(normalize_tag(tool)[:MAX_TAG])


def normalize_tags(tags: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for tag in tags:
        slug = normalize_tag(tag)
        if slug not in seen:
            seen.append(slug)
    return seen


# Wording cues for `mem add` without `-c`; first match in this order wins.
_INFERENCE = (
    (
        "error",
        r"\b(error|errors|exception|traceback|crash(es|ed)?|fail(s|ed|ure)?|bug|broke|broken|timeout|segfault)\b",
    ),
    (
        "decision",
        r"\b(decid(e|ed|ing)|decision|chose|choose|we will|we'll|going with|adopt(ed)?|settled on|instead of)\b",
    ),
    ("preference", r"\b(prefer(s|red)?|preference|always|never|likes?|rather than|style)\b"),
    ("learning", r"\b(learn(ed|t)?|lesson|turns out|realized|realised|discovered|til|insight|gotcha)\b"),
)


def infer_category(content: str, categories: Iterable[str]) -> str:
    """Guess a category from wording; `fact` when no cue matches."""
    available = set(categories)
    lowered = content.lower()
    for category, pattern in _INFERENCE:
        if category in available and re.search(pattern, lowered):
            return category
    if "fact" in available:
        return "fact"
    return sorted(available)[0]


def tier(effectiveness: dict[str, Any] | None) -> str:
    """Effectiveness tier (docs/reference.md); `unrated` below 3 applications."""
    if not effectiveness or int(effectiveness.get("applications", 0) or 0) < 3:
        return "unrated"
    score = effectiveness.get("score", 0) or 0
    if score >= 80:
        return "high"
    if score >= 50:
        return "medium"
    if score >= 20:
        return "low"
    return "ineffective"


def score_of(applications: int, successes: int) -> int:
    return round(100 * successes / applications) if applications else 0


class Entry:
    """One memory: its stored mapping plus where it was read from."""

    __slots__ = ("archived_file", "data", "file", "line", "near_duplicate", "notes")

    def __init__(
        self,
        data: dict[str, Any],
        file: str | None = None,
        line: int | None = None,
        archived_file: bool = False,
        notes: list[str] | None = None,
    ):
        self.data = data
        self.file = file
        self.line = line
        self.archived_file = archived_file
        # Things the caller of a write should be told (inferred category, near duplicate).
        self.notes: list[str] = [] if notes is None else notes
        # (id, score) of the active entry a new one nearly duplicates, if any.
        self.near_duplicate: tuple[str, float] | None = None

    def __repr__(self) -> str:
        return f"Entry(data={self.data!r}, file={self.file!r}, line={self.line!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entry) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.data, self.file, self.line, self.archived_file, self.notes) == (
            other.data,
            other.file,
            other.line,
            other.archived_file,
            other.notes,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable: not a dict key

    # Plain accessors keep callers away from dict spelling.
    @property
    def id(self) -> str:
        return cast(str, self.data.get("id", ""))

    @property
    def category(self) -> str:
        return cast(str, self.data.get("category", ""))

    @property
    def content(self) -> str:
        return cast(str, self.data.get("content", ""))

    @property
    def summary(self) -> str:
        return cast(str, self.data.get("summary", ""))

    @property
    def confidence(self) -> float:
        return float(self.data.get("confidence", 0) or 0)

    @property
    def tags(self) -> list[str]:
        return list(self.data.get("tags") or [])

    @property
    def key(self) -> str | None:
        return self.data.get("key")

    @property
    def born(self) -> float | None:
        """`source.timestamp` as POSIX seconds (None when unreadable), as a catalog row has it."""
        return epoch(self.timestamp)

    @property
    def importance(self) -> int:
        return int(self.data.get("importance", 5) or 5)

    @property
    def timestamp(self) -> str:
        return cast(str, (self.data.get("source") or {}).get("timestamp", ""))

    @property
    def supersedes(self) -> str | None:
        return self.data.get("supersedes")

    @property
    def superseded_by(self) -> str | None:
        return self.data.get("superseded_by")

    @property
    def archived(self) -> bool:
        return bool(self.data.get("archived")) or self.archived_file

    @property
    def tier(self) -> str:
        return tier(self.data.get("effectiveness"))

    def age_days(self, moment: datetime) -> float | None:
        """Days since `source.timestamp` (fractional), None when it is unreadable."""
        try:
            return (moment - parse_time(self.timestamp)).total_seconds() / 86400
        except BadInput:
            return None

    @property
    def expires(self) -> float | None:
        """`expires_at` as a POSIX time; None when absent or unreadable."""
        return epoch(self.data.get("expires_at"))

    def is_expired(self, moment: datetime) -> bool:
        return self.expires is not None and self.expires <= moment.timestamp()

    def state(self, moment: datetime) -> str:
        """archived, superseded, expired or active (in that precedence)."""
        return state_of(self, moment.timestamp())

    def is_active(self, moment: datetime) -> bool:
        return self.state(moment) == "active"

    def to_dict(self) -> dict[str, Any]:
        """The stored mapping in field order (a copy)."""
        return ordered(self.data)

    def view(self, moment: datetime) -> dict[str, Any]:
        """`to_dict` plus what `mem` shows beside the stored fields: the
        entry's state at `moment` and its effectiveness tier (computed)."""
        return {**ordered(self.data), "state": self.state(moment), "tier": self.tier}

    def written_dict(self) -> dict[str, Any]:
        """`to_dict` plus what a write tells its caller: its notes, and the
        entry it nearly duplicates (None when none)."""
        near = self.near_duplicate
        return {
            **ordered(self.data),
            "notes": list(self.notes),
            "near_duplicate": {"id": near[0], "score": round(near[1], 1)} if near else None,
        }


def epoch(stamp: Any) -> float | None:
    """A stored time as POSIX seconds; None when absent or unreadable."""
    if not stamp:
        return None
    try:
        return parse_time(str(stamp)).timestamp()
    except BadInput:
        return None


def state_of(entry: Any, now: float) -> str:
    """State of an `Entry` or a catalog row (`Light`) at a POSIX time."""
    if entry.archived:
        return "archived"
    if entry.superseded_by:
        return "superseded"
    if entry.expires is not None and entry.expires <= now:
        return "expired"
    return "active"


def _chronological(born: float | None, entry_id: str) -> tuple[float, int, str]:
    parsed = parse_id(entry_id)
    return (born if born is not None else float("-inf"), parsed[1] if parsed else 0, entry_id)


def sort_key(entry: Entry) -> tuple[float, int, str]:
    """Chronological order: creation time (unreadable first), then id number, then id."""
    return _chronological(entry.born, entry.id)


def ordered(data: dict[str, Any]) -> dict[str, Any]:
    out = {name: data[name] for name in FIELD_ORDER if name in data}
    out.update((k, v) for k, v in data.items() if k not in out)
    return out


def age_label(entry: Entry, moment: datetime) -> str:
    """A short age label: today, 12d, 5mo, 2y."""
    exact = entry.age_days(moment)
    if exact is None:
        return "?"
    days = math.floor(exact)
    if days < 1:
        return "today"
    if days < 60:
        return f"{days}d"
    if days < 730:
        return f"{days // 30}mo"
    return f"{days // 365}y"
