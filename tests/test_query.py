import json
import subprocess
import sys

from conftest import mem


def seed():
    ids = {}
    ids["fts"] = mem("add", "-c", "decision", "We use SQLite FTS5 for full text search", "-t", "search", "--confidence", "0.95").out.strip()
    ids["deploy"] = mem("add", "-c", "fact", "Deployments run from the release branch every Tuesday", "-t", "deploy").out.strip()
    ids["disk"] = mem("add", "-c", "error", "The nightly build failed because the runner disk was full", "-t", "ci").out.strip()
    ids["tabs"] = mem("add", "-c", "preference", "Indent YAML with two spaces, never tabs").out.strip()
    return ids


def query_ids(*args, env=None):
    result = mem("query", *args, "--json", env=env)
    assert result.code == 0, result.err
    return [h["id"] for h in json.loads(result.out)]


def test_relevance_stemming_and_typos(repo):
    ids = seed()
    assert query_ids("searching")[0] == ids["fts"]           # stemming
    assert query_ids("deployment tuesdays")[0] == ids["deploy"]
    assert query_ids("serach")[0] == ids["fts"]              # two letters swapped
    assert query_ids("deplyments")[0] == ids["deploy"]       # one letter missing
    assert query_ids("nightlly")[0] == ids["disk"]           # one extra letter
    assert set(query_ids("the of and")) == {ids["disk"], ids["deploy"]}  # only stop words: they are searched after all
    assert query_ids("zebra quantum") == []


def test_filters_apply_first(repo):
    ids = seed()
    assert query_ids("runner disk", "-c", "fact") == []
    assert query_ids("search", "-t", "search") == [ids["fts"]]
    assert query_ids("search", "-t", "deploy") == []
    assert query_ids("search", "--min-confidence", "0.99") == []
    later = {"MEM_NOW": "2027-01-05T00:00:00Z"}
    assert query_ids("nightly build", env=later) == []
    assert query_ids("nightly build", "--include-expired", env=later) == [ids["disk"]]
    new = mem("supersede", ids["fts"], "We use SQLite FTS5 with porter stemming for search", "--confidence", "0.95").out.strip()
    assert query_ids("sqlite") == [new]
    assert set(query_ids("sqlite", "--include-superseded")) == {new, ids["fts"]}
    assert len(query_ids("the", "-n", "1")) <= 1


def test_explain_and_score(repo):
    seed()
    hits = json.loads(mem("query", "search", "--json", "--explain").out)
    assert "score" in hits[0] and set(hits[0]["explain"]) >= {"bm25", "relevance", "recency", "prior"}
    text = mem("query", "search", "--explain").out
    assert "relevance=" in text


def test_effectiveness_tier_ranks_higher(repo):
    a = mem("add", "-c", "learning", "Restart the cache server to fix stale reads").out.strip()
    b = mem("add", "-c", "learning", "Flush the cache server to fix stale reads").out.strip()
    assert set(query_ids("cache server stale reads")[:2]) == {a, b}
    for _ in range(3):
        mem("apply", b, "--success")
    assert query_ids("cache server stale reads")[0] == b


def test_context_budget_and_order(repo):
    ids = seed()
    result = mem("context", "--budget", "60")
    text = result.out
    assert text.startswith("## Active Memory\n")
    assert len(text) / 4 <= 60
    lines = text.strip().splitlines()
    assert ids["fts"] in lines[1]  # decisions first
    assert "left out" in lines[-1]
    full = mem("context", "--json").out
    data = json.loads(full)
    assert data["left_out"] == 0 and len(data["included"]) == 4 and data["tokens"] <= 400
    assert mem("context", "--budget", "60").out == text  # deterministic
    queried = mem("context", "disk full runner").out.splitlines()
    assert ids["disk"] in queried[1]


def test_context_budget_property(repo):
    from hypothesis import given, settings, strategies as st

    seed()
    from grimoire_cli import Grimoire

    grimoire = Grimoire.open(repo)

    @settings(max_examples=40, deadline=None)
    @given(st.integers(min_value=20, max_value=600))
    def check(budget):
        ctx = grimoire.context(None, budget)
        assert ctx.tokens <= budget
        assert len(ctx.included) + ctx.left_out == 4

    check()


def test_export_import_round_trip(repo, tmp_path, monkeypatch):
    seed()
    old = json.loads(mem("list", "-c", "fact", "--json").out)[0]["id"]
    mem("supersede", old, "Deployments run from main every Wednesday")
    mem("apply", old, "--success")
    exported = mem("export").out
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    monkeypatch.chdir(fresh)
    mem("init")
    (fresh / "dump.jsonl").write_text(exported)
    result = mem("import", "dump.jsonl", "--json")
    assert result.code == 0, result.err
    assert mem("export").out == exported
    assert mem("validate").code == 0


def test_import_all_or_nothing_and_skip_invalid(repo, tmp_path):
    good = json.dumps({"content": "Imported fact one", "category": "fact"})
    bad = json.dumps({"content": "", "category": "fact"})
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([good, "{not json", bad, json.dumps({"content": "Imported fact two", "category": "fact"})]) + "\n")
    before = (repo / "grimoires/loa/memory/facts.yaml").read_bytes()
    result = mem("import", str(path))
    assert result.code == 2 and "line 2" in result.err and "nothing imported" in result.err
    assert (repo / "grimoires/loa/memory/facts.yaml").read_bytes() == before
    result = mem("import", str(path), "--skip-invalid", "--json")
    data = json.loads(result.out)
    assert result.code == 1 and len(data["imported"]) == 2 and [r["line"] for r in data["rejected"]] == [2, 3]


def test_import_many_lines_one_write_per_file(repo, tmp_path):
    lines = [json.dumps({"content": f"bulk memory {i} about topic {i % 17} and detail {i * 31}", "category": ["fact", "learning"][i % 2]}) for i in range(5000)]
    path = tmp_path / "bulk.jsonl"
    path.write_text("\n".join(lines))
    from grimoire_cli import Grimoire

    grimoire = Grimoire.open(repo)
    writes = []
    original = grimoire.store._temp_copy
    grimoire.store._temp_copy = lambda p, t: (writes.append(p.name), original(p, t))[1]
    result = grimoire.import_lines(path.read_text().splitlines())
    assert len(result.imported) == 5000
    assert sorted(writes) == ["facts.yaml", "learnings.yaml"]
    assert grimoire.validate().ok


def test_help_and_query_do_not_import_heavy_modules(repo):
    seed()
    code = (
        "import sys; from grimoire_cli.cli.main import main; sys.argv=['mem'] + sys.argv[1:];"
        "rc = main(sys.argv[1:]);"
        "heavy = [m for m in ('git', 'jsonschema', 'rich', 'rapidfuzz', 'ruamel', 'grimoire_cli.guard', 'typer.rich_utils') if m in sys.modules];"
        "sys.stderr.write('HEAVY=' + ','.join(heavy) + '\\n')"
    )
    for args, allowed in ((["--help"], set()), (["query", "sqlite"], set()), (["list"], set()), (["context"], {"grimoire_cli.guard"})):
        for attempt in ("cold", "warm"):
            result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=repo)
            heavy = set(result.stderr.split("HEAVY=")[1].strip().split(",")) - {""}
            if attempt == "warm":  # the first run may parse YAML to fill the catalog
                assert heavy <= allowed, (args, heavy)


def test_warm_add_does_not_import_the_yaml_parser(repo):
    """A plain add appends text the emitter writes exactly by construction: no YAML parse."""
    seed()
    code = (
        "import sys; from grimoire_cli.cli.main import main;"
        "rc = main(sys.argv[1:]);"
    )
    probe = (
        "import sys, atexit; atexit.register(lambda: sys.stderr.write('HEAVY=' + ','.join("
        "m for m in ('ruamel', 'jsonschema', 'git', 'rich') if m in sys.modules) + '\\n'));"
    )
    for n, text in enumerate(["the cache warms in ninety seconds", "deploys pause during the freeze window"]):
        result = subprocess.run([sys.executable, "-c", probe + code, "add", "-c", "fact", text], capture_output=True, text=True, cwd=repo)
        assert result.stdout.startswith("MEM-"), result.stderr
        heavy = set(result.stderr.split("HEAVY=")[1].strip().split(",")) - {""}
        if n == 1:  # the first run may parse YAML to fill the catalog
            assert heavy == set(), heavy
    assert mem("validate").code == 0
