"""Commands that learn from executions (README: Learning from executions): observe."""

from __future__ import annotations

import json as jsonlib

import typer

from ..errors import FOUND_PROBLEMS, BadInput
from . import render
from .app import JsonOpt, command, open_grimoire, read_file, read_text


@command()
def observe(
    file: str = typer.Argument("-", metavar="FILE|-", help="Execution records, JSON Lines; '-' reads stdin."),
    claude_hook: bool = typer.Option(False, "--claude-hook", help="Read one Claude Code PostToolUse payload on stdin: a one-step record."),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Append the valid records, report the rest."),
    json: bool = JsonOpt,
) -> None:
    """Append execution records to the local observation log (checked, secrets redacted)."""
    grimoire = open_grimoire()
    if claude_hook:
        from ..observations import from_claude_hook

        try:
            payload = jsonlib.loads(read_text("-"))
        except ValueError as exc:
            raise BadInput(f"stdin is not JSON ({exc.args[0]})", "pipe in the JSON Claude Code gives a PostToolUse hook") from None
        lines = [jsonlib.dumps(from_claude_hook(payload))]
    else:
        lines = read_file(file, "the JSON Lines file").splitlines()
    result = grimoire.observe(lines, skip_invalid=skip_invalid)
    if json:
        render.print_json(result.to_dict())
    else:
        render.out(f"observed {render.count(result.records, 'record', 'records')} ({render.count(result.steps, 'step', 'steps')})"
                   + (f", {result.redacted} redacted (secrets or personal data)" if result.redacted else ""))
        for number, message in result.rejected:
            render.warn(f"line {number}: {message}")
    if result.rejected:
        raise typer.Exit(FOUND_PROBLEMS)
