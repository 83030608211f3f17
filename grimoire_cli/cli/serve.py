"""`mem serve`: the local web view of the grimoire (docs/web.md)."""

from __future__ import annotations

import typer

from . import render
from .app import command, config_option, runtime, scope_option


@command()
def serve(
    host: str = typer.Option(
        "127.0.0.1", "--host", metavar="ADDR", help="The address to listen on (loopback only unless --token)."
    ),
    port: int = typer.Option(8377, "--port", metavar="N", help="The port to listen on (0: a free one)."),
    write: bool = typer.Option(
        False, "--write", help="Allow changes: record an outcome, archive, supersede, mark a task done (CSRF-checked)."
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        metavar="T",
        envvar="MEM_SERVE_TOKEN",
        help="Require this token (bearer header or the login form); needed off loopback; with it, MCP over HTTP at /mcp.",
    ),
) -> None:
    """Serve a web view of this grimoire: overview, search, entries, archive, review, tiers, learning (needs grimoire-cli[web])."""
    from ..api import Grimoire
    from ..integrations.web.server import serve

    config, scope, started = config_option(), scope_option(), runtime()
    mode = "writes on" if write else "read-only"
    serve(
        lambda: Grimoire.open(".", config, scope=scope, runtime=started),
        host=host,
        port=port,
        write=write,
        token=token,
        bound=lambda url: render.note(f"serving {url} ({mode}); Ctrl-C stops it"),
    )
