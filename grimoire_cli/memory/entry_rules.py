"""The rules one entry must keep on its own (schema, id form, category and
its floor, expiry, archive fields, secrets), and what the cross-file rules
need of it.

Lines are counted from the entry's first line (0), so a result holds for
the entry's text wherever it sits: `mem validate` keeps it per chunk of text
and re-checks only entries whose text changed.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.clock import parse_time
from ..core.config import Config
from ..core.errors import BadInput
from ..core.model import expires_at, expiry_start, parse_id
from ..guard.instructions import ACCEPT
from ..guard.instructions import scan_fields as instruction_findings
from ..guard.scan import scan_fields

LINK_FIELDS = ("supersedes", "superseded_by", "related_memories", "key", "name", "rule_id")


def field_offset(lines: list[str], name: str) -> int:
    """The line (from 0) where a top-level field of the entry starts; 0 if absent."""
    pattern = re.compile(rf"^(?:- |\s+)(?:- )?{re.escape(name)}:")
    for offset, text in enumerate(lines):
        if pattern.match(text):
            return offset
    return 0


def _message(error: Any) -> str:
    """jsonschema's message, but the write path's for a value over a size
    limit: jsonschema's quotes the whole value (a megabyte on one line)."""
    from ..core.schemas import size_message

    too_large = (
        size_message(error.instance, error.schema)
        if error.validator in ("maxLength", "maxItems", "maxProperties")
        else None
    )
    if too_large is None:
        return error.message
    return f"a key of {too_large}" if "propertyNames" in error.schema_path else too_large


def check_entry(
    config: Config, data: Any, lines: list[str], archived: bool, category_of_file: str | None
) -> list[list[Any]]:
    """Problems of one item as [line offset, id, rule, message]."""
    from ..core.schemas import entry_validator, first_problem

    if not isinstance(data, dict):
        return [[0, None, "schema", f"an entry must be a mapping, found {type(data).__name__}"]]
    entry_id = data.get("id") if isinstance(data.get("id"), str) else None
    found: list[list[Any]] = []

    def problem(rule: str, message: str, name: str | None = None) -> None:
        found.append([field_offset(lines, name) if name else 0, entry_id, rule, message])

    category = data.get("category")
    spec = config.categories.get(category) if isinstance(category, str) else None
    kind = spec.kind if spec else "note"
    # The write path's schema check gives jsonschema's verdict at a fifth of
    # its cost (tests/test_schemas.py holds the two to the same verdicts), so
    # jsonschema is imported and run only for an entry that has a problem, for
    # its messages.
    if first_problem(data, kind) is not None:
        validator = entry_validator(kind)
        for error in sorted(validator.iter_errors(data), key=lambda e: list(e.path)):
            where = ".".join(str(p) for p in error.absolute_path)
            top = str(error.absolute_path[0]) if error.absolute_path else None
            if error.validator == "additionalProperties" and not where:
                extra = sorted(set(data) - set(validator.schema["properties"]))
                top = extra[0] if extra else None
            problem("schema", f"{where + ': ' if where else ''}{_message(error)}", top)
    if entry_id and not parse_id(entry_id):
        problem("id-format", "id must be MEM-YYYYMMDD-NNN with NNN >= 001", "id")
    if category_of_file and category != category_of_file:
        problem(
            "category-file",
            f"category {category!r} does not match its file (which holds {category_of_file!r})",
            "category",
        )
    if isinstance(category, str):
        if spec is None:
            problem(
                "category", f"unknown category {category!r}; configured: {', '.join(config.categories)}", "category"
            )
        else:
            if isinstance(data.get("confidence"), (int, float)) and data["confidence"] < spec.confidence_required:
                problem(
                    "confidence-floor",
                    f"confidence {data['confidence']} is below the {category} floor {spec.confidence_required}",
                    "confidence",
                )
            if isinstance(data.get("ttl"), str) and not spec.takes_ttl(data["ttl"]):
                problem(
                    "ttl", f"ttl {data['ttl']}: Loa's {category} category takes days or permanent (Loa's schema)", "ttl"
                )
    _check_expiry(data, problem, kind)
    archive_fields = [k for k in ("archived", "archived_at", "archive_reason") if k in data]
    if archived and not data.get("archived"):
        problem("archive", "an entry in the archive must have archived: true, archived_at and archive_reason")
    elif not archived and archive_fields:
        problem(
            "archive",
            "archive fields are only allowed in archive files; run `mem archive` to move it",
            archive_fields[0],
        )
    for field_name, finding in scan_fields(
        {k: v for k, v in data.items() if k not in ("id", "supersedes", "superseded_by", "related_memories")}
    ):
        problem(
            "secret",
            f"{finding.kind} in {field_name} ({finding}); remove it and reference where the secret is kept instead",
            field_name.split(".")[0],
        )
    _check_instructions(data, problem)
    return found


def _check_instructions(data: dict[str, Any], problem) -> None:
    """Instruction-shaped text not accepted: one problem per field, at its first finding."""
    by_field: dict[str, list] = {}
    for field_name, finding in instruction_findings(
        data, skip=("id", "supersedes", "superseded_by", "related_memories")
    ):
        by_field.setdefault(field_name, []).append(finding)
    for field_name, findings in by_field.items():
        more = f"; and {len(findings) - 1} more" if len(findings) > 1 else ""
        problem(
            "instruction",
            f"instruction-shaped text in {field_name} ({findings[0]}{more}): every agent session reads it; "
            f"rewrite it as a note, or accept it with metadata.{ACCEPT}: true",
            field_name.split(".")[0],
        )


def _check_expiry(data: dict[str, Any], problem, kind: str) -> None:
    ttl = data.get("ttl")
    stamp = expiry_start(data, kind)
    if kind == "task" and stamp is None:  # a task expires ttl after it is done; a waiting one never does
        if "expires_at" in data:
            problem(
                "expires-at", "a pending task must not have expires_at (it expires ttl after done_at)", "expires_at"
            )
        return
    base = "done_at" if kind == "task" else "source.timestamp"
    if not (isinstance(ttl, str) and isinstance(stamp, str)):
        return
    try:
        wanted = expires_at(stamp, ttl) if re.match(r"^(permanent|\d+[smhd])\Z", ttl) else None
    except BadInput:
        wanted = None
    present = data.get("expires_at")
    if ttl == "permanent" and present is not None:
        problem("expires-at", "a permanent entry must not have expires_at", "expires_at")
    elif ttl != "permanent" and wanted and present is None:
        problem("expires-at", f"expires_at is missing; with ttl {ttl} it must be {wanted}", "ttl")
    elif wanted and present is not None and _same_time(present, wanted) is False:
        problem("expires-at", f"expires_at {present} does not equal {base} + ttl ({wanted})", "expires_at")


def _same_time(a: Any, b: str) -> bool | None:
    try:
        return parse_time(str(a)) == parse_time(b)
    except BadInput:
        return None


def link_of(data: dict[str, Any], lines: list[str], archived: bool, kind: str = "note") -> list[Any]:
    """[id, supersedes, superseded_by, related, key, archived, expires_at, {field: line offset}];
    a procedure's key is its identity (kinds/procedures.py), an insight's its rule."""
    key = data.get("key")
    if kind == "procedure" and isinstance(data.get("name"), str):
        from ..kinds.procedures import identity

        key = identity(data["name"])
    elif kind == "insight" and isinstance(data.get("rule_id"), str):
        key = f"insight:{data['rule_id']}"  # as adding.py knows it
    return [
        data.get("id"),
        data.get("supersedes"),
        data.get("superseded_by"),
        data.get("related_memories"),
        key,
        archived,
        data.get("expires_at"),
        {name: field_offset(lines, name) for name in LINK_FIELDS if name in data},
    ]
