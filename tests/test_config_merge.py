"""The config through a merge (issue 37's team seam): two clones that each name
a new category on first use both append to `memory_schema.categories`; the
merge driver unites them, so a pull, merge or rebase ends clean and every
memory keeps its category. What both sides set differently stays a conflict,
marked and named."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import git, mem_process
from test_merge import remote_and_clones

from grimoire_cli.git.config_merge import merge_config

CONFIG = ".loa.config.yaml"
BLOCK = """\
# a hand-written comment the merge keeps
memory_schema:
  enabled: true
  categories:
    fact:       {storage_file: facts.yaml,       ttl: permanent, confidence_required: 0.8}
    decision:   {storage_file: decisions.yaml,   ttl: permanent, confidence_required: 0.9}
  retrieval: {max_per_query: 10}
"""
NEW = "  # added on first use (memory_schema.new_categories)\n"


def category(name: str, *extra: str) -> str:
    fields = ", ".join([f"storage_file: {name}.yaml", "ttl: permanent", "confidence_required: 0.5", *extra])
    return f"    {name}: {{{fields}}}{NEW}"


def merged(tmp_path: Path, monkeypatch, base: str, ours: str, theirs: str) -> tuple[str, list[str]]:
    """merge_config run as git runs the driver: in the work tree, on three temp files."""
    monkeypatch.chdir(tmp_path)
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        (tmp_path / name).write_text(text)
    text, conflicts = merge_config("base", "ours", "theirs", CONFIG, [base, ours, theirs])
    assert (tmp_path / "ours").read_text() == text  # the result replaces ours, as git expects
    return text, conflicts


def after(text: str, line: str, added: str) -> str:
    assert line in text
    return text.replace(line, line + added)


DECISION = "    decision:   {storage_file: decisions.yaml,   ttl: permanent, confidence_required: 0.9}\n"


def test_categories_both_sides_appended_are_united_in_order_with_the_rest_kept(tmp_path, monkeypatch):
    ours = after(BLOCK, DECISION, category("research"))
    theirs = after(BLOCK, DECISION, category("runbook", "kind: procedure"))
    text, conflicts = merged(tmp_path, monkeypatch, BLOCK, ours, theirs)
    assert conflicts == []
    assert text == after(BLOCK, DECISION, category("research") + category("runbook", "kind: procedure"))


def test_categories_written_out_on_both_sides_from_implied_defaults_are_united(tmp_path, monkeypatch):
    """A config with no categories block: each side's first new category writes the defaults out too."""
    base = "memory_schema:\n  enabled: true\n  retrieval: {max_per_query: 10}\n"
    block = "  categories:\n    fact: {storage_file: facts.yaml, ttl: permanent, confidence_required: 0.8}\n"
    ours = base.replace("  retrieval", block + category("research") + "  retrieval")
    theirs = base.replace("  retrieval", block + category("runbook") + "  retrieval")
    text, conflicts = merged(tmp_path, monkeypatch, base, ours, theirs)
    assert conflicts == []
    assert text == base.replace("  retrieval", block + category("research") + category("runbook") + "  retrieval")


def test_the_same_category_added_alike_on_both_sides_is_kept_once(tmp_path, monkeypatch):
    ours = after(BLOCK, DECISION, category("research") + category("alpha"))
    theirs = after(BLOCK, DECISION, category("research") + category("beta"))
    text, conflicts = merged(tmp_path, monkeypatch, BLOCK, ours, theirs)
    assert conflicts == []
    assert text == after(BLOCK, DECISION, category("research") + category("alpha") + category("beta"))


def test_a_category_each_side_defined_differently_stays_a_conflict_marked_for_git(tmp_path, monkeypatch):
    ours = after(BLOCK, DECISION, category("research"))
    theirs = after(BLOCK, DECISION, category("research", "tracked: false"))
    text, conflicts = merged(tmp_path, monkeypatch, BLOCK, ours, theirs)
    assert conflicts == [
        f"{CONFIG}: memory_schema.categories.research is set differently on each side; keep one in the conflict markers"
    ]
    assert "<<<<<<< ours" in text and "tracked: false" in text and ">>>>>>> theirs" in text


def test_a_line_both_sides_changed_stays_a_conflict(tmp_path, monkeypatch):
    ours = BLOCK.replace("max_per_query: 10", "max_per_query: 20")
    theirs = BLOCK.replace("max_per_query: 10", "max_per_query: 30")
    text, conflicts = merged(tmp_path, monkeypatch, BLOCK, ours, theirs)
    assert conflicts == [f"{CONFIG}: both sides changed the same lines; resolve the conflict markers by hand"]
    assert "<<<<<<< ours" in text


def test_two_categories_sharing_a_file_are_refused_as_a_conflict(tmp_path, monkeypatch):
    """A union that would not load (two categories in one file) is not written: git's markers are."""
    ours = after(BLOCK, DECISION, "    notes: {storage_file: shared.yaml}\n")
    theirs = after(BLOCK, DECISION, "    jots: {storage_file: shared.yaml}\n")
    text, conflicts = merged(tmp_path, monkeypatch, BLOCK, ours, theirs)
    assert len(conflicts) == 1 and "the united config does not load" in conflicts[0]
    assert "<<<<<<< ours" in text


def test_changes_git_merges_alone_pass_through_untouched(tmp_path, monkeypatch):
    ours = BLOCK.replace("enabled: true", "enabled: false")
    theirs = after(BLOCK, DECISION, category("research"))
    text, conflicts = merged(tmp_path, monkeypatch, BLOCK, ours, theirs)
    assert conflicts == [] and text == after(ours, DECISION, category("research"))


# Two clones of one remote, hooks and driver installed, each naming a new category.


def run(clone: Path, *args: str) -> str:
    done = mem_process(*args, cwd=clone)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout.decode()


@pytest.fixture
def clones(tmp_path) -> tuple[Path, Path]:
    def seed_with(seed: Path) -> None:
        run(seed, "init", "--preset", "sabre")  # memory_schema.new_categories: tracked
        assert f"/{CONFIG} merge=grimoire" in (seed / ".gitattributes").read_text().splitlines()

    alice, bob, _ = remote_and_clones(tmp_path, seed_with)
    return alice, bob


def remember(clone: Path, key: str, value: str, category: str) -> None:
    run(clone, "remember", key, value, "--category", category)
    git("add", "-A", cwd=clone)
    git("commit", "-qm", f"{key} in {category}", cwd=clone)


@pytest.mark.git
@pytest.mark.parametrize("pull", [["--no-rebase"], ["--rebase"]], ids=["merge", "rebase"])
def test_two_clones_each_naming_a_new_category_pull_clean(clones, pull):
    alice, bob = clones
    remember(alice, "trusted.sources", "arxiv.org", "research")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    remember(bob, "deploy.step", "kubectl rollout restart", "runbook")
    remember(bob, "trusted.mirrors", "mirror.example.org", "research")  # the same new category on both sides

    done = subprocess.run(["git", "pull", "-q", *pull], cwd=bob, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    config = (bob / CONFIG).read_text()
    assert config.count("    research: {") == 1 and config.count("    runbook: {") == 1
    assert "<<<<<<<" not in config
    assert mem_process("validate", cwd=bob).returncode == 0
    assert git("status", "--porcelain", cwd=bob) == ""
    recalled = {
        key: json.loads(run(bob, "recall", key, "--json"))["category"]
        for key in ("trusted.sources", "deploy.step", "trusted.mirrors")
    }
    assert recalled == {"trusted.sources": "research", "deploy.step": "runbook", "trusted.mirrors": "research"}

    git("push", "-q", "origin", "HEAD:main", cwd=bob)
    git("pull", "-q", "--no-rebase", cwd=alice)
    assert (alice / CONFIG).read_text() == config
    assert mem_process("validate", cwd=alice).returncode == 0


@pytest.mark.git
def test_a_category_the_clones_defined_differently_stops_the_merge_and_validate_names_it(clones):
    alice, bob = clones
    remember(alice, "trusted.sources", "arxiv.org", "research")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    config = bob / CONFIG
    config.write_text(config.read_text().replace("new_categories: tracked", "new_categories: local"))
    git("commit", "-qam", "bob keeps new categories local", cwd=bob)
    remember(bob, "scratch.value", "42", "research")

    done = subprocess.run(["git", "pull", "-q", "--no-rebase"], cwd=bob, capture_output=True, text=True)
    assert done.returncode != 0
    assert "categories.research is set differently on each side" in done.stdout + done.stderr
    assert "<<<<<<< ours" in config.read_text()
    checked = mem_process("validate", cwd=bob)
    line = config.read_text().splitlines().index("<<<<<<< ours") + 1
    assert checked.returncode == 3
    assert checked.stderr.decode().splitlines()[0] == (
        f"error: {config}:{line}: a merge stopped on a conflict in the config (hint: keep one side between"
        " the <<<<<<< and >>>>>>> markers, remove the markers, then `git add` the config)"
    )


def test_a_setting_both_sides_added_at_different_places_is_kept_once(tmp_path, monkeypatch):
    """A rebase replays a category upstream already has, below another one: git merges it
    cleanly as two lines, and the config would not load with the key twice."""
    base = after(BLOCK, DECISION, category("runbook"))
    ours = after(BLOCK, DECISION, category("research") + category("runbook"))
    theirs = after(BLOCK, DECISION, category("runbook") + category("research"))
    text, conflicts = merged(tmp_path, monkeypatch, base, ours, theirs)
    assert conflicts == [] and text == ours
