"""Tools over memories and keyed facts: save, supersede, query, context,
show, list, get, apply, stats, remember, recall, facts. Each tool's name,
description and input schema are its operation's (operations/memory.py);
what is here turns the library's answer into the JSON `mem … --json` prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..operations.memory import APPLY, CONTEXT, FACTS, GET, LIST, QUERY, RECALL, REMEMBER, SAVE, SHOW, STATS, SUPERSEDE
from .registry import tool

if TYPE_CHECKING:
    from ..api import Grimoire


# -- memories ------------------------------------------------------------------


@tool(SAVE)
def save(g: Grimoire, content: str, **options: Any) -> Any:
    return g.add(content, options.pop("category", None), **options).written_dict()


@tool(SUPERSEDE)
def supersede(g: Grimoire, id: str, content: str, **options: Any) -> Any:
    return g.supersede(id, content, **options).written_dict()


@tool(QUERY)
def query(g: Grimoire, text: str, explain: bool = False, **options: Any) -> Any:
    moment = g.now()
    return [hit.to_dict(explain, moment) for hit in g.query(text, **options)]


@tool(CONTEXT)
def context(
    g: Grimoire, query: str | None = None, budget: int = 400, recipe: str | None = None, semantic: bool | None = None
) -> Any:
    return g.context(query, budget=budget, recipe=recipe, semantic=semantic).to_dict()


@tool(SHOW)
def show(g: Grimoire, id: str, chain: bool = False) -> Any:
    from ..facade.views import shown

    if chain:
        moment = g.now()
        return [entry.view(moment) for entry in g.show(id, chain=True)]
    return shown(g, g.show(id))


@tool(LIST)
def list_(g: Grimoire, **options: Any) -> Any:
    moment = g.now()
    return [entry.view(moment) for entry in g.list(**options)]


@tool(GET)
def get(g: Grimoire, key: str) -> Any:
    return g.get(key).view(g.now())


@tool(APPLY)
def apply(g: Grimoire, id: str, success: bool) -> Any:
    return g.apply(id, success).view(g.now())


@tool(STATS)
def stats(g: Grimoire) -> Any:
    return g.stats().to_dict()


# -- keyed facts -----------------------------------------------------------------


@tool(REMEMBER)
def remember(g: Grimoire, key: str, value: Any, **options: Any) -> Any:
    return g.facts.remember(key, value, **options).to_dict(g.now())


@tool(RECALL)
def recall(g: Grimoire, key: str) -> Any:
    from ..facade.views import recalled

    return recalled(key, g.facts.recall_entry(key))


@tool(FACTS)
def facts(g: Grimoire, pattern: str | None = None, categories: list[str] | None = None) -> Any:
    from ..facade.views import fact

    moment = g.now()
    return [fact(entry, moment) for entry in g.facts.list(pattern, categories=categories)]
