"""Plain parameters are coerced without pydantic, exactly as Typer would (grimoire_cli.cli.coercion)."""

import math
import os
import subprocess
import sys

import pytest
import typer
from conftest import git, mem, with_preset
from hypothesis import given, settings
from hypothesis import strategies as st
from typer import _coercion
from typer._click import Context
from typer._click.exceptions import BadParameter

from grimoire_cli.cli import coercion
from grimoire_cli.cli.app import app as mem_app  # noqa: F401 (importing it installs the plain coercion)


def _command():
    """A Typer command with one parameter of each plain type mem declares, and a bounded one."""
    probe = typer.Typer()

    @probe.command()
    def run(
        text: str = typer.Argument("x"),
        count: int = typer.Option(0),
        share: float = typer.Option(0.0),
        flag: bool = typer.Option(False),
        tags: list[str] | None = typer.Option(None),
        bounded: int = typer.Option(1, min=1, max=9),
    ):
        pass

    command = typer.main.get_command(probe)
    return command, Context(command), {param.name: param for param in command.params}


COMMAND, CONTEXT, PARAMS = _command()


def _outcome(runtime, name, value):
    """What coercing `value` gives: ('ok', value, its type) or ('error', message)."""
    try:
        found = runtime.coerce(value, param=PARAMS[name], ctx=CONTEXT)
    except BadParameter as exc:
        return ("error", exc.format_message())
    signature = math.copysign(1, found) if isinstance(found, float) and not math.isnan(found) else None
    return ("ok", repr(found), type(found), signature)


def _both(name, value):
    ours = PARAMS[name].get_runtime_param()
    PARAMS[name]._runtime_param = None  # a fallback replaces it with Typer's: start afresh each time
    typers = _coercion.build_runtime_param(PARAMS[name].type_descriptor)
    return _outcome(ours, name, value), _outcome(typers, name, value)


def test_it_is_installed_on_this_typer_and_only_for_plain_parameters():
    assert coercion.install()  # already in place: importing the CLI installed it
    for name in ("text", "count", "share", "flag", "tags"):
        PARAMS[name]._runtime_param = None
        assert type(PARAMS[name].get_runtime_param()).__name__ == "Plain", name
    PARAMS["bounded"]._runtime_param = None
    assert type(PARAMS["bounded"].get_runtime_param()).__name__ != "Plain"  # a bound: Typer's own
    assert _both("bounded", "12")[0] == _both("bounded", "12")[1] and _both("bounded", "12")[0][0] == "error"


def test_well_formed_values_take_the_plain_path():
    for annotation, value, expected in (
        (str, "a b", "a b"),
        (int, "-42", -42),
        (int, 7, 7),
        (float, "0.25", 0.25),
        (float, 3, 3.0),
        (bool, True, True),
        (list[str], ("a", "b"), ["a", "b"]),
    ):
        assert coercion.plain_value(annotation, value) == expected
    for annotation, value in (
        (int, "007"),
        (int, " 5"),
        (int, "1_000"),
        (int, "٣"),
        (float, "1e3"),
        (float, "nan"),
        (float, ".5"),
        (bool, "yes"),
        (str, b"bytes"),
        (list[str], ("a", 1)),
    ):
        assert coercion.plain_value(annotation, value) is coercion._MISS, (annotation, value)


NUMBERISH = st.one_of(
    st.from_regex(r"\A[-+ ]?[0-9_]{0,25}(\.[0-9]{0,20})?([eE][-+]?[0-9]{1,3})?[ ]?\Z"),
    st.sampled_from(["inf", "-inf", "nan", "NaN", "1.", ".5", "0x10", "1e400", "-0", "-0.0", "٣", "True", ""]),
    st.text(max_size=8),
)


@settings(max_examples=400, deadline=None)
@given(NUMBERISH)
def test_numbers_coerce_exactly_as_typer_does(text):
    for name in ("count", "share"):
        ours, typers = _both(name, text)
        assert ours == typers, (name, text)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False), st.booleans()))
def test_python_values_coerce_exactly_as_typer_does(value):
    # Defaults reach the coercion as Python values.
    for name in ("count", "share"):
        assert _both(name, value)[0] == _both(name, value)[1], (name, value)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.lists(st.text(), max_size=4))
def test_text_and_lists_coerce_exactly_as_typer_does(text, items):
    assert _both("text", text)[0] == _both("text", text)[1]
    for value in (tuple(items), None, ()):
        assert _both("tags", value)[0] == _both("tags", value)[1], value
    for value in (True, False, None, "true", " off "):
        assert _both("flag", value)[0] == _both("flag", value)[1], value


def test_a_malformed_number_gets_typers_own_error(repo):
    result = mem("query", "runner", "-n", "ten")
    assert result.code == 2 and "Invalid value for '-n' / '--limit': Input should be a valid integer" in result.err, (
        result.err
    )
    assert mem("query", "runner", "--min-confidence", "high").code == 2


HEAVY = ("pydantic", "rich", "ruamel", "jsonschema", "rapidfuzz")


@pytest.mark.git
def test_warm_reads_import_no_heavy_module(repo):
    """Issue 20: a warm query, context, get, recall, due or check pays for no
    framework or library it does not use (options of every plain type given)."""
    with_preset(repo, "sabre")
    assert (
        mem(
            "add", "-c", "fact", "-t", "disk", "--key", "runner.disk", "the runner disk fills up after ninety builds"
        ).code
        == 0
    )
    assert mem("remember", "deploy.window", "friday evening").code == 0
    assert mem("task", "add", "Rotate the runner logs", "--due", "+1h").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "seed", cwd=repo)
    later = dict(os.environ, MEM_NOW="2026-11-22T12:00:00Z")
    probe = (
        "import sys, atexit; atexit.register(lambda: sys.stderr.write('HEAVY=' + ','.join("
        f"m for m in {HEAVY!r} if m in sys.modules) + '\\n'));"
        "from grimoire_cli.cli.main import main; sys.exit(main(sys.argv[1:]))"
    )
    commands = (
        ["query", "runner disk", "-n", "3", "--min-confidence", "0.5", "-c", "fact", "-t", "disk", "--json"],
        ["context", "runner", "--budget", "300"],
        ["get", "runner.disk"],
        ["recall", "deploy.window"],
        ["due", "--json"],
        ["check"],
    )
    for args in commands:
        for _attempt in ("first", "warm"):
            result = subprocess.run(
                [sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=repo, env=later
            )
            assert result.returncode == 0 and result.stdout, (args, result.stderr)
        heavy = set(result.stderr.split("HEAVY=")[1].strip().split(",")) - {""}
        assert heavy == set(), (args, heavy)
    assert git("status", "--short", cwd=repo) == ""
