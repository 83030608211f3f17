"""`make transcripts` (scripts/adapter_transcripts.py): each memory system's example usage through its
adapter, call by call; run here so the transcript the issue's note shows cannot rot."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from adapter_examples import EXAMPLES, Example, Scene, loa_names

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "adapter_transcripts.py"


def transcripts(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the script pins its own clock, git and home
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300, cwd=ROOT
    )


def statements(example: Example) -> int:
    return sum(len(ast.parse(scene.code).body) for scene in example.scenes)


@pytest.mark.slow  # every system, about 7 s; the test below runs one in the inner loop
def test_every_systems_example_usage_runs_through_its_adapter_without_a_failure():
    run = transcripts()
    assert run.returncode == 0, run.stderr + run.stdout[-3000:]
    headings = [line[3:] for line in run.stdout.splitlines() if line.startswith("## ")]
    assert headings == [example.system for example in EXAMPLES.values()]
    for example in EXAMPLES.values():
        section = run.stdout.split(f"## {example.system}\n")[1].split("\n## ")[0]
        # every statement is shown as written, with what it returned, and counted
        assert f"**{example.system}: {statements(example)} calls, 0 failed**" in section
        for scene in example.scenes:
            for statement in ast.parse(scene.code).body:
                assert ast.get_source_segment(scene.code, statement) in section
        assert section.count("\n# → ") == statements(example)
        # and what `mem` shows of what was written
        assert re.search(r"^\$ mem (--scope \S+ )?stats\n\d+ entries", section, re.M), section[-800:]
        assert re.search(r"^\$ mem (--scope \S+ )?list\nMEM-2026", section, re.M), section[-800:]


def test_two_runs_print_the_same_text():
    first, second = transcripts("--system", "loa"), transcripts("--system", "loa")
    assert first.returncode == second.returncode == 0, first.stderr
    assert "## Loa" in first.stdout and "## SABRE" not in first.stdout
    assert '"commit": "' in first.stdout  # a commit's hash too: git's author and dates are pinned
    assert first.stdout == second.stdout


def test_a_call_that_raises_is_shown_and_counted(tmp_path):
    spec = importlib.util.spec_from_file_location("adapter_transcripts", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    code = 'fact = loa.create("The API is served from api/", "fact", 0.9)\nloa.create("x y z", "fact", 0.9, "sess-1")\n'
    broken = Example("Loa", ("init",), None, loa_names, (Scene(code),))
    text, calls, failed = script.transcript(broken, tmp_path)
    assert (calls, failed) == (2, 1)
    assert "# ✗ raised BadInput: source is not a mapping" in text
    assert text.rstrip().endswith("**Loa: 2 calls, 1 failed**")


def test_each_system_is_set_up_as_its_guide_says():
    """The script's `mem init` and scope for a system are the ones docs/adapters.md gives it."""
    guide = (ROOT / "docs" / "adapters.md").read_text(encoding="utf-8")
    for example in EXAMPLES.values():
        section = guide.split(f"\n## {example.system} (")[1].split("\n## ")[0]
        setup = re.search(r"Run `mem ([^`]*)` first", section)
        assert " ".join(example.init) == (setup.group(1) if setup else "init"), example.system
        opened = re.search(r'Grimoire\.open\("\.", scope="([^"]+)"\)', section)
        assert example.scope == (opened.group(1) if opened else None), example.system
