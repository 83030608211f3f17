"""What an operation is, declared once: its name, parameters (type, default,
help, CLI flags, JSON Schema keywords) and result. The CLI builds a Typer
command from it (cli/app.py, `command`), the MCP server a tool and its input
schema (integrations/registry.py, `tool`), and docs/commands.md its options
(cli/commands_doc.py).

A parameter may exist on one surface only (`--json` on the CLI, say) and may
say a thing differently to a person and to a model (`cli_help`,
`tool_help`): both are written here, side by side. A value the two surfaces
take in different shapes (`--context K=V` and an object, a file and its
document) is two parameters, one on each surface, next to each other. Every `mem` run imports
this module, so its classes are plain ones with `__slots__` (CONTRIBUTING.md).
"""

from __future__ import annotations

from typing import Any

from ..core.bounds import MAX_COUNT

REQUIRED: Any = ...  # a default that says the CLI needs the value (Typer's `...`)

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array"}


class Param:
    """One parameter. `type` is str, int, float, bool, list (of strings) or
    object (any JSON value); `flags` empty makes it a positional argument on
    the CLI; `required` is the tool's (the CLI's is a `REQUIRED` default)."""

    __slots__ = (
        "cli_help",
        "default",
        "envvar",
        "flags",
        "help",
        "hidden",
        "metavar",
        "name",
        "on_cli",
        "on_tool",
        "required",
        "schema",
        "tool_help",
        "type",
    )

    def __init__(
        self,
        name: str,
        type: Any,
        help: str,
        *flags: str,
        default: Any = None,
        metavar: str | None = None,
        cli_help: str | None = None,
        tool_help: str | None = None,
        schema: dict[str, Any] | None = None,
        cli: bool = True,
        tool: bool = True,
        required: bool | None = None,
        hidden: bool = False,
        envvar: str | None = None,
    ):
        self.name, self.type, self.help, self.flags = name, type, help, flags
        self.hidden = hidden  # an option the CLI takes but its help does not list (a hook's)
        self.envvar = envvar  # the variable the CLI reads the option from when it is not given
        self.default, self.metavar = default, metavar
        self.cli_help, self.tool_help = cli_help or help, tool_help or help
        self.schema = schema or {}
        self.on_cli, self.on_tool = cli, tool
        self.required = default is REQUIRED if required is None else required

    @property
    def argument(self) -> bool:
        """A positional argument on the CLI (no flags)."""
        return not self.flags

    def json_schema(self) -> dict[str, Any]:
        """The tool argument's JSON Schema: type, description, then its keywords."""
        if self.type is object:  # any JSON value, or the shape its schema gives (its `type` first, as the others')
            typed = {"type": self.schema["type"]} if "type" in self.schema else {}
            return {**typed, "description": self.tool_help, **self.schema}
        shown: dict[str, Any] = {"type": _JSON_TYPES[self.type], "description": self.tool_help}
        if self.type is list:
            shown["items"] = {"type": "string"}
        if self.type is int and not self.schema:
            shown.update(minimum=1, maximum=MAX_COUNT)  # the range the library checks (bounds.py)
        return {**shown, **self.schema}


class Operation:
    """One operation: `name` is its tool's, `command` its CLI command's (the
    same unless said); `help` is the command's --help text, `description`
    the tool's (written for a model deciding whether to call it); `result`
    names what it returns (the JSON `mem COMMAND --json` prints). `json`:
    the command takes `--json`. The four hints are the tool's annotations;
    `tool` false: the CLI alone offers it (`command_only`)."""

    __slots__ = (
        "additive",
        "command",
        "description",
        "help",
        "idempotent",
        "json",
        "name",
        "on_tool",
        "open_world",
        "params",
        "read_only",
        "result",
    )

    def __init__(
        self,
        name: str,
        help: str,
        description: str,
        params: tuple[Param, ...],
        result: str,
        *,
        command: str | None = None,
        json: bool = True,
        read_only: bool = False,
        additive: bool = False,
        idempotent: bool = False,
        open_world: bool = False,
        tool: bool = True,
    ):
        self.name, self.command = name, command or name
        self.on_tool = tool
        self.help, self.description, self.params, self.result = help, description, params, result
        self.json = json
        self.read_only, self.additive, self.idempotent, self.open_world = read_only, additive, idempotent, open_world

    def cli_params(self) -> list[Param]:
        return [param for param in self.params if param.on_cli]

    def tool_params(self) -> list[Param]:
        return [param for param in self.params if param.on_tool] if self.on_tool else []

    def input_schema(self) -> dict[str, Any]:
        """The tool's arguments as a JSON Schema object."""
        params = self.tool_params()
        return {
            "type": "object",
            "properties": {param.name: param.json_schema() for param in params},
            "required": [param.name for param in params if param.required],
            "additionalProperties": False,
        }


def command_only(command: str, help: str, params: tuple[Param, ...], result: str, *, json: bool = True) -> Operation:
    """An operation the CLI alone offers (`mem init`, the git hooks' commands):
    no MCP tool, so no description for a model; `result` names what `--json`
    prints ("" without one)."""
    return Operation(
        command.replace(" ", "_").replace("-", "_"), help, "", params, result, command=command, json=json, tool=False
    )
