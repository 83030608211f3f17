"""Commands over the kinds of memory (README: Kinds): keyed facts."""

from __future__ import annotations

import json as jsonlib
import sys
from typing import List, Optional

import typer

from ..errors import BadInput
from . import render
from .app import JsonOpt, command, open_grimoire


@command()
def remember(
    key: str = typer.Argument(..., metavar="KEY", help="Dotted lowercase key, like db.users.schema."),
    value: str = typer.Argument(..., metavar="VALUE|-", help="The value as text; '-' reads a JSON value from stdin."),
    ttl: Optional[str] = typer.Option(None, "--ttl", metavar="TTL", help="How long it holds: '10m', '12h', '30d' or 'permanent'."),
    category: Optional[str] = typer.Option(None, "-c", "--category", metavar="CAT", help="Category (default: semantic, else fact)."),
    json: bool = JsonOpt,
) -> None:
    """Keep a value under a key; a new value supersedes the old, the same value writes nothing."""
    grimoire = open_grimoire()
    result = grimoire.remember(key, _json_stdin() if value == "-" else value, ttl=ttl, category=category)
    if json:
        render.print_json(result.to_dict(grimoire.now()))
        return
    render.out(result.entry.id)
    if not result.written:
        render.note(f"unchanged: {key} already holds this value ({result.entry.id}); nothing written")


def _json_stdin():
    raw = sys.stdin.read()
    try:
        return jsonlib.loads(raw)
    except ValueError as exc:
        raise BadInput(f"stdin is not a JSON value ({exc.args[0]})", 'pipe JSON in, e.g. echo \'{"rows": 12}\' | mem remember KEY -') from None


@command()
def recall(key: str = typer.Argument(..., metavar="KEY", help="The key."), json: bool = JsonOpt) -> None:
    """Print the value under a key (exit 1 when missing or expired)."""
    from ..kinds.facts import value_of

    grimoire = open_grimoire()
    entry = grimoire.recall_entry(key)
    value = value_of(entry)
    if json:
        render.print_json({"key": key, "value": value, "id": entry.id, "category": entry.category,
                           "expires_at": entry.data.get("expires_at")})
    else:
        render.out(value if isinstance(value, str) else jsonlib.dumps(value, ensure_ascii=False))


@command()
def facts(
    pattern: Optional[str] = typer.Argument(None, metavar="PATTERN", help="Glob over keys, like 'db.*' (default: every key)."),
    category: Optional[List[str]] = typer.Option(None, "-c", "--category", metavar="CAT", help="Only these categories (repeatable)."),
    json: bool = JsonOpt,
) -> None:
    """List the keys of active facts, with their values."""
    from ..kinds.facts import value_of

    grimoire = open_grimoire()
    found = grimoire.facts(pattern, categories=category)
    if json:
        moment = grimoire.now()
        render.print_json([{**entry.view(moment), "value": value_of(entry)} for entry in found])
        return
    for entry in found:
        value = value_of(entry)
        text = value if isinstance(value, str) else jsonlib.dumps(value, ensure_ascii=False)
        expiry = f"  (until {entry.data['expires_at']})" if entry.data.get("expires_at") else ""
        render.out(f"{entry.key} = {' '.join(text.split())[:100]}{expiry}")
