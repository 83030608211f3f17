"""Each operation declared once (grimoire_cli/operations/, issue 36 item 4):
its command's parameters and its MCP tool's schema are the declaration's,
and the generated command still takes the plain-coercion shortcut."""

from __future__ import annotations

import typer
from conftest import mem

from grimoire_cli.cli.commands_doc import commands
from grimoire_cli.integrations.calls import CALLS
from grimoire_cli.operations import agents, kinds, learning, lifecycle, memory, upkeep
from grimoire_cli.operations.declared import Operation

DECLARED = [
    value
    for module in (memory, kinds, learning, lifecycle, agents, upkeep)
    for value in vars(module).values()
    if isinstance(value, Operation)
]
TOOLS = [operation for operation in DECLARED if operation.on_tool]
# The commands the CLI alone offers, declared too (operations.declared.command_only).
COMMAND_ONLY = {
    "init", "scan", "validate", "archive", "check", "review", "hooks install", "hooks uninstall", "hooks status",
    "merge-file", "settle", "merge-fixup", "import", "export", "scopes", "compact", "capture", "mcp", "serve",
    "agent install", "agent uninstall", "agent status", "agent hook",
}  # fmt: skip


def _declared_commands():
    return {path: command for path, command in commands() if getattr(command.callback, "operation", None)}


def test_the_memory_operations_are_declared_commands_and_tools():
    assert {op.name for op in TOOLS} == {
        "save", "supersede", "query", "context", "show", "list", "get", "apply", "stats", "remember", "recall", "facts",
        "episodes", "procedures", "tasks_pending", "tasks_due", "task_done", "task_cancel", "event", "chat_add",
        "chat_recent", "tools", "recommend", "patterns", "metrics", "learn", "insights", "correct",
        "episode", "task_schedule", "procedure_add", "procedure", "observe", "recall_all", "consolidate", "age",
    }  # fmt: skip
    assert {command.callback.operation.name for command in _declared_commands().values()} >= {
        op.name for op in DECLARED
    }


def test_every_tool_is_a_declared_operations():
    assert set(CALLS) == {op.name for op in TOOLS}


def test_every_command_is_a_declared_operations():
    assert [path for path, command in commands() if not getattr(command.callback, "operation", None)] == []


def test_the_command_only_operations_are_declared_commands_without_a_tool():
    command_only = {op.command for op in DECLARED if not op.on_tool}
    assert command_only == COMMAND_ONLY
    assert {" ".join(path.split()[1:]) for path in _declared_commands()} >= command_only
    assert not command_only & set(CALLS) and all(op.tool_params() == [] for op in DECLARED if not op.on_tool)


def test_a_command_function_takes_its_declarations_parameters_in_order():
    for path, command in _declared_commands().items():
        operation, function = command.callback.operation, command.callback.__wrapped__
        taken = function.__code__.co_varnames[: function.__code__.co_argcount]
        assert list(taken) == [p.name for p in operation.cli_params()] + ["json"] * operation.json, path


def test_a_tool_is_its_operations_name_description_schema_and_hints():
    for operation in TOOLS:
        call = CALLS[operation.name]
        assert (call.description, call.schema) == (operation.description, operation.input_schema())
        assert (call.read_only, call.additive, call.idempotent) == (
            operation.read_only,
            operation.additive,
            operation.idempotent,
        )
        assert all(p.on_tool == (p.name in call.schema["properties"]) for p in operation.params), operation.name


def _flowed(text: str) -> str:
    """Help text as one line, a word click broke at its hyphen (`pre-` / `commit`) joined again."""
    return " ".join(text.split()).replace("- ", "-")


def test_the_help_shows_each_declared_option_with_its_help(repo):
    for operation in DECLARED:
        shown = _flowed(mem(*operation.command.split(), "-h").out)
        assert _flowed(operation.help) in shown, operation.command
        for param in operation.cli_params():
            if param.hidden:  # check --hook: not in the help, by design
                assert f"{param.flags[0]} " not in shown, (operation.command, param.name)
                continue
            name = param.metavar if param.argument else ", ".join(param.flags)
            assert f"{name}" in shown and _flowed(param.cli_help) in shown, (operation.command, param.name)


def test_a_declared_command_takes_the_plain_coercion_shortcut():
    from grimoire_cli.cli.main import load_all

    query = typer.main.get_command(load_all()).commands["query"]
    params = {param.name: param for param in query.params}
    for name in ("text", "categories", "min_confidence", "limit", "explain"):
        params[name]._runtime_param = None
        assert type(params[name].get_runtime_param()).__name__ == "Plain", name


def test_a_cli_only_parameter_is_not_in_the_tools_schema():
    assert "file" not in CALLS["save"].schema["properties"] and "content" in CALLS["save"].schema["required"]
    assert "failure" not in CALLS["apply"].schema["properties"] and CALLS["apply"].schema["required"] == [
        "id",
        "success",
    ]
    result = mem("apply", "-h")
    assert "--failure" in result.out and "--success" in result.out


def test_typer_is_pinned_to_the_minor_version_the_coercion_shortcut_is_tested_against():
    """tests/test_coercion.py checks cli/coercion.py against the installed Typer; pyproject admits only its minor version."""
    import re
    from importlib.metadata import version

    from conftest import ROOT

    pinned = re.search(r'"typer>=(\d+)\.(\d+),<(\d+)\.(\d+)"', (ROOT / "pyproject.toml").read_text()).groups()
    installed = version("typer").split(".")[:2]
    assert pinned[:2] == tuple(installed) and pinned[2:] == (installed[0], str(int(installed[1]) + 1))
