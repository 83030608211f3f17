"""Calls over the kinds of memory (docs/agent-personas.md): episodes, procedures,
prospective tasks and events, chat history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..operations.kinds import (
    CHAT_ADD,
    CHAT_RECENT,
    EPISODE,
    EPISODES,
    EVENT,
    PROCEDURE,
    PROCEDURE_ADD,
    PROCEDURES,
    TASK_CANCEL,
    TASK_DONE,
    TASK_SCHEDULE,
    TASKS_DUE,
    TASKS_PENDING,
)
from .registry import tool

if TYPE_CHECKING:
    from ..api import Grimoire


def _views(g: Grimoire, entries: list[Any]) -> list[dict[str, Any]]:
    moment = g.now()
    return [entry.view(moment) for entry in entries]


# -- episodes ------------------------------------------------------------------


@tool(EPISODE)
def episode(g: Grimoire, event: str, **options: Any) -> Any:
    return g.episodes.add(event, **options).view(g.now())


@tool(EPISODES)
def episodes(g: Grimoire, query: str | None = None, **options: Any) -> Any:
    moment = g.now()
    return [hit.to_dict(False, moment) for hit in g.episodes.list(query, **options)]


# -- procedures ----------------------------------------------------------------


@tool(PROCEDURE_ADD)
def procedure_add(g: Grimoire, document: Any, category: str | None = None) -> Any:
    return g.procedures.add(document, where="the document", category=category).to_dict(g.now())


@tool(PROCEDURE)
def procedure(g: Grimoire, name: str, params: dict[str, str] | None = None, template: bool = False) -> Any:
    return g.procedures.get(name, params, template=template).to_dict()


@tool(PROCEDURES)
def procedures(g: Grimoire, category: str | None = None) -> Any:
    return _views(g, g.procedures.list(category=category))


# -- prospective tasks ---------------------------------------------------------


@tool(TASK_SCHEDULE)
def task_schedule(g: Grimoire, text: str, **options: Any) -> Any:
    return g.tasks.add(text, **options).view(g.now())


@tool(TASKS_PENDING)
def tasks_pending(g: Grimoire, all: bool = False) -> Any:
    return _views(g, g.tasks.list(every=all))


@tool(TASKS_DUE)
def tasks_due(g: Grimoire, context: dict[str, Any] | None = None) -> Any:
    return _views(g, g.tasks.due(context=context))


@tool(TASK_DONE)
def task_done(g: Grimoire, id: str) -> Any:
    return g.tasks.end(id, "done").view(g.now())


@tool(TASK_CANCEL)
def task_cancel(g: Grimoire, id: str) -> Any:
    return g.tasks.end(id, "cancelled").view(g.now())


@tool(EVENT)
def event(g: Grimoire, name: str) -> Any:
    return {"event": name, "due": [entry.id for entry in g.tasks.fire(name)]}


# -- chat history --------------------------------------------------------------


@tool(CHAT_ADD)
def chat_add(g: Grimoire, role: str, text: str, category: str | None = None) -> Any:
    return g.chat.add(role, text, category=category).view(g.now())


@tool(CHAT_RECENT)
def chat_recent(g: Grimoire, count: int = 5, category: str | None = None) -> Any:
    return _views(g, g.chat.recent(count, category=category))
