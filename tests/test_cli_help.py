"""`mem`'s help reads well (issue 21, item 9), and text that starts with a
dash gets a hint instead of click's `No such option: -`."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

import pytest
from conftest import mem

from grimoire_cli.core.errors import BAD_INPUT

PYTHON_TYPES = ("<str>", "<int>", "<float>", "<bool>", "<list[", "<path>")


def _commands() -> list[list[str]]:
    """Every command `mem --help` lists, with the sub-commands of a group (`hooks install`)."""
    found = []
    for name in _listed(mem("--help").out):
        group = mem(name, "--help").out
        found.extend([[name, sub] for sub in _listed(group)] if "\nCommands:" in group else [[name]])
    return found


def _listed(help_text: str) -> list[str]:
    section = help_text.split("\nCommands:\n", 1)[1]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ") and not line.startswith("   ")]


def _rows(help_text: str, title: str) -> list[tuple[str, str]]:
    """(name, help) of each row of a help section; the help may sit on the next lines."""
    if f"\n{title}:\n" not in help_text:
        return []
    lines = help_text.split(f"\n{title}:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    rows = []
    for line in lines:
        if line.startswith("  ") and not line.startswith("   "):  # a row; deeper lines continue its help
            name, _, text = line.strip().partition("  ")
            rows.append((name, text.strip()))
        elif rows:
            rows[-1] = (rows[-1][0], f"{rows[-1][1]} {line.strip()}".strip())
    return rows


def test_every_command_has_readable_help():
    commands = _commands()
    assert ["add"] in commands and ["query"] in commands and ["hooks", "install"] in commands and len(commands) > 20
    problems = []
    for words in commands:
        result = mem(*words, "-h")
        where = f"mem {' '.join(words)} -h"
        if result.code != 0:
            problems.append(f"{where}: exit {result.code}: {result.err}")
            continue
        problems += [f"{where} shows {shown!r}" for shown in (*PYTHON_TYPES, "[[") if shown in result.out]
        problems += [f"{where} usage has braces" for line in result.out.splitlines()[:1] if "{" in line]
        options = _rows(result.out, "Options")
        assert options, where  # every command has at least -h
        for title, rows in (("Options", options), ("Arguments", _rows(result.out, "Arguments"))):
            problems += [f"{where}: {title} row {name!r} has no help" for name, text in rows if not text]
    assert problems == []


def test_query_help_says_what_its_filters_do():
    rows = dict(_rows(mem("query", "-h").out, "Options"))
    assert rows["-c, --category CAT"] == "Only these categories (repeatable)."
    assert rows["-t, --tag, --topic TAG"] == (
        "Only entries with all these tags (repeatable); a topic is a tag, `herm*` any tag starting herm."
    )
    assert rows["--tier hot|long|all"].startswith("Only hot memories (what `mem context` injects)")
    assert rows["--include-expired"] == "Also rank expired memories."
    assert rows["--include-superseded"] == "Also rank memories a newer one replaced."


def test_init_help_names_every_preset():
    from grimoire_cli.kinds.presets import PRESETS

    text = dict(_rows(mem("init", "-h").out, "Options"))["--preset NAME"]
    assert text == f"Also add a memory design's categories and settings to the config: {', '.join(PRESETS)}."


def test_arguments_show_plain_names():
    archive = mem("archive", "-h").out
    assert archive.startswith("Usage: mem archive [OPTIONS] [ID]...\n")
    assert _rows(archive, "Arguments") == [("ID...", "Archive these (default: every expired or ineffective entry).")]
    assert mem("validate", "-h").out.startswith("Usage: mem validate [OPTIONS] [PATH]...\n")
    assert mem("merge-fixup", "-h").out.startswith("Usage: mem merge-fixup [OPTIONS] HOOK [ARG]...\n")
    assert mem("show", "-h").out.startswith("Usage: mem show [OPTIONS] ID\n")  # not {ID}: braces read as "one of"
    add = mem("add", "-h").out
    assert add.startswith("Usage: mem add [OPTIONS] [TEXT|-]\n")
    assert _rows(add, "Arguments")[0][0] == "TEXT|-"
    assert ("--confidence F", "0.0-1.0; defaults to the category's floor.") in _rows(add, "Options")


@pytest.mark.parametrize(
    "args",
    [["add", "- we keep a list item"], ["add", "-c", "fact", "-v is verbose"]],
    ids=["list-item", "after-options"],
)
def test_text_starting_with_a_dash_gets_a_hint_that_works(repo, args):
    text = args[-1]
    refused = mem(*args)
    assert refused.code == BAD_INPUT and refused.out == ""
    assert refused.err.count("\n") == 1 and refused.err.startswith(f'error: "{text}" starts with a dash'), refused.err
    assert " -- " in refused.err and "pipe it in with -)" in refused.err
    assert mem("list").out == ""  # nothing was written
    # The hint's command, run as it is, stores the text.
    hinted = shlex.split(re.search(r"hint: put -- before it: mem (.*); or pipe", refused.err).group(1))
    assert hinted == [*args[:-1], "--", text]
    added = mem(*hinted)
    assert added.code == 0, added.err
    assert json.loads(mem("show", added.out.strip(), "--json").out)["content"] == text


def test_only_words_that_cannot_be_options_are_refused(repo):
    refused = mem("add", "-v is verbose", "-c", "fact")
    assert refused.code == BAD_INPUT and "starts with a dash" in refused.err, refused.err
    # Whitespace after `=` is an option's value; a dash after a valued option is that value.
    summary = mem("add", "-c", "fact", "--summary=Short summary", "the cache warms in ninety seconds")
    assert summary.code == 0, summary.err
    assert json.loads(mem("show", summary.out.strip(), "--json").out)["summary"] == "Short summary"
    dashed = mem("add", "-c", "fact", "-s", "- a dashed summary", "deploys pause during the freeze window")
    assert dashed.code == 0, dashed.err
    assert json.loads(mem("show", dashed.out.strip(), "--json").out)["summary"] == "- a dashed summary"


@pytest.mark.parametrize(
    "args, message, hint",
    [
        (["add", "x", "--confidence", "abc"], "Invalid value for '--confidence'", "mem add --help"),
        (["add", "x", "--bogus"], "No such option: --bogus", "mem add --help"),
        (["nosuch"], "No such command 'nosuch'.", "mem --help"),
        (["show"], "Missing argument 'ID'.", "mem show --help"),
        (["list", "--recent"], "Option '--recent' requires an argument.", "mem list --help"),
        (["--scope", "loa", "task", "add", "--due"], "Option '--due' requires an argument.", "mem task add --help"),
        (["task", "nosuch"], "No such command 'nosuch'.", "mem task --help"),
    ],
)
def test_usage_errors_are_one_error_line_with_a_hint(repo, args, message, hint):
    result = mem(*args)
    assert (result.code, result.out) == (BAD_INPUT, "")
    assert (
        result.err.startswith(f"error: {message}")
        and result.err.endswith(f"(hint: see `{hint}`)\n")
        and result.err.count("\n") == 1
    ), result.err


def test_no_arguments_still_show_the_help():
    result = mem()
    assert (
        result.code == BAD_INPUT
        and result.err.startswith("Usage: mem [OPTIONS] COMMAND [ARGS]...")
        and "Commands:" in result.err
    )


def test_every_command_takes_scope_after_its_name():
    problems = []
    for words in _commands():
        if words == ["merge-file"]:  # the merge driver works on three files, in no grimoire
            continue
        result = mem(*words, "--scope", "loa", "-h")
        if result.code != 0 or not any(name.startswith("--scope ") for name, _ in _rows(result.out, "Options")):
            problems.append(f"mem {' '.join(words)} --scope loa -h: exit {result.code} {result.err.strip()}")
    assert problems == []
    assert "--scope" not in mem("merge-file", "-h").out


def test_help_lists_the_everyday_commands_first():
    # The order is the command modules' import order (cli/main.py): a sorted
    # import would put `capture` and `mcp` first.
    assert _listed(mem("--help").out)[:6] == ["add", "supersede", "show", "list", "get", "apply"]


def test_each_command_lives_in_the_module_main_imports_for_it():
    """cli/main.py's COMMAND_MODULES names, per module, the commands and groups
    it registers: a run imports only the named command's module."""
    from grimoire_cli.cli.main import COMMAND_MODULES, load_all

    full = load_all()
    registered = {}
    for info in full.registered_commands:
        name = info.name or info.callback.__name__.replace("_", "-")
        registered.setdefault(info.callback.__module__.rsplit(".", 1)[-1], []).append(name)
    for group in full.registered_groups:
        modules = {info.callback.__module__.rsplit(".", 1)[-1] for info in group.typer_instance.registered_commands}
        assert len(modules) == 1, (group.name, modules)
        registered.setdefault(modules.pop(), []).append(group.name)
    assert registered == {module: list(names) for module, names in COMMAND_MODULES.items()}


def test_the_help_lists_commands_in_one_order_whichever_ran_first(tmp_path):
    """A process that ran one command (its module alone imported) lists every command in the same order after."""
    code = "import sys; from grimoire_cli.cli.main import main; main(sys.argv[1:]); main(['--help'])"
    listed = []
    for first in ("--help", "serve", "scopes", "check", "episode"):  # a bad option: a usage error, its module alone
        words = [first] if first == "--help" else [first, "--no-such-option"]
        result = subprocess.run([sys.executable, "-c", code, *words], capture_output=True, text=True, cwd=tmp_path)
        assert "No such option" in result.stderr or first == "--help", result.stderr
        listed.append(_listed(result.stdout.rsplit("Usage: mem [OPTIONS]", 1)[1]))
    assert listed[0][:6] == ["add", "supersede", "show", "list", "get", "apply"]
    assert all(order == listed[0] for order in listed), listed
