"""Rules and paths no test reached before (issue 44, item 3), each pinned by a
case it must refuse (or report) and one it must let through: the entry rules
for the archive fields, the category, the ttl and a pending task's
expires_at; duplicates per category; the supersede exemption from the
near-duplicate warning; the merge driver's fallbacks; search's "filtered
out" reasons and the spelling correction's bounds."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, mem, mem_process, with_preset

from grimoire_cli.git.merge import merge_entry, merge_texts
from grimoire_cli.storage.yamlio import parse_entries

MEMORY = Path("grimoires/loa/memory")
FACT = """- id: MEM-20261122-001
  category: {category}
  summary: a fact about queues
  content: a fact about queues
  confidence: 0.9
  ttl: {ttl}
  source:
    session_id: s
    timestamp: "2026-11-22T10:00:00Z"
{more}"""
ARCHIVED = 'archived: true\n  archived_at: "2026-11-22T11:00:00Z"\n  archive_reason: manual\n'


def _validate(path: Path, category: str = "fact", ttl: str = "permanent", more: str = "") -> str:
    """What `mem validate` says of a file holding one hand-written fact (exit 0: '')."""
    path.write_text(FACT.format(category=category, ttl=ttl, more=more))
    done = mem("validate")
    assert done.code in (0, 1), done.err
    return "" if done.code == 0 else done.out


# -- entry rules -----------------------------------------------------------------


def test_archive_fields_belong_in_the_archive_and_the_archive_needs_them(repo):
    archive = MEMORY / "archive" / "facts.yaml"
    assert _validate(archive, more="  " + ARCHIVED) == ""
    assert "[archive]" in _validate(archive) and "must have archived: true" in _validate(archive)
    (archive).unlink()
    facts = MEMORY / "facts.yaml"
    assert _validate(facts) == ""
    said = _validate(facts, more="  " + ARCHIVED)
    assert "[archive]" in said and "only allowed in archive files" in said and "facts.yaml:10:" in said


def test_an_unknown_category_is_named_with_the_configured_ones(repo):
    facts = MEMORY / "facts.yaml"
    assert _validate(facts) == ""
    said = _validate(facts, category="gossip")
    assert "[category] MEM-20261122-001: unknown category 'gossip'; configured: fact, decision" in said
    assert "[category-file]" in said  # and it is not the file's


def test_a_loa_category_takes_days_or_permanent_only(repo):
    facts = MEMORY / "facts.yaml"
    assert _validate(facts, ttl="30d", more='  expires_at: "2026-12-22T10:00:00Z"\n') == ""
    said = _validate(facts, ttl="12h", more='  expires_at: "2026-11-22T22:00:00Z"\n')
    assert "[ttl]" in said and "ttl 12h: Loa's fact category takes days or permanent" in said
    assert "[expires-at]" not in said  # the expiry itself is right


def test_a_pending_task_has_no_expires_at(repo):
    with_preset(repo, "sabre")
    assert mem("task", "add", "rotate the keys", "--on", "deploy").code == 0
    assert mem("validate").code == 0
    tasks = MEMORY / "tasks.yaml"
    tasks.write_text(tasks.read_text() + '  expires_at: "2026-12-22T10:00:00Z"\n')
    done = mem("validate")
    assert done.code == 1 and "[expires-at] MEM-20261122-001: a pending task must not have expires_at" in done.out


# -- duplicates, near duplicates ---------------------------------------------------


def test_the_same_text_is_a_duplicate_within_a_category_only(repo):
    text = "the deploy pipeline runs on tuesdays at noon"
    assert mem("add", "-c", "fact", text).code == 0
    assert mem("add", "-c", "decision", text).code == 0  # another category: not a duplicate
    again = mem("add", "-c", "fact", text)
    assert again.code == 2 and again.err.startswith("error: an identical memory already exists: MEM-20261122-001")


def test_a_supersede_is_not_warned_as_a_near_duplicate_of_what_it_replaces(repo):
    first = mem("add", "-c", "fact", "the deploy pipeline runs on tuesdays at noon").out.strip()
    near = "the deploy pipeline runs on tuesdays at noon sharp"
    replaced = mem("supersede", first, near)
    assert replaced.code == 0 and "near duplicate" not in replaced.err
    added = mem("add", "-c", "fact", near + "!")
    assert added.code == 0 and f"warning: near duplicate of {replaced.out.strip()}" in added.err


# -- the merge driver's fallbacks (no change to merge.py: tests only) ---------------


def test_a_side_that_is_not_a_grimoire_list_is_merged_by_lines(tmp_path, monkeypatch):
    """The driver falls back to git's line merge (a hand-broken side), and merges lists entry by entry."""
    from grimoire_cli.core.errors import Damaged

    git("init", "-q", cwd=tmp_path)
    monkeypatch.chdir(tmp_path)
    entry = "- id: MEM-20261122-001\n  content: x\n"
    with pytest.raises(Damaged, match=r"facts.yaml \(theirs\).*must be a YAML list"):
        merge_texts(entry, entry, "just: a mapping\n", "facts.yaml")
    base, ours, theirs = (tmp_path / name for name in ("base", "ours", "theirs"))
    for ours_text, code in ((entry, 0), (entry + "- id: MEM-20261122-002\n  content: y\n", 1)):
        base.write_text(entry)
        ours.write_text(ours_text)
        theirs.write_text("just: a mapping\n")
        done = mem_process("merge-file", str(base), str(ours), str(theirs), "facts.yaml", cwd=tmp_path)
        assert done.returncode == code, done.stderr
        merged = ours.read_text()
        assert (
            merged == "just: a mapping\n"
            if code == 0
            else merged.startswith("<<<<<<< ours\n") and "just: a mapping" in merged
        )
    # Both sides lists: entry by entry, theirs' new entry appended (no line conflict at the end of the file).
    ours.write_text(entry + "- id: MEM-20261122-002\n  content: y\n")
    theirs.write_text(entry + "- id: MEM-20261122-003\n  content: z\n")
    base.write_text(entry)
    assert mem_process("merge-file", str(base), str(ours), str(theirs), "facts.yaml", cwd=tmp_path).returncode == 0
    assert [item["id"] for item in parse_entries(ours.read_text(), "x")[0]] == [
        "MEM-20261122-001",
        "MEM-20261122-002",
        "MEM-20261122-003",
    ]


def test_a_merge_keeps_the_later_last_applied_whichever_side_has_it():
    base = {
        "id": "MEM-20261122-001",
        "effectiveness": {"applications": 1, "successes": 1, "last_applied": "2026-11-20T10:00:00Z"},
    }
    ours = {
        "id": "MEM-20261122-001",
        "effectiveness": {"applications": 2, "successes": 2, "last_applied": "2026-11-21T10:00:00Z"},
    }
    theirs = {
        "id": "MEM-20261122-001",
        "effectiveness": {"applications": 2, "successes": 1, "last_applied": "2026-11-22T10:00:00Z"},
    }
    merged, conflict = merge_entry(base, ours, theirs)
    assert not conflict and merged["effectiveness"]["last_applied"] == "2026-11-22T10:00:00Z"
    assert merged["effectiveness"]["applications"] == 3 and merged["effectiveness"]["successes"] == 2
    merged, _ = merge_entry(base, theirs, ours)
    assert merged["effectiveness"]["last_applied"] == "2026-11-22T10:00:00Z"  # ours' when it is the later
    only_theirs = {**theirs, "effectiveness": {**theirs["effectiveness"]}}
    without = {"id": "MEM-20261122-001", "effectiveness": {"applications": 1, "successes": 1}}
    merged, _ = merge_entry({}, without, only_theirs)
    assert merged["effectiveness"]["last_applied"] == "2026-11-22T10:00:00Z"


# -- search: what was filtered out, and spelling --------------------------------------


def _seed_deploys() -> None:
    for text in ("the deploy pipeline runs on tuesdays", "the deploy window closes at noon"):
        assert mem("add", "-c", "fact", text).code == 0


def test_a_query_says_what_its_time_window_filtered_out(repo):
    _seed_deploys()
    assert mem("query", "deploy", "--since", "2026-11-01").code == 0
    for option, moment in (("--since", "2026-12-01"), ("--until", "2026-11-01")):
        done = mem("query", "deploy", option, moment)
        assert (
            done.code == 1
            and done.err
            == 'no memories match "deploy"; filtered out: 2 created outside the time window (--since/--until)\n'
        )


def test_a_query_says_what_its_tier_filtered_out(repo):
    _seed_deploys()
    assert mem("query", "deploy", "--tier", "hot").code == 0  # new entries are hot
    done = mem("query", "deploy", "--tier", "long")
    assert done.code == 1 and done.err == 'no memories match "deploy"; filtered out: 2 in the other tier (--tier all)\n'


def test_context_says_what_min_importance_filtered_out(repo):
    _seed_deploys()
    config = Path(".loa.config.yaml")
    assert "deploy pipeline" in mem("context", "deploy").out
    config.write_text(config.read_text() + "  context:\n    min_importance: 9\n")
    done = mem("context", "deploy")
    assert "deploy pipeline" not in done.out
    assert 'no memories match "deploy"; filtered out: 2 below context.min_importance\n' in done.err


def test_spelling_is_corrected_one_edit_away_in_words_of_four_letters_or_more(repo):
    assert mem("add", "-c", "fact", "the cat naps near kafka").code == 0
    for typo in ("kafak", "kafkaa", "kafa", "nasp"):  # a swap, an insertion, a deletion; four letters
        assert mem("query", typo).code == 0, typo
    for typo in ("kfkaa", "cay"):  # two edits; three letters (searched as a prefix only)
        done = mem("query", typo)
        assert done.code == 1 and done.err == f'no memories match "{typo}"\n', typo
