"""SABRE's free-form categories: a category a fact or procedure names that
the config lacks is added to it on first use, tracked or local as
`memory_schema.new_categories` says (the sabre preset says tracked)."""

from __future__ import annotations

import json

import pytest
from conftest import fresh_repo, git, mem

from grimoire_cli import Grimoire
from grimoire_cli.adapters.sabre import Sabre
from grimoire_cli.core.errors import BadInput
from grimoire_cli.core.runtime import Runtime

AWS = "AKIA" + "IOSFODNN7EXAMPLE"  # split so this file holds no secret a scanner would flag


def adapter(path) -> Sabre:
    return Sabre(Grimoire.open(path, runtime=Runtime.from_environment()))


def test_a_new_category_is_added_tracked_on_first_use(sabre):
    helpers = adapter(sabre)
    helpers.remember_fact("trusted_sources.science", ["nature.com", "arxiv.org"], ttl=3600, category="research")
    helpers.remember_procedure("restart-service", [{"action": "Kubernetes.set_image(service, version)"}], "runbooks")
    helpers.remember_fact("project.test_command", "pytest -q")  # SABRE's default `general`: the default category

    config = (sabre / ".loa.config.yaml").read_text()
    assert "research: {storage_file: research.yaml, ttl: permanent" in config
    assert "runbooks: {kind: procedure, storage_file: runbooks.yaml" in config
    assert {"research", "runbooks"} <= set(helpers.list_memory_categories())
    assert helpers.search_facts(category="research") == {"trusted_sources.science": ["nature.com", "arxiv.org"]}
    assert [p["category"] for p in helpers.list_procedures(category="runbooks")] == ["runbooks"]
    # What the grimoire holds is what `mem` shows, in a file git tracks.
    assert json.loads(mem("recall", "trusted_sources.science", "--json").out)["category"] == "research"
    assert json.loads(mem("recall", "project.test_command", "--json").out)["category"] == "semantic"
    assert "?? grimoires/loa/memory/research.yaml" in git("status", "--short", cwd=sabre)
    assert mem("validate").code == 0


def test_a_new_category_is_local_when_the_config_says_so(sabre):
    config = sabre / ".loa.config.yaml"
    config.write_text(config.read_text().replace("new_categories: tracked", "new_categories: local"))
    adapter(sabre).remember_fact("scratch.value", 42, category="scratch")

    assert "scratch: {storage_file: scratch.yaml, ttl: permanent, confidence_required: 0.5, tracked: false}" in (
        config.read_text()
    )
    assert (sabre / "grimoires/loa/memory/local/scratch.yaml").exists()
    assert "scratch" not in git("status", "--short", "--untracked-files=all", cwd=sabre)


@pytest.mark.parametrize("name", ["Bad Name!", "x" * 41, "9lives"])
def test_a_bad_category_name_is_refused_and_nothing_is_written(sabre, name):
    before = (sabre / ".loa.config.yaml").read_text()
    with pytest.raises(BadInput, match="bad category name"):
        adapter(sabre).remember_fact("k.v", 1, category=name)
    assert (sabre / ".loa.config.yaml").read_text() == before
    assert git("status", "--short", cwd=sabre) == ""


def test_a_refused_write_takes_its_new_category_out_again(sabre):
    before = (sabre / ".loa.config.yaml").read_text()
    with pytest.raises(Exception, match="secret"):
        adapter(sabre).remember_fact("aws.key", f"the key is {AWS}", category="credentials")
    assert (sabre / ".loa.config.yaml").read_text() == before
    assert "credentials" not in adapter(sabre).list_memory_categories()


def test_mem_remember_adds_a_new_category_as_the_config_says(sabre):
    assert mem("remember", "team.lead", "Ada", "-c", "people").code == 0
    assert json.loads(mem("recall", "team.lead", "--json").out)["category"] == "people"

    bad = mem("remember", "team.cto", "Grace", "-c", "Bad!")
    assert (bad.code, bad.err.count("\n")) == (2, 1) and bad.err.startswith("error: bad category name 'Bad!'")


def test_without_the_setting_an_unknown_category_is_still_refused(repo):
    result = mem("remember", "team.lead", "Ada", "-c", "people")
    assert result.code == 2 and "unknown category 'people'" in result.err
    assert "people" not in (repo / ".loa.config.yaml").read_text()


def test_mem_procedure_add_adds_a_procedure_category_and_a_refused_one_leaves_none(sabre):
    (sabre / "restart.yaml").write_text(
        "name: restart-api\nsteps:\n  - name: restart\n    run: kubectl rollout restart api\n"
    )
    (sabre / "bad.yaml").write_text("name: bad\nsteps: 3\n")
    assert mem("procedure", "add", "restart.yaml", "-c", "runbooks").code == 0
    assert json.loads(mem("procedures", "--json").out)[0]["category"] == "runbooks"

    before = (sabre / ".loa.config.yaml").read_text()
    assert mem("procedure", "add", "bad.yaml", "-c", "drafts").code == 2
    assert (sabre / ".loa.config.yaml").read_text() == before


def test_a_bad_new_categories_setting_is_a_config_error(sabre):
    config = sabre / ".loa.config.yaml"
    config.write_text(config.read_text().replace("new_categories: tracked", "new_categories: always"))
    result = mem("remember", "team.lead", "Ada", "-c", "people")
    assert result.code == 3 and "memory_schema.new_categories must be tracked or local, not 'always'" in result.err


def test_an_export_imports_into_a_fresh_grimoire_with_its_new_categories(sabre, tmp_path, monkeypatch):
    helpers = adapter(sabre)
    helpers.remember_fact("trusted_sources.science", ["nature.com"], 3600, "research")
    helpers.remember_procedure("restart-service", [{"action": "Kubernetes.set_image(service, version)"}], "runbooks")
    exported = mem("export", "--archived").out
    other = fresh_repo(tmp_path / "other", monkeypatch, preset="sabre")
    grimoire = Grimoire.open(other)
    assert len(grimoire.import_lines(exported.splitlines()).imported) == 2
    # The grimoire that imported knows its new categories at once (and the file says them, kinds and all).
    assert [e.key for e in grimoire.list(categories=["research"])] == ["trusted_sources.science"]
    config = (other / ".loa.config.yaml").read_text()
    assert "research: {storage_file: research.yaml" in config
    assert "runbooks: {kind: procedure, storage_file: runbooks.yaml" in config
    assert mem("export", "--archived").out == exported
    assert mem("validate").code == 0


def test_a_refused_import_adds_no_category(sabre, tmp_path, monkeypatch):
    adapter(sabre).remember_fact("trusted_sources.science", ["nature.com"], 3600, "research")
    exported = mem("export").out
    other = fresh_repo(tmp_path / "other", monkeypatch, preset="sabre")
    before = (other / ".loa.config.yaml").read_text()
    bad = json.dumps({"content": "no category here", "category": "nosuch", "confidence": 2})
    result = mem("import", "-", input=exported + bad + "\n")
    assert result.code == 2 and "line 2" in result.err
    assert (other / ".loa.config.yaml").read_text() == before
    assert mem("export").out == ""
