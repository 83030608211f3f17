"""`mem serve`: the local web view of the grimoire (docs/web.md)."""

from __future__ import annotations

from ..operations import agents as operations
from . import render
from .app import config_option, declared, runtime, scope_option


@declared(operations.SERVE)
def serve(host, port, write, token):
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
