"""Loa's archive retention: `mem archive --purge` removes entries archived more
than `archive.retention_days` ago from the archive, in a commit of their own,
and their ids are never issued again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, mem

MEMORY = Path("grimoires/loa/memory")
ARCHIVE = MEMORY / "archive"
RECORD = ARCHIVE / "purged-ids.txt"
DAY = {"MEM_NOW": "2026-11-22T10:00:00Z"}  # the fixtures' clock
LATER = {"MEM_NOW": "2026-12-23T10:00:00Z"}  # 31 days on


def _commit(repo: Path, message: str = "memories") -> None:
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", message, cwd=repo)


def _retention(repo: Path, days: int = 30) -> None:
    config = repo / ".loa.config.yaml"
    config.write_text(config.read_text() + f"  archive: {{retention_days: {days}}}\n")


@pytest.fixture
def archived(repo) -> tuple[str, str, str]:
    """Two entries archived today (committed) and one kept active, with a 30-day retention."""
    _retention(repo)
    _commit(repo, "start")
    old = mem("add", "-c", "error", "Build failed: missing libssl").out.strip()
    also = mem("add", "-c", "fact", "Uploads go to bucket one").out.strip()
    kept = mem("add", "-c", "fact", "The build uses make").out.strip()
    _commit(repo)
    assert mem("archive", old, also, "--reason", "manual").code == 0
    return old, also, kept


def test_purge_removes_what_the_retention_passed_in_one_commit(repo, archived):
    old, also, kept = archived
    facts = (MEMORY / "facts.yaml").read_bytes()
    assert json.loads(mem("archive", "--purge", "--json").out)["purged"] == []  # not 30 days yet
    dry = json.loads(mem("archive", "--purge", "--dry-run", "--json", env=LATER).out)
    assert dry["purged"] == [old, also] and dry["commit"] is None and not RECORD.exists()
    done = mem("archive", "--purge", env=LATER)
    assert done.code == 0, done.err
    assert f"purged {old} (archived 2026-11-22T10:00:00Z)" in done.out and "committed" in done.out
    message = git("log", "-1", "--format=%B", cwd=repo)
    assert message.startswith("mem archive --purge: 2 memories archived more than 30 days ago")
    assert f"{old}: purged" in message and f"{also}: purged" in message
    changed = git("show", "--name-only", "--format=", "HEAD", cwd=repo).split()
    assert sorted(changed) == sorted(str(p) for p in (ARCHIVE / "errors.yaml", ARCHIVE / "facts.yaml", RECORD))
    assert git("status", "--porcelain", cwd=repo) == ""
    assert (MEMORY / "facts.yaml").read_bytes() == facts  # active files untouched
    assert mem("show", old).code == 1 and kept in mem("list", env=LATER).out
    assert [line.split()[0] for line in RECORD.read_text().splitlines()[1:]] == [old, also]
    assert mem("validate", env=LATER).code == 0
    # Git history keeps them.
    assert "Build failed: missing libssl" in git("show", "HEAD~1:" + str(ARCHIVE / "errors.yaml"), cwd=repo)


def test_a_purged_id_is_never_issued_again(repo, archived, tmp_path, monkeypatch):
    old, _also, kept = archived
    assert mem("archive", kept, "--reason", "manual").code == 0  # every id of the day is in the archive
    assert mem("archive", "--purge", env=LATER).code == 0
    line = json.dumps({"id": old, "category": "fact", "content": "Something else", "confidence": 0.9})
    imported = mem("import", "-", input=line + "\n")
    assert imported.code == 2 and f"{old} is already used" in imported.err
    # A fresh clone has no record of what this one issued: it numbers the day from the files and the purge record.
    clone = tmp_path / "clone"
    git("clone", "-q", str(repo), str(clone), cwd=tmp_path)
    monkeypatch.chdir(clone)
    added = mem("add", "-c", "fact", "Deploys go through CI", env=DAY).out.strip()
    assert added == "MEM-20261122-004", added


def test_purge_needs_a_configured_retention(repo):
    mem("add", "-c", "fact", "The build uses make")
    result = mem("archive", "--purge")
    assert result.code == 2 and result.err.startswith("error: ") and "retention_days" in result.err
    both = mem("archive", "--purge", "--reason", "manual")
    assert both.code == 2 and "--purge takes no ids" in both.err


def test_a_bad_retention_is_a_config_error(repo):
    _retention(repo, 0)
    result = mem("archive", "--purge")
    assert result.code == 3 and ".loa.config.yaml" in result.err and "archive.retention_days" in result.err


def test_purge_waits_when_it_cannot_commit_and_skips_what_was_never_committed(repo, archived):
    old, also, _kept = archived
    (ARCHIVE / "facts.yaml").write_text((ARCHIVE / "facts.yaml").read_text() + "# staged\n")
    git("add", str(ARCHIVE / "facts.yaml"), cwd=repo)
    before = {p: p.read_bytes() for p in ARCHIVE.iterdir()}
    blocked = mem("archive", "--purge", env=LATER)
    assert blocked.code == 0 and "not purging now" in blocked.err and "staged changes" in blocked.err
    assert {p: p.read_bytes() for p in ARCHIVE.iterdir()} == before
    git("commit", "-q", "-m", "staged", cwd=repo)
    fresh = mem("add", "-c", "decision", "We deploy on Tuesdays", "--confidence", "0.95").out.strip()
    assert mem("archive", fresh, "--reason", "manual", "--no-commit").code == 0  # never committed
    done = json.loads(mem("archive", "--purge", "--json", env={"MEM_NOW": "2027-01-30T10:00:00Z"}).out)
    assert done["purged"] == [old, also] and done["commit"]
    assert any(fresh in note and "never committed" in note for note in done["notes"])
    assert fresh in mem("list", "--archived").out


def test_purge_outside_git_removes_from_the_files_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert mem("init").code == 0
    _retention(tmp_path)
    entry = mem("add", "-c", "fact", "The build uses make").out.strip()
    assert mem("archive", entry, "--reason", "manual").code == 0
    result = json.loads(mem("archive", "--purge", "--json", env=LATER).out)
    assert result["purged"] == [entry] and result["commit"] is None
    assert result["notes"] == ["not a git repository: purged without a commit"]
    assert mem("show", entry).code == 1 and RECORD.read_text().splitlines()[1].startswith(entry)
    assert mem("add", "-c", "fact", "Deploys go through CI").out.strip() == "MEM-20261122-002"
