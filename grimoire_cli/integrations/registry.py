"""What a call is (name, description, JSON Schema of its arguments, the
function that runs it) and the table they register in: `tool` registers a
declared operation's (operations/). `calls` puts the table together."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import BadInput
from ..operations.declared import Operation


@dataclass(frozen=True)
class Call:
    """One call: its name, what it does, its arguments' schema, and the
    function that runs it on an open grimoire."""

    name: str
    description: str
    schema: dict[str, Any]
    run: Callable[..., Any] = field(repr=False)
    read_only: bool = False
    additive: bool = False  # it only adds: no memory is changed, replaced, ended or archived
    idempotent: bool = False  # the same arguments again change nothing more
    open_world: bool = False  # it reaches outside the grimoire (an external command)

    def hints(self) -> dict[str, bool]:
        """The MCP tool annotations' four hints. A write is destructive unless
        it says it only adds: the spec's default, the side a new call errs on."""
        return {
            "read_only": self.read_only,
            "destructive": not (self.read_only or self.additive),
            "idempotent": self.read_only or self.idempotent,
            "open_world": self.open_world,
        }


CALLS: dict[str, Call] = {}


def tool(operation: Operation) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the tool of a declared operation:
    its name, description, input schema and hints are the declaration's."""

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        CALLS[operation.name] = Call(
            operation.name,
            operation.description,
            operation.input_schema(),
            function,
            operation.read_only,
            operation.additive,
            operation.idempotent,
            operation.open_world,
        )
        return function

    return register


def check_arguments(spec: Call, arguments: dict[str, Any]) -> None:
    """Refuse arguments outside the call's schema, naming the worst problem
    on one line (a value it quotes is cut short: it may be long, or private)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    from ..core.schemas import size_message

    error = best_match(Draft202012Validator(spec.schema).iter_errors(arguments))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        too_large = (
            size_message(error.instance, error.schema)
            if error.validator in ("maxLength", "maxItems", "maxProperties")
            else None
        )
        message = too_large or " ".join(error.message.split())
        message = message if len(message) <= 160 else message[:157] + "..."
        raise BadInput(
            f"bad arguments for {spec.name}: {where + ': ' if where else ''}{message}",
            f"see the {spec.name} tool's input schema",
        )
