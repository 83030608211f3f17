"""The catalog is derived: whatever happens to it, answers stay the same.

And writes keep it exactly equal to a catalog rebuilt from the files.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import catalog_dump, examples, mem, mem_process
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MEMORY = Path("grimoires/loa/memory")


def seed(count: int = 12) -> list[str]:
    ids = []
    for i in range(count):
        category = ["fact", "decision", "learning", "preference"][i % 4]
        ids.append(
            mem(
                "add", "-c", category, "-t", f"t{i % 3}", f"note {i} about the sqlite cache and runner disk {i * 7}"
            ).out.strip()
        )
    return ids


def spy(monkeypatch, module, name: str, record) -> list:
    """Calls of `module.name` from now on, each kept as `record(*args)`; the
    real function still runs."""
    seen: list = []
    real = getattr(module, name)

    def wrapper(*args):
        seen.append(record(*args))
        return real(*args)

    monkeypatch.setattr(module, name, wrapper)
    return seen


def fact_rows(db: sqlite3.Connection) -> dict[str, int]:
    """id -> catalog row number of every entry of facts.yaml."""
    return dict(db.execute("SELECT id, rowid FROM entries WHERE path LIKE '%facts.yaml'"))


def answers() -> list[str]:
    """What users see, through the real commands."""
    return [
        mem("query", "sqlite runner", "--json").out,
        mem("context", "--budget", "200").out,
        mem("list", "--json", "-t", "t1").out,
        mem("context", "cache disk", "--budget", "120").out,
    ]


def test_same_answers_whatever_happens_to_the_catalog(repo):
    seed()
    expected = answers()
    cache = MEMORY / ".cache"
    database = cache / "index.sqlite3"
    assert database.exists()
    # Deleted.
    shutil.rmtree(cache)
    assert answers() == expected
    # Truncated to garbage.
    database.write_bytes(b"not a database at all" * 10)
    assert answers() == expected
    # A valid SQLite file with the wrong tables.
    database.unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(database) + suffix).unlink(missing_ok=True)
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        db.execute("INSERT INTO meta VALUES ('version', '5')")
    assert answers() == expected
    # Unusable: the database path is a folder (it cannot be opened or written).
    shutil.rmtree(cache)
    database.mkdir(parents=True)
    assert answers() == expected
    assert mem("add", "-c", "fact", "written while the catalog is unusable").code == 0
    assert "written while the catalog is unusable" in mem("query", "unusable catalog").out
    assert mem("validate").code == 0


def test_rows_of_a_corrupted_file_record_are_not_trusted(repo):
    seed(4)
    expected = answers()
    with sqlite3.connect(MEMORY / ".cache" / "index.sqlite3") as db:
        # Rows of another version of the file: neither stat nor hash match it,
        # nor the text of any entry (a row's chunk hash goes with its data).
        db.execute("UPDATE entries SET data = replace(data, 'note', 'tampered') WHERE path LIKE '%facts.yaml'")
        db.execute("UPDATE spans SET chunk = randomblob(16) WHERE path LIKE '%facts.yaml'")
        db.execute("UPDATE files SET size = size + 1, hash = 'other' WHERE path LIKE '%facts.yaml'")
    assert answers() == expected


def test_a_changed_file_is_parsed_only_where_it_changed(repo, monkeypatch):
    """Rows whose entry text is unchanged are kept as they are (same row, not
    read again); an edited entry, a removed one and new ones are re-read:
    those in mem's own layout without YAML, the hand-written one by the parser."""
    from grimoire_cli.storage import chunks, yamlio

    decoded = spy(monkeypatch, chunks, "decode", lambda text: text)
    parsed = spy(monkeypatch, yamlio, "parse_document", lambda text, where: text)
    ids = seed(40)
    facts = MEMORY / "facts.yaml"
    db = sqlite3.connect(MEMORY / ".cache" / "index.sqlite3")
    before = fact_rows(db)
    text = facts.read_text()
    edited = (
        text.replace("note 4 about", "note 4 (edited by hand) about")
        + "# a comment\n"
        + "- id: MEM-20261122-900\n  category: fact\n  summary: pasted\n  content: pasted by hand\n  confidence: 0.9\n"
        "  ttl: permanent\n  source: {session_id: s, timestamp: '2026-11-22T09:00:00Z'}\n"
    )
    facts.write_text(edited)
    decoded.clear()
    parsed.clear()
    assert "pasted by hand" in mem("query", "pasted", "--json").out
    # The edited entry, the last one (the comment joined it) and the new one,
    # which alone is not in the emitter's layout (a flow mapping).
    assert len(decoded) == 3 and sum(map(len, decoded)) < len(edited) / 3
    assert parsed == [decoded[-1]] and "pasted by hand" in parsed[0]
    after = fact_rows(db)
    assert after[ids[0]] == before[ids[0]]  # untouched: the same row
    assert after[ids[4]] != before[ids[4]]  # edited: a new row
    assert "MEM-20261122-900" in after
    assert "(edited by hand)" in mem("show", ids[4]).out
    # The catalog equals one rebuilt from the files.
    kept = answers()
    shutil.rmtree(MEMORY / ".cache")
    assert answers() == kept


def test_a_file_that_changed_throughout_is_parsed_once(repo, monkeypatch):
    """Past a third of the entries changed by hand into a layout mem does not
    write, one parse of the whole file is cheaper than a parse per entry;
    rows whose text is unchanged are still kept. Entries changed in mem's
    own layout are read one by one, without YAML."""
    from grimoire_cli.storage import chunks, yamlio

    decoded = spy(monkeypatch, chunks, "decode", lambda text: text)
    parsed = spy(monkeypatch, yamlio, "parse_document", lambda text, where: text)
    ids = seed(40)
    facts = MEMORY / "facts.yaml"
    db = sqlite3.connect(MEMORY / ".cache" / "index.sqlite3")
    before = fact_rows(db)
    # Entries 0, 4, 8, ... are facts; all but the first change, a comment in each.
    edited = (
        facts.read_text()
        .replace("runner disk", "runner volume")
        .replace("note 0 about the sqlite cache and runner volume", "note 0 about the sqlite cache and runner disk")
    )
    edited = edited.replace("runner volume", "runner volume  # by hand")
    facts.write_text(edited)
    parsed.clear()
    assert mem("query", "volume", "--json").code == 0
    assert parsed == [edited]
    after = fact_rows(db)
    assert after[ids[0]] == before[ids[0]] and after[ids[4]] != before[ids[4]]
    # validate takes the same way: one parse of the file, same verdict.
    parsed.clear()
    facts.write_text(edited.replace("runner volume", "runner share"))
    assert mem("validate").code == 0
    assert len([text for text in parsed if "runner share" in text]) == 1
    # The same change in mem's layout: each changed entry is read alone, none parsed.
    decoded.clear()
    parsed.clear()
    facts.write_text(edited.replace("runner volume  # by hand", "runner zone"))
    assert mem("query", "zone", "--json").code == 0
    assert parsed == [] and len(decoded) == len(ids) // 4 - 1 and all("runner zone" in text for text in decoded)
    kept = answers()
    shutil.rmtree(MEMORY / ".cache")
    assert answers() == kept


@pytest.mark.git
def test_hand_edits_pull_and_checkout_are_seen(repo):
    from conftest import git

    ids = seed(4)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "seed", cwd=repo)
    facts = MEMORY / "facts.yaml"
    text = facts.read_text()
    # A same-size hand edit of one word.
    facts.write_text(text.replace("note 0 about", "NOTE 0 about"))
    assert "NOTE 0 about" in mem("show", ids[0], "--json").out
    # An entry appended by hand is found by query.
    facts.write_text(
        facts.read_text() + "\n- id: MEM-20261122-900\n  category: fact\n  summary: hand written zebra fact\n"
        "  content: hand written zebra fact\n  confidence: 1.0\n  ttl: permanent\n"
        "  source: {session_id: s, timestamp: '2026-11-22T09:00:00Z'}\n"
    )
    assert "MEM-20261122-900" in mem("query", "zebra").out
    # Re-reading a changed file keeps unchanged rows: still equal to a rebuild.
    facts.write_text(
        facts.read_text().replace("note 4 about", "note four about").replace("NOTE 0 about", "Note 0 about")
    )
    mem("list", "--archived")
    mem("list")
    kept = catalog_dump(repo)
    shutil.rmtree(MEMORY / ".cache")
    mem("list", "--archived")
    mem("list")
    assert catalog_dump(repo) == kept
    # git checkout restores the committed file: both edits are gone again.
    git("checkout", "-q", "--", str(facts), cwd=repo)
    assert facts.read_text() == text
    assert "MEM-20261122-900" not in mem("query", "zebra").out
    assert "note 0 about" in mem("show", ids[0], "--json").out
    # A write, then its file checked out again: the entry's old text must read
    # as its old data (a row is reused only for the very text it was read from).
    assert mem("apply", ids[0], "--success").code == 0
    assert "effectiveness" in mem("show", ids[0], "--json").out
    git("checkout", "-q", "--", str(facts), cwd=repo)
    assert "effectiveness" not in mem("show", ids[0], "--json").out
    assert mem("supersede", ids[0], "note zero, revised").code == 0
    git("checkout", "-q", "--", str(facts), cwd=repo)
    assert "superseded_by" not in mem("show", ids[0], "--json").out


def test_a_same_size_edit_with_its_mtime_restored_is_seen(repo):
    """Size, mtime and inode can all stay the same across an edit (written in
    place, mtime set back with `os.utime`); the change time cannot be set back."""
    import os

    ids = seed(4)
    facts = MEMORY / "facts.yaml"
    assert "note 0 about" in mem("show", ids[0], "--json").out
    before = facts.stat()
    with open(facts, "r+b") as handle:  # in place: the same inode
        text = handle.read()
        handle.seek(0)
        handle.write(text.replace(b"note 0 about", b"NOTE 0 about"))
    os.utime(facts, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = facts.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert "NOTE 0 about" in mem("show", ids[0], "--json").out


def test_processes_rebuilding_at_once_agree(repo):
    seed(20)
    expected = mem("query", "sqlite runner", "--json").out
    shutil.rmtree(MEMORY / ".cache")
    procs = [
        subprocess.Popen(
            [str(Path(sys.executable).parent / "mem"), "query", "sqlite runner", "--json"],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert all(out == expected for out, _ in outs)


def test_an_archived_entry_with_metadata_is_catalogued_as_a_rebuild_reads_it(repo):
    """Found by the model test (test_model.py): the archive's row kept its fields
    in the order they were set (metadata before the archive fields), not the file's."""
    from grimoire_cli import Grimoire

    grimoire = Grimoire.open(repo)
    entry = grimoire.facts.remember("db.pool", 0, category="fact").entry
    grimoire.archive([entry.id], reason="manual", commit=False)
    kept = catalog_dump(repo)
    shutil.rmtree(repo / MEMORY / ".cache")
    Grimoire.open(repo).entries()
    assert catalog_dump(repo) == kept


operation = st.sampled_from(["add", "add", "supersede", "apply", "archive", "add_many", "archive_many"])


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(operation, st.integers(0, 50), st.booleans()), min_size=1, max_size=8))
def test_writes_keep_the_catalog_equal_to_a_rebuild(repo, ops):
    """Incremental updates (append, splice, remove) leave what a full re-read gives."""
    from grimoire_cli import Grimoire

    shutil.rmtree(repo / MEMORY, ignore_errors=True)  # each example starts afresh
    assert mem("init").code == 0
    grimoire = Grimoire.open(repo)
    for number, (op, pick, flag) in enumerate(ops):
        active = [e.id for e in grimoire.list()]
        words = f"entry {number} {pick} {'alpha' if flag else 'beta'} word{pick % 7}"
        if op == "add" or not active:
            grimoire.add(words, category=["fact", "learning", "decision"][pick % 3], tags=[f"t{pick % 4}"])
        elif op == "add_many":
            grimoire.add_many(
                [{"content": f"{words} one", "category": "fact"}, {"content": f"{words} two", "category": "error"}]
            )
        elif op == "supersede":
            grimoire.supersede(active[pick % len(active)], words + " revised")
        elif op == "apply":
            grimoire.apply(active[pick % len(active)], flag)
        elif op == "archive":
            grimoire.archive([active[pick % len(active)]], reason="manual", commit=False)
        elif op == "archive_many":  # several rows of one file removed in one write: their words counted out together
            grimoire.archive(sorted(set(active[pick % len(active) :: 3]))[:4], reason="manual", commit=False)
    incremental = catalog_dump(repo)
    shutil.rmtree(repo / MEMORY / ".cache")
    Grimoire.open(repo).entries()  # rebuild every file, archive included
    rebuilt = catalog_dump(repo)
    assert incremental == rebuilt
    assert Grimoire.open(repo).validate().ok


def test_validate_reuses_results_only_for_unchanged_files(repo):
    seed(6)
    assert mem("validate").code == 0
    facts = MEMORY / "facts.yaml"
    facts.write_text(facts.read_text().replace("confidence: 0.8", "confidence: 0.2", 1))
    result = mem("validate", "--format", "json")
    assert result.code == 1
    assert [p["rule"] for p in json.loads(result.out)["problems"]] == ["confidence-floor"]
    # Cached now: the same report again, and a fixed file is clean again.
    assert mem("validate", "--format", "json").out == result.out
    facts.write_text(facts.read_text().replace("confidence: 0.2", "confidence: 0.8", 1))
    assert mem("validate").code == 0


def test_validate_after_a_hand_edit_rechecks_only_what_changed(repo, monkeypatch):
    """Results are kept per entry text: an edit re-checks the entries whose
    text changed; the others' problems move with their lines; the report is
    the one a validation from scratch gives."""
    from grimoire_cli.memory import entry_rules

    seed(40)
    facts = MEMORY / "facts.yaml"
    text = facts.read_text()
    facts.write_text(
        text.replace("confidence: 0.8", "confidence: 0.2", 1)[::-1].replace("8.0 :ecnedifnoc", "2.0 :ecnedifnoc", 1)[
            ::-1
        ]
    )
    first = json.loads(mem("validate", "--format", "json").out)["problems"]
    assert [p["rule"] for p in first] == ["confidence-floor", "confidence-floor"]
    checked = spy(monkeypatch, entry_rules, "check_entry", lambda config, data, *rest: data.get("id"))
    # Three comment lines after the first entry: its chunk changed, no other did.
    lines = facts.read_text().split("\n")
    second_entry = [n for n, line in enumerate(lines) if line.startswith("- ")][1]
    facts.write_text("\n".join(lines[:second_entry] + ["# a note", "# by hand", "#"] + lines[second_entry:]))
    result = mem("validate", "--format", "json")
    after = json.loads(result.out)["problems"]
    assert len(checked) == 1
    assert [p["line"] for p in after] == [first[0]["line"], first[1]["line"] + 3]
    shutil.rmtree(MEMORY / ".cache")
    assert mem("validate", "--format", "json").out == result.out


def test_validate_cache_still_checks_links_across_files(repo):
    ids = seed(4)
    assert mem("validate").code == 0
    # Removing an entry from one file breaks a link held by another file
    # whose own text did not change.
    new = mem("supersede", ids[1], "a decision that replaces the old one").out.strip()
    assert mem("validate").code == 0
    decisions = MEMORY / "decisions.yaml"
    text = decisions.read_text()
    start = text.index(f"- id: {new}")
    decisions.write_text(text[:start])
    result = mem("validate", "--format", "json")
    assert result.code == 1
    assert "dangling-reference" in {p["rule"] for p in json.loads(result.out)["problems"]}


def test_changed_config_is_read_again(repo):
    seed(2)
    config = Path(".loa.config.yaml")
    text = config.read_text()
    assert mem("add", "-c", "fact", "a fact with low confidence", "--confidence", "0.75").code != 0
    config.write_text(text.replace("confidence_required: 0.8", "confidence_required: 0.7", 1))
    assert mem("add", "-c", "fact", "a fact with low confidence", "--confidence", "0.75").code == 0, mem_process(
        "validate", cwd=repo
    ).stderr


def test_validate_results_depend_on_the_guard_rules():
    """A kept validation result is keyed by the rules' source files: a change
    to what counts as a secret re-checks every file."""
    import os

    import grimoire_cli.guard.rules as rules
    from grimoire_cli.core.config import build_config
    from grimoire_cli.memory.validate import _rules_version

    config = build_config({}, Path.cwd(), None)
    before = _rules_version(config)
    path = Path(rules.__file__)
    stat = path.stat()
    try:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert _rules_version(config) != before
    finally:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
