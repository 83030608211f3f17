import json
from pathlib import Path

from conftest import mem

MEMORY = Path("grimoires/loa/memory")


def entry(id, category="fact", **extra):
    lines = [
        f"- id: {id}",
        f"  category: {category}",
        "  summary: a summary",
        "  content: some content",
        "  confidence: 0.9",
        "  ttl: permanent",
        "  source:",
        "    session_id: s",
        '    timestamp: "2026-11-20T10:00:00Z"',
    ]
    lines += [f"  {k}: {v}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def problems(*args):
    result = mem("validate", "--format", "json", *args)
    return result, json.loads(result.out)["problems"]


def rules(found):
    return sorted({p["rule"] for p in found})


def test_clean_grimoire_validates(repo):
    mem("add", "-c", "fact", "a fine fact")
    result, found = problems()
    assert result.code == 0 and found == []


def test_the_text_verdict_is_on_stdout_and_quiet_drops_it_when_ok(repo):
    mem("add", "-c", "fact", "a fine fact")
    result = mem("validate")
    assert (result.code, result.out, result.err) == (0, "5 files, 1 entry: ok\n", "")
    assert mem("validate", "-q").out == ""
    (MEMORY / "facts.yaml").write_text(entry("MEM-20261120-001", category="decision"))
    failed = mem("validate", "-q")
    assert failed.code == 1 and failed.out.splitlines()[-1] == "5 files, 1 entry: 1 problem" and failed.err == ""


def test_each_rule_reported_with_file_and_line(repo):
    (MEMORY / "facts.yaml").write_text(
        "# header\n"
        + entry("MEM-20261120-001")
        + entry("MEM-20261120-001")  # duplicate id
        + entry("MEM-20261120-002", category="decision")  # wrong file
        + entry("MEM-20261120-003", supersedes="MEM-20261120-009")  # dangling
        + entry("MEM-20261120-004", superseded_by="MEM-20261120-001")  # one-sided link
        + entry("MEM-20261120-005", ttl_x="1")  # unknown field
        + entry("bad-id")
        + entry("MEM-20261120-006").replace("confidence: 0.9", "confidence: 0.1")
        + entry("MEM-20261120-007").replace("ttl: permanent", "ttl: 30d")
        + entry("MEM-20261120-008").replace("content: some content", "content: mail bob@example.org")
    )
    result, found = problems()
    assert result.code == 1
    assert {
        "duplicate-id",
        "category-file",
        "dangling-reference",
        "supersede-link",
        "schema",
        "id-format",
        "confidence-floor",
        "expires-at",
        "secret",
    } <= set(rules(found))
    by_rule = {p["rule"]: p for p in found}
    assert by_rule["duplicate-id"]["line"] == 11 and by_rule["duplicate-id"]["file"].endswith("facts.yaml")
    assert by_rule["secret"]["id"] == "MEM-20261120-008"
    assert "bob@example.org" not in result.out
    assert (
        by_rule["confidence-floor"]["line"]
        == (MEMORY / "facts.yaml").read_text().split("\n").index("  confidence: 0.1") + 1
    )


def test_github_format(repo):
    (MEMORY / "facts.yaml").write_text(entry("MEM-20261120-001", category="decision"))
    result = mem("validate", "--format", "github")
    assert result.code == 1
    line = result.out.strip().splitlines()[0]
    assert line.startswith("::error file=grimoires/loa/memory/facts.yaml,line=2::")


def test_unparseable_yaml_exit_3_with_line(repo):
    (MEMORY / "facts.yaml").write_text(entry("MEM-20261120-001") + "- id: [broken\n")
    result, found = problems()
    assert result.code == 3
    assert found[0]["rule"] == "yaml" and found[0]["line"] >= 10


def test_validate_paths_without_repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = tmp_path / "facts.yaml"
    good.write_text(entry("MEM-20261120-001"))
    assert mem("validate", str(good)).code == 0
    bad = tmp_path / "decisions.yaml"
    bad.write_text(entry("MEM-20261120-002"))  # a fact in decisions.yaml
    result = mem("validate", str(good), str(bad))
    assert result.code == 1 and "category-file" in result.out


def test_hostile_yaml_is_reported_not_executed(repo, tmp_path):
    marker = tmp_path / "pwned"
    (MEMORY / "facts.yaml").write_text(f"- !!python/object/apply:os.system ['touch {marker}']\n")
    result = mem("validate")
    assert result.code == 3 and not marker.exists()
    (MEMORY / "facts.yaml").write_text("a: &a [1,2]\nb: &b [*a,*a,*a]\nc: [*b,*b,*b]\n")
    assert mem("validate").code == 3


def test_mapping_instead_of_list(repo):
    (MEMORY / "facts.yaml").write_text("id: MEM-20261120-001\n")
    assert mem("validate").code == 3
    assert mem("add", "-c", "preference", "I prefer short commit subjects").code == 0


def test_read_commands_pass_over_a_damaged_file_and_validate_reports_it(repo):
    """Every read command answers from the readable files with one warning
    naming the damaged one; `mem validate` and `mem check --strict` report it."""
    from conftest import with_preset

    with_preset(repo, "sabre")
    fact = mem("add", "-c", "fact", "the parser reads tabs as four spaces", "--key", "parser.tabs").out.strip()
    assert mem("remember", "build.jobs", "4").code == 0
    assert mem("task", "add", "rotate the keys", "--due", "+1h").code == 0
    assert mem("episode", "deploy", "--learned", "it went fine").code == 0
    (MEMORY / "decisions.yaml").write_text(entry("MEM-20261120-001", category="decision") + "- id: [broken\n")
    reads = [
        ("list",),
        ("list", "--archived"),
        ("query", "parser"),
        ("context",),
        ("stats",),
        ("stats", "--json"),
        ("show", fact),
        ("show", fact, "--chain"),
        ("get", "parser.tabs"),
        ("recall", "build.jobs"),
        ("facts",),
        ("tasks",),
        ("episodes",),
        ("scopes",),
        ("review",),
        ("recall-all", "parser"),
    ]
    finds_nothing = {("list", "--archived"), ("recall-all", "parser")}  # exit 1, as when no file is damaged
    for args in reads:
        result = mem(*args)
        assert result.code == (1 if args in finds_nothing else 0), (args, result.err)
        warnings = [line for line in result.err.splitlines() if line.startswith(("warning:", "error:"))]
        assert (
            len(warnings) == 1
            and warnings[0].startswith("warning: skipped a damaged file")
            and "decisions.yaml" in warnings[0]
        ), (args, result.err)
    assert json.loads(mem("stats", "--json").out)["categories"]["fact"] == {"active": 1}
    assert "parser" in mem("query", "parser").out
    result, found = problems()
    assert result.code == 3 and [p["file"] for p in found if p["rule"] == "yaml"] == [
        "grimoires/loa/memory/decisions.yaml"
    ]
    strict = mem("check", "--strict")
    assert strict.code != 0 and "decisions.yaml" in strict.err


def test_an_expired_keyed_entry_is_not_a_second_active_holder_of_its_key(repo):
    """Found by the model test: a keyed fact expired (not yet archived) and the
    key remembered again; validate counted both as active (key-unique)."""
    first = mem("add", "-c", "learning", "the pool holds 5", "--key", "db.pool", "--ttl", "1d").out.strip()
    later = {"MEM_NOW": "2026-11-24T10:00:00Z"}
    second = mem("add", "-c", "learning", "the pool holds 9", "--key", "db.pool", env=later)
    assert second.code == 0 and "supersedes" not in json.loads(mem("show", second.out.strip(), "--json", env=later).out)
    assert mem("validate", env=later).code == 0
    assert mem("validate").code == 1  # before the first expired, two entries hold the key at once
    assert first


def test_a_layout_mem_cannot_write_is_reported_so_a_clean_validate_means_writes_work(repo):
    """Found by the model test (hand_reformat): a formatter that indents the list leaves readable YAML that every
    write then refuses (exit 3); validate said ok. Now it names the file and line, and block style fixes both."""
    first = mem("add", "-c", "fact", "the deploy runs nightly", "--json")
    entry_id = json.loads(first.out)["id"]
    path = MEMORY / "facts.yaml"
    canonical = path.read_text()
    indented = "".join(
        ("  " + line if line.strip() and not line.startswith("#") else line) for line in canonical.splitlines(True)
    )
    for text, line in ((indented, 4), (f"[{{id: {entry_id}, category: fact}}]\n", 1)):
        path.write_text(text)
        result, found = problems()
        assert result.code == 1 and [(p["file"], p["line"], p["rule"]) for p in found if p["rule"] == "layout"] == [
            (str(path), line, "layout")
        ], found
        assert "block style" in next(p["message"] for p in found if p["rule"] == "layout")
    path.write_text(indented)
    refused = mem("supersede", entry_id, "the deploy runs hourly")
    assert refused.code == 3 and path.read_text() == indented  # the write that validate warns of: nothing changed
    path.write_text(canonical)
    assert problems()[0].code == 0 and mem("supersede", entry_id, "the deploy runs hourly").code == 0
