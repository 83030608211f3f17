"""Scopes (docs/agent-personas.md, `--scope` in docs/commands.md): one grimoire per persona under grimoires/<scope>/memory."""

from __future__ import annotations

import json

import pytest
from conftest import git, mem

LATER = {"MEM_NOW": "2027-03-01T00:00:00Z"}


@pytest.fixture
def two(repo):
    """The default scope (loa) and a `coder` scope, one memory each."""
    assert mem("--scope", "coder", "init").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "two scopes", cwd=repo)
    return repo


def test_each_scope_is_its_own_grimoire(two):
    coder = mem("--scope", "coder", "add", "-c", "fact", "The coder persona lints with ruff before every commit")
    analyst = mem("add", "-c", "fact", "The analyst reads the sales cube every Monday")
    assert coder.out.strip() == analyst.out.strip() == "MEM-20261122-001"  # ids are unique per scope
    assert [e["content"] for e in json.loads(mem("--scope", "coder", "list", "--json").out)] == [
        "The coder persona lints with ruff before every commit"
    ]
    assert [e["content"] for e in json.loads(mem("list", "--json", env={"MEM_SCOPE": "loa"}).out)] == [
        "The analyst reads the sales cube every Monday"
    ]
    assert [e["id"] for e in json.loads(mem("list", "--json", env={"MEM_SCOPE": "coder"}).out)] == ["MEM-20261122-001"]
    changed = git("status", "--porcelain", cwd=two).split("\n")
    assert sorted(line[3:] for line in changed if line) == [
        "grimoires/coder/memory/facts.yaml",
        "grimoires/loa/memory/facts.yaml",
    ]
    assert (two / "grimoires/coder/memory/.cache/index.sqlite3").exists()  # its own catalog
    assert mem("--scope", "coder", "validate").code == 0 and mem("validate").code == 0


def test_scope_after_the_command_means_the_same_as_before(two):
    added = mem(
        "add",
        "-c",
        "fact",
        "The coder persona lints with ruff before every commit",
        "--key",
        "lint.tool",
        "--scope",
        "coder",
    )
    assert added.code == 0, added.err
    assert (
        mem("--scope", "coder", "list", "--json").out
        == mem("list", "--json", "--scope", "coder").out
        != mem("list", "--json").out
    )
    assert mem("get", "lint.tool", "--scope", "coder").out == mem("--scope", "coder", "get", "lint.tool").out != ""
    assert mem("get", "lint.tool").code == 1  # not in the default scope
    done = mem("task", "add", "Review the lint rules", "--next-session", "--scope", "coder")
    # A group's command: the same scope, the same answer
    assert done.code == 2 and "no category of kind task" in done.err
    assert (
        mem("validate", "--scope", "coder").out == mem("--scope", "coder", "validate").out == "5 files, 1 entry: ok\n"
    )
    ghost = mem("add", "-c", "fact", "nothing is written here", "--scope", "ghost")
    assert ghost.code == 2 and "unknown scope 'ghost' (scopes: coder, loa)" in ghost.err
    both = mem("--scope", "loa", "list", "--scope", "coder")
    assert (
        both.code == 2
        and both.err == "error: two scopes given: loa before the command, coder after it (hint: give --scope once)\n"
    )
    assert mem("--scope", "coder", "list", "--scope", "coder").code == 0


@pytest.mark.parametrize("name", ["../loa", "a/b", "Coder", "..", "-x", "x" * 41])
def test_bad_scope_names_are_refused(two, name):
    result = mem("--scope", name, "list")
    assert result.code == 2 and result.err.startswith("error: bad scope") and result.err.count("\n") == 1
    assert mem("list", env={"MEM_SCOPE": name}).code == 2


def test_an_unknown_scope_names_the_known_ones(two):
    result = mem("--scope", "ghost", "add", "-c", "fact", "nothing is written here")
    assert (
        result.code == 2
        and "unknown scope 'ghost' (scopes: coder, loa)" in result.err
        and "mem --scope ghost init" in result.err
    )
    assert not (two / "grimoires/ghost").exists()


def test_scopes_lists_counts(two):
    mem("--scope", "coder", "add", "-c", "fact", "The coder persona lints with ruff before every commit")
    first = mem("--scope", "coder", "add", "-c", "fact", "The coder persona pins the runner image").out.strip()
    mem("--scope", "coder", "supersede", first, "The coder persona pins the runner image by digest")
    listed = json.loads(mem("scopes", "--json").out)
    assert listed == [
        {"scope": "coder", "path": "grimoires/coder/memory", "active": 2, "entries": 3, "current": False},
        {"scope": "loa", "path": "grimoires/loa/memory", "active": 0, "entries": 0, "current": True},
    ]
    assert json.loads(mem("--scope", "coder", "scopes", "--json").out)[0]["current"] is True
    assert mem("scopes").out.splitlines()[0].split()[:2] == ["coder", "2"]


def test_query_across_scopes_labels_each_hit(two):
    mem("--scope", "coder", "add", "-c", "fact", "The deploy runner caches wheels for ruff")
    mem("add", "-c", "fact", "The deploy report goes to the sales team")
    hits = json.loads(mem("query", "deploy runner ruff", "--all-scopes", "--json").out)
    assert [(h["scope"], h["content"]) for h in hits] == [
        ("coder", "The deploy runner caches wheels for ruff"),
        ("loa", "The deploy report goes to the sales team"),
    ]
    assert hits[0]["score"] >= hits[1]["score"]
    only = json.loads(mem("query", "deploy", "--scope", "coder", "--json").out)
    assert [h["scope"] for h in only] == ["coder"]
    text = mem("query", "deploy", "--scope", "loa,coder").out
    assert "coder:MEM-20261122-001" in text and "loa:MEM-20261122-001" in text
    assert mem("query", "deploy", "--scope", "coder", "--all-scopes").code == 2
    assert mem("query", "deploy", "--scope", "coder,../x").code == 2
    # Without a scope option, a query stays in its scope and says nothing of scopes.
    assert ["scope" in h for h in json.loads(mem("query", "deploy", "--json").out)] == [False]


@pytest.mark.git
def test_archive_in_a_scope_commits_only_that_scope(two):
    old = mem("--scope", "coder", "add", "-c", "error", "The nightly build timed out on the cache step").out.strip()
    mem("add", "-c", "error", "The loa scope keeps its own errors")
    git("add", "-A", cwd=two)
    git("commit", "-qm", "errors", cwd=two)
    mem("add", "-c", "fact", "An unrelated change in the default scope")
    result = json.loads(mem("--scope", "coder", "archive", "--json", env=LATER).out)
    assert result["archived"] == [old] and len(result["commit"]) == 40
    files = git("show", "--name-only", "--format=", "HEAD", cwd=two).split()
    assert sorted(files) == ["grimoires/coder/memory/archive/errors.yaml", "grimoires/coder/memory/errors.yaml"]
    # The other scope's work is untouched
    assert "grimoires/loa/memory/facts.yaml" in git("status", "--porcelain", cwd=two)


def test_validate_checks_each_file_in_its_own_scope(two):
    # The same id in two scopes is no duplicate, and a link resolves in its own scope,
    # whichever scope `mem validate PATH...` runs in.
    old = mem("--scope", "coder", "add", "-c", "fact", "The coder persona lints with flake8").out.strip()
    mem("--scope", "coder", "supersede", old, "The coder persona lints with ruff")
    assert mem("add", "-c", "fact", "The analyst reads the sales cube every Monday").out.strip() == old
    files = ["grimoires/coder/memory/facts.yaml", "grimoires/loa/memory/facts.yaml"]
    for scope in ("loa", "coder"):
        report = mem("validate", "--json", *files, env={"MEM_SCOPE": scope})
        assert report.code == 0 and json.loads(report.out) == {
            "ok": True,
            "files": files,
            "entries": 3,
            "problems": [],
        }, report.out
    assert mem("validate", "grimoires").code == 0  # a folder holding every scope
    # a real problem in one scope is still found, with its file
    coder = two / files[0]
    coder.write_text(coder.read_text() + "- id: MEM-20261122-009\n  category: fact\n")
    report = json.loads(mem("validate", "--json", *files).out)
    assert report["ok"] is False and {p["file"] for p in report["problems"]} == {files[0]}


@pytest.mark.git
def test_pre_commit_hook_validates_every_scope(two):
    import subprocess

    assert mem("hooks", "install").code == 0
    facts = two / "grimoires/coder/memory/facts.yaml"
    facts.write_text(
        facts.read_text()
        + "- id: MEM-20261122-001\n  category: fact\n  summary: s\n  content: token ghp_"
        + "a1B2" * 9
        + "\n  confidence: 0.9\n  ttl: permanent\n  source: {session_id: s, timestamp: '2026-11-22T09:00:00Z'}\n"
    )
    git("add", "-A", cwd=two)
    blocked = subprocess.run(
        ["git", "commit", "-qm", "a secret in the coder scope"], cwd=two, capture_output=True, text=True
    )
    assert blocked.returncode != 0 and "grimoires/coder/memory/facts.yaml" in blocked.stdout + blocked.stderr


@pytest.mark.git
def test_session_hook_checks_every_scope(two):
    import os
    import subprocess
    import sys
    from pathlib import Path

    coder = mem("--scope", "coder", "add", "-c", "error", "The coder's build broke on the runner").out.strip()
    ours = mem("add", "-c", "error", "The analyst's notebook kernel died").out.strip()
    git("add", "-A", cwd=two)
    git("commit", "-qm", "memories", cwd=two)
    assert mem("hooks", "install").code == 0
    env = {**os.environ, **LATER, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["git", "checkout", "-q", "-b", "later"], cwd=two, env=env, capture_output=True, text=True)
    said = done.stdout + done.stderr
    assert (
        f"mem [coder]: archived 1 expired memory: {coder}" in said and f"mem: archived 1 expired memory: {ours}" in said
    )
    commits = git("log", "--format=%s", "-2", "--name-only", cwd=two)
    assert commits.count("mem archive: 1 memory") == 2
    assert (
        "grimoires/coder/memory/archive/errors.yaml" in commits
        and "grimoires/loa/memory/archive/errors.yaml" in commits
    )
    assert git("status", "--porcelain", cwd=two) == ""
    checked = json.loads(mem("check", "--all-scopes", "--json", env=LATER).out)
    assert sorted(checked) == ["coder", "loa"] and checked["coder"]["archived"] == [] and checked["coder"]["due"] == []
