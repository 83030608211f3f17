"""Calls over memories and keyed facts: save, supersede, query, context,
show, list, get, apply, stats, remember, recall, facts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.bounds import MAX_BUDGET, MAX_PATTERN, MIN_BUDGET
from .registry import (
    CATEGORIES,
    CATEGORY,
    CONFIDENCE,
    ID,
    IMPORTANCE,
    SINCE,
    TAGS,
    TTL,
    UNTIL,
    boolean,
    call,
    integer,
    search_text,
    string,
    strings,
    typed,
)

if TYPE_CHECKING:
    from ..api import Grimoire


# -- memories ------------------------------------------------------------------


@call(
    "save",
    "Remember one thing as a new memory (mem add). Use for a decision taken, a lesson learned, an error and its fix, "
    "a fact about the project or a user preference. Secrets, personal data, exact duplicates and confidence below the category's "
    "floor are refused. Returns the written entry with its id; `notes` warn of near duplicates.",
    required=("content",),
    additive=True,
    content=string(
        "The memory, in a sentence or a short paragraph; text inside <private>…</private> is removed before it is stored."
    ),
    category=CATEGORY,
    summary=string("One-line summary (derived when omitted)."),
    confidence=CONFIDENCE,
    tags=TAGS,
    ttl=TTL,
    key=string("Dotted key (db.users.schema); replaces the active memory with that key."),
    importance=IMPORTANCE,
    related=strings("Ids of related memories."),
    supersedes=string("Id of the memory this one replaces."),
    session_id=string("The session it comes from (default: MEM_SESSION_ID)."),
    agent=string("The agent writing it (default: MEM_AGENT)."),
)
def save(g: Grimoire, content: str, **options: Any) -> Any:
    return g.add(content, options.pop("category", None), **options).written_dict()


@call(
    "supersede",
    "Replace a memory with a corrected one (memories are never edited: the old one stays, linked, for audit). "
    "What is not given (key, tags, ttl, importance, confidence, metadata) is the old memory's. Returns the new entry.",
    required=("id", "content"),
    id=ID,
    content=string("The new memory."),
    summary=string("One-line summary (default: from the content)."),
    confidence=typed(
        "number", "0.0-1.0 (default: the old memory's); below the category's floor is refused.", minimum=0, maximum=1
    ),
    tags=strings("Tags (default: the old memory's)."),
    ttl=string("How long it holds, from now (default: the old memory's ttl)."),
    importance=integer("1-10 (default: the old memory's).", maximum=10),
)
def supersede(g: Grimoire, id: str, content: str, **options: Any) -> Any:
    return g.supersede(id, content, **options).written_dict()


@call(
    "query",
    "Search the memories: ranked by relevance (BM25 with stemming and typo tolerance) blended with recency and quality. "
    "Call it before deciding something the project may have decided before. Returns hits, best first, each with its score.",
    required=("text",),
    read_only=True,
    text=search_text("What to look for, in a few words."),
    limit=integer("At most this many hits (default: retrieval.max_per_query)."),
    categories=CATEGORIES,
    tags=TAGS,
    min_confidence=typed("number", "Skip memories less sure than this.", minimum=0, maximum=1),
    tier=string("hot (what context injects), long (long-term) or all.", enum=["hot", "long", "all"]),
    since=SINCE,
    until=UNTIL,
    include_expired=boolean("Also rank expired memories."),
    include_superseded=boolean("Also rank memories a newer one replaced."),
    archived=boolean("Search the archive too."),
    explain=boolean("Add each score part to every hit."),
)
def query(g: Grimoire, text: str, explain: bool = False, **options: Any) -> Any:
    moment = g.now()
    return [hit.to_dict(explain, moment) for hit in g.query(text, **options)]


@call(
    "context",
    "The project's memory as a markdown block for your prompt (`## Active Memory`), best first within a token "
    "budget; with a query, ranked by relevance to it; with a recipe, that recipe's sections. Read it at the start of a task.",
    read_only=True,
    query=search_text("Rank by relevance to this (default: by value)."),
    budget=integer("Token budget (estimated as characters / 4); default 400.", minimum=MIN_BUDGET, maximum=MAX_BUDGET),
    recipe=string("A recipe of context.recipes (default: context.recipe, else by value)."),
)
def context(g: Grimoire, query: str | None = None, budget: int = 400, recipe: str | None = None) -> Any:
    return g.context(query, budget=budget, recipe=recipe).to_dict()


@call(
    "show",
    "One memory by id, archived ones included, with its computed tier and how often it was recalled; with chain, "
    "its whole supersede chain oldest first.",
    required=("id",),
    read_only=True,
    id=ID,
    chain=boolean("The whole supersede chain."),
)
def show(g: Grimoire, id: str, chain: bool = False) -> Any:
    from ..facade.views import shown

    if chain:
        moment = g.now()
        return [entry.view(moment) for entry in g.show(id, chain=True)]
    return shown(g, g.show(id))


@call(
    "list",
    "Active memories newest first (filters add expired, superseded or archived ones).",
    read_only=True,
    categories=CATEGORIES,
    tags=TAGS,
    recent=integer("Only the N newest."),
    since=SINCE,
    until=UNTIL,
    archived=boolean("List the archive instead."),
    expired=boolean("Include expired."),
    superseded=boolean("Include superseded."),
)
def list_(g: Grimoire, **options: Any) -> Any:
    moment = g.now()
    return [entry.view(moment) for entry in g.list(**options)]


@call(
    "get",
    "The active memory holding a dotted key (as given to save or remember), with its value and provenance.",
    required=("key",),
    read_only=True,
    key=string("The dotted key."),
)
def get(g: Grimoire, key: str) -> Any:
    return g.get(key).view(g.now())


@call(
    "apply",
    "Report that you applied a memory and whether it helped; memories that keep failing are archived as ineffective.",
    required=("id", "success"),
    id=ID,
    success=boolean("Did following the memory work?"),
)
def apply(g: Grimoire, id: str, success: bool) -> Any:
    return g.apply(id, success).view(g.now())


@call("stats", "Counts of memories per category, state and tier; oldest and newest.", read_only=True)
def stats(g: Grimoire) -> Any:
    return g.stats().to_dict()


# -- keyed facts -----------------------------------------------------------------


@call(
    "remember",
    "Keep a value under a dotted key (semantic memory); a new value supersedes the old, the same value writes nothing.",
    required=("key", "value"),
    idempotent=True,
    key=string("Dotted lowercase key, like db.users.schema."),
    value={"description": "The value: any JSON value (text, number, list, object)."},
    ttl=TTL,
    category=string("A category of kind fact (default: semantic, else fact)."),
)
def remember(g: Grimoire, key: str, value: Any, **options: Any) -> Any:
    return g.remember(key, value, **options).to_dict(g.now())


@call(
    "recall",
    "The value under a dotted key; an error when it is missing or expired.",
    required=("key",),
    read_only=True,
    key=string("The key."),
)
def recall(g: Grimoire, key: str) -> Any:
    from ..facade.views import recalled

    return recalled(key, g.recall_entry(key))


@call(
    "facts",
    "The keys of active facts (remember) with their values; a glob pattern narrows them.",
    read_only=True,
    pattern=string("Glob over keys, like 'db.*' (default: every key).", maxLength=MAX_PATTERN),
    categories=CATEGORIES,
)
def facts(g: Grimoire, pattern: str | None = None, categories: list[str] | None = None) -> Any:
    from ..facade.views import fact

    moment = g.now()
    return [fact(entry, moment) for entry in g.facts(pattern, categories=categories)]
