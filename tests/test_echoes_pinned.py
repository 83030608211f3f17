"""Copied commits' applies, counted once (git/echoes.py), in process: real commits in a real repository, each
function's answer pinned (the merge group of `make mutation` runs these)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import git

from grimoire_cli.git.echoes import count_of, counts_added, echoes, memory_key, raised

MEMORY = "grimoires/loa/memory"
SOURCE = '  source:\n    session_id: s\n    timestamp: "2026-11-22T10:00:00Z"\n'


def entry(number: str, text: str, applied: tuple[int, int] | None = None, category: str = "fact") -> str:
    counts = f"  effectiveness: {{applications: {applied[0]}, successes: {applied[1]}}}\n" if applied else ""
    return (
        f"- id: MEM-20261122-{number}\n  category: {category}\n  summary: {text}\n  content: {text}\n"
        f"  confidence: 0.9\n  ttl: permanent\n{SOURCE}{counts}"
    )


def commit(folder: Path, files: dict[str, str], message: str = "memories", when: str = "2026-11-22T10:00:00Z") -> str:
    """A commit of these files (path under MEMORY -> text; "" removes one), at author time `when`."""
    for name, text in files.items():
        path = folder / MEMORY / name
        if text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        else:
            path.unlink()
    git("add", "-A", cwd=folder)
    subprocess.run(
        ["git", "commit", "-qm", message],
        cwd=folder,
        check=True,
        env={**os.environ, "GIT_AUTHOR_DATE": when},
    )
    return git("rev-parse", "HEAD", cwd=folder).strip()


@pytest.fixture
def folder(tmp_path) -> Path:
    git("init", "-q", "-b", "main", cwd=tmp_path)
    return tmp_path


def test_a_cherry_picked_commit_is_an_echo_of_its_original(folder):
    base = commit(folder, {"facts.yaml": entry("001", "redis")}, "start")
    git("checkout", "-qb", "branch", cwd=folder)
    original = commit(folder, {"facts.yaml": entry("001", "redis", (1, 1))}, "apply", "2026-11-22T10:01:00Z")
    git("checkout", "-q", "main", cwd=folder)
    other = commit(folder, {"decisions.yaml": entry("002", "kafka", category="decision")}, "other")
    git("cherry-pick", original, cwd=folder)
    assert echoes(folder, base, "HEAD", "branch") == [original]
    assert echoes(folder, base, other, "branch") == []  # ours holds no copy yet
    assert echoes(folder, base, "HEAD", base) == []  # theirs brings nothing


def test_a_commit_with_another_message_or_time_is_no_echo(folder):
    base = commit(folder, {"facts.yaml": entry("001", "redis")}, "start")
    git("checkout", "-qb", "branch", cwd=folder)
    commit(folder, {"facts.yaml": entry("001", "redis", (1, 1))}, "apply", "2026-11-22T10:01:00Z")
    git("checkout", "-q", "main", cwd=folder)
    commit(folder, {"facts.yaml": entry("001", "redis", (1, 1))}, "apply it", "2026-11-22T10:01:00Z")
    assert echoes(folder, base, "main", "branch") == []
    commit(folder, {"facts.yaml": entry("001", "redis", (2, 2))}, "apply", "2026-11-22T10:02:00Z")
    assert echoes(folder, base, "main", "branch") == []


def test_one_copy_pairs_with_one_original_the_oldest(folder):
    """Two commits of theirs with one author, second and message, and one copy in ours: one echo."""
    base = commit(folder, {"facts.yaml": entry("001", "redis")}, "start")
    git("checkout", "-qb", "branch", cwd=folder)
    first = commit(folder, {"facts.yaml": entry("001", "redis", (1, 1))})
    commit(folder, {"facts.yaml": entry("001", "redis", (2, 2))})
    git("checkout", "-q", "main", cwd=folder)
    git("cherry-pick", first, cwd=folder)
    assert echoes(folder, base, "main", "branch") == [first]


def test_a_copy_whose_original_the_base_holds_is_that_ones(folder):
    """A rebase replays the branch's second commit (its parent is the base) onto a line holding a pick of its first,
    which has the same author, second and message: the pick is the first's copy, and the second is no echo."""
    start = commit(folder, {"facts.yaml": entry("001", "redis")}, "start")
    git("checkout", "-qb", "branch", cwd=folder)
    first = commit(folder, {"decisions.yaml": entry("002", "kafka", category="decision")})
    second = commit(folder, {"facts.yaml": entry("001", "redis", (1, 1))})
    git("checkout", "-q", "main", cwd=folder)
    git("cherry-pick", first, cwd=folder)
    assert echoes(folder, first, "main", second) == []
    assert echoes(folder, start, "main", second) == [first]  # from the start, the branch brings the original


def test_counts_added_are_each_commits_against_its_parent(folder):
    commit(folder, {"facts.yaml": entry("001", "redis") + entry("002", "kafka", (1, 0))}, "start")
    one = commit(folder, {"facts.yaml": entry("001", "redis", (1, 1)) + entry("002", "kafka", (1, 0))})
    two = commit(folder, {"facts.yaml": entry("001", "redis", (2, 1)) + entry("002", "kafka", (3, 2))})
    source = {"session_id": "s", "timestamp": "2026-11-22T10:00:00Z"}
    redis, kafka = (memory_key({"category": "fact", "content": text, "source": source}) for text in ("redis", "kafka"))
    assert counts_added(folder, MEMORY, [one, two]) == {redis: (2, 1), kafka: (2, 2)}
    assert counts_added(folder, MEMORY, []) == {}


def test_moving_a_memory_to_another_file_applies_nothing(folder):
    """An archive commit moves a memory, counts and all, from one file to another."""
    commit(folder, {"facts.yaml": entry("001", "redis", (2, 1)) + entry("002", "kafka")}, "start")
    moved = commit(
        folder,
        {"facts.yaml": entry("002", "kafka"), "archive/facts.yaml": entry("001", "redis", (2, 1))},
        "archive",
    )
    assert counts_added(folder, MEMORY, [moved]) == {}
    added = commit(folder, {"archive/facts.yaml": entry("001", "redis", (3, 2))}, "apply")
    assert list(counts_added(folder, MEMORY, [added]).values()) == [(1, 1)]


def test_a_file_left_broken_counts_nothing(folder):
    commit(folder, {"facts.yaml": entry("001", "redis", (1, 1))}, "start")
    broken = commit(folder, {"facts.yaml": "- id: [unclosed\n"}, "broken")
    assert counts_added(folder, MEMORY, [broken]) == {}


def test_raised_adds_the_echoed_counts_to_the_base():
    item = {"category": "fact", "content": "redis", "source": {"session_id": "s"}}
    echoed = {memory_key(item): (2, 1)}
    base = {"id": "MEM-20261122-001", "effectiveness": {"applications": 3, "successes": 1, "score": 33}}
    assert raised(base, item, echoed) == {
        "id": "MEM-20261122-001",
        "effectiveness": {"applications": 5, "successes": 2, "score": 33},
    }
    assert base["effectiveness"]["applications"] == 3  # the base given is left as it was
    assert raised(None, item, echoed) == {"effectiveness": {"applications": 2, "successes": 1}}
    assert raised({"effectiveness": "broken"}, item, echoed) == {"effectiveness": {"applications": 2, "successes": 1}}
    assert raised(base, {**item, "content": "kafka"}, echoed) is base  # no echo of that memory
    assert raised(base, item, {}) is base


def test_a_count_is_a_whole_number_or_zero():
    assert count_of({"applications": 4}, "applications") == 4
    assert count_of({"applications": True}, "applications") == 0
    assert count_of({"applications": "4"}, "applications") == 0
    assert count_of({"applications": 1.0}, "applications") == 0
    assert count_of({}, "successes") == 0


def test_a_memory_key_is_its_category_content_and_source_only():
    one = {"id": "MEM-20261122-001", "category": "fact", "content": "redis", "source": {"session_id": "s"}}
    assert memory_key(one) == memory_key({**one, "id": "MEM-20261122-009", "effectiveness": {"applications": 2}})
    for field, value in (("category", "decision"), ("content", "kafka"), ("source", {"session_id": "t"})):
        assert memory_key({**one, field: value}) != memory_key(one), field
