"""Commands over episodic memory (docs/agent-personas.md): `mem episode`, `mem episodes`."""

from __future__ import annotations

import typer

from . import render
from .app import JsonOpt, SinceOpt, UntilOpt, command, contexts, found, open_grimoire


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


@command()
def episodes(
    text: str | None = typer.Argument(None, metavar="QUERY", help="What to look for (default: newest first)."),
    event: str | None = typer.Option(None, "--event", metavar="EVENT", help="Only episodes of this event."),
    since: str | None = SinceOpt,
    until: str | None = UntilOpt,
    limit: int = typer.Option(10, "-n", "--limit", metavar="N", help="At most N episodes."),
    category: str | None = typer.Option(None, "-c", "--category", metavar="CAT", help="Only this episode category."),
    json: bool = JsonOpt,
) -> None:
    """Episodes like QUERY (BM25 over event, lesson and context, blended with recency), or the newest."""
    grimoire = open_grimoire()
    hits = grimoire.episodes(text, event=event, since=since, until=until, limit=limit, category=category)
    moment = grimoire.now()
    if json:
        render.print_json([hit.to_dict(False, moment) for hit in hits])
    else:
        if not hits:
            render.note("no episodes match" + (f' "{render.shortened(text)}"' if text else ""))
        for hit in hits:
            render.out(f"{hit.score:6.3f}  {render.entry_line(hit.entry, moment)}")
    found(hits)
