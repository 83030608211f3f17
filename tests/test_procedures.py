"""Procedural memory (SABRE): mem procedure add / show, mem procedures; mem never executes a step."""

import json
from pathlib import Path

import pytest
from conftest import examples, git, mem
from hypothesis import given, settings
from hypothesis import strategies as st

PROCEDURES = Path("grimoires/loa/memory/procedures.yaml")
RUNBOOK = """\
name: deploy-service
description: Ship one service to production
steps:
  - name: Run the tests
    run: make test
  - name: Build the image
    run: docker build -t {service}:{version} .
    condition: the tests passed
  - Tell the channel
"""


def _add(path: Path, text: str = RUNBOOK) -> str:
    path.write_text(text)
    result = mem("procedure", "add", path)
    assert result.code == 0, result.err
    return result.out.strip()


def test_a_runbook_is_kept_and_shown_as_a_checklist(sabre, tmp_path):
    entry_id = _add(tmp_path / "deploy.yaml")
    shown = json.loads(mem("show", entry_id, "--json").out)
    assert shown["name"] == "deploy-service" and shown["params"] == ["service", "version"]  # found in the steps
    assert shown["steps"][2] == {"name": "Tell the channel"}  # a bare line is a step's name
    assert (
        shown["content"]
        == "deploy-service: Ship one service to production. Steps: 1. Run the tests; 2. Build the image; 3. Tell the channel"
    )
    checklist = mem("procedure", "show", "deploy-service", "--param", "service=api", "--param", "version=1.2")
    assert checklist.code == 0
    assert checklist.out.splitlines() == [
        f"deploy-service ({entry_id})",
        "Ship one service to production",
        "1. [ ] Run the tests",
        "   run: make test",
        "2. [ ] Build the image",
        "   only if: the tests passed",
        "   run: docker build -t api:1.2 .",
        "3. [ ] Tell the channel",
    ]
    as_json = json.loads(
        mem("procedure", "show", "deploy-service", "--param", "service=api", "--param", "version=1.2", "--json").out
    )
    assert as_json["steps"][1]["run"] == "docker build -t api:1.2 ." and as_json["params"] == {
        "service": "api",
        "version": "1.2",
    }
    assert mem("validate").code == 0
    assert git("status", "--porcelain", cwd=sabre).split() == ["M", str(PROCEDURES)]


def test_showing_never_writes_or_runs_anything(sabre, tmp_path):
    marker = tmp_path / "ran"
    _add(tmp_path / "p.yaml", f"name: touchy\nsteps:\n  - name: Make a file\n    run: touch {marker}\n")
    git("add", "-A", cwd=sabre)
    git("commit", "-qm", "procedure", cwd=sabre)
    assert mem("procedure", "show", "touchy").code == 0 and mem("procedures").code == 0
    assert not marker.exists() and git("status", "--porcelain", cwd=sabre) == ""
    helps = {
        args: " ".join(mem(*args, "--help").out.split())
        for args in (("procedure",), ("procedure", "add"), ("procedure", "show"))
    }
    assert "mem never executes a step: a runbook from git is data, not code" in helps[("procedure",)]
    assert (
        "Nothing is executed" in helps[("procedure", "add")]
        and "mem executes none of it" in helps[("procedure", "show")]
    )


def test_missing_and_unknown_params_are_named(sabre, tmp_path):
    _add(tmp_path / "deploy.yaml")
    missing = mem("procedure", "show", "deploy-service", "--param", "service=api")
    assert (
        missing.code == 2
        and "missing param {version} for deploy-service" in missing.err
        and "--param version=VALUE" in missing.err
    )
    both = mem("procedure", "show", "deploy-service")
    assert "missing params {service}, {version}" in both.err
    unknown = mem(
        "procedure", "show", "deploy-service", "--param", "service=a", "--param", "version=1", "--param", "region=eu"
    )
    assert unknown.code == 2 and "does not take region (it takes service, version)" in unknown.err
    assert mem("procedure", "show", "nothing-here").code == 1


def test_the_description_is_filled_too_and_template_shows_it_as_written(sabre, tmp_path):
    entry_id = _add(
        tmp_path / "deploy.yaml", RUNBOOK.replace("Ship one service to production", "Ship {service} to production")
    )
    filled = mem("procedure", "show", "deploy-service", "--param", "service=api", "--param", "version=1.2")
    assert filled.code == 0 and filled.out.splitlines()[1] == "Ship api to production" and "{" not in filled.out
    as_json = json.loads(
        mem("procedure", "show", "deploy-service", "--param", "service=api", "--param", "version=1.2", "--json").out
    )
    assert as_json["description"] == "Ship api to production"
    # without every param: still refused, and the hint names --template
    refused = mem("procedure", "show", "deploy-service")
    assert refused.code == 2 and "missing params {service}, {version}" in refused.err and "--template" in refused.err
    template = mem("procedure", "show", "deploy-service", "--template")
    assert template.code == 0, template.err
    assert template.out.splitlines()[:3] == [
        f"deploy-service ({entry_id})",
        "Ship {service} to production",
        "template: fill {service}, {version} with --param service=VALUE --param version=VALUE",
    ]
    assert "   run: docker build -t {service}:{version} ." in template.out.splitlines()
    # a template fills the params it is given and leaves the others marked
    partly = json.loads(mem("procedure", "show", "deploy-service", "--template", "--param", "version=2", "--json").out)
    assert (
        partly["params"] == {"service": None, "version": "2"}
        and partly["steps"][1]["run"] == "docker build -t {service}:2 ."
    )
    # Unknown: still refused
    assert mem("procedure", "show", "deploy-service", "--template", "--param", "region=eu").code == 2


def test_a_param_only_the_description_uses_is_a_param(sabre, tmp_path):
    _add(tmp_path / "p.yaml", "name: page\ndescription: Page the {team} on call\nsteps:\n  - Open the pager\n")
    assert json.loads(mem("procedures", "--json").out)[0]["params"] == ["team"]
    assert mem("procedure", "show", "page").code == 2
    assert mem("procedure", "show", "page", "--param", "team=db").out.splitlines()[1] == "Page the db on call"


def test_superseding_a_procedure_by_hand_points_to_procedure_add(sabre, tmp_path):
    entry_id = _add(tmp_path / "deploy.yaml")
    before = PROCEDURES.read_bytes()
    result = mem("supersede", entry_id, "Ship it differently")
    assert result.code == 2 and "`mem procedure add FILE`" in result.err and "mem import" not in result.err, result.err
    assert PROCEDURES.read_bytes() == before


def test_a_new_version_supersedes_and_the_same_version_writes_nothing(sabre, tmp_path):
    first = _add(tmp_path / "deploy.yaml")
    before = PROCEDURES.read_bytes()
    again = mem("procedure", "add", tmp_path / "deploy.yaml")
    assert again.out.strip() == first and "unchanged" in again.err and PROCEDURES.read_bytes() == before
    second = _add(tmp_path / "deploy.yaml", RUNBOOK.replace("Ship one", "Ship exactly one"))
    assert second != first
    assert json.loads(mem("show", first, "--json").out)["superseded_by"] == second
    listed = json.loads(mem("procedures", "--json").out)
    assert [(p["id"], p["description"]) for p in listed] == [(second, "Ship exactly one service to production")]


def test_success_rate_comes_from_apply(sabre, tmp_path):
    entry_id = _add(tmp_path / "deploy.yaml")
    assert "not yet applied" in mem("procedures").out
    assert mem("apply", entry_id, "--success").code == 0
    assert mem("apply", entry_id, "--failure").code == 0
    line = mem("procedures").out
    assert line.startswith("deploy-service") and "1/2 ok" in line and entry_id in line
    assert (
        "1/2 succeeded"
        in mem("procedure", "show", "deploy-service", "--param", "service=a", "--param", "version=1").out
    )


def test_json_from_stdin_is_a_procedure_too(sabre):
    document = {
        "name": "rotate-keys",
        "description": "Rotate a key",
        "params": ["key"],
        "steps": [{"name": "Rotate", "run": "vault rotate {key}"}],
        "tags": ["security"],
    }
    result = mem("procedure", "add", "-", input=json.dumps(document))
    assert result.code == 0, result.err
    shown = json.loads(mem("show", result.out.strip(), "--json").out)
    assert shown["tags"] == ["security"] and shown["params"] == ["key"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("[1, 2]", "a procedure is a mapping with name and steps"),
        ("name: x\nsteps: 3\n", "steps is not a list of steps"),
        ("name: x\nsteps: []\n", "steps is not a list of steps"),
        ("name: x\nsteps: [a, {run: ls}]\n", "step 2 is not a step with a name"),
        ("name: x\nsteps: [{name: a, shell: ls}]\n", "step 1 has unknown field shell"),
        ("name: x\nsteps: [a]\nowner: me\n", "unknown field owner in a procedure"),
        ("name: Deploy It\nsteps: [a]\n", "needs a name that is a lowercase slug"),
        ("name: x\nsteps: [a\n", "<stdin>:3: not valid YAML"),
        ("name: x\nsteps: [{name: a, run: 12}]\n", "step 1's run is not text"),
        (
            "name: x\ndescription: the token is ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nsteps: [a]\n",
            "refusing to store a secret",
        ),
        ("name: x\ndescription: 123\nsteps: [a]\n", "description is not text"),
        ("name: x\ntags: 5\nsteps: [a]\n", "tags is not a list of words"),
        ("name: x\ntags: deploy\nsteps: [a]\n", "tags is not a list of words"),
        ("name: x\ntags: [null]\nsteps: [a]\n", "tags is not a list of words"),
        ("name: x\nparams: service\nsteps: [a]\n", "params is not a list of names"),
        (
            "",
            "a procedure is a mapping with name and steps: a list of {name, run?, description?, condition?}, not empty",
        ),
    ],
)
def test_a_bad_procedure_is_one_error_and_writes_nothing(sabre, text, message):
    before = PROCEDURES.read_bytes()
    result = mem("procedure", "add", "-", input=text)
    assert result.code in (2, 3) and "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1
    assert message in result.err, result.err
    assert PROCEDURES.read_bytes() == before


def test_a_missing_file_is_bad_input(sabre):
    result = mem("procedure", "add", "nowhere.yaml")
    assert result.code == 2 and "no such file: nowhere.yaml" in result.err


def test_procedures_need_a_procedure_category(repo, tmp_path):
    result = mem("procedure", "add", "-", input=RUNBOOK)
    assert result.code == 2 and "mem init --preset sabre" in result.err
    assert mem("procedures").code == 2


def test_procedures_lists_one_category_when_asked(sabre):
    assert mem("procedure", "add", "-", input=RUNBOOK).code == 0
    assert json.loads(mem("procedures", "-c", "procedure", "--json").out)[0]["name"] == "deploy-service"
    wrong = mem("procedures", "-c", "fact")
    assert wrong.code == 2 and "category 'fact' is of kind note, not procedure" in wrong.err


def test_the_python_api(sabre):
    from grimoire_cli import Grimoire

    g = Grimoire.open(sabre)
    document = {
        "name": "rotate-keys",
        "steps": ["Open the vault", {"name": "Rotate", "run": "vault rotate {key}"}],
        "description": "Rotate a key",
    }
    saved = g.procedures.add(document)
    assert saved.written and saved.entry.data["params"] == ["key"]
    assert g.procedures.add(document).written is False
    assert g.procedures.get("rotate-keys", {"key": "db"}).steps[1] == {"name": "Rotate", "run": "vault rotate db"}
    assert [e.data["name"] for e in g.procedures.list()] == ["rotate-keys"]
    stats = g.stats().to_dict()
    assert stats["categories"]["procedure"] == {"active": 1}
    categories = {c["name"]: c for c in g.categories()}
    assert categories["procedure"]["kind"] == "procedure" and categories["cache"]["tracked"] is False
    assert categories["cache"]["file"] == "grimoires/loa/memory/local/cache.yaml"


_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30).filter(lambda s: s.strip())


@settings(max_examples=examples(100))
@given(service=_TEXT, version=_TEXT)
def test_params_are_substituted_exactly_once_whatever_their_values(service, version):
    from grimoire_cli.core.model import Entry
    from grimoire_cli.kinds.procedures import checklist

    entry = Entry(
        {
            "id": "MEM-20261122-001",
            "name": "p",
            "params": ["service", "version"],
            "steps": [{"name": "Do {service}", "run": "x {service}:{version} {other} ${HOME}"}],
        }
    )
    steps = checklist(entry, {"service": service, "version": version}).steps
    assert steps == [{"name": f"Do {service}", "run": f"x {service}:{version} {{other}} ${{HOME}}"}]


def test_query_finds_a_procedure_by_what_its_steps_say(sabre, tmp_path):
    entry_id = _add(tmp_path / "deploy.yaml")
    # "docker" and "passed" are only in a step's run and condition, not in the content line.
    assert "docker" not in json.loads(mem("show", entry_id, "--json").out)["content"]
    assert [h["id"] for h in json.loads(mem("query", "docker", "--json").out)] == [entry_id]
    assert [h["id"] for h in json.loads(mem("query", "passed", "--json").out)] == [entry_id]


def test_validate_reports_two_active_versions_of_one_name(sabre, tmp_path):
    first = _add(tmp_path / "deploy.yaml")
    text = PROCEDURES.read_text()
    block = text[text.index(f"- id: {first}") :]
    PROCEDURES.write_text(text + block.replace(first, "MEM-20261122-009"))  # a copy by hand, both active
    report = json.loads(mem("validate", "--format", "json").out)
    problems = [(p["rule"], p["id"]) for p in report["problems"]]
    assert ("name-unique", "MEM-20261122-009") in problems and not report["ok"]
    line = next(p for p in report["problems"] if p["rule"] == "name-unique")
    assert "procedure 'deploy-service' is also active at" in line["message"]
    assert PROCEDURES.read_text().splitlines()[line["line"] - 1].strip() == "name: deploy-service"
