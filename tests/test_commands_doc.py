"""docs/commands.md is made from the commands (grimoire_cli/cli/commands_doc.py),
as llm's cog-generated help and sqlite-utils' tests/test_docs.py keep theirs:
a command, an option or an operation's declaration changed without
`make commands-doc` fails here."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

from grimoire_cli.cli import commands_doc
from grimoire_cli.cli.commands_doc import CLOSE, OPEN, commands, page


def test_the_page_is_what_the_commands_make():
    current = commands_doc.PAGE.read_text(encoding="utf-8")
    assert page(current) == current, "docs/commands.md is stale: run `make commands-doc` and commit it"


def test_every_command_has_its_section_in_help_order():
    text = commands_doc.PAGE.read_text(encoding="utf-8")
    paths = [path for path, _ in commands()]
    assert len(paths) > 50 and paths[0] == "mem add" and "mem task add" in paths
    positions = [text.index(f"\n## {path}\n") for path in paths]
    assert positions == sorted(positions)


def test_a_rewrite_keeps_the_prose_adds_new_commands_and_drops_gone_ones():
    stale = (
        "# Commands\n\nThe preamble.\n\n"
        f"## mem add\n\n{OPEN}\nan old block\n{CLOSE}\n\nWritten by hand about add.\n\n"
        "## mem gone\n\nA command that no longer exists.\n"
    )
    made = page(stale)
    assert made.startswith("# Commands\n\nThe preamble.\n\n## mem add\n")
    assert "an old block" not in made and "`mem add [TEXT|-] [-c CAT]" in made
    assert made.count("Written by hand about add.") == 1 and "mem gone" not in made
    assert "\n## mem query\n" in made and "MCP tool `query`" in made  # a section without prose gets its block
    assert page(made) == made


def test_check_fails_on_a_stale_page_and_a_rewrite_fixes_it(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "commands.md"
    stale.write_text("# Commands\n\nThe preamble.\n", encoding="utf-8")
    monkeypatch.setattr(commands_doc, "PAGE", stale)
    monkeypatch.setattr(sys, "argv", ["commands_doc", "--check"])
    assert commands_doc.main() == 1
    assert "out of date (hint: run `make commands-doc`)" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["commands_doc"])
    assert commands_doc.main() == 0 and "\n## mem add\n" in stale.read_text(encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["commands_doc", "--check"])
    assert commands_doc.main() == 0


def test_the_module_runs_as_make_commands_doc_runs_it():
    done = subprocess.run(
        [sys.executable, "-m", "grimoire_cli.cli.commands_doc", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert (done.returncode, done.stderr) == (0, "")
