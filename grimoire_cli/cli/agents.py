"""Commands through which agents and their tools reach the grimoire by
themselves: capture (commit trailers; README: Git hooks and pre-commit),
mcp (the MCP server; README: Agents)."""

from __future__ import annotations

import typer

from ..errors import GrimoireError
from . import render
from .app import JsonOpt, command, config_option, open_grimoire, scope_option


@command()
def capture(
    commit: str = typer.Option("HEAD", "--commit", metavar="REV", help="The commit whose trailers to capture."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be captured; write nothing."),
    hook: bool = typer.Option(False, "--hook", hidden=True, help="Run as the post-commit hook: never fail the commit."),
    json: bool = JsonOpt,
) -> None:
    """Decision:, Learning: and Error: trailers of a commit message as memories (auto_capture flags)."""
    try:
        result = open_grimoire().capture(commit, dry_run=dry_run)
    except Exception as exc:  # noqa: BLE001 - as a hook, nothing may fail the commit, a bug of ours included
        if not hook:
            raise
        render.warn(f"mem capture: {exc if isinstance(exc, GrimoireError) else type(exc).__name__ + ': ' + str(exc)}")  # the commit stands
        return
    if json:
        render.print_json(result.to_dict())
        return
    would = "would capture" if dry_run else "captured"
    for entry in result.written:
        render.out(f"{would} {entry.id} ({entry.category}) from {result.commit[:12]}: {entry.summary}")
    for trailer, reason in result.skipped:
        if not (hook and reason == "captured before"):
            render.warn(f"not captured: {trailer} ({reason})")


@command()
def mcp() -> None:
    """Serve this grimoire to an agent over MCP on stdin/stdout (needs the extra grimoire-cli[mcp])."""
    from ..api import Grimoire
    from ..integrations.mcp_server import serve

    config, scope = config_option(), scope_option()
    # Found anew for every request (mcp_server.Opener): the server sees what other processes wrote since the last one.
    serve(lambda: Grimoire.open(".", config, scope=scope))
