"""Calls that learn: observe (task executions), consolidate (a conversation,
through the configured summarizer), age (Samaritan's aging to long-term), and what the observation log teaches
(tools, recommend, patterns, metrics, recall_all, learn, insights, correct)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ..core.errors import BadInput
from ..operations.learning import (
    CORRECT,
    INSIGHTS,
    LEARN,
    METRICS,
    OBSERVE,
    PATTERNS,
    RECALL_ALL,
    RECOMMEND,
    TOOLS,
)
from ..operations.lifecycle import AGE, CONSOLIDATE
from .registry import tool

if TYPE_CHECKING:
    from ..api import Grimoire


@tool(OBSERVE)
def observe(g: Grimoire, records: list[dict[str, Any]], skip_invalid: bool = False) -> Any:
    return g.learning.observe(records, skip_invalid=skip_invalid).to_dict()


@tool(CONSOLIDATE)
def consolidate(
    g: Grimoire,
    transcript: str | None = None,
    path: str | None = None,
    session_id: str | None = None,
    dry_run: bool = False,
) -> Any:
    if (transcript is None) == (path is None):
        raise BadInput("give the transcript's text or its path, one of them", "pass transcript or path")
    if path is not None:
        from ..lifecycle.transcripts import agent_transcript

        # A model chose this path: only a transcript of this project, never any file the server can read.
        try:
            with open(agent_transcript(path, g.config.root, g.runtime.claude_config_dir), encoding="utf-8") as handle:
                transcript = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(
                f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}", "give a readable UTF-8 transcript"
            ) from None
    given = cast(str, transcript)  # read from the path when none was given
    return g.lifecycle.consolidate(
        given, session_id=session_id, dry_run=dry_run, where=path or "the transcript"
    ).to_dict()


@tool(AGE)
def age(
    g: Grimoire,
    older_than: str | None = None,
    most: int | None = None,
    max_rows: int | None = None,
    dry_run: bool = False,
) -> Any:
    return g.lifecycle.age(older_than=older_than, most=most, max_rows=max_rows, dry_run=dry_run).to_dict()


@tool(TOOLS)
def tools(g: Grimoire, name: str | None = None, context: str | None = None) -> Any:
    return [memory.to_dict() for memory in g.learning.tools(name, context=context)]


@tool(RECOMMEND)
def recommend(g: Grimoire, action: str, context: str | None = None, limit: int = 5) -> Any:
    return g.learning.recommend(action, context=context, limit=limit).to_dict()


@tool(PATTERNS)
def patterns(g: Grimoire, type: str | None = None, min_usage: int = 1, context: str | None = None) -> Any:
    return [pattern.to_dict() for pattern in g.learning.patterns(type, min_usage=min_usage, context=context)]


@tool(METRICS)
def metrics(g: Grimoire, by: str = "week") -> Any:
    return g.learning.metrics(by=by)


@tool(RECALL_ALL)
def recall_all(g: Grimoire, query: str, types: list[str] | None = None, context: str | None = None) -> Any:
    return g.learning.recall_all(query, types=types, context=context)


@tool(LEARN)
def learn(g: Grimoire, category: str | None = None, dry_run: bool = False) -> Any:
    return g.learning.learn(category=category, dry_run=dry_run).to_dict()


@tool(INSIGHTS)
def insights(g: Grimoire, type: str | None = None, category: str | None = None) -> Any:
    return [entry.to_dict() for entry in g.learning.insights(type=type, category=category)]


@tool(CORRECT)
def correct(g: Grimoire, field: str, value: Any, **options: Any) -> Any:
    return g.learning.correct(field, value, **options).to_dict()
