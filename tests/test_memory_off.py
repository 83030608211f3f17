"""Loa's `memory_schema.enabled: false`: writes are refused with one line, and
the session-start check and the hooks do nothing and say so in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, mem

from grimoire_cli import Grimoire
from grimoire_cli.adapters.loa import Loa
from grimoire_cli.core.errors import BadInput

MEMORY = Path("grimoires/loa/memory")
LATER = {"MEM_NOW": "2027-01-01T10:00:00Z"}  # the error below has expired
OFF = "memory is off (memory_schema.enabled: false): nothing checked or archived"


@pytest.fixture
def off(repo) -> tuple[str, str]:
    """A fact and an error (expiring in 30 days), committed, then memory switched off."""
    fact = mem("add", "-c", "fact", "The build uses make").out.strip()
    error = mem("add", "-c", "error", "Build failed: missing libssl").out.strip()
    config = repo / ".loa.config.yaml"
    config.write_text(config.read_text().replace("enabled: true", "enabled: false", 1))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "memory off", cwd=repo)
    return fact, error


def _files() -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in MEMORY.rglob("*.yaml")}  # the grimoire, not its derived cache


@pytest.mark.parametrize(
    "args",
    [
        ["add", "-c", "fact", "Deploys go through CI"],
        ["remember", "db.users.rows", "12"],
        ["archive", "--reason", "manual", "FACT"],
        ["apply", "FACT", "--success"],
        ["supersede", "FACT", "The build uses ninja"],
        ["archive"],
    ],
)
def test_writes_are_refused_in_one_line(off, args):
    fact, _ = off
    before = _files()
    result = mem(*[fact if a == "FACT" else a for a in args], env=LATER)
    assert result.code == 2 and result.err.startswith("error: memory is off: memory_schema.enabled is false")
    assert len(result.err.strip().splitlines()) == 1 and "enabled: true" in result.err
    assert _files() == before


def test_reads_still_answer(off):
    fact, _ = off
    assert fact in mem("list").out and mem("query", "make").code == 0 and mem("validate").code == 0


def test_check_and_its_hook_do_nothing_and_say_so(off, repo):
    _, error = off
    before = _files()
    for args in (["check"], ["check", "--hook"]):
        result = mem(*args, env=LATER)
        assert result.code == 0 and result.out == "" and result.err.strip() == f"mem: {OFF}", result.err
    checked = json.loads(mem("check", "--json", env=LATER).out)
    assert checked["archived"] == [] and checked["expired"] == [] and checked["notes"] == [OFF]
    assert _files() == before and error in mem("list", "--expired", env=LATER).out


def test_agent_and_git_hooks_do_nothing_and_say_so(off, repo):
    hooked = mem("agent", "hook", "session-start", input=json.dumps({"session_id": "s-1"}), env=LATER)
    assert json.loads(hooked.out)["hookSpecificOutput"]["additionalContext"] == f"mem: {OFF}"
    observed = mem("agent", "hook", "post-tool-use", input=json.dumps({"session_id": "s-1", "tool_name": "Bash"}))
    assert observed.code == 0 and observed.err.strip().endswith(
        ": memory is off (memory_schema.enabled: false): nothing recorded"
    )
    assert len(observed.err.strip().splitlines()) == 1
    captured = mem("capture", "--commit", "HEAD", "--hook")
    assert captured.code == 0 and len(captured.err.strip().splitlines()) == 1 and "memory is off" in captured.err
    fixup = mem("merge-fixup", "--all-scopes", "post-merge")
    assert (
        fixup.code == 0
        and fixup.err.strip() == "warning: memory is off (memory_schema.enabled: false): nothing renumbered"
    )
    assert git("status", "--porcelain", cwd=repo) == ""


def test_the_library_and_the_adapters_refuse_writes(off, repo):
    grimoire = Grimoire.open(repo)
    with pytest.raises(BadInput, match="memory is off"):
        grimoire.add("Deploys go through CI", "fact")
    with pytest.raises(BadInput, match="memory is off"):
        Loa(grimoire).create("Deploys go through CI", "fact", 0.9)
    assert Loa(grimoire).session_start_check()["notes"] == [OFF]
