import subprocess
import sys

import pytest

from grimoire_cli.core.errors import BadInput, NotFound, Refused


def test_api_mirrors_commands(grimoire):
    entry = grimoire.add("The service is written in Go", category="fact", tags=["Lang"])
    assert entry.id == "MEM-20261122-001" and entry.tags == ["lang"]
    assert grimoire.show(entry.id).content == "The service is written in Go"
    newer = grimoire.supersede(entry.id, "The service is written in Rust")
    assert [e.id for e in grimoire.show(newer.id, chain=True)] == [entry.id, newer.id]
    assert [e.id for e in grimoire.list()] == [newer.id]
    keyed = grimoire.add("Port is 8080", category="fact", key="svc.port")
    assert grimoire.get("svc.port").id == keyed.id
    with pytest.raises(NotFound):
        grimoire.get("svc.none")
    assert grimoire.validate().ok


def test_add_many_one_lock_all_or_nothing(grimoire):
    items = [{"content": f"bulk fact {i}", "category": "fact"} for i in range(50)]
    written = grimoire.add_many(items)
    assert len({e.id for e in written}) == 50
    before = (grimoire.config.storage_dir / "facts.yaml").read_bytes()
    with pytest.raises(BadInput):
        grimoire.add_many([{"content": "fine", "category": "fact"}, {"content": "", "category": "fact"}])
    assert (grimoire.config.storage_dir / "facts.yaml").read_bytes() == before
    with pytest.raises(Refused):
        grimoire.add_many([{"content": "new one", "category": "fact"}, {"content": "new one", "category": "fact"}])
    written = grimoire.add_many(
        [{"content": "ok one", "category": "fact"}, {"content": "", "category": "fact"}], skip_invalid=True
    )
    assert [e.content for e in written] == ["ok one"] and written.rejected[0].index == 1


def test_import_is_light():
    code = "import sys, grimoire_cli; from grimoire_cli import Grimoire; print(sorted(m for m in ('typer','rich','jsonschema','git','rapidfuzz') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_wheel_ships_schemas(tmp_path):
    """schemas/ is the single source; the built wheel carries it inside the package."""
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(root),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("grimoire_cli-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "grimoire_cli/schemas/memory.schema.json" in names
    assert "grimoire_cli/cli/main.py" in names
    # `mem serve`'s templates and static files are package data (docs/web.md).
    assert "grimoire_cli/integrations/web/templates/base.html" in names
    assert "grimoire_cli/integrations/web/static/style.css" in names


def test_result_types_are_exported():
    import grimoire_cli

    for name in grimoire_cli.__all__:
        assert getattr(grimoire_cli, name) is not None, name
    assert (
        grimoire_cli.Hit.__module__ == "grimoire_cli.retrieval.search"
        and grimoire_cli.Report.__module__ == "grimoire_cli.memory.validate"
    )
    with pytest.raises(AttributeError):
        grimoire_cli.NoSuchThing  # noqa: B018


def test_facade_options_are_keyword_only(grimoire):
    grimoire.add("The service is written in Go", category="fact")
    with pytest.raises(TypeError):
        grimoire.query("service", 5)  # limit is keyword-only
    assert [h.entry.content for h in grimoire.query("service", limit=5)] == ["The service is written in Go"]


def test_a_runtime_given_is_the_one_used_and_the_environment_is_not_read(repo, monkeypatch):
    from datetime import UTC, datetime

    from grimoire_cli import Grimoire
    from grimoire_cli.core.runtime import Runtime

    monkeypatch.setenv("MEM_NOW", "not a time")  # never read: the runtime is given
    monkeypatch.setenv("MEM_AGENT", "from-the-environment")
    given = Runtime(now=datetime(2030, 5, 1, 9, 30, tzinfo=UTC), session_id="ses-given", agent="claude", phase="p2")
    grimoire = Grimoire.open(repo, runtime=given)
    entry = grimoire.add("The build cache lives in S3", "fact")
    assert entry.id.startswith("MEM-20300501-")
    assert entry.data["source"] == {
        "session_id": "ses-given",
        "timestamp": "2030-05-01T09:30:00Z",
        "agent": "claude",
        "phase": "p2",
    }
    other = grimoire.in_scope("loa") if "loa" in grimoire.config.scopes() else grimoire
    assert other.runtime is given and grimoire.with_runtime(given.but(session_id="s2")).runtime.session_id == "s2"


def test_without_a_runtime_the_library_reads_the_environment_as_mem_does(repo, monkeypatch):
    from grimoire_cli import Grimoire

    monkeypatch.setenv("MEM_NOW", "2031-01-02T03:04:05Z")
    assert Grimoire.open(repo).now().isoformat() == "2031-01-02T03:04:05+00:00"
    monkeypatch.setenv("MEM_NOW", "yesterday")
    with pytest.raises(BadInput, match="MEM_NOW is not an ISO-8601 time"):
        Grimoire.open(repo)
