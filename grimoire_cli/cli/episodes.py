"""Commands over episodic memory (docs/agent-personas.md): `mem episode`, `mem episodes`."""

from __future__ import annotations

from ..operations import kinds as operations
from . import render
from .app import contexts, declared, found, open_grimoire


@declared(operations.EPISODE)
def episode(event, context_pairs, context_json, learned, outcome, category, tags, json):
    from ..kinds.episodes import context_json as parse_json

    merged = {**(parse_json(context_json) if context_json is not None else {}), **contexts(context_pairs)}
    grimoire = open_grimoire()
    entry = grimoire.episodes.add(
        event, context=merged, learned=learned, outcome=outcome, category=category, tags=tags or ()
    )
    if json:
        render.print_json(entry.view(grimoire.now()))
    else:
        render.out(entry.id)


@declared(operations.EPISODES)
def episodes(query, event, since, until, limit, category, json):
    grimoire = open_grimoire()
    hits = grimoire.episodes.list(query, event=event, since=since, until=until, limit=limit, category=category)
    moment = grimoire.now()
    if json:
        render.print_json([hit.to_dict(False, moment) for hit in hits])
    else:
        if not hits:
            render.note("no episodes match" + (f' "{render.shortened(query)}"' if query else ""))
        for hit in hits:
            render.out(f"{hit.score:6.3f}  {render.entry_line(hit.entry, moment)}")
    found(hits)
