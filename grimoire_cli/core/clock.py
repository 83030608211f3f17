"""The one clock: `MEM_NOW` when set (tests, replays), else the system clock."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

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
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def iso(moment: datetime) -> str:
    """UTC ISO-8601 with a `Z`, second precision (the stored form)."""
    return moment.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


_BACK = {"m": 60, "h": 3600, "d": 86400}


def span_seconds(text: str) -> int | None:
    """A span like `30d`, `48h`, `90m` in seconds; None when `text` is not one."""
    value = str(text).strip()
    if re.fullmatch(r"[0-9]{1,6}[mhd]", value):
        return int(value[:-1]) * _BACK[value[-1]]
    return None


def seconds_ttl(seconds: int) -> str:
    """A positive number of seconds as a ttl in the largest unit that holds
    it exactly (3600 -> 1h, 90 -> 90s): SABRE's TTLs are seconds."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def back_time(text: str, moment: datetime, option: str = "--since", *, end: bool = False) -> datetime:
    """`--since` / `--until`: `30d`, `48h`, `90m` back from `moment`, or an ISO
    date or time. A date alone is the start of that day (UTC), or with `end`
    its last second, so `--until 2026-11-20` includes the 20th."""
    value = text.strip()
    seconds = span_seconds(value)
    if seconds is not None:
        try:
            return moment - timedelta(seconds=seconds)
        except OverflowError:  # before year 1: since the beginning
            return datetime.min.replace(tzinfo=UTC)
    try:
        when = parse_time(value)
    except BadInput:
        raise BadInput(
            f"cannot read {option} {text!r}", "give 30d, 48h, 90m back from now, or a date like 2026-11-01"
        ) from None
    if end and len(value) == 10:  # a date alone: through its last second
        when = when.replace(hour=23, minute=59, second=59)
    return when


def window(
    since: str | datetime | None, until: str | datetime | None, moment: datetime
) -> tuple[float | None, float | None]:
    """`--since`/`--until` as POSIX seconds (None: open), each a `back_time`
    text or a datetime; refused when the window is empty."""
    low = (since if isinstance(since, datetime) else back_time(since, moment, "--since")) if since is not None else None
    high = (
        (until if isinstance(until, datetime) else back_time(until, moment, "--until", end=True))
        if until is not None
        else None
    )
    if low is not None and high is not None and low > high:
        raise BadInput(f"--since {iso(low)} is after --until {iso(high)}", "swap them, or widen the window")
    return (low.timestamp() if low is not None else None, high.timestamp() if high is not None else None)
