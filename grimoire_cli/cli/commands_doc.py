"""docs/commands.md from the commands themselves: `python -m
grimoire_cli.cli.commands_doc` (`make commands-doc`) rewrites it, and
tests/test_commands_doc.py fails when the page differs from what this makes.

The page is the hand-written preamble, then one `## mem COMMAND` section per
command in `mem --help`'s order. Each section opens with a generated block
(usage, help, a table of its arguments and options) and goes on with prose
written by hand, which a rewrite keeps. A command declared as an operation
(grimoire_cli/operations/) with an MCP tool has its block made from the
declaration, with the tool's arguments and result; any other (a command-only
declaration too), from its Typer (click) command.
A section whose command is gone is dropped; a new command gets its block.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..core.errors import FOUND_PROBLEMS, OK
from .app import _scope_param, help_rows

if TYPE_CHECKING:
    from ..operations.declared import Operation, Param

PAGE = Path(__file__).resolve().parents[2] / "docs" / "commands.md"
OPEN = "<!-- made by `make commands-doc` from the command or its operation (grimoire_cli/operations/): edit those -->"
CLOSE = "<!-- end of the generated block -->"
_HEADING = re.compile(r"^## (mem(?: [\w-]+)+)\s*$", re.MULTILINE)


def commands() -> list[tuple[str, Any]]:
    """Every runnable command as (`mem task add`, its click command), in `mem --help`'s order."""
    from .main import load_all

    found: list[tuple[str, Any]] = []

    def walk(command: Any, path: str) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands is None:
            found.append((path, command))
            return
        for name, sub in subcommands.items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(load_all()), "mem")
    return found


def page(current: str) -> str:
    """The page `current` should be: its preamble and prose kept, every block made anew."""
    preamble, prose = _split(current)
    sections = [preamble.rstrip("\n") + "\n"]
    for path, command in commands():
        kept = prose.get(path, "").strip("\n")
        sections.append(f"## {path}\n\n{OPEN}\n{block(path, command)}\n{CLOSE}\n" + (f"\n{kept}\n" if kept else ""))
    return "\n".join(sections)


def _split(text: str) -> tuple[str, dict[str, str]]:
    """The preamble, and the hand-written prose of each section by command path."""
    headings = list(_HEADING.finditer(text))
    preamble = text[: headings[0].start()] if headings else text
    prose = {}
    for number, heading in enumerate(headings):
        end = headings[number + 1].start() if number + 1 < len(headings) else len(text)
        body = text[heading.end() : end]
        body = body.split(CLOSE, 1)[1] if CLOSE in body else body
        prose[heading.group(1)] = body
    return preamble, prose


def block(path: str, command: Any) -> str:
    """The generated part of a command's section."""
    declared = getattr(command.callback, "operation", None)
    operation = declared if declared is not None and declared.on_tool else None  # a command-only one: its click rows
    rows = _declared_rows(operation) if operation is not None else _click_rows(command)
    lines = [f"`{path} {_usage(command)}`".rstrip("` ") + "`", "", " ".join((command.help or "").split())]
    if rows:
        header = (
            "| argument or option | | MCP argument |\n|---|---|---|"
            if operation
            else "| argument or option | |\n|---|---|"
        )
        lines += ["", header, *("| " + " | ".join(row) + " |" for row in rows)]
    if operation is not None:
        lines += ["", f"MCP tool `{operation.name}`; returns {operation.result}."]
    return "\n".join(lines)


def _shown(params: list[Any]) -> list[Any]:
    """The parameters a section lists: not `--help` nor the `--scope` every command takes (the preamble says so)."""
    return [param for param in params if param is not _scope_param() and param.name != "help"]


def _usage(command: Any) -> str:
    """The synopsis: each argument, then each option with its first name and value (`[-c CAT]...`)."""
    pieces = []
    for param in _shown(command.params):
        if param.param_type_name == "argument":
            name = param.metavar or param.name.upper()
            repeated = "..." if param.nargs != 1 else ""
            pieces.append(f"{name}{repeated}" if param.required else f"[{name}]{repeated}")
        else:
            value = "" if param.is_flag else f" {param.metavar or param.name.upper()}"
            pieces.append(f"[{param.opts[0]}{value}]" + ("..." if param.multiple else ""))
    return " ".join(pieces)


def _declared_rows(operation: Operation) -> list[list[str]]:
    rows = [
        [_code(_names(param)), _cell(param.cli_help + _default(param)), _code(param.name) if param.on_tool else ""]
        for param in operation.cli_params()
    ]
    if operation.json:
        rows.append([_code("--json"), "Print machine-readable JSON.", ""])
    rows += [["", _cell(param.tool_help), _code(param.name)] for param in operation.tool_params() if not param.on_cli]
    return rows


def _names(param: Param) -> str:
    if param.argument:
        return param.metavar or param.name.upper()
    return ", ".join(param.flags) + (f" {param.metavar}" if param.metavar else "")


def _default(param: Param) -> str:
    shown = param.default not in (None, False, ...) and param.type is not bool
    return f" (default: {param.default})" if shown else ""


def _click_rows(command: Any) -> list[list[str]]:
    context = command.context_class(command, info_name=command.name)
    rows = help_rows(command, context, _shown(command.get_params(context)))
    return [[_code(name), _cell(text)] for name, text in rows["argument"] + rows["option"]]


def _code(text: str) -> str:
    return f"`{_cell(text)}`" if text else ""


def _cell(text: str) -> str:
    """Text for a table cell: one line, its pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def main() -> int:
    """Rewrite docs/commands.md; with `--check`, only say whether it is up to date (exit 1 when not)."""
    current = PAGE.read_text(encoding="utf-8")
    wanted = page(current)
    if "--check" in sys.argv[1:]:
        if wanted != current:
            sys.stderr.write(f"error: {PAGE} is out of date (hint: run `make commands-doc`)\n")
            return FOUND_PROBLEMS
        return OK
    if wanted != current:
        PAGE.write_text(wanted, encoding="utf-8")
        sys.stdout.write(f"rewrote {PAGE}\n")
    return OK


if __name__ == "__main__":
    sys.exit(main())
