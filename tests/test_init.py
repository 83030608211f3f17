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
    for path, data in before.items():
        assert path.read_bytes() == data


def test_init_keeps_existing_gitattributes_lines(tmp_path, monkeypatch):
    git("init", "-q", cwd=tmp_path)
    (tmp_path / ".gitattributes").write_text("*.png binary")
    monkeypatch.chdir(tmp_path)
    assert mem("init").code == 0
    lines = (tmp_path / ".gitattributes").read_text().splitlines()
    assert lines[0] == "*.png binary"
    assert any("merge=grimoire" in line for line in lines)


@pytest.mark.git
def test_cache_is_ignored_by_git(repo: Path):
    assert mem("add", "-c", "fact", "The build uses make").code == 0
    assert mem("list").code == 0
    status = git("status", "--porcelain", "--untracked-files=all", cwd=repo)
    assert ".cache" not in status
    assert "facts.yaml" in status
