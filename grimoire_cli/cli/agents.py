"""Commands through which agents and their tools reach the grimoire by
themselves: capture (commit trailers; docs/project-memory.md),
mcp (the MCP server) and agent (Claude Code's hooks; docs/agents.md)."""

from __future__ import annotations

import typer

from . import render
from .app import (
    JsonOpt,
    agent_command,
    as_hook,
    command,
    config_option,
    open_grimoire,
    read_text,
    runtime,
    scope_option,
)


@command()
def capture(
    commit: str = typer.Option("HEAD", "--commit", metavar="REV", help="The commit whose trailers to capture."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be captured; write nothing."),
    hook: bool = typer.Option(False, "--hook", hidden=True, help="Run as the post-commit hook: never fail the commit."),
    json: bool = JsonOpt,
) -> None:
    """Decision:, Learning: and Error: trailers of a commit message as memories (auto_capture flags)."""
    found = []
    if hook:  # the commit stands whatever happens
        as_hook("mem capture", lambda: found.append(open_grimoire().capture(commit, dry_run=dry_run)))
        if not found:
            return
    result = found[0] if found else open_grimoire().capture(commit, dry_run=dry_run)
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

    config, scope, started = config_option(), scope_option(), runtime()
    # Found anew for every request (mcp_server.Opener): the server sees what other processes wrote since the last one.
    serve(lambda: Grimoire.open(".", config, scope=scope, runtime=started))


AgentArg = typer.Argument(..., metavar="AGENT", help="The agent: claude (Claude Code).")
LocalOpt = typer.Option(
    False,
    "--local",
    help="This clone only: .claude/settings.local.json (git-ignored), no MCP server in the shared .mcp.json.",
)


def _agent_files(action: str, agent: str, json: bool, local: bool) -> None:
    from ..integrations import claude_settings

    claude_settings.check_agent(agent)
    result = getattr(claude_settings, action)(open_grimoire().config.root, local=local)
    for warning in result.warnings:
        render.warn(warning)
    if json:
        render.print_json(result.to_dict())
        return
    verb = {"install": "added", "uninstall": "removed"}.get(action)
    for item in result.changed:
        render.out(f"{verb} {item}")
    for item, state in result.status.items():
        render.out(f"{item}: {state}")
    if action == "install" and result.kept:
        render.note(f"already there: {', '.join(result.kept)}")
    for note in result.notes:
        render.note(note)


@agent_command("install")
def agent_install(agent: str = AgentArg, local: bool = LocalOpt, json: bool = JsonOpt) -> None:
    """Merge mem's hooks into .claude/settings.json and its MCP server into .mcp.json; nothing else changes."""
    _agent_files("install", agent, json, local)


@agent_command("uninstall")
def agent_uninstall(agent: str = AgentArg, local: bool = LocalOpt, json: bool = JsonOpt) -> None:
    """Remove exactly what `mem agent install` adds, and nothing else."""
    _agent_files("uninstall", agent, json, local)


@agent_command("status")
def agent_status(agent: str = AgentArg, local: bool = LocalOpt, json: bool = JsonOpt) -> None:
    """Which of mem's hooks and server are in the agent's settings."""
    _agent_files("status", agent, json, local)


@agent_command("hook")
def agent_hook(
    event: str = typer.Argument(..., metavar="EVENT", help="session-start, pre-compact, session-end or post-tool-use."),
) -> None:
    """Run as a Claude Code hook: read its JSON on stdin. Never fails the session: a problem is one line on stderr."""
    from ..integrations import claude_hooks

    def work() -> None:
        payload = claude_hooks.read_payload(read_text("-"))
        session = claude_hooks.session_runtime(payload, runtime())
        out, note = claude_hooks.run(event, payload, lambda: open_grimoire(given=session))
        if out is not None:
            render.out(out)
        if note is not None:
            render.note(f"mem agent hook {event}: {note}")

    as_hook(f"mem agent hook {event}", work)
