"""Commands over the kinds of memory (docs/agent-personas.md): keyed facts and prospective tasks."""

from __future__ import annotations

import json as jsonlib
import sys

from ..core.errors import BadInput
from ..operations import kinds as kind_operations
from ..operations import memory as operations
from . import render
from .app import contexts, declared, found, open_grimoire, read_text, task_command


@declared(operations.REMEMBER)
def remember(key, value, ttl, category, refresh, json):
    grimoire = open_grimoire()
    value = _json_stdin() if value == "-" else value
    result = grimoire.facts.remember(key, value, ttl=ttl, category=category, refresh=refresh)
    render.kept(
        result, json, grimoire.now(), f"unchanged: {key} already holds this value ({result.entry.id}); nothing written"
    )


def _json_stdin():
    raw = sys.stdin.read()
    try:
        return jsonlib.loads(raw)
    except ValueError as exc:
        raise BadInput(
            f"stdin is not a JSON value ({exc.args[0]})",
            "pipe JSON in, e.g. echo '{\"rows\": 12}' | mem remember KEY -",
        ) from None


@declared(operations.RECALL)
def recall(key, json):
    from ..facade.views import recalled

    grimoire = open_grimoire()
    entry = grimoire.facts.recall_entry(key)
    if json:
        render.print_json(recalled(key, entry))
    else:
        render.out(entry.content)  # the value as text (kinds/facts.py)


@declared(operations.FACTS)
def facts(pattern, categories, json):
    from ..facade.views import fact

    grimoire = open_grimoire()
    keyed = grimoire.facts.list(pattern, categories=categories)
    if json:
        moment = grimoire.now()
        render.print_json([fact(entry, moment) for entry in keyed])
    else:
        for entry in keyed:
            text = entry.content  # the value as text (kinds/facts.py)
            expiry = f"  (until {entry.data['expires_at']})" if entry.data.get("expires_at") else ""
            render.out(f"{entry.key} = {' '.join(text.split())[:100]}{expiry}")
    found(keyed)


# -- prospective tasks -----------------------------------------------------------


def _task_line(entry) -> str:
    from ..kinds.tasks import due_at

    data = entry.data
    trigger = str(data.get("trigger", ""))
    due = due_at(entry)
    when = (
        f"due {due}"
        if due
        else "at the next session"
        if trigger == "session-start"
        else f"if {trigger.removeprefix('condition:')}"
        if trigger.startswith("condition:")
        else f"on {trigger.removeprefix('event:')}"
    )
    status = "" if data.get("status") == "pending" else f" [{data.get('status')}]"
    return f"{entry.id}  {when:<26} {data.get('task', entry.content)}{status}"


def _task_json(entries, moment) -> None:
    render.print_json([entry.view(moment) for entry in entries])


@declared(kind_operations.TASK_SCHEDULE, task_command)
def task_add(text, due, on, next_session, condition, context_pairs, category, json):
    grimoire = open_grimoire()
    entry = grimoire.tasks.add(
        read_text(text),
        due=due,
        on=on,
        next_session=next_session,
        condition=condition,
        context=contexts(context_pairs),
        category=category,
    )
    if json:
        render.print_json(entry.view(grimoire.now()))
    else:
        render.out(entry.id)


def _end(entry_id: str, status: str, json: bool) -> None:
    grimoire = open_grimoire()
    entry = grimoire.tasks.end(entry_id, status)
    if json:
        render.print_json(entry.view(grimoire.now()))
    else:
        render.out(f"{entry.id} {status}")


@declared(kind_operations.TASK_DONE, task_command)
def task_done(id, json):
    _end(id, "done", json)


@declared(kind_operations.TASK_CANCEL, task_command)
def task_cancel(id, json):
    _end(id, "cancelled", json)


@declared(kind_operations.TASKS_PENDING)
def tasks(all, json):
    grimoire = open_grimoire()
    listed = grimoire.tasks.list(every=all)
    if json:
        _task_json(listed, grimoire.now())
    else:
        for entry in listed:
            render.out(_task_line(entry))
    found(listed)


@declared(kind_operations.TASKS_DUE)
def due(context_pairs, json):
    grimoire = open_grimoire()
    listed = grimoire.tasks.due(context=contexts(context_pairs) if context_pairs else None)
    if json:
        _task_json(listed, grimoire.now())
    else:
        for entry in listed:
            render.out(_task_line(entry))
    found(listed)


@declared(kind_operations.EVENT)
def event(name, json):
    grimoire = open_grimoire()
    fired = grimoire.tasks.fire(name)
    if json:
        render.print_json({"event": name, "due": [entry.id for entry in fired]})
        return
    for entry in fired:
        render.out(_task_line(entry))
    if not fired:
        render.note(f"no pending task waits for {name}")
