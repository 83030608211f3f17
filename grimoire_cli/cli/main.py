"""The `mem` command line: parse arguments, call the library, render.

No business logic lives here. Each command (in `memory` and `upkeep`)
builds its result through `Grimoire` and renders it either as human text
or as `--json`; domain errors are translated to one `error:` line and
their exit code in `main()`.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module

import typer

from ..core import faults
from ..core.errors import BAD_INPUT, FOUND_PROBLEMS, INTERRUPTED, OK, GrimoireError
from . import render
from .app import APP_SETTINGS, app, opened, runtime

# The command modules (importing one registers its commands), in the order
# `mem --help` lists them, and the commands and groups each holds: a run
# imports only the module of the command it names (a warm `mem query` reads
# no other command's declaration); help, errors and unknown names import all.
# tests/test_cli_help.py checks this table against the registered commands.
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "memory": (
        "add", "supersede", "show", "list", "get", "apply", "query", "context", "import", "export", "stats", "scopes",
    ),
    "kinds": ("remember", "recall", "facts", "tasks", "due", "event", "task"),
    "episodes": ("episode", "episodes"),
    "procedures": ("procedures", "procedure"),
    "forgetting": ("age", "consolidate", "compact", "chat"),
    "learning": ("observe", "tools", "patterns", "recommend", "metrics", "recall-all", "learn", "insights", "correct"),
    "agents": ("capture", "mcp", "agent"),
    "serve": ("serve",),
    "upkeep": ("init", "scan", "validate", "archive", "check", "review", "merge-file", "settle", "merge-fixup", "hooks"),
}  # fmt: skip

try:  # Typer 0.29 carries its own copy of click; older ones use click itself
    from typer._click import exceptions as clicks
except ImportError:  # pragma: no cover - depends on the installed Typer
    from click import exceptions as clicks  # type: ignore[no-redef]


def main(argv: list[str] | None = None) -> int:
    """Run `mem` with `argv`; returns the exit code. Domain errors become one `error:` line."""
    words = sys.argv[1:] if argv is None else argv
    dashed = _dashed_text(words)
    if dashed is not None:
        sys.stderr.write(f"error: {dashed}\n")
        return BAD_INPUT
    try:
        runnable = _app_for(words)  # first: an agent's hook is known by its command's path
        if words and not any(word in ("-h", "--help", "--version") for word in words) and not _agent_hook(words):
            faults.arm(
                runtime().fault
            )  # help and the version never need it; an agent's hook turns a bad one into its warning
        # Not standalone: click's own errors (Usage, "Try…", Error:) come back here to be one `error:` line.
        returned = runnable(args=argv, prog_name="mem", standalone_mode=False)
    except clicks.NoArgsIsHelpError as exc:  # `mem`, `mem task`: the help, as asked
        exc.show()
        return exc.exit_code
    except clicks.UsageError as exc:
        path = exc.ctx.command_path if exc.ctx is not None else _command_path(words)
        sys.stderr.write(f"error: {_one_line(exc.format_message())} (hint: see `{path} --help`)\n")
        return BAD_INPUT
    except clicks.ClickException as exc:  # a parameter's own error (a file click could not open)
        sys.stderr.write(f"error: {_one_line(exc.format_message())}\n")
        return exc.exit_code
    except typer.Abort:  # end of input at a prompt
        sys.stderr.write("error: interrupted\n")
        return INTERRUPTED
    except SystemExit as exc:
        return _ended(exc.code if isinstance(exc.code, int) else OK if exc.code is None else FOUND_PROBLEMS)
    except GrimoireError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return INTERRUPTED
    else:
        # A typer.Exit's code; a command's own return is None
        return _ended(returned if isinstance(returned, int) else OK)
    finally:
        opened.clear()  # the grimoires this run used: the next in-process run starts with none
        runtime.cache_clear()  # and reads its own environment


def _ended(code: int) -> int:
    """A command's own exit: Ctrl-C said (Typer makes it a silent exit 130); after
    success or nothing found, the damaged files a read passed over (after a
    failure, its own error names the file)."""
    if code == INTERRUPTED:
        sys.stderr.write("error: interrupted\n")
    if code in (OK, FOUND_PROBLEMS):
        _warn_skipped()
    return code


def _command_path(argv: list[str]) -> str:
    """`mem task add` for a usage error click raised without its context (an option missing its value)."""
    command, path, words = typer.main.get_command(app), ["mem"], iter(argv)
    for word in words:
        if not hasattr(command, "commands"):
            break  # the command's own words
        if word in ("--config", "--scope"):
            next(words, None)  # the app's options take a value
        elif not word.startswith("-"):
            if word not in command.commands:
                break
            command, path = command.commands[word], [*path, word]
    return " ".join(path)


def _one_line(message: str) -> str:
    """click's message on one line (a bad value's pydantic reason may hold several)."""
    return " ".join(message.split())


def _warn_skipped() -> None:
    """One warning per damaged file a read passed over."""
    seen = set()
    for grimoire in opened:
        for damaged in grimoire.store.skipped:
            if damaged.message not in seen:
                seen.add(damaged.message)
                render.warn(f"skipped a damaged file (run `mem validate`): {damaged.message}")


def _dashed_text(argv: list[str]) -> str | None:
    """The error for text that starts with a dash (`mem add "- a list item"`),
    which click would read as an unknown option; None when there is none.
    A word before `--` with whitespace before any `=` cannot be an option."""
    words = argv[: argv.index("--")] if "--" in argv else argv
    if not any(_looks_like_text(word) for word in words) or any(word in ("-h", "--help") for word in words):
        return None  # the usual case (no such word: nothing to look up), or a call for help
    takes_value = _options_with_values()
    position = 0
    while position < len(argv) and argv[position] != "--":
        word = argv[position]
        if word in takes_value:  # its value is the next word, whatever it holds
            position += 2
            continue
        if _looks_like_text(word) and not (word[:2] in takes_value and not word[2].isspace()):  # not -sVALUE
            import json
            import shlex

            # The same command with the text moved behind `--` (the text itself only when it fits on the line).
            fixed = shlex.join(argv[:position] + argv[position + 1 :] + ["--", word if word.isprintable() else "TEXT"])
            # Only add and supersede read their text from stdin.
            piped = "; or pipe it in with -" if any(w in ("add", "supersede") for w in argv[:position]) else ""
            return f"{json.dumps(word, ensure_ascii=False)} starts with a dash, so it reads as an option (hint: put -- before it: mem {fixed}{piped})"
        position += 1
    return None


def _looks_like_text(word: str) -> bool:
    return word.startswith("-") and any(c.isspace() for c in word.split("=", 1)[0])


def _options_with_values() -> set[str]:
    """Every option name of `mem` and its commands that takes a value."""
    found, commands = set(), [typer.main.get_command(load_all())]
    while commands:
        command = commands.pop()
        commands.extend(getattr(command, "commands", {}).values())
        for param in command.params:
            if (
                param.param_type_name == "option"
                and not getattr(param, "is_flag", False)
                and not getattr(param, "count", False)
            ):
                found.update(param.opts)
    return found


def _app_for(argv: list[str]) -> typer.Typer:
    """The app with only the command being run, its module alone imported:
    Typer builds (and inspects) every registered command on each call; help,
    errors and unknown names get the full app."""
    name = _command_name(argv)
    if name is None or any(a in ("-h", "--help") for a in argv) or not _load_command(name):
        return load_all()
    chosen = [
        info
        for info in app.registered_commands
        if (info.name or getattr(info.callback, "__name__", "").replace("_", "-")) == name
    ]
    groups = [info for info in app.registered_groups if info.name == name]  # mem task, mem agent, ...
    small = typer.Typer(**APP_SETTINGS)
    small.registered_callback = app.registered_callback
    small.registered_commands = chosen
    small.registered_groups = groups
    return small


def _command_name(argv: list[str]) -> str | None:
    """The first word past the app's own options: the command's (or group's) name."""
    position = 0
    while position < len(argv):
        word = argv[position]
        if word in ("--config", "--scope"):
            position += 2
        elif word.startswith("-"):
            position += 1
        else:
            return word
    return None


def _load_command(name: str) -> bool:
    """Import the module of command or group `name`; False when no module holds it."""
    for module, names in COMMAND_MODULES.items():
        if name in names:
            import_module(f"{__package__}.{module}")
            return True
    return False


def load_all() -> typer.Typer:
    """The app with every command, listed in COMMAND_MODULES' order whichever
    module an earlier run in this process imported first."""
    order = list(COMMAND_MODULES)
    for module in order:
        import_module(f"{__package__}.{module}")
    app.registered_commands.sort(key=lambda info: order.index(info.callback.__module__.rsplit(".", 1)[-1]))
    return app


def run() -> None:
    """Console entry point."""
    try:
        sys.exit(main())
    except BrokenPipeError:
        # The reader went away (`mem list | head`): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(OK)


def _agent_hook(words: list[str]) -> bool:
    """`mem agent hook …` or `mem observe --claude-hook`: run by an agent, they never fail its session (`as_hook`)."""
    if "hook" not in words and "--claude-hook" not in words:
        return False  # the usual case, without building the command tree
    path = _command_path(words)
    return path == "mem agent hook" or (path == "mem observe" and "--claude-hook" in words)
