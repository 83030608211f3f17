"""Commands that learn from executions (README: Learning from executions): observe, tools."""

from __future__ import annotations

import json as jsonlib
from typing import Optional

import typer

from ..errors import FOUND_PROBLEMS, BadInput, GrimoireError
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
    if claude_hook:
        # A hook must never fail the agent's session: any problem is one line on stderr, exit 0.
        try:
            _observe_hook(json)
        except GrimoireError as exc:
            render.note(f"mem observe --claude-hook: {exc}")
        return
    grimoire = open_grimoire()
    # JSON allows U+2028 and the like inside a string: a line ends at a newline only.
    lines = [line.removesuffix("\r") for line in read_file(file, "the JSON Lines file").split("\n")]
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


def _observe_hook(json: bool) -> None:
    from ..observations import from_claude_hook

    try:
        payload = jsonlib.loads(read_text("-"))
    except ValueError as exc:
        raise BadInput(f"stdin is not JSON ({exc.args[0]})", "pipe in the JSON Claude Code gives a PostToolUse hook") from None
    record = from_claude_hook(payload)
    if record is None:
        return  # another event: nothing to record
    result = open_grimoire().observe([jsonlib.dumps(record)])
    if json:
        render.print_json(result.to_dict())


@command()
def tools(
    name: Optional[str] = typer.Argument(None, metavar="NAME", help="Only this tool."),
    context: Optional[str] = typer.Option(None, "--context", metavar="C", help="Only runs in this context."),
    json: bool = JsonOpt,
) -> None:
    """Tool memory from the observation log: runs, success rate, durations, retries, per context, common errors."""
    found = open_grimoire().tools(name, context=context)
    if json:
        render.print_json([memory.to_dict() for memory in found])
        return
    if not found:
        render.note("no executions observed yet (see `mem observe`)")
    for memory in found:
        timing = f"mean {memory.mean_ms:.0f} ms, p50 {memory.p50_ms:.0f}, p95 {memory.p95_ms:.0f}" if memory.mean_ms is not None else "no durations"
        render.out(f"{memory.tool}: {memory.executions} runs, {100 * memory.success_rate:.1f}% ok, {timing}, {memory.mean_retries:.2f} retries")
        for label, per in memory.contexts.items():
            render.out(f"  in {label or '(no context)'}: {per['executions']} runs, {100 * per['success_rate']:.1f}% ok")
        for error in memory.errors:
            render.out(f"  error x{error['count']} ({100 * error['share']:.0f}% of failures; {', '.join(error['contexts'])}): {error['error']}")
