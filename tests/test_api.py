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
