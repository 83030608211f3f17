"""A request to remember something, and the checked, complete entry it makes.

Everything about one entry that `mem add` refuses is decided here: bad
fields, confidence below the floor, secrets and PII. What depends on the
rest of the grimoire (duplicates, ids, supersede state) is `adding`'s.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Container
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from ..core.clock import iso, parse_time
from ..core.config import Config, is_inside
from ..core.errors import BadInput, NotFound, Refused
from ..core.model import (
    KIND_FIELDS,
    LINE_RANGE_RE,
    MAX_CONTENT,
    MAX_SUMMARY,
    SURROGATE_RE,
    Entry,
    check_key,
    check_ttl,
    derive_summary,
    expires_at,
    expiry_start,
    infer_category,
    is_importance,
    normalize_tags,
    ordered,
    score_of,
)
from ..core.runtime import Runtime
from .request_texts import given_texts, line_texts, not_given, refuse_secrets, without_private

_PROCESS_SESSION = f"ses-{uuid.uuid4().hex[:12]}"
# C0 controls YAML cannot hold faithfully in a readable file (tab, LF, CR are fine).
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


# The options of a request beside its content; all default to None, but the
# lists, which default to empty.
OPTIONS = (
    "category",
    "summary",
    "confidence",
    "tags",
    "ttl",
    "supersedes",
    "key",
    "importance",
    "related",
    "file_path",
    "lines",
    "session_id",
    "agent",
    "phase",
    "metadata",
    "id",
    "timestamp",
    "effectiveness",
    "fields",
    "dedupe",
    "source_extra",
    "superseded_by",
    "archive",
)
_LISTS = ("tags", "related")


class Request:
    """What a caller asks to remember (the options of `mem add`)."""

    __slots__ = ("content", *OPTIONS)
    category: str | None
    summary: str | None
    confidence: float | None
    tags: list[str]
    ttl: str | None
    supersedes: str | None
    key: str | None
    importance: int | None
    related: list[str]
    file_path: str | None
    lines: str | None
    session_id: str | None
    agent: str | None
    phase: str | None
    metadata: dict[str, Any] | None
    id: str | None
    timestamp: str | None
    effectiveness: dict[str, Any] | None
    fields: dict[str, Any] | None  # the fields a kind of category adds (task, trigger, ...)
    dedupe: bool | None  # check for an exact duplicate (None: as the kind says; an episode is never one)
    # What only an import restores, as an export gave it: source's other fields, the
    # newer entry's id (checked by `adding` once the batch is whole), the archive fields.
    source_extra: dict[str, Any] | None
    superseded_by: str | None
    archive: dict[str, Any] | None

    def __init__(self, content: str, **options: Any):
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise TypeError(f"unknown option(s) for a memory: {', '.join(unknown)}")
        self.content = content
        for name in OPTIONS:
            value = options.get(name)
            setattr(self, name, ([] if value is None else value) if name in _LISTS else value)

    def __repr__(self) -> str:
        return (
            "Request("
            + ", ".join(
                f"{name}={getattr(self, name)!r}" for name in self.__slots__ if getattr(self, name) not in (None, [])
            )
            + ")"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Request):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def from_mapping(cls, item: dict[str, Any]) -> Request:
        """A request from an import line or an `add_many` dict, every field
        checked first: all the problems found in one message."""
        problems = mapping_problems(item)
        if problems:
            # A problem's message quotes the value, which may be a secret: the line's every text is scanned first.
            refuse_secrets(line_texts(item))
            raise BadInput("; ".join(problems))
        item = {name: value for name, value in item.items() if value is not None}
        source = item.get("source") or {}
        known: dict[str, Any] = {
            "content": item.get("content"),
            "category": item.get("category"),
            "summary": item.get("summary"),
            "confidence": item.get("confidence"),
            "tags": item.get("tags") or [],
            "ttl": item.get("ttl"),
            "supersedes": item.get("supersedes"),
            "key": item.get("key"),
            "importance": item.get("importance"),
            "related": item.get("related_memories") or item.get("related") or [],
            "file_path": source.get("file_path") or item.get("file_path"),
            "lines": source.get("line_range") or item.get("lines"),
            "session_id": source.get("session_id") or item.get("session_id"),
            "agent": source.get("agent") or item.get("agent"),
            "phase": source.get("phase") or item.get("phase"),
            "metadata": item.get("metadata"),
            "id": item.get("id"),
            "timestamp": source.get("timestamp") or item.get("timestamp"),
            "effectiveness": item.get("effectiveness"),
            "fields": {name: item[name] for name in KIND_FIELDS if name in item} or None,
            "source_extra": {
                name: value for name, value in source.items() if name not in _SOURCE_OPTIONS and value is not None
            }
            or None,
            "superseded_by": item.get("superseded_by"),
            "archive": {name: item[name] for name in ARCHIVE_FIELDS if name in item} or None,
        }
        return cls(**known)


# What an import line may say beside an entry's stored fields: the options of `mem add`.
_SHORTHANDS = ("related", "file_path", "lines", "session_id", "agent", "phase", "timestamp")
_SOURCE_OPTIONS = ("session_id", "timestamp", "agent", "phase", "file_path", "line_range")
ARCHIVE_FIELDS = ("archived", "archived_at", "archive_reason")
# Checked as they are given, before `build` normalises them: tags are slugged
# ('Deploy Day' -> deploy-day), a timestamp may have an offset; both are strings.
_LOOSE = {"tags": {"type": "array", "items": {"type": "string"}}, "source.timestamp": {"type": "string"}}


def mapping_problems(item: dict[str, Any]) -> list[str]:
    """Every problem of an import line's fields, each `field: message`: an
    unknown field, a value the entry schema refuses (a kind's own fields are
    checked by `build`, against the kind of the category). None is absent."""
    from ..core.schemas import entry_fields, field_problems

    problems = []
    stored = set(entry_fields())
    for name, value in item.items():
        if name not in stored and name not in KIND_FIELDS and name not in _SHORTHANDS:
            problems.append(
                f"unknown field {name!r} (an entry's fields are in docs/reference.md; free-form data goes under metadata)"
            )
        elif (
            value is not None and name in stored and name != "content"
        ):  # `check_content` says what is wrong with a text
            problems += field_problems(name, value, _LOOSE)
    if item.get("content") is None:
        problems.append("content is missing (the memory's text)")
    elif not isinstance(item["content"], str):
        problems.append(f"content: {item['content']!r} is not of type 'string'")
    for name in ("related", "file_path", "lines", "agent", "phase", "timestamp"):
        if item.get(name) is not None and not isinstance(item[name], list if name == "related" else str):
            problems.append(f"{name}: {item[name]!r} is not of type {'array' if name == 'related' else 'string'}")
    if "archived_at" in item or "archive_reason" in item:
        if item.get("archived") is not True:
            problems.append("archived_at and archive_reason go with archived: true")
    if item.get("archived") is True and not ("archived_at" in item and "archive_reason" in item):
        problems.append("an archived entry needs archived_at and archive_reason")
    return problems


def check_content(text: str) -> str:
    """The content, refused when empty, too long or holding control characters."""
    if not isinstance(text, str) or not text.strip():
        raise BadInput("content is empty", "give the memory's text as an argument or on stdin with '-'")
    if len(text) > MAX_CONTENT:
        raise BadInput(
            f"content is {len(text)} characters, over the limit of {MAX_CONTENT}",
            "summarise it, or split it into several memories",
        )
    bad = _CONTROL_RE.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise BadInput(
            f"content has a control character (U+{ord(bad.group()):04X}) on line {line}",
            "remove it; only tab and newline are kept",
        )
    return text


class Entries(Protocol):
    """What `build` reads of the entries in use: id -> Entry (adding._Existing)."""

    def get(self, entry_id: str, default: Any = None) -> Entry | None: ...

    def __contains__(self, entry_id: object) -> bool: ...


def build(
    request: Request,
    config: Config,
    moment: datetime,
    existing: Entries,
    taken_ids: Container[str],
    new_id: str,
    runtime: Runtime,
) -> tuple[dict[str, Any], list[str]]:
    """A complete entry mapping for `request`, and notes for the caller;
    the source's session, agent and phase default to the runtime's."""
    from ..guard.scan import strip_private

    notes: list[str] = []
    # `<private>` sections never reach a file: gone before any check.
    content = request.content
    if isinstance(content, str):
        kept = strip_private(content)
        content = kept.strip() if kept != content else content  # no space left dangling where a section was
    content = check_content(content)
    old = None
    if request.supersedes:
        old = existing.get(request.supersedes)
        if old is None:
            raise NotFound(f"no memory {request.supersedes} to supersede", "check the id with `mem list` or `mem show`")
    if request.category:
        category = config.category(request.category).name
    elif old is not None:
        category = old.category
    else:
        category = infer_category(content, config.categories)
        notes.append(f"category inferred: {category} (use -c to choose)")
    spec = config.category(category)
    _refuse_oversized(_as_given(request), spec.kind)  # before a big value costs any work (20,000 tags, a 1 MB key)
    # Before any field is checked or normalised: a check's message may quote
    # the value, and a slug hides a secret (`ghp_…` -> `ghp-…`) it still stores.
    given = given_texts(request, content)
    refuse_secrets(given)
    confidence = spec.confidence_required if request.confidence is None else request.confidence
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
        raise BadInput(f"confidence must be a number from 0 to 1, not {confidence!r}")
    if confidence < spec.confidence_required:
        raise Refused(
            f"confidence {confidence} is below the {category} floor of {spec.confidence_required}",
            "raise --confidence if you are that sure, or use a category with a lower floor",
        )
    summary = (
        (strip_private(request.summary) if isinstance(request.summary, str) else request.summary)
        if request.summary is not None
        else derive_summary(content)
    )
    if not summary.strip() or "\n" in summary or "\r" in summary or len(summary) > MAX_SUMMARY:
        raise BadInput(f"summary must be one non-empty line of at most {MAX_SUMMARY} characters")
    ttl = check_ttl(request.ttl if request.ttl is not None else spec.ttl, category if spec.loa else None)
    if not spec.takes_ttl(ttl):
        raise BadInput(
            f"ttl {ttl} is not in days: Loa's {category} category takes days ('30d') or 'permanent'",
            "round it up to days, or use a category of your own for short-lived memories",
        )
    timestamp = iso(parse_time(request.timestamp)) if request.timestamp else iso(moment)
    source: dict[str, Any] = {
        "session_id": request.session_id or runtime.session_id or _PROCESS_SESSION,
        "timestamp": timestamp,
    }
    agent = request.agent or runtime.agent
    phase = request.phase or runtime.phase
    if agent:
        source["agent"] = agent
    if phase:
        source["phase"] = phase
    if request.lines and not request.file_path:
        raise BadInput("--lines needs --file", "say which file the lines are in")
    if request.file_path:
        source["file_path"] = _repo_path(request.file_path, config)
    for name, value in (request.source_extra or {}).items():
        source.setdefault(name, value)
    if request.lines:
        if not LINE_RANGE_RE.match(request.lines) or int(request.lines.split("-")[0]) > int(
            request.lines.split("-")[1]
        ):
            raise BadInput(f"bad line range {request.lines!r}", "write it like 12-40 (first <= last)")
        source["line_range"] = request.lines
    data: dict[str, Any] = {
        "id": new_id,
        "category": category,
        "summary": summary,
        "content": content,
        "confidence": confidence,
        "ttl": ttl,
    }
    if request.importance is not None:
        if not is_importance(request.importance):
            raise BadInput(
                f"importance must be a whole number from 1 to 10, not {request.importance!r}",
                "5 is usual; 8 or more keeps it hot",
            )
        data["importance"] = request.importance
    if request.key is not None:
        data["key"] = check_key(request.key)
    tags = normalize_tags(request.tags)
    if tags:
        data["tags"] = tags
    data["source"] = source
    if old is not None:
        data["supersedes"] = old.id
    if request.superseded_by:
        data["superseded_by"] = request.superseded_by
    archive = request.archive or {}
    if archive.get("archived"):
        data.update(
            archived=True,
            archived_at=iso(parse_time(archive["archived_at"])),
            archive_reason=archive["archive_reason"],
        )
    related: dict[str, None] = {}  # in the order given, each once (a condensed entry may relate thousands)
    for other in request.related:
        if other not in existing and other not in taken_ids:
            raise NotFound(f"related memory {other} does not exist", "check the id with `mem list`")
        related[other] = None
    if related:
        data["related_memories"] = list(related)
    if request.effectiveness is not None:
        data["effectiveness"] = _check_effectiveness(request.effectiveness)
    if request.metadata is not None:
        if not isinstance(request.metadata, dict):
            raise BadInput("metadata must be a mapping")
        data["metadata"] = request.metadata
    fields = request.fields or {}
    if (
        spec.kind != "summary" and "session_id" in fields
    ):  # outside a summary, an import line's shorthand for source.session_id
        fields = {name: value for name, value in fields.items() if name != "session_id"}
    _refuse_oversized({**data, **fields}, spec.kind)  # what was filled in: an environment's session id, a resolved path
    if spec.kind != "note" or fields:
        _check_kind(data, without_private(fields), spec.kind)
    if "metadata" in data:
        data["metadata"] = without_private(data["metadata"])
    # A task's ttl counts from done_at (an ended task, imported), none while it waits.
    start = expiry_start(data, spec.kind)
    if ttl != "permanent" and start is not None:
        data["expires_at"] = expires_at(start, ttl)
    _refuse_surrogates(data)
    refuse_secrets(not_given(data, given))
    _refuse_instructions(data)
    # In the order the file will hold it, so the catalog row of an append equals a re-read's.
    return ordered(data), notes


def _as_given(request: Request) -> dict[str, Any]:
    """The request's fields where the entry will hold them, as given (tags
    not yet slugged), for the size limits."""
    source = {
        "session_id": request.session_id,
        "agent": request.agent,
        "phase": request.phase,
        "file_path": request.file_path,
        "line_range": request.lines,
        **(request.source_extra or {}),
    }
    given = {
        "summary": request.summary,
        "key": request.key,
        "tags": request.tags,
        "related_memories": request.related,
        "metadata": request.metadata,
        "source": {name: value for name, value in source.items() if value is not None},
        **(request.fields or {}),
    }
    return {name: value for name, value in given.items() if value is not None}


def _refuse_oversized(data: dict[str, Any], kind: str) -> None:
    from ..core.schemas import limit_problem

    problem = limit_problem(data, kind)
    if problem is not None:
        raise BadInput(problem, "shorten it: docs/reference.md (Limits) lists the limits of every field")


def _refuse_surrogates(value: Any, where: str = "") -> None:
    """Every text of the entry, at any depth, refused when it holds a lone
    surrogate: YAML cannot hold one (it comes from a JSON `\\ud800`, or from
    invalid UTF-8 in an argument)."""
    if isinstance(value, str):
        if SURROGATE_RE.search(value):
            raise BadInput(
                f"{where or 'a text'} holds a lone surrogate (not a character)", "give valid Unicode (UTF-8) text"
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_surrogates(key, where)
            _refuse_surrogates(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for item in value:
            _refuse_surrogates(item, where)


def _check_kind(data: dict[str, Any], fields: dict[str, Any], kind: str) -> None:
    """Add a kind's fields to `data`, refusing what its schema does not allow
    (a task without its trigger, an event on a note)."""
    from ..core.schemas import first_problem

    if kind != "note" and not fields:
        how = {
            "task": "`mem task add` (see `mem task add --help`)",
            "chat": "`mem chat add ROLE TEXT`",
            "summary": "`mem consolidate`",
            "insight": "`mem learn`, or `add_insight` in Python",
            "episode": "`mem episode EVENT`",
            "procedure": "`mem procedure add FILE`: a new version of its name supersedes the old",
        }.get(kind, f"`mem import` with the {kind} fields (docs/reference.md)")
        raise BadInput(f"{data['category']} is a category of kind {kind}", f"write it with {how}")
    data.update(fields)
    problem = first_problem(data, kind)
    if problem is not None:
        where, message = problem
        raise BadInput(f"not a valid {kind}: {where + ': ' if where else ''}{message}")


def _check_effectiveness(value: Any) -> dict[str, Any]:
    try:
        applications, successes = int(value["applications"]), int(value["successes"])
    except (TypeError, KeyError, ValueError):
        raise BadInput("effectiveness needs whole applications and successes") from None
    if not 0 <= successes <= applications:
        raise BadInput("effectiveness successes must be between 0 and applications")
    out: dict[str, Any] = {
        "applications": applications,
        "successes": successes,
        "score": score_of(applications, successes),
    }
    if value.get("last_applied"):
        out["last_applied"] = str(value["last_applied"])
    return out


def _repo_path(raw: str, config: Config) -> str:
    path = Path(raw)
    absolute = (path if path.is_absolute() else Path.cwd() / path).resolve()
    root = config.root
    if not is_inside(root, absolute):
        raise BadInput(f"--file {raw!r} is outside the repository", "name a file inside the repository")
    return absolute.relative_to(root).as_posix() or "."


def _refuse_instructions(data: dict[str, Any]) -> None:
    """Instruction-shaped text refused unless the entry accepts it: every
    agent session of the repository reads memories (guard_instructions.py)."""
    from ..guard.instructions import ACCEPT, scan_fields

    # The content first: a summary derived from it repeats what it holds.
    checked = {"content": data["content"], **{k: v for k, v in data.items() if k != "content"}}
    findings = scan_fields(checked, skip=("id", "supersedes", "superseded_by", "related_memories"))
    if findings:
        name, finding = findings[0]
        raise Refused(
            f"refusing instruction-shaped text: {finding} in {name} (every agent session reads memories as given)",
            f"write it as a note about the project; to keep it as it is, a person adds it with `mem add --accept-instructions` "
            f"(sets metadata.{ACCEPT}: true)",
        )
