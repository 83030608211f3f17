"""Kinds of category, presets, local categories and ttl units (docs/agent-personas.md)."""

import json
from pathlib import Path

import pytest
from conftest import git, mem

MEMORY = Path("grimoires/loa/memory")
SABRE = ["semantic", "episode", "procedure", "task", "summary", "cache"]


def _commit_all(repo: Path, message: str = "start") -> None:
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", message, cwd=repo)


def test_preset_adds_its_categories_with_comments_and_files(repo):
    config = repo / ".loa.config.yaml"
    before = config.read_text()
    result = mem("init", "--preset", "sabre", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["categories_added"] == SABRE
    text = config.read_text()
    assert text.startswith(before.split("  auto_capture")[0])  # the user's lines, alignment and all, are kept
    assert "# SABRE (mem init --preset sabre)" in text
    assert "task: {kind: task, storage_file: tasks.yaml" in text and "# prospective" in text
    for name in (
        "semantic.yaml",
        "episodes.yaml",
        "procedures.yaml",
        "tasks.yaml",
        "summaries.yaml",
        "local/cache.yaml",
    ):
        assert (repo / MEMORY / name).read_text().startswith("# grimoire:"), name
    assert "local/" in (repo / MEMORY / ".gitignore").read_text().splitlines()
    assert mem("validate").code == 0


def test_preset_is_idempotent(repo):
    assert mem("init", "--preset", "sabre").code == 0
    files = {p: p.read_bytes() for p in [repo / ".loa.config.yaml", *(repo / MEMORY).rglob("*.yaml")]}
    again = mem("init", "--preset", "sabre", "--json")
    assert again.code == 0 and json.loads(again.out)["categories_added"] == []
    assert json.loads(again.out)["created"] == []
    assert {p: p.read_bytes() for p in files} == files


def test_preset_on_a_config_that_relies_on_the_default_categories(tmp_path, monkeypatch):
    git("init", "-q", cwd=tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".loa.config.yaml").write_text(
        "# mine\nmemory_schema:\n  retrieval: {min_confidence: 0.5}  # keep me\nother: 1\n"
    )
    assert mem("init", "--preset", "sabre").code == 0, "preset"
    text = (tmp_path / ".loa.config.yaml").read_text()
    assert "  retrieval: {min_confidence: 0.5}  # keep me\n" in text and text.endswith("other: 1\n")
    from grimoire_cli.core.config import load_config

    names = list(load_config(tmp_path).categories)
    assert names == ["fact", "decision", "learning", "error", "preference", *SABRE]  # the defaults are still there
    assert load_config(tmp_path).retrieval["min_confidence"] == 0.5


def test_an_unknown_preset_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = mem("init", "--preset", "nope")
    assert result.code == 2 and result.err.startswith("error: unknown preset 'nope'") and "sabre" in result.err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "text",
    [
        "memory_schema:\n  categories: {fact: {}, decision: {}}\n",
        "memory_schema: {enabled: true, storage_dir: grimoires/loa/memory}\n",
    ],
)
def test_a_flow_style_config_is_refused_untouched(repo, text):
    config = repo / ".loa.config.yaml"
    config.write_text(text)
    result = mem("init", "--preset", "sabre")
    assert result.code == 2 and "not written as a block" in result.err
    assert config.read_text() == text


def test_a_missing_kind_is_bad_input_naming_the_preset(repo):
    from grimoire_cli.core.config import load_config
    from grimoire_cli.core.errors import BadInput

    with pytest.raises(BadInput) as caught:
        load_config(repo).of_kind("task")
    assert caught.value.exit_code == 2 and "--preset sabre" in str(caught.value)
    assert mem("init", "--preset", "sabre").code == 0
    assert load_config(repo).of_kind("task").storage_file == "tasks.yaml"
    with pytest.raises(BadInput, match="of kind note, not task"):
        load_config(repo).of_kind("task", "fact")


def test_an_unknown_kind_in_the_config_is_damage(repo):
    (repo / ".loa.config.yaml").write_text("memory_schema:\n  categories:\n    diary: {kind: journal}\n")
    result = mem("list")
    assert result.code == 3 and "kind 'journal'" in result.err


def _hand_write(repo: Path, name: str, text: str) -> Path:
    path = repo / MEMORY / name
    path.write_text(path.read_text() + text)
    return path


def test_validate_checks_each_kinds_fields_with_their_lines(repo):
    assert mem("init", "--preset", "sabre").code == 0
    _hand_write(
        repo,
        "tasks.yaml",
        """\
- id: MEM-20261122-001
  category: task
  summary: Rotate the logs
  content: Rotate the logs
  confidence: 0.9
  ttl: 30d
  expires_at: "2026-12-22T10:00:00Z"
  task: Rotate the logs
  status: someday
  source: {session_id: s, timestamp: "2026-11-22T10:00:00Z"}
""",
    )
    _hand_write(
        repo,
        "episodes.yaml",
        """\
- id: MEM-20261122-002
  category: episode
  summary: The deploy failed
  content: The deploy failed
  confidence: 0.9
  ttl: 180d
  expires_at: "2027-05-21T10:00:00Z"
  event: deploy
  outcome: success
  source: {session_id: s, timestamp: "2026-11-22T10:00:00Z"}
- id: MEM-20261122-003
  category: episode
  summary: A note in the wrong file
  content: A note in the wrong file
  confidence: 0.9
  ttl: 180d
  expires_at: "2027-05-21T10:00:00Z"
  source: {session_id: s, timestamp: "2026-11-22T10:00:00Z"}
""",
    )
    report = json.loads(mem("validate", "--format", "json").out)
    found = {(p["file"].split("/")[-1], p["line"], p["id"]) for p in report["problems"]}
    tasks_start = (repo / MEMORY / "tasks.yaml").read_text().split("\n").index("- id: MEM-20261122-001") + 1
    assert ("tasks.yaml", tasks_start + 8, "MEM-20261122-001") in found  # status: someday, on its own line
    assert ("tasks.yaml", tasks_start, "MEM-20261122-001") in found  # trigger is required
    assert [p for p in report["problems"] if p["id"] == "MEM-20261122-002"] == []  # a well-formed episode
    missing = [p["message"] for p in report["problems"] if p["id"] == "MEM-20261122-003"]
    assert any("'event' is a required property" in m for m in missing)
    # A note category takes none of these fields.
    _hand_write(
        repo,
        "facts.yaml",
        """\
- id: MEM-20261122-004
  category: fact
  summary: A fact with an event
  content: A fact with an event
  confidence: 0.9
  ttl: permanent
  event: deploy
  source: {session_id: s, timestamp: "2026-11-22T10:00:00Z"}
""",
    )
    problems = json.loads(mem("validate", "--format", "json").out)["problems"]
    assert any(p["id"] == "MEM-20261122-004" and "'event' was unexpected" in p["message"] for p in problems)


def test_ttl_units_in_hours_and_minutes(repo):
    assert mem("init", "--preset", "sabre").code == 0
    added = mem("add", "-c", "cache", "--ttl", "90m", "The build cache is warm", "--json")
    assert added.code == 0, added.err
    assert json.loads(added.out)["expires_at"] == "2026-11-22T11:30:00Z"
    assert (
        json.loads(mem("add", "-c", "semantic", "--ttl", "12h", "The queue is paused", "--json").out)["expires_at"]
        == "2026-11-22T22:00:00Z"
    )
    assert mem("list", "-c", "cache", env={"MEM_NOW": "2026-11-22T11:29:00Z"}).out.count("MEM-") == 1
    assert mem("list", "-c", "cache", env={"MEM_NOW": "2026-11-22T11:31:00Z"}).out == ""
    assert mem("validate").code == 0


def test_loa_categories_keep_days(repo):
    refused = mem("add", "-c", "fact", "--ttl", "12h", "The queue is paused for the night")
    assert refused.code == 2 and "Loa's fact category takes days" in refused.err
    assert mem("add", "-c", "fact", "--ttl", "2w", "The queue is paused").code == 2
    _hand_write(
        repo,
        "facts.yaml",
        """\
- id: MEM-20261122-001
  category: fact
  summary: Short-lived
  content: Short-lived
  confidence: 0.9
  ttl: 2h
  expires_at: "2026-11-22T12:00:00Z"
  source: {session_id: s, timestamp: "2026-11-22T10:00:00Z"}
""",
    )
    problems = json.loads(mem("validate", "--format", "json").out)["problems"]
    assert [(p["rule"], p["line"]) for p in problems] == [("ttl", 9)]
    (repo / ".loa.config.yaml").write_text("memory_schema:\n  categories:\n    fact: {ttl: 12h}\n")
    damaged = mem("list")
    assert damaged.code == 3 and "Loa's categories take days" in damaged.err


def test_a_local_category_is_never_committed(repo):
    assert mem("init", "--preset", "sabre").code == 0
    _commit_all(repo)
    assert mem("add", "-c", "cache", "--ttl", "1h", "The staging database is warm").code == 0
    assert mem("add", "-c", "error", "The staging deploy timed out twice").code == 0
    assert (repo / MEMORY / "local/cache.yaml").read_text().count("- id:") == 1
    status = git("status", "--porcelain", cwd=repo).splitlines()
    assert status == [" M grimoires/loa/memory/errors.yaml"]  # the local file is ignored
    git("commit", "-q", "-am", "an error", cwd=repo)
    later = {"MEM_NOW": "2027-01-01T10:00:00Z"}  # both expired
    result = mem("archive", "--json", env=later)
    assert result.code == 0, result.err
    done = json.loads(result.out)
    assert len(done["archived"]) == 2 and done["commit"]
    committed = git("show", "--name-only", "--format=", done["commit"], cwd=repo).split()
    assert committed == ["grimoires/loa/memory/archive/errors.yaml", "grimoires/loa/memory/errors.yaml"]
    assert "The staging database is warm" in (repo / MEMORY / "local/archive/cache.yaml").read_text()
    assert "- id:" not in (repo / MEMORY / "local/cache.yaml").read_text()
    assert git("status", "--porcelain", cwd=repo) == ""
    assert mem("validate").code == 0


def test_only_local_moves_make_no_commit(repo):
    assert mem("init", "--preset", "sabre").code == 0
    _commit_all(repo)
    assert mem("add", "-c", "cache", "--ttl", "10m", "The build cache is warm").code == 0
    head = git("rev-parse", "HEAD", cwd=repo)
    done = json.loads(mem("archive", "--json", env={"MEM_NOW": "2026-11-22T11:00:00Z"}).out)
    assert len(done["archived"]) == 1 and done["commit"] is None and done["notes"] == []
    assert git("rev-parse", "HEAD", cwd=repo) == head


def test_a_clean_clone_without_local_files_validates(repo, tmp_path):
    assert mem("init", "--preset", "sabre").code == 0
    assert mem("add", "-c", "cache", "--ttl", "1h", "The build cache is warm").code == 0
    _commit_all(repo)
    clone = tmp_path / "clone"
    git("clone", "-q", str(repo), str(clone), cwd=tmp_path)
    assert not (clone / MEMORY / "local").exists()
    from conftest import mem_process

    checked = mem_process("validate", cwd=clone)
    assert checked.returncode == 0, checked.stderr
    # and the local category works there once used
    added = mem_process("add", "-c", "cache", "--ttl", "1h", "The clone's cache is cold", cwd=clone)
    assert added.returncode == 0, added.stderr
    assert git("status", "--porcelain", cwd=clone) == ""


def test_per_scope_categories(repo):
    config = repo / ".loa.config.yaml"
    config.write_text(
        config.read_text()
        + "  scopes:\n    coder:\n      categories:\n        snippet: {storage_file: snippets.yaml}\n"
    )
    assert mem("--scope", "coder", "init").code == 0
    assert (repo / "grimoires/coder/memory/snippets.yaml").exists()
    assert not (repo / MEMORY / "snippets.yaml").exists()
    assert mem("--scope", "coder", "add", "-c", "snippet", "Use pathlib for paths").code == 0
    refused = mem("add", "-c", "snippet", "Use pathlib for paths")
    assert refused.code == 2 and "unknown category 'snippet'" in refused.err
    assert mem("--scope", "coder", "validate").code == 0
    config.write_text(config.read_text() + "        other: {storage_file: facts.yaml}\n")
    clash = mem("--scope", "coder", "list")
    assert clash.code == 3 and "used by fact and other" in clash.err


def test_the_config_schema_describes_a_preset_config(repo):
    from jsonschema import Draft202012Validator

    from grimoire_cli.core.schemas import load_schema
    from grimoire_cli.storage.yamlio import parse_document

    assert mem("init", "--preset", "sabre").code == 0
    config = repo / ".loa.config.yaml"
    config.write_text(
        config.read_text()
        + "  scopes:\n    coder:\n      categories:\n        snippet: {storage_file: snippets.yaml}\n"
    )
    validator = Draft202012Validator(load_schema("config.schema.json"))
    assert list(validator.iter_errors(parse_document(config.read_text(), "config")[0])) == []
    config.write_text(config.read_text().replace("kind: task", "kind: chore"))
    assert [e.message for e in validator.iter_errors(parse_document(config.read_text(), "config")[0])] != []
    config.write_text(
        config.read_text()
        .replace("kind: chore", "kind: task")
        .replace("new_categories: tracked", "new_categories: always")
    )
    assert [e.message for e in validator.iter_errors(parse_document(config.read_text(), "config")[0])] != []


def test_a_plain_add_to_an_episode_category_names_a_way_that_exists(repo):
    assert mem("init", "--preset", "sabre").code == 0
    result = mem("add", "-c", "episode", "The deploy failed")
    assert result.code == 2 and "`mem episode EVENT`" in result.err  # the command that writes episodes
    assert mem("episode", "deploy-failed", "--learned", "The deploy failed").code == 0
