"""The Typer app and what every command shares: options, opening the
grimoire, reading text from stdin. The commands live in `memory` and
`upkeep`; `main` runs them.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from functools import cache, partial
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

from .. import __version__
from ..core.errors import FOUND_PROBLEMS, OK, BadInput, GrimoireError
from ..core.runtime import Runtime
from . import render
from .coercion import install

if TYPE_CHECKING:
    from ..operations.declared import Operation, Param

# Before any command runs: plain parameter values are coerced without pydantic.
install()

APP_SETTINGS: dict[str, Any] = dict(
    name="mem",
    help="Long-term memory for a project and its AI agents, in git-tracked YAML.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help and errors: rich formatting imports rich on every command.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


# Exists because Typer 0.29 ends every argument's help row with its Python type
# (`ID <str>`) and writes a required argument as `{ID}` in usage (braces read as "one of").
class Command(TyperCommand):
    """A Typer command whose help lists arguments without their Python type,
    and whose usage line names a required argument plainly (`ID`). It takes
    `--scope NAME` after its name as `mem --scope NAME` takes it before
    (unless it has a `--scope` of its own, as `query`, or `scoped` is false)."""

    scoped = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.scoped and not any("--scope" in param.opts for param in self.params):
            self.params.append(_scope_param())

    def collect_usage_pieces(self, ctx) -> list[str]:
        return [re.sub(r"^\{(.*)\}(\.\.\.)?$", r"\1\2", piece) for piece in super().collect_usage_pieces(ctx)]

    def format_options(self, ctx, formatter) -> None:
        """The Arguments and Options sections, as Typer's `_typer_format_options` writes them, less that type."""
        rows = help_rows(self, ctx)
        for title, kind in (("Arguments", "argument"), ("Options", "option")):
            if rows[kind]:
                with formatter.section(title):
                    formatter.write_dl(rows[kind])


def help_rows(command, ctx, params=None) -> dict[str, list[tuple[str, str]]]:
    """A command's (name, help) rows by kind, argument or option, as its help lists them (`params`: only those)."""
    rows: dict[str, list[tuple[str, str]]] = {"argument": [], "option": []}
    for param in command.get_params(ctx) if params is None else params:
        record = param.get_help_record(ctx)
        if record is None or param.param_type_name not in rows:
            continue
        name, text = record
        if param.param_type_name == "argument":
            typed = getattr(param, "display_type_rich", None)  # Typer before 0.29 adds no type
            name = name.removesuffix(f" {typed(ctx)}") if typed else name
            if param.nargs != 1 and not name.endswith("..."):
                name += "..."
        rows[param.param_type_name].append((name, text))
    return rows


class Unscoped(Command):
    """A command that works on no grimoire (the merge driver): no `--scope`."""

    scoped = False


def _scope_after(value: str | None) -> None:
    """`mem COMMAND --scope NAME`: the scope `mem --scope NAME COMMAND` sets (the app's callback has run by now)."""
    if value is None:
        return
    if _state["scope"] not in (None, value):
        raise BadInput(f"two scopes given: {_state['scope']} before the command, {value} after it", "give --scope once")
    _state["scope"] = value


@cache
def _scope_param():
    """The command's `--scope` option, built by Typer itself from a declaration (its option classes differ between versions)."""
    probe = typer.Typer()

    @probe.command()
    def scoped(
        scope: str | None = typer.Option(
            None,
            "--scope",
            metavar="NAME",
            expose_value=False,
            callback=_scope_after,
            help="The scope (persona) to work in, as `mem --scope NAME` does (default: MEM_SCOPE, else the config's).",
        ),
    ) -> None:
        """Only declares the option."""

    return typer.main.get_command(probe).params[0]


app = typer.Typer(**APP_SETTINGS)
hooks_app = typer.Typer(help="Install, remove or inspect mem's git hooks.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(hooks_app, name="hooks")
task_app = typer.Typer(
    help="Add, finish or cancel a prospective task (see also `mem tasks`, `mem due`, `mem event`).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(task_app, name="task")
procedure_app = typer.Typer(
    help="Keep runbooks (procedures) and show them as checklists. mem never executes a step: a runbook from git is data, "
    "not code; report how following one went with `mem apply ID --success|--failure`.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(procedure_app, name="procedure")
chat_app = typer.Typer(
    help="Keep the conversation's last messages (a local category of kind chat, gone after its ttl).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(chat_app, name="chat")
agent_app = typer.Typer(
    help="Connect an AI agent (Claude Code) to this grimoire: its hooks and the MCP server.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(agent_app, name="agent")
command = partial(app.command, cls=Command)  # every command of `mem`, with the help above
hooks_command = partial(hooks_app.command, cls=Command)
task_command = partial(task_app.command, cls=Command)
procedure_command = partial(procedure_app.command, cls=Command)
chat_command = partial(chat_app.command, cls=Command)
agent_command = partial(agent_app.command, cls=Command)

JsonOpt = typer.Option(False, "--json", help="Print machine-readable JSON.")  # a declared operation's too


def declared(operation: Operation, register: Callable[..., Any] = command) -> Callable[[Callable[..., None]], Any]:
    """Register the decorated function as the command of a declared operation
    (operations/): Typer reads its parameters from the `__signature__` built
    here, the declaration's, as it would from a `def` with `typer.Option`
    defaults; the function takes them by name (`--json` last, when it has one)."""

    def build(function: Callable[..., None]) -> Any:
        parameters = [_typer_parameter(param) for param in operation.cli_params()]
        if operation.json:
            parameters.append(
                inspect.Parameter("json", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=JsonOpt, annotation=bool)
            )
        function.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        function.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
        function.operation = operation  # type: ignore[attr-defined]  # docs/commands.md is made from it
        return register(operation.command.split()[-1], help=operation.help)(function)  # `task done`: done

    return build


# A declared type as the annotation Typer reads: a text stands for any JSON value on the command line.
_ANNOTATIONS: dict[Any, Any] = {list: list[str], object: str}


def _typer_parameter(param: Param) -> inspect.Parameter:
    annotation = _ANNOTATIONS.get(param.type, param.type)
    if param.default is None:
        annotation = annotation | None
    if param.argument:
        info = typer.Argument(param.default, metavar=param.metavar, help=param.cli_help)
    else:
        info = typer.Option(
            param.default,
            *param.flags,
            metavar=param.metavar,
            help=param.cli_help,
            hidden=param.hidden,
            envvar=param.envvar,
        )
    return inspect.Parameter(param.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=info, annotation=annotation)


_state: dict[str, str | None] = {"config": None, "scope": None}
opened: list = []  # grimoires this invocation used, for the damaged-file warning


def _print_version(value: bool) -> None:
    # Eager, so it runs while the options are parsed: the app's own callback
    # runs only once a command is found, and `mem --version` names none.
    if value:
        render.out(f"mem {__version__}")
        raise typer.Exit(OK)


@app.callback()
def _main(
    config: str | None = typer.Option(
        None, "--config", metavar="PATH", help="Config file (default: .loa.config.yaml found upward; or MEM_CONFIG)."
    ),
    scope: str | None = typer.Option(
        None,
        "--scope",
        metavar="NAME",
        help="The scope (persona) to work in: grimoires/NAME/memory (default: MEM_SCOPE, else the config's).",
    ),
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
    ),
) -> None:
    _state["config"] = config
    _state["scope"] = scope


def config_option() -> str | None:
    return _state["config"]


def scope_option() -> str | None:
    return _state["scope"]


@cache
def runtime() -> Runtime:
    """This invocation's runtime: the environment's, read and checked once
    (a bad `MEM_*` value is one `error:` line; main.py clears it after each run)."""
    return Runtime.from_environment()


def open_grimoire(must_exist: bool = True, given: Runtime | None = None):
    """The grimoire this invocation works on (found like `Grimoire.open`), with
    this invocation's runtime unless `given` another (a hook's session)."""
    from ..api import Grimoire

    used = given if given is not None else runtime()
    found = Grimoire.open(".", _state["config"], scope=_state["scope"], must_exist=must_exist, runtime=used)
    opened.append(found)
    return found


def as_hook(name: str, work: Callable[[], None]) -> None:
    """Run `work` as a hook of git or of an agent: nothing it raises, a bug of
    ours included, may fail the commit or the session; it becomes one line on
    stderr naming the hook, and the exit code stays 0."""
    try:
        work()
    except Exception as exc:
        render.warn(f"{name}: {exc if isinstance(exc, GrimoireError) else f'{type(exc).__name__}: {exc}'}")


def read_text(text: str | None) -> str:
    """The argument, or stdin for '-' (or for nothing, when piped)."""
    if text is None or text == "-":
        if text is None and sys.stdin.isatty():
            raise BadInput("no text given", "pass the memory as an argument, or '-' to read it from stdin")
        raw = sys.stdin.buffer.read()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BadInput("stdin is not UTF-8 text", "re-encode it as UTF-8") from None
    return text


def read_file(file: str, what: str) -> str:
    """A file's UTF-8 text, or stdin's for '-'; `what` names the file the hint asks for."""
    if file == "-":
        return read_text("-")
    try:
        with open(file, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        raise BadInput(f"no such file: {file}", f"give {what}'s path, or '-' to read it from stdin") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(
            f"cannot read {file}: {getattr(exc, 'strerror', None) or exc}", f"give {what} as a readable UTF-8 file"
        ) from None


# `--context K=V` keys (kinds.schema.json's context) and `--param K=V` names (a procedure's {slug}s).
CONTEXT_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,80}\Z")
PARAM_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}\Z")


def contexts(values: list | None) -> dict[str, str]:
    """`--context K=V` values (a task's, an episode's) as a mapping."""
    return pairs(values, "--context", CONTEXT_KEY, "key=value, like table=users")


def pairs(values: list | None, option: str, name: re.Pattern[str], example: str) -> dict[str, str]:
    """Repeated `option K=V` values as a mapping (a later K wins)."""
    out: dict[str, str] = {}
    for pair in values or []:
        key, sep, value = pair.partition("=")
        if not sep or not name.match(key):
            raise BadInput(f"bad {option} {pair!r}", f"write it as {example}")
        out[key] = value
    return out


def found(items) -> None:
    """A search or listing that found nothing exits 1 (docs/reference.md, Exit codes), once it has printed its `[]` or its note."""
    if not items:
        raise typer.Exit(FOUND_PROBLEMS)


def given(**options):
    """The options the user gave (None: left to the library's default)."""
    return {k: v for k, v in options.items() if v is not None}
