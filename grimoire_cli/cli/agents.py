"""Commands through which agents and their tools reach the grimoire by
themselves: capture (commit trailers; docs/project-memory.md),
mcp (the MCP server) and agent (Claude Code's hooks; docs/agents.md)."""

from __future__ import annotations

from ..operations import agents as operations
from . import render
from .app import (
    agent_command,
    as_hook,
    config_option,
    declared,
    open_grimoire,
    read_text,
    runtime,
    scope_option,
)


@declared(operations.CAPTURE)
def capture(commit, dry_run, hook, json):
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


@declared(operations.MCP)
def mcp():
    from ..api import Grimoire
    from ..integrations.mcp_server import serve

    config, scope, started = config_option(), scope_option(), runtime()
    # Found anew for every request (mcp_server.Opener): the server sees what other processes wrote since the last one.
    serve(lambda: Grimoire.open(".", config, scope=scope, runtime=started))


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


@declared(operations.AGENT_INSTALL, agent_command)
def agent_install(agent, local, json):
    _agent_files("install", agent, json, local)


@declared(operations.AGENT_UNINSTALL, agent_command)
def agent_uninstall(agent, local, json):
    _agent_files("uninstall", agent, json, local)


@declared(operations.AGENT_STATUS, agent_command)
def agent_status(agent, local, json):
    _agent_files("status", agent, json, local)


@declared(operations.AGENT_HOOK, agent_command)
def agent_hook(event):
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
