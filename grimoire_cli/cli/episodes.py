"""Commands over episodic memory (docs/agent-personas.md): `mem episode`, `mem episodes`."""

from __future__ import annotations

import typer

from ..operations import kinds as operations
from . import render
from .app import JsonOpt, command, contexts, declared, found, open_grimoire


@command()
def episode(
    event: str = typer.Argument(..., metavar="EVENT", help="What happened, as a slug: deploy-failed, db.migration."),
    context: list[str] | None = typer.Option(
        None, "--context", metavar="K=V", help="What the situation was (repeatable)."
    ),
    context_json: str | None = typer.Option(
        None, "--context-json", metavar="JSON", help="Context as a JSON object (--context pairs win)."
    ),
    learned: str | None = typer.Option(None, "--learned", metavar="TEXT", help="What was learned from it."),
    outcome: str = typer.Option("unknown", "--outcome", metavar="O", help="success, failure or unknown."),
    category: str | None = typer.Option(
        None, "-c", "--category", metavar="CAT", help="A category of kind episode (default: the first)."
    ),
    tag: list[str] | None = typer.Option(None, "-t", "--tag", metavar="TAG", help="Tag (repeatable)."),
    json: bool = JsonOpt,
) -> None:
    """Record an episode: an event, its context, its outcome and the lesson; prints its id."""
    from ..kinds.episodes import context_json as parse_json

    merged = {**(parse_json(context_json) if context_json is not None else {}), **contexts(context)}
    grimoire = open_grimoire()
    entry = grimoire.add_episode(
        event, context=merged, learned=learned, outcome=outcome, category=category, tags=tag or ()
    )
    if json:
        render.print_json(entry.view(grimoire.now()))
    else:
        render.out(entry.id)


@declared(operations.EPISODES)
def episodes(query, event, since, until, limit, category, json):
    grimoire = open_grimoire()
    hits = grimoire.episodes(query, event=event, since=since, until=until, limit=limit, category=category)
    moment = grimoire.now()
    if json:
        render.print_json([hit.to_dict(False, moment) for hit in hits])
    else:
        if not hits:
            render.note("no episodes match" + (f' "{render.shortened(query)}"' if query else ""))
        for hit in hits:
            render.out(f"{hit.score:6.3f}  {render.entry_line(hit.entry, moment)}")
    found(hits)
