import json
from pathlib import Path

import pytest
from conftest import git, mem

CATEGORY_FILES = ["facts.yaml", "decisions.yaml", "learnings.yaml", "errors.yaml", "preferences.yaml"]


def test_init_creates_layout(repo: Path):
    memory = repo / "grimoires/loa/memory"
    assert (repo / ".loa.config.yaml").is_file()
    for name in CATEGORY_FILES:
        text = (memory / name).read_text()
        assert text.startswith("# grimoire:"), name
    assert (memory / "archive").is_dir()
    assert ".cache/" in (memory / ".gitignore").read_text()
    assert "merge=grimoire" in (repo / ".gitattributes").read_text()
    # Category files are valid, empty grimoires.
    assert mem("validate").code == 0


def test_init_is_idempotent_and_never_overwrites(repo: Path):
    facts = repo / "grimoires/loa/memory/facts.yaml"
    assert mem("add", "-c", "fact", "The build uses make").code == 0
    config = repo / ".loa.config.yaml"
    config.write_text(config.read_text() + "# my note\n")
    before = {p: p.read_bytes() for p in [facts, config, repo / ".gitattributes"]}
    result = mem("init")
    assert result.code == 0
    assert "created" not in result.out
    assert result.out == "kept 8 existing files\n"  # one summary line, not a line per file
    for path, data in before.items():
        assert path.read_bytes() == data
    preset = mem("init", "--preset", "sabre")
    created = [line for line in preset.out.splitlines() if line.startswith("created ")]
    assert len(created) >= 5 and "created grimoires/loa/memory/procedures.yaml" in created  # each new file still listed
    assert preset.out.endswith("\nkept 8 existing files\n") and preset.out.count("kept") == 1


def test_init_keeps_existing_gitattributes_lines(tmp_path, monkeypatch):
    git("init", "-q", cwd=tmp_path)
    (tmp_path / ".gitattributes").write_text("*.png binary")
    monkeypatch.chdir(tmp_path)
    result = mem("init")
    assert result.code == 0 and "updated .gitattributes\n" in result.out
    lines = (tmp_path / ".gitattributes").read_text().splitlines()
    assert lines == [
        "*.png binary",
        "grimoires/loa/memory/**/*.yaml merge=grimoire",
        "/.loa.config.yaml merge=grimoire",
    ]


def test_init_again_gives_an_older_grimoire_the_rules_it_lacks_and_says_so(repo: Path):
    """A grimoire made by an older mem has no attribute for the config's merge driver (issue 37)."""
    attributes = repo / ".gitattributes"
    attributes.write_text("grimoires/loa/memory/**/*.yaml merge=grimoire\n")
    result = mem("init", "--json")
    assert json.loads(result.out)["updated"] == [".gitattributes"]
    assert attributes.read_text().splitlines()[-1] == "/.loa.config.yaml merge=grimoire"
    assert json.loads(mem("init", "--json").out)["updated"] == []


@pytest.mark.git
def test_cache_is_ignored_by_git(repo: Path):
    assert mem("add", "-c", "fact", "The build uses make").code == 0
    assert mem("list").code == 0
    status = git("status", "--porcelain", "--untracked-files=all", cwd=repo)
    assert ".cache" not in status
    assert "facts.yaml" in status


def test_version_prints_without_a_command(tmp_path):
    # Issue 21.7: `mem --version` said "Missing command." and exited 2.
    from conftest import mem_process

    from grimoire_cli import __version__

    result = mem_process("--version", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.decode() == f"mem {__version__}\n" and result.stderr == b""
    assert "--version" in mem("--help").out


@pytest.mark.parametrize(
    "args", [("add", "-c", "fact", "Loose fact here"), ("list",), ("query", "loose"), ("archive",)]
)
def test_commands_outside_a_grimoire_refuse_and_create_nothing(tmp_path, monkeypatch, args):
    # Issue 21.8: `mem add` in a folder without a grimoire created grimoires/.
    monkeypatch.chdir(tmp_path)
    git("init", "-q", cwd=tmp_path)
    result = mem(*args)
    assert result.code == 2 and result.err.startswith("error: no grimoire here") and "run `mem init`" in result.err
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git"]


def test_init_outside_git_says_once_that_nothing_is_committed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = mem("init")
    assert first.code == 0 and first.err.count("not a git repository") == 1
    assert mem("add", "-c", "fact", "A fact kept outside git").code == 0
    assert "not a git repository" not in mem("add", "-c", "fact", "Another fact kept outside git").err
    git("init", "-q", cwd=tmp_path)
    assert mem("init").err == ""
    assert json.loads(mem("init", "--json").out)["git"] is True
