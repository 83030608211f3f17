"""Calls over the kinds of memory (docs/agent-personas.md): episodes, procedures,
prospective tasks and events, chat history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .registry import ID, SINCE, TAGS, UNTIL, boolean, call, integer, search_text, string, typed

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


@call(
    "episodes",
    "Past episodes like a query (BM25 over event, lesson and context, blended with recency), or the newest; "
    "read them before repeating something that failed before.",
    read_only=True,
    query=search_text("What to look for (default: newest first)."),
    event=string("Only episodes of this event."),
    since=SINCE,
    until=UNTIL,
    limit=integer("At most N episodes (default 10)."),
    category=string("Only this episode category."),
)
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


@call(
    "procedures",
    "The active procedures (runbooks), newest first; read one as a checklist with procedure.",
    read_only=True,
    category=string("Only this procedure category."),
)
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


@call(
    "tasks_pending",
    "Pending tasks, due ones first (with all, also done and cancelled ones not yet archived).",
    read_only=True,
    all=boolean("Also done and cancelled tasks."),
)
def tasks_pending(g: Grimoire, all: bool = False) -> Any:
    return _views(g, g.tasks(every=all))


@call("tasks_due", "The tasks due now: past their time, or waiting for the next session.", read_only=True)
def tasks_due(g: Grimoire) -> Any:
    return _views(g, g.due_tasks())


@call(
    "task_done",
    "Mark a pending task done once you did it; it is archived after its category's ttl.",
    required=("id",),
    id=ID,
)
def task_done(g: Grimoire, id: str) -> Any:
    return g.end_task(id, "done").view(g.now())


@call(
    "task_cancel",
    "Cancel a pending task that is no longer needed; it is archived after its category's ttl.",
    required=("id",),
    id=ID,
)
def task_cancel(g: Grimoire, id: str) -> Any:
    return g.end_task(id, "cancelled").view(g.now())


@call(
    "event",
    "Say that an event happened (deploy, data.loaded): the tasks waiting for it become due; returns their ids.",
    required=("name",),
    name=string("The event."),
)
def event(g: Grimoire, name: str) -> Any:
    return {"event": name, "due": [entry.id for entry in g.fire(name)]}


# -- chat history --------------------------------------------------------------


@call(
    "chat_add",
    "Keep one message of the conversation (a local, expiring chat history).",
    required=("role", "text"),
    additive=True,  # the expired messages it drops were already gone from every read
    role=string("Who said it: a lowercase word, like user, assistant or system."),
    text=string("The message."),
    category=string("A category of kind chat (default: the first)."),
)
def chat_add(g: Grimoire, role: str, text: str, category: str | None = None) -> Any:
    return g.chat_add(role, text, category=category).view(g.now())


@call(
    "chat_recent",
    "The conversation's last messages still within their time to live, oldest first.",
    read_only=True,
    count=integer("How many (default 5)."),
    category=string("Only this chat category."),
)
def chat_recent(g: Grimoire, count: int = 5, category: str | None = None) -> Any:
    return _views(g, g.chat_recent(count, category=category))
