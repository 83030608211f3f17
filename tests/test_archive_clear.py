"""Clearing a category (SABRE's clear_memory, `mem archive --category`): every
entry of it not yet archived moves to the archive, in one commit, reason `cleared`."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git, mem

from grimoire_cli import Grimoire

MEMORY = Path("grimoires/loa/memory")


def _commit(repo: Path, message: str = "memories") -> None:
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", message, cwd=repo)


def test_archive_a_category_moves_all_of_it_in_one_commit(repo):
    _commit(repo, "start")
    make = mem("add", "-c", "fact", "The build uses make").out.strip()
    old = mem("add", "-c", "fact", "Uploads go to bucket one").out.strip()
    new = mem("supersede", old, "Uploads go to bucket two").out.strip()
    kept = mem("add", "-c", "decision", "We deploy on Tuesdays only", "--confidence", "0.95").out.strip()
    _commit(repo)
    before = {p: p.read_bytes() for p in MEMORY.rglob("*.yaml")}
    dry = json.loads(mem("archive", "--category", "fact", "--dry-run", "--json").out)
    assert dry["archived"] == sorted([make, old, new]) and set(dry["reasons"].values()) == {"cleared"}
    assert {p: p.read_bytes() for p in MEMORY.rglob("*.yaml")} == before
    done = mem("archive", "-c", "fact")
    assert done.code == 0, done.err
    assert f"archived {make} (cleared)" in done.out and "committed" in done.out
    message = git("log", "-1", "--format=%B", cwd=repo)
    assert message.startswith("mem archive: 3 memories") and f"{old}: cleared" in message
    assert git("status", "--porcelain", cwd=repo) == ""
    assert json.loads(mem("show", new, "--json").out)["archive_reason"] == "cleared"
    assert kept in mem("list").out and mem("list", "-c", "fact").code == 1
    assert mem("validate").code == 0
    assert mem("archive", "-c", "fact").err.strip() == "nothing to archive"


def test_bad_category_input_is_exit_2(repo):
    entry = mem("add", "-c", "fact", "The build uses make").out.strip()
    for args, message in (
        (["--category", "nope"], "unknown category 'nope'"),
        ([entry, "--category", "fact"], "ids or --category, not both"),
        (["--reason", "cleared"], "--reason goes with ids or --category"),
        (["--category", "fact", "--reason", "bored"], "bad reason"),
    ):
        result = mem("archive", *args)
        assert result.code == 2 and result.err.startswith("error: ") and message in result.err, (args, result.err)
    assert mem("list").out.startswith(entry)


def test_clear_memory_of_a_persona_archives_every_category_with_reason_cleared(sabre):
    from grimoire_cli.adapters.sabre import Sabre

    sabre_memory = Sabre(Grimoire.open(sabre))
    sabre_memory.remember_episode("deploy-rollback", {"service": "api"}, "Roll back first")
    sabre_memory.remember_fact("service.api.topology", {"replicas": 3})
    sabre_memory.update_fact("service.api.topology", {"replicas": 4})  # the old value is superseded, still in place
    sabre_memory.schedule_task("Re-check the replicas", trigger="time:+1hour")
    note = mem("add", "-c", "decision", "We deploy on Tuesdays only", "--confidence", "0.95").out.strip()
    _commit(sabre)
    head = git("rev-parse", "HEAD", cwd=sabre).strip()
    assert sabre_memory.clear_memory() == 5  # without confirm: the count, nothing moves
    assert git("rev-parse", "HEAD", cwd=sabre).strip() == head and note in mem("list").out
    assert sabre_memory.clear_memory(confirm=True) == 5
    assert git("rev-list", "--count", f"{head}..HEAD", cwd=sabre).strip() == "1"  # one commit
    archived = json.loads(mem("list", "--archived", "--json").out)
    assert len(archived) == 5 and {e["archive_reason"] for e in archived} == {"cleared"}
    assert mem("list").code == 1 and sabre_memory.recall_fact("service.api.topology") is None
    assert git("status", "--porcelain", cwd=sabre) == "" and mem("validate").code == 0
    assert sabre_memory.clear_memory(confirm=True) == 0
