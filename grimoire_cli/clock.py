"""The one clock: `MEM_NOW` when set (tests, replays), else the system clock."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from .errors import BadInput


def parse_time(text: str) -> datetime:
    """Parse an ISO-8601 timestamp; naive times are taken as UTC."""
    value = text.strip()
    if value.endswith("Z") or value.endswith("z"):
        value = value[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise BadInput(f"not an ISO-8601 time: {text!r}", "write it like 2026-01-31T12:00:00Z") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def now() -> datetime:
    """Current UTC time, honouring `MEM_NOW`."""
    fixed = os.environ.get("MEM_NOW")
    if fixed:
        try:
            return parse_time(fixed)
        except BadInput:
            raise BadInput(f"MEM_NOW is not an ISO-8601 time: {fixed!r}", "unset it or write it like 2026-01-31T12:00:00Z") from None
    return datetime.now(timezone.utc).replace(microsecond=0)


def iso(moment: datetime) -> str:
    """UTC ISO-8601 with a `Z`, second precision (the stored form)."""
    return moment.astimezone(timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
