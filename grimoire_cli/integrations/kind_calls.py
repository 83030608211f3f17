"""Calls over the kinds of memory (docs/agent-personas.md): episodes, procedures,
prospective tasks and events, chat history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..operations.kinds import (
    CHAT_ADD,
    CHAT_RECENT,
    EPISODES,
    EVENT,
    PROCEDURES,
    TASK_CANCEL,
    TASK_DONE,
    TASKS_DUE,
    TASKS_PENDING,
)
from .registry import TAGS, boolean, call, string, tool, typed

if TYPE_CHECKING:
    from ..api import Grimoire

_CONTEXT = typed(
    "object", "What the situation was, as key → text (like table: users).", additionalProperties={"type": "string"}
)


def _views(g: Grimoire, entries: list[Any]) -> list[dict[str, Any]]:
    moment = g.now()
    return [entry.view(moment) for entry in entries]


# -- episodes ------------------------------------------------------------------


@call(
    "episode",
    "Record an episode: an event that happened, its context, how it ended and the lesson (episodic memory). "
    "Returns the written entry.",
    required=("event",),
    additive=True,
    event=string("What happened, as a slug: deploy-failed, db.migration."),
    context=typed("object", "What the situation was (any JSON object)."),
    learned=string("What was learned from it."),
    outcome=string("How it ended.", enum=["success", "failure", "unknown"]),
    category=string("A category of kind episode (default: the first)."),
    tags=TAGS,
)
def episode(g: Grimoire, event: str, **options: Any) -> Any:
    return g.add_episode(event, **options).view(g.now())


@tool(EPISODES)
def episodes(g: Grimoire, query: str | None = None, **options: Any) -> Any:
    moment = g.now()
    return [hit.to_dict(False, moment) for hit in g.episodes(query, **options)]


# -- procedures ----------------------------------------------------------------


@call(
    "procedure_add",
    "Keep a runbook (procedural memory); a new version of a named procedure supersedes the old, the same version "
    "writes nothing. Nothing is ever executed.",
    required=("document",),
    idempotent=True,
    document=typed(
        ["object", "string"],
        "The runbook: {name, description, params?, steps: [{name, run?, description?, condition?}]}, "
        "as an object or its YAML/JSON text.",
    ),
    category=string("A category of kind procedure (default: the first)."),
)
def procedure_add(g: Grimoire, document: Any, category: str | None = None) -> Any:
    return g.add_procedure(document, where="the document", category=category).to_dict(g.now())


@call(
    "procedure",
    "A procedure as a checklist, its {params} filled in; follow it yourself, then report with apply.",
    required=("name",),
    read_only=True,
    name=string("The procedure's name."),
    params=typed("object", "Values for the procedure's {params}.", additionalProperties={"type": "string"}),
    template=boolean("As written: the params not given stay {name} (null in params) instead of being refused."),
)
def procedure(g: Grimoire, name: str, params: dict[str, str] | None = None, template: bool = False) -> Any:
    return g.procedure(name, params, template=template).to_dict()


@tool(PROCEDURES)
def procedures(g: Grimoire, category: str | None = None) -> Any:
    return _views(g, g.procedures(category=category))


# -- prospective tasks ---------------------------------------------------------


@call(
    "task_schedule",
    "Schedule a task for later (prospective memory) with one trigger: due (+30m, +1h, +2d or an ISO time), "
    "on (an event) or next_session. Returns the task.",
    required=("text",),
    additive=True,
    text=string("What to do."),
    due=string("When: +30m, +1h, +2d or an ISO time."),
    on=string("When this event fires."),
    next_session=boolean("At the next session start."),
    context=_CONTEXT,
    category=string("A category of kind task (default: the first)."),
)
def task_schedule(g: Grimoire, text: str, **options: Any) -> Any:
    return g.add_task(text, **options).view(g.now())


@tool(TASKS_PENDING)
def tasks_pending(g: Grimoire, all: bool = False) -> Any:
    return _views(g, g.tasks(every=all))


@tool(TASKS_DUE)
def tasks_due(g: Grimoire) -> Any:
    return _views(g, g.due_tasks())


@tool(TASK_DONE)
def task_done(g: Grimoire, id: str) -> Any:
    return g.end_task(id, "done").view(g.now())


@tool(TASK_CANCEL)
def task_cancel(g: Grimoire, id: str) -> Any:
    return g.end_task(id, "cancelled").view(g.now())


@tool(EVENT)
def event(g: Grimoire, name: str) -> Any:
    return {"event": name, "due": [entry.id for entry in g.fire(name)]}


# -- chat history --------------------------------------------------------------


@tool(CHAT_ADD)
def chat_add(g: Grimoire, role: str, text: str, category: str | None = None) -> Any:
    return g.chat_add(role, text, category=category).view(g.now())


@tool(CHAT_RECENT)
def chat_recent(g: Grimoire, count: int = 5, category: str | None = None) -> Any:
    return _views(g, g.chat_recent(count, category=category))
