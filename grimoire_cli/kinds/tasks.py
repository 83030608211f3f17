"""Prospective tasks (SABRE): things to do at a time, on an event, or at the
next session start, kept in a category of kind `task`.

A task waits (`status: pending`) until it is done or cancelled; both are
lifecycle edits (a splice of `status`, `done_at` and `expires_at`), so the
task never expires while it waits and is archived `ttl` after it ended.
It is due when its time has come (`due_at` at or before now), when its
trigger is `session-start`, once `mem event NAME` fired its event (which
sets `due_at` to that moment), or, for a `condition:<expr>` trigger, when
the expression holds against the context the caller passes
(`mem due --context k=v`; kinds/conditions.py). Without a context a
condition task is not due: `mem check` and `mem context` have none. Due
tasks come first in `mem check` and `mem context`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..core.clock import iso, parse_time
from ..core.errors import BadInput, no_memory
from ..core.model import Entry, epoch, expires_at, expiry_start, ttl_delta
from ..storage.catalog.queries import Filter, Order
from ..storage.store import Store
from .conditions import check_condition, holds

_RELATIVE = re.compile(r"^\+([1-9]\d{0,5})([smhd])\Z")
_EVENT = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,79}\Z")
CONDITION = "condition:"


def check_event(name: str) -> str:
    if not isinstance(name, str) or not _EVENT.match(name):
        raise BadInput(f"bad event name {name!r}", "an event is a lowercase slug, like deploy or data.loaded")
    return name


def due_time(text: str, moment: datetime) -> str:
    """`--due`: `+90s`, `+90m`, `+1h`, `+2d` from now, or an ISO time later than now."""
    relative = _RELATIVE.match(text.strip())
    if relative:
        return iso(moment + ttl_delta(f"{relative[1]}{relative[2]}"))  # type: ignore[operator]
    try:
        when = parse_time(text)
    except BadInput:
        raise BadInput(
            f"cannot read --due {text!r}", "give +90s, +30m, +1h, +2d or a time like 2026-12-01T09:00:00Z"
        ) from None
    if when <= moment:
        raise BadInput(
            f"--due {text} is not in the future (now is {iso(moment)})", "give a later time, or +1h from now"
        )
    return iso(when)


def fields_for(
    text: str,
    moment: datetime,
    *,
    due: str | None = None,
    on: str | None = None,
    next_session: bool = False,
    condition: str | None = None,
    context: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A new task's fields, from exactly one trigger."""
    if (due is not None) + (on is not None) + bool(next_session) + (condition is not None) != 1:
        raise BadInput(
            "a task needs exactly one trigger",
            "give one of --due +1h|ISO, --on EVENT, --next-session, --condition EXPR",
        )
    fields: dict[str, Any] = {"task": text, "status": "pending"}  # written in FIELD_ORDER whatever the order here
    if due is not None:
        fields["due_at"] = due_time(due, moment)
        fields["trigger"] = f"time:{fields['due_at']}"
    elif on is not None:
        fields["trigger"] = f"event:{check_event(on)}"
    elif condition is not None:
        fields["trigger"] = f"{CONDITION}{check_condition(condition)}"
    else:
        fields["trigger"] = "session-start"
    if context:
        fields["context"] = dict(context)
    return fields


def is_due(entry: Entry, moment: datetime, session: str | None, context: Mapping[str, Any] | None = None) -> bool:
    data = entry.data
    if data.get("status") != "pending":
        return False
    trigger = str(data.get("trigger", ""))
    if trigger.startswith(CONDITION):
        return context is not None and holds(trigger[len(CONDITION) :], context)
    if data.get("trigger") == "session-start":
        # Due from the next session on: not in the session that added it (known
        # when the runtime names the session, MEM_SESSION_ID; without it, every process is one).
        return not session or (data.get("source") or {}).get("session_id") != session
    due = epoch(due_at(entry))
    return due is not None and due <= moment.timestamp()


def due_at(entry: Entry) -> str | None:
    """When a task is due: its `due_at`, else the time of a `time:` trigger."""
    trigger = str(entry.data.get("trigger", ""))
    return entry.data.get("due_at") or (trigger[len("time:") :] if trigger.startswith("time:") else None)


def _order(entry: Entry, moment: datetime, session: str | None) -> tuple[bool, bool, str, str]:
    """Due first (oldest due first), then by due time, then the rest by age."""
    due = due_at(entry)
    return (not is_due(entry, moment, session), due is None, str(due or ""), entry.id)


def task_rows(store: Store, moment: datetime, *, every: bool = False) -> list[tuple[int, Entry]]:
    """(catalog row, entry) of the tasks of every task category: pending ones
    (with `every`, done and cancelled ones not yet archived too), due first."""
    names = store.config.names_of_kind("task")
    if not names:
        return []
    states = ("active", "expired") if every else ("active",)
    chosen = Filter(at=moment.timestamp(), states=states, categories=names)
    listed = store.reads.listed(chosen, Order.INDEXED)
    found = [(r, entry) for r, entry in listed.items() if every or entry.data.get("status") == "pending"]
    return sorted(found, key=lambda row: _order(row[1], moment, store.runtime.session_id))


def tasks(store: Store, moment: datetime, *, every: bool = False) -> list[Entry]:
    return [entry for _, entry in task_rows(store, moment, every=every)]


def due_rows(store: Store, moment: datetime, context: Mapping[str, Any] | None = None) -> list[tuple[int, Entry]]:
    """(catalog row, entry) of the tasks due now (condition tasks: against
    `context`), timed ones oldest due first, then condition tasks."""
    session = store.runtime.session_id
    return [(rowid, entry) for rowid, entry in task_rows(store, moment) if is_due(entry, moment, session, context)]


def due(store: Store, moment: datetime, context: Mapping[str, Any] | None = None) -> list[Entry]:
    return [entry for _, entry in due_rows(store, moment, context)]


def ended(entry: Entry, status: str, moment: datetime) -> dict[str, Any]:
    """The task's data once done or cancelled: it now expires `ttl` later."""
    if entry.data.get("status") != "pending":
        raise BadInput(
            f"{entry.id} is not pending (it is {entry.data.get('status')})",
            "only a pending task can be done or cancelled",
        )
    new = dict(entry.data)
    new["status"] = status
    new["done_at"] = iso(moment)
    when = expires_at(expiry_start(new, "task"), str(new.get("ttl", "permanent")))
    if when is not None:
        new["expires_at"] = when
    return new


def task_entry(store: Store, entry_id: str) -> Entry:
    """The task with this id, to end (not archived)."""
    found = store.by_id([entry_id], include_archive=False, unique=True).get(entry_id)
    if found is None:
        raise no_memory(entry_id, "list tasks with `mem tasks`")
    if found.category not in store.config.names_of_kind("task"):
        raise BadInput(f"{entry_id} is not a task (it is a {found.category})", "list tasks with `mem tasks`")
    return found


def fired(entries: list[Entry], event: str, moment: datetime) -> dict[str, dict[str, Any]]:
    """New data of the pending tasks waiting for `event`: due now."""
    out = {}
    for entry in entries:
        if (
            entry.data.get("status") == "pending"
            and entry.data.get("trigger") == f"event:{event}"
            and "due_at" not in entry.data
        ):
            out[entry.id] = {**entry.data, "due_at": iso(moment)}
    return out
