"""Every code block of the docs runs (issue 36 item 6), page by page, in order,
in a throw-away git repository with the real `mem` of this environment and the
fixed clock of conftest (MEM_NOW):

- `console` (a `$ ` line is a command, the lines after it what it prints) and
  `shell`/`bash`/`sh` (a script, or a session when it has `$ ` lines): each
  command must exit 0, and where the block shows output, print exactly that
  (trailing spaces aside; a line `...` stands for any lines);
- `python`: run statement by statement in one namespace per page; an
  expression followed by a comment that is a Python value
  (`g.facts.recall("k")  # {'rows': 12}`, or the value before a `:` in
  `# None: missing`) must equal that value;
- `json` and `yaml`: parsed; a config (`memory_schema:`) is validated by
  `schemas/config.schema.json`, an entry (or a list of them) by the entry schema.

A block that cannot run (a network, Claude Code, a file tree) says so just
before its fence: `<!-- not run: the reason -->`. A block with neither a
language this test runs nor that marker fails, as does a marker without a reason.
"""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import tokenize
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from conftest import ROOT, git
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML
from test_docs import DOCS

from grimoire_cli.core.schemas import entry_schema, load_schema

OPEN = re.compile(r"^(```|~~~)\s*([\w+-]*)\s*$")
NOT_RUN = re.compile(r"^<!--\s*not run:(.*?)-->$")
SHELLS = {"console", "shell", "bash", "sh"}
RUN = SHELLS | {"python", "json", "yaml"}
# The blocks that say they are not run, by page: a new one is a choice made here too.
NOT_RUN_EXPECTED = {
    "README.md": 1,
    "docs/adapters.md": 6,  # excerpts: tests/test_adapters_*.py run each system's whole usage
    "docs/getting-started.md": 1,
    "docs/agents.md": 2,
    "docs/project-memory.md": 1,
    "docs/tiers-and-consolidation.md": 1,
    "docs/web.md": 2,  # servers that run until Ctrl-C: tests/test_web*.py start them
    "CONTRIBUTING.md": 1,
}


class Block(NamedTuple):
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    not_run: str | None  # the marker's reason, when the block is not run

    @property
    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page.name
        return f"{page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of `page`, each with the `not run` marker of the
    last non-blank line before its fence."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    number = 0
    while number < len(lines):
        opening = OPEN.match(lines[number].strip())
        if not opening:
            number += 1
            continue
        fence, lang = opening.groups()
        # An unclosed fence runs to the end of the page, as Markdown reads it.
        end = next((i for i in range(number + 1, len(lines)) if lines[i].strip().startswith(fence)), len(lines))
        previous = next((line.strip() for line in reversed(lines[:number]) if line.strip()), "")
        marker = NOT_RUN.match(previous)
        reason = marker.group(1).strip() if marker else None
        # A block inside a list item is indented as its fence is.
        indent = len(lines[number]) - len(lines[number].lstrip())
        text = "\n".join(line[indent:] if line[:indent].isspace() else line for line in lines[number + 1 : end])
        found.append(Block(page, number + 1, lang.lower(), text, reason))
        number = end + 1
    return found


# -- shell ---------------------------------------------------------------------


class Command(NamedTuple):
    line: int  # within the block, 1-based
    text: str
    shown: list[str]  # the output the block shows after it


def session(text: str) -> list[Command]:
    """A console block's commands, each with the lines it shows after it."""
    commands: list[Command] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("$ "):
            commands.append(Command(number, line[2:], []))
        elif commands:
            commands[-1].shown.append(line)
    return commands


def output_matches(shown: list[str], printed: str) -> bool:
    """`printed` is what the block shows, trailing spaces aside; a shown line
    `...` stands for any lines (none included)."""
    pattern = "\n".join(".*" if line.strip() == "..." else re.escape(line.rstrip()) for line in shown)
    actual = "\n".join(line.rstrip() for line in printed.rstrip("\n").splitlines())
    return re.fullmatch(pattern.replace("\n.*\n", "(\n.*)*\n"), actual, re.DOTALL) is not None


def run_shell(block: Block, repo: Path) -> None:
    commands = session(block.text) or [Command(1, block.text, [])]
    for command in commands:
        done = subprocess.run(["bash", "-c", command.text], cwd=repo, capture_output=True, text=True, timeout=120)
        where = f"{block.where} +{command.line}: $ {command.text}"
        assert done.returncode == 0, f"{where}\nexit {done.returncode}\n{done.stdout}{done.stderr}"
        if any(line.strip() for line in command.shown):
            assert output_matches(command.shown, done.stdout), (
                f"{where}\nthe docs show:\n" + "\n".join(command.shown) + f"\nmem printed:\n{done.stdout}"
            )


# -- python --------------------------------------------------------------------


def _comments(source: str) -> dict[int, str]:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {token.start[0]: token.string[1:].strip() for token in tokens if token.type == tokenize.COMMENT}


def expected_value(comment: str) -> tuple[bool, Any]:
    """(True, value) when the comment is a Python value, or starts with one
    followed by `:` (`None: missing or expired`); (False, None) for prose."""
    for candidate in (comment, comment.split(": ", 1)[0]):
        try:
            return True, ast.literal_eval(candidate)
        except (ValueError, SyntaxError):
            continue
    return False, None


def run_python(block: Block, namespace: dict[str, Any]) -> int:
    """Run the block statement by statement; returns how many shown values it checked."""
    comments = _comments(block.text)
    checked = 0
    for statement in ast.parse(block.text).body:
        where = f"{block.where} +{statement.lineno}"
        comment = comments.get(statement.end_lineno or statement.lineno, "")
        is_value, expected = expected_value(comment) if isinstance(statement, ast.Expr) else (False, None)
        if is_value:
            assert isinstance(statement, ast.Expr)
            actual = eval(compile(ast.Expression(statement.value), where, "eval"), namespace)
            assert actual == expected, f"{where}: the docs show {expected!r}, the code gives {actual!r}"
            checked += 1
        else:
            exec(compile(ast.Module([statement], type_ignores=[]), where, "exec"), namespace)
    return checked


# -- data ----------------------------------------------------------------------


def check_data(block: Block) -> None:
    if block.lang == "json":
        value = json.loads(block.text)
    else:
        value = YAML(typ="safe").load(block.text)
    validator = None
    if isinstance(value, dict) and "memory_schema" in value:
        validator = Draft202012Validator(load_schema("config.schema.json"))
    elif _is_entry(value) or (isinstance(value, list) and value and all(_is_entry(item) for item in value)):
        validator = Draft202012Validator(entry_schema())
    if validator is not None:
        problems = [error.message for error in validator.iter_errors(value)]
        assert problems == [], f"{block.where}: {problems}"


def _is_entry(value: object) -> bool:
    return isinstance(value, dict) and {"id", "category", "content"} <= value.keys()


# -- the pages -----------------------------------------------------------------


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_of_the_page_runs(page, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    monkeypatch.chdir(repo)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for block in blocks(page):
        if block.not_run is not None:
            continue
        assert block.lang in RUN, (
            f"{block.where}: a ```{block.lang} block: give it a language this test runs or <!-- not run: why -->"
        )
        if block.lang in SHELLS:
            run_shell(block, repo)
        elif block.lang == "python":
            run_python(block, namespace)
        else:
            check_data(block)


def test_the_blocks_not_run_say_why_and_are_counted():
    not_run: dict[str, int] = {}
    for page in DOCS:
        for block in blocks(page):
            if block.not_run is not None:
                assert block.not_run, f"{block.where}: <!-- not run: --> without a reason"
                name = str(page.relative_to(ROOT))
                not_run[name] = not_run.get(name, 0) + 1
    assert not_run == NOT_RUN_EXPECTED


def test_the_block_reader_and_its_checks(tmp_path):
    """The harness itself: a marker, a session's shown output, `...`, a value comment."""
    page = tmp_path / "p.md"
    page.write_text(
        "# P\n\n<!-- not run: needs a network -->\n```console\n$ curl x\n```\n\n"
        "```console\n$ echo a   # a comment\na\n$ true\n```\n\n- an item:\n\n  ~~~python\n  x = 1\n  ~~~\n"
    )
    found = blocks(page)
    assert [(b.line, b.lang, b.not_run) for b in found] == [
        (4, "console", "needs a network"),
        (8, "console", None),
        (16, "python", None),
    ]
    assert session(found[1].text) == [Command(1, "echo a   # a comment", ["a"]), Command(3, "true", [])]
    assert found[2].text == "x = 1"
    assert output_matches(["a", "...", "z"], "a\nb\nc\nz\n") and output_matches(["a", "...", "z"], "a\nz")
    assert not output_matches(["a"], "a\nb\n") and not output_matches(["a", "...", "z"], "a\nb\n")
    assert expected_value("{'rows': 12}") == (True, {"rows": 12})
    assert expected_value("None: missing or expired") == (True, None)
    assert expected_value("entries, newest first") == (False, None)
    namespace: dict[str, Any] = {}
    wrong = Block(page, 1, "python", "x = 2\nx + 1  # 4\n", None)
    with pytest.raises(AssertionError, match="the docs show 4, the code gives 3"):
        run_python(wrong, namespace)
    assert run_python(Block(page, 1, "python", "x + 1  # 3\n", None), namespace) == 1
