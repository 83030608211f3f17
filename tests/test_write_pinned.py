"""The write path's survivors (issue 44, `make mutation MODULES=write`), each
pinned by what a caller sees: an import's superseded_by link checked once the
batch is whole, ids given explicitly, a batch that supersedes what it just
wrote, chat turns, and the in-place updates lifecycle commands make."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ARCHIVED, mem

from grimoire_cli import Grimoire
from grimoire_cli.core.errors import BadInput, Damaged, Duplicate, GrimoireError, NotFound, Refused
from grimoire_cli.memory.adding import Added, Rejected, add_many, prepare, update_many
from grimoire_cli.memory.request import Request
from grimoire_cli.storage.yamlio import parse_entries

MEMORY = Path("grimoires/loa/memory")
OLD, NEW, OTHER = "MEM-20261120-001", "MEM-20261121-001", "MEM-20261121-002"


def line(entry_id: str, content: str, **more) -> dict:
    """An import line as `mem export` gives one."""
    return {
        "id": entry_id,
        "category": "fact",
        "content": content,
        "confidence": 0.9,
        "source": {"session_id": "s", "timestamp": "2026-11-20T10:00:00Z"},
        **more,
    }


def imported(grimoire: Grimoire, *lines: dict):
    return grimoire.import_lines([json.dumps(item) for item in lines])


def in_file(path: Path) -> dict[str, dict]:
    return {item["id"]: item for item in parse_entries(path.read_text(), str(path))[0]}


# -- an import's superseded_by -------------------------------------------------------------


def test_an_imported_pair_keeps_its_link_whichever_line_comes_first(grimoire):
    imported(
        grimoire,
        line(OLD, "Queues drain hourly", superseded_by=NEW),
        line(NEW, "Queues drain every 30 minutes", supersedes=OLD),
    )
    facts = in_file(MEMORY / "facts.yaml")
    assert facts[OLD]["superseded_by"] == NEW and facts[NEW]["supersedes"] == OLD
    assert [e.id for e in grimoire.show(NEW, chain=True)] == [OLD, NEW]


def test_a_condensed_entry_may_name_what_it_replaced_among_its_related_memories(grimoire):
    imported(
        grimoire,
        line(OLD, "Queues drain hourly", superseded_by=NEW),
        line(NEW, "Queues: drain and retry rules, condensed", related_memories=[OLD]),
    )
    assert in_file(MEMORY / "facts.yaml")[OLD]["superseded_by"] == NEW


@pytest.mark.parametrize(
    ("newer", "why"),
    [
        (None, f"superseded_by {NEW}, which does not exist"),
        (line(NEW, "Queues drain every 30 minutes"), f"superseded_by {NEW}, which does not say it supersedes {OLD}"),
    ],
)
def test_a_superseded_by_nothing_answers_is_refused_naming_the_item(grimoire, newer, why):
    items = [{"content": "A first fact about caches"}, line(OLD, "Queues drain hourly", superseded_by=NEW)]
    before = (MEMORY / "facts.yaml").read_bytes()
    with pytest.raises(BadInput) as refused:
        grimoire.add_many([*items, *([newer] if newer else [])])
    assert refused.value.message == f"item 2: {why}"
    assert refused.value.hint == "import the entry that supersedes it too (`mem export --archived` holds both)"
    assert (MEMORY / "facts.yaml").read_bytes() == before  # all or nothing


def test_a_rejected_superseded_by_leaves_the_entry_it_replaced_active(grimoire):
    older = "MEM-20261119-001"
    added = grimoire.add_many(
        [
            line(older, "Queues drain daily"),
            {"content": "A fact about caches"},
            line(OLD, "Queues drain hourly", supersedes=older, superseded_by=NEW),
        ],
        skip_invalid=True,
    )
    assert [r.index for r in added.rejected] == [2]
    assert added.rejected[0].message.startswith(f"superseded_by {NEW}, which does not exist (hint: ")
    assert [e.id for e in added] == [older, "MEM-20261122-001"]
    facts = in_file(MEMORY / "facts.yaml")
    assert "superseded_by" not in facts[older] and OLD not in facts


def test_every_link_is_checked_though_a_later_one_holds(grimoire):
    gone = "MEM-20261119-009"
    items = [
        line(OTHER, "Caches live a day", superseded_by=gone),
        line(OLD, "Queues drain hourly", superseded_by=NEW),
        line(NEW, "Queues drain every 30 minutes", supersedes=OLD),
    ]
    with pytest.raises(BadInput, match=f"item 1: superseded_by {gone}, which does not exist"):
        grimoire.add_many(items)


def test_rejections_are_listed_in_the_order_of_the_items(grimoire):
    added = grimoire.add_many(
        [
            line(OLD, "Queues drain hourly", superseded_by=NEW),
            {"content": "Caches live a day"},
            {"content": "Caches live a day"},
        ],
        skip_invalid=True,
    )
    # The duplicate (2) is found first, the dangling link (0) once the batch is whole.
    assert [r.index for r in added.rejected] == [0, 2]


# -- ids given explicitly ----------------------------------------------------------------------


def test_an_explicit_id_is_checked_and_the_hint_says_what_to_do(grimoire):
    with pytest.raises(BadInput) as bad:
        grimoire.add_many([Request("A fact about caches", id="MEM-1")])
    assert (bad.value.message, bad.value.hint) == ("bad id 'MEM-1'", "ids look like MEM-20260131-001")
    with pytest.raises(Refused) as twice:
        grimoire.add_many([line(OLD, "Queues drain hourly"), line(OLD, "Caches live a day")])
    assert twice.value.message == f"item 2: id {OLD} is already used"
    assert twice.value.hint == "leave the id out to get a fresh one"


def test_a_related_memory_must_exist_unless_its_id_is_in_a_damaged_file(grimoire, repo):
    with pytest.raises(NotFound):
        grimoire.add_many([Request("A fact about caches", related=["not-an-id"])])
    # A decision file mem cannot parse still holds MEM-20261101-004: relating to it is allowed (its author will restore it).
    (MEMORY / "decisions.yaml").write_text("- id: MEM-20261101-004\n  content: [unclosed\n")
    with pytest.raises(NotFound):
        grimoire.add_many([{"content": "A fact about caches", "related_memories": ["MEM-20261101-005"]}])
    written = grimoire.add_many([{"content": "A fact about caches", "related_memories": ["MEM-20261101-004"]}])
    assert written[0].data["related_memories"] == ["MEM-20261101-004"]


# -- what a batch writes -------------------------------------------------------------------------


def test_a_batch_that_replaces_its_own_key_writes_the_first_with_its_final_data(grimoire):
    written = grimoire.add_many(
        [
            {"content": "Deploys on Tuesday", "key": "deploy.day"},
            {"content": "Deploys on Thursday", "key": "deploy.day"},
        ]
    )
    first, second = written
    facts = in_file(MEMORY / "facts.yaml")
    assert facts[first.id]["superseded_by"] == second.id and facts[second.id]["supersedes"] == first.id
    assert grimoire.get("deploy.day").id == second.id
    # Each entry knows the line it starts at.
    lines = (MEMORY / "facts.yaml").read_text().splitlines()
    assert [lines[e.line - 1] for e in written] == [f"- id: {first.id}", f"- id: {second.id}"]


def test_a_key_replaced_twice_in_one_batch_is_held_by_the_last(grimoire):
    written = grimoire.add_many([{"content": f"Deploys on day {n}", "key": "deploy.day"} for n in range(3)])
    facts = in_file(MEMORY / "facts.yaml")
    assert [facts[e.id].get("superseded_by") for e in written] == [written[1].id, written[2].id, None]
    assert grimoire.get("deploy.day").content == "Deploys on day 2"


def test_an_imported_archived_entry_lands_in_the_archive(grimoire):
    imported(grimoire, line(OLD, "Queues drained hourly", **ARCHIVED))
    assert OLD in in_file(MEMORY / "archive" / "facts.yaml")
    assert OLD not in in_file(MEMORY / "facts.yaml")


FILLER = [{"content": f"Distinct fact number {n} about build caches"} for n in range(38)]
# A batch of a few items looks duplicates up per length, a large one in an index (adding.WINDOWED).
SIZES = pytest.mark.parametrize("filler", [[], FILLER], ids=["small batch", "large batch"])


@SIZES
def test_text_added_again_after_its_holder_was_replaced_in_the_same_batch_is_no_duplicate(grimoire, filler):
    first = grimoire.add("Caches live a day", category="fact")
    written = grimoire.add_many(
        [*filler, {"content": "Caches live two days", "supersedes": first.id}, {"content": "Caches live a day"}]
    )
    assert [e.content for e in written[-2:]] == ["Caches live two days", "Caches live a day"]


@SIZES
def test_text_of_an_entry_this_batch_wrote_and_replaced_is_no_duplicate(grimoire, filler):
    written = grimoire.add_many(
        [
            {"content": "Deploys on Tuesday", "key": "deploy.day"},
            *filler,
            {"content": "Deploys on Thursday", "key": "deploy.day"},
            {"content": "Deploys on Tuesday"},
        ]
    )
    assert written[-1].content == "Deploys on Tuesday" and "key" not in written[-1].data


@SIZES
def test_a_duplicate_of_an_entry_this_batch_wrote_is_refused_naming_it(grimoire, filler):
    """Keyed or not, what the batch wrote counts."""
    grimoire.add("Queues drain hourly", category="fact")
    for first in ({"content": "Deploys on Tuesday"}, {"content": "Deploys on Tuesday", "key": "deploy.day"}):
        with pytest.raises(GrimoireError) as refused:
            grimoire.add_many([first, *filler, {"content": "Deploys on Tuesday"}])
        assert refused.value.message == f"item {len(filler) + 2}: an identical memory already exists: MEM-20261122-002"


@SIZES
def test_a_duplicate_is_looked_for_among_the_active_entries_of_its_category_only(grimoire, repo, monkeypatch, filler):
    grimoire.add("Queues drain hourly", category="fact", ttl="1d")
    grimoire.add("Caches live a day", category="fact")
    with pytest.raises(GrimoireError, match="an identical memory already exists"):
        grimoire.add_many([*filler, {"content": "Caches live a day"}])
    monkeypatch.setenv("MEM_NOW", "2026-11-24T10:00:00Z")  # the first has expired
    later = Grimoire.open(repo)
    decision = {"content": "Caches live a day", "category": "decision", "confidence": 0.95}
    written = later.add_many([*filler, {"content": "Queues drain hourly"}, decision])
    assert [e.category for e in written[-2:]] == ["fact", "decision"]


def test_an_imported_inactive_entry_duplicates_nothing(grimoire):
    written = grimoire.add_many(
        [
            line(OLD, "Queues drain hourly", superseded_by=NEW),
            line(NEW, "Queues drain every 30 minutes", supersedes=OLD),
            line(OTHER, "Caches live a day", **ARCHIVED),
            {"content": "Queues drain hourly"},
            {"content": "Caches live a day"},
        ]
    )
    assert len(written) == 5


def test_a_key_freed_by_an_explicit_supersede_is_taken_anew(grimoire):
    """A holder looked up, then superseded by an entry of another key, holds its key no more."""
    held = grimoire.add_many([{"content": "Deploys on Tuesday", "key": "deploy.day"}])[0]
    added = grimoire.add_many(
        [
            {"content": "Deploys on Tuesday", "key": "deploy.day"},  # the same value: refused, its holder looked up
            {"content": "Releases on Tuesday", "key": "release.day", "supersedes": held.id},
            {"content": "Deploys on Friday", "key": "deploy.day"},
        ],
        skip_invalid=True,
    )
    assert [r.index for r in added.rejected] == [0]
    assert added[0].data["supersedes"] == held.id and "supersedes" not in added[1].data
    assert grimoire.get("deploy.day").content == "Deploys on Friday"


def procedure(g: Grimoire, ttl: str | None = None, **document) -> Request:
    """A runbook as `mem procedure add` asks for it."""
    from grimoire_cli.kinds.procedures import content_of, fields_of, parse

    fields = fields_of(parse(json.dumps({"name": "deploy", "description": "Ship {service}", **document}), "test"))
    tags = document.get("tags", [])
    return Request(content_of(fields), category=g.config.of_kind("procedure").name, fields=fields, tags=tags, ttl=ttl)


def insight(rule_id: str, text: str, ttl: str | None = None) -> Request:
    """An insight as add_insight writes one."""
    fields = {"insight_type": "rule", "applies_to": "deploys", "rule_id": rule_id}
    return Request(text, category="insight", fields=fields, ttl=ttl)


def test_two_versions_of_a_procedure_in_one_batch_make_a_chain(sabre):
    g = Grimoire.open(sabre)
    first, second = g.add_many([procedure(g, steps=["build"]), procedure(g, steps=["push"])])
    assert second.data["supersedes"] == first.id


def test_the_same_version_of_a_procedure_again_is_refused_and_any_change_is_a_new_one(sabre):
    g = Grimoire.open(sabre)
    document = {"params": ["service"], "steps": ["build {service}"], "tags": ["ops"]}
    held = g.add_many([procedure(g, **document)])[0]
    with pytest.raises(Duplicate) as again:
        g.add_many([procedure(g, **document)])
    assert (again.value.message, again.value.hint, again.value.of) == (
        f"{held.id} already holds this version of the procedure deploy",
        "nothing to add; change what differs to make a new version",
        held.id,
    )
    for change in (
        {"description": "Ship it"},
        {"params": ["service", "region"]},
        {"steps": ["push {service}"]},
        {"tags": ["ci"]},
    ):
        newer = g.add_many([procedure(g, **{**document, **change})])[0]
        assert newer.data["supersedes"] == held.id, change
        held = newer


def test_procedures_of_other_names_stand_side_by_side_and_a_version_yet_to_expire_is_replaced(sabre):
    g = Grimoire.open(sabre)
    deploy = g.add_many([procedure(g, ttl="30d", steps=["build"])])[0]
    others = g.add_many([procedure(g, name="rollback", steps=["revert"]), procedure(g, name="audit", steps=["log"])])
    assert [e.data.get("supersedes") for e in others] == [None, None]
    newer = g.add_many([procedure(g, steps=["push"])])[0]
    assert newer.data["supersedes"] == deploy.id


def test_a_procedure_replaces_no_entry_of_another_kind_that_bears_its_name(sabre):
    """The catalog names an episode by its event: a procedure of that name is still the first of its own."""
    g = Grimoire.open(sabre)
    event = g.add_many([{"content": "We shipped", "category": "episode", "event": "deploy", "outcome": "success"}])[0]
    first = g.add_many([procedure(g, steps=["build"])])[0]
    assert "supersedes" not in first.data and g.show(event.id).superseded_by is None


def test_a_field_of_another_kind_makes_no_identity(sabre):
    """A name on a note is refused as the note's schema refuses it: no procedure of that name is looked up."""
    g = Grimoire.open(sabre)
    g.add_many([procedure(g, steps=["build"])])
    with pytest.raises(BadInput, match=r"^not a valid note: Additional properties are not allowed \('name'"):
        g.add_many([Request("Deploys go through CI", category="fact", fields={"name": "deploy"})])
    with pytest.raises(BadInput, match=r"^not a valid note: Additional properties are not allowed \('rule_id'"):
        g.add_many([Request("Deploys go through CI", category="fact", fields={"rule_id": "manual-deploy"})])


@pytest.fixture
def pms(sabre) -> Path:
    """SABRE's preset and the Persistent Memory System's: procedures, episodes and insights."""
    from conftest import with_preset

    return with_preset(sabre, "pms")


def test_an_insight_replaces_the_one_of_its_rule_id_and_no_other(pms):
    g = Grimoire.open(pms)
    first = g.add_many([insight("manual-deploy", "Deploy after noon", ttl="30d")])[0]
    g.add_many([{"content": "We shipped", "category": "episode", "event": "manual-audit", "outcome": "success"}])
    others = g.add_many([insight("manual-review", "Review twice"), insight("manual-audit", "Audit weekly")])
    assert [e.data.get("supersedes") for e in others] == [None, None]
    newer = g.add_many([insight("manual-deploy", "Deploy before noon")])[0]
    assert newer.data["supersedes"] == first.id
    again = g.add_many([insight("manual-review", "Review three times"), insight("manual-review", "Review once")])
    assert again[0].data["supersedes"] == others[0].id and again[1].data["supersedes"] == again[0].id


def test_an_occurrence_said_again_is_news_and_a_rule_said_again_under_another_id_is_another_rule(pms):
    """Episodes, summaries and insights are never refused as duplicates of their own text."""
    g = Grimoire.open(pms)
    episode = {"content": "We shipped", "category": "episode", "event": "deploy", "outcome": "success"}
    summary = {
        "content": "Talked deploys",
        "category": "summary",
        "session_id": "s1",
        "message_count": 2,
        "memories": [],
    }
    for item in (episode, summary):
        first, again = g.add_many([item, item])
        assert first.id != again.id and "supersedes" not in again.data
    rules = g.add_many([insight("manual-a", "Deploy after noon"), insight("manual-b", "Deploy after noon")])
    assert [e.data.get("supersedes") for e in rules] == [None, None]


def test_a_role_on_an_entry_that_is_no_chat_message_is_refused_and_prunes_nothing(grimoire, monkeypatch):
    """Only a chat category numbers a message's turn and prunes its expired ones: a fact with a role is refused
    as it was given, and the fact that has expired stays for `mem archive`."""
    old = grimoire.add("Caches live a day", category="fact", ttl="1d").id
    monkeypatch.setenv("MEM_NOW", "2026-12-30T10:00:00Z")
    asked = Request("hello", category="fact", fields={"role": "user"})
    added = grimoire.add_many([asked, Request("Queues drain hourly", category="fact")], skip_invalid=True)
    assert (
        added.rejected[0].message == "not a valid note: Additional properties are not allowed ('role' was unexpected)"
    )
    assert asked.fields == {"role": "user"} and old in in_file(MEMORY / "facts.yaml")


def test_an_entry_without_an_id_is_numbered_on_the_day_of_its_timestamp(grimoire):
    written = grimoire.add_many([{"content": "Queues drain hourly", "timestamp": "2026-11-01T09:00:00Z"}])
    assert written[0].id == "MEM-20261101-001"


def test_a_rejected_duplicate_names_the_entry_it_repeats_and_another_refusal_names_none(grimoire):
    held = grimoire.add("Queues drain hourly", category="fact").id
    added = grimoire.add_many([{"content": "Queues drain hourly"}, {"content": ""}], skip_invalid=True)
    assert [(r.index, r.duplicate_of) for r in added.rejected] == [(0, held), (1, None)]


def test_what_after_asks_for_is_checked_and_written_in_the_same_batch(grimoire):
    """As `mem consolidate` writes the summary listing what it saved."""
    store = grimoire.store

    def summary(written):
        return [Request("Saved " + ", ".join(e.id for e in written), category="fact", tags=["summary"])]

    added = add_many(
        store, [Request("Queues drain hourly"), Request("Caches live a day")], grimoire.now(), after=summary
    )
    assert [e.content for e in added] == [
        "Queues drain hourly",
        "Caches live a day",
        "Saved MEM-20261122-001, MEM-20261122-002",
    ]
    assert [item["content"] for item in in_file(MEMORY / "facts.yaml").values()] == [e.content for e in added]


def test_a_dry_run_numbers_and_writes_nothing(grimoire):
    before = (MEMORY / "facts.yaml").read_text()
    added = add_many(grimoire.store, [Request("Queues drain hourly")], grimoire.now(), dry_run=True)
    assert added[0].id == "MEM-20261122-001" and (MEMORY / "facts.yaml").read_text() == before


def test_an_added_list_keeps_the_rejections_it_is_given():
    rejected = [Rejected(1, "an identical memory already exists: MEM-20261122-001", "MEM-20261122-001")]
    assert Added([], rejected).rejected == rejected and Added().rejected == []


def test_a_mention_in_a_damaged_file_that_is_no_id_holds_no_number(grimoire):
    """An id-shaped word numbered 000 or of two digits is no id: it holds no number, and no other is passed."""
    (MEMORY / "learnings.yaml").write_text("- id: MEM-20261122-000\n  see: MEM-20261122-07\n  x: [\n")
    assert grimoire.add("Queues drain hourly", category="fact").id == "MEM-20261122-001"


def test_a_related_id_that_is_no_text_exists_nowhere(grimoire):
    with pytest.raises(NotFound, match="related memory 5 does not exist"):
        grimoire.add_many([Request("Queues drain hourly", related=[5])])


def test_the_related_ids_read_in_one_query_are_linked_in_their_order(grimoire):
    first, second = (grimoire.add(text, category="fact").id for text in ("Queues drain hourly", "Caches live a day"))
    written = grimoire.add_many(
        [
            Request("Workers scale with the queue", related=[second, first, second]),
            Request("Queues drain every 30 minutes", supersedes=first),  # what was read for the link
        ]
    )
    assert written[0].data["related_memories"] == [second, first] and written[1].data["supersedes"] == first


def test_ids_given_in_a_batch_are_in_use_for_the_ids_it_numbers(grimoire):
    written = grimoire.add_many([line("MEM-20261122-005", "Queues drain hourly"), {"content": "Caches live a day"}])
    assert [e.id for e in written] == ["MEM-20261122-005", "MEM-20261122-006"]


def test_a_purged_id_stays_in_use_and_links_to_it_import_again(grimoire):
    """An export taken before a purge imports again, its links to purged entries kept; the id is never reissued."""
    (MEMORY / "archive").mkdir(exist_ok=True)
    (MEMORY / "archive" / "purged-ids.txt").write_text(f"{OLD} 2026-11-21T10:00:00Z\n")
    written = grimoire.add_many([line(NEW, "Queues drain every 30 minutes", related_memories=[OLD])])
    assert written[0].data["related_memories"] == [OLD]
    with pytest.raises(Refused, match=f"id {OLD} is already used"):
        grimoire.add_many([line(OLD, "Queues drain hourly")])


def test_a_link_to_an_id_two_entries_share_is_refused_before_any_write(grimoire, repo):
    shared = grimoire.add("The cache lives in redis", category="fact").id
    facts = (MEMORY / "facts.yaml").read_text()
    learnings = MEMORY / "learnings.yaml"
    learnings.write_text(learnings.read_text() + facts[facts.index("- id:") :])
    other = grimoire.add("Queues drain hourly", category="fact").id
    for item in ({"related": [shared]}, {"related": [other, shared]}, {"supersedes": shared}):
        store = Grimoire.open(repo).store
        with pytest.raises(Damaged, match="a write cannot tell which one is meant"):
            add_many(store, [Request("The cache lives in valkey", **item)], grimoire.now(), dry_run=True)


def test_a_near_duplicate_is_noted_in_a_small_and_in_a_large_batch(grimoire):
    grimoire.add("The checkout service retries payments three times", category="fact")
    for size in (1, 40):
        items = [{"content": f"Unrelated note {n} on build caching"} for n in range(size - 1)]
        written = grimoire.add_many(
            [*items, {"content": f"The checkout service retries payments three times!! ({size})"}], skip_invalid=True
        )
        assert written[-1].near_duplicate is not None, size


# -- prepare and update_many (`mem compact`, lifecycle commands) --------------------------------------


def test_prepare_numbers_and_checks_without_writing(grimoire):
    grimoire.add("Queues drain hourly", category="fact")
    store = grimoire.store
    with store.lock():
        entries = prepare(store, [Request("Caches live a day"), Request("Caches live a week")], grimoire.now())
        with pytest.raises(GrimoireError, match="an identical memory already exists"):
            prepare(store, [Request("Queues drain hourly")], grimoire.now())
    assert [e.id for e in entries] == ["MEM-20261122-002", "MEM-20261122-003"]
    assert [e.category for e in entries] == ["fact", "fact"]
    assert len(in_file(MEMORY / "facts.yaml")) == 1


def test_update_many_rewrites_entries_in_several_files_in_one_write(grimoire):
    fact = grimoire.add("Queues drain hourly", category="fact")
    decision = grimoire.add("We drain queues hourly", category="decision", confidence=0.95)
    store = grimoire.store
    with store.lock():
        update_many(store, {fact.id: {**fact.data, "importance": 9}, decision.id: {**decision.data, "importance": 2}})
    assert in_file(MEMORY / "facts.yaml")[fact.id]["importance"] == 9
    assert in_file(MEMORY / "decisions.yaml")[decision.id]["importance"] == 2


# -- chat turns ------------------------------------------------------------------------------------


def test_chat_turns_count_on_from_the_last_active_message(protea):

    def say(text: str, when: str) -> None:
        assert mem("chat", "add", "user", text, env={"MEM_NOW": when}).code == 0

    say("one", "2026-11-22T10:00:00Z")
    say("two", "2026-11-22T10:01:00Z")
    say("three", "2026-11-22T10:02:00Z")
    turns = {e["content"]: e["turn"] for e in in_file(MEMORY / "local" / "chat.yaml").values()}
    assert turns == {"one": 1, "two": 2, "three": 3}
    say("later", "2026-11-22T12:00:00Z")  # all three lapsed: removed by this write, and the count starts again
    assert [(e["content"], e["turn"]) for e in in_file(MEMORY / "local" / "chat.yaml").values()] == [("later", 1)]


def test_an_event_refuses_to_fire_a_task_whose_id_two_entries_share(sabre):
    """The in-place update finds what it rewrites by id: a shared id is refused, not one copy edited."""
    waiting = mem("task", "add", "Re-run the report", "--on", "data.loaded").out.strip()
    tasks = next(path for path in MEMORY.rglob("*.yaml") if waiting in path.read_text())
    text = tasks.read_text()
    tasks.write_text(text + text[text.index("- id:") :])
    before = tasks.read_bytes()
    fired = mem("event", "data.loaded")
    assert fired.code == 3 and "a write cannot tell which one is meant" in fired.err, fired.err
    assert tasks.read_bytes() == before


def test_an_imported_entry_a_condensed_one_replaced_duplicates_nothing(grimoire):
    written = grimoire.add_many(
        [
            line(OLD, "Queues drain hourly", superseded_by=NEW),
            line(NEW, "Queues: drain and retry rules, condensed", related_memories=[OLD]),
            {"content": "Queues drain hourly"},
        ]
    )
    assert written[-1].content == "Queues drain hourly"


def test_a_key_stays_with_its_latest_holder_when_an_earlier_one_is_superseded(grimoire):
    """An explicit supersede may carry a key another entry still holds; superseding that other one
    leaves the key with the newer holder."""
    held = grimoire.add_many([{"content": "Deploys on Tuesday", "key": "deploy.day"}])[0]
    plain = grimoire.add("Releases need a changelog", category="fact")
    added = grimoire.add_many(
        [
            {"content": "Deploys on Tuesday", "key": "deploy.day"},  # refused, its holder looked up
            {"content": "Deploys on Wednesday", "key": "deploy.day", "supersedes": plain.id},
            {"content": "Releases on Tuesday", "key": "release.day", "supersedes": held.id},
            {"content": "Deploys on Friday", "key": "deploy.day"},
        ],
        skip_invalid=True,
    )
    assert [r.index for r in added.rejected] == [0]
    assert added[2].data["supersedes"] == added[0].id


def test_a_key_is_held_by_an_entry_that_has_yet_to_expire_and_by_no_other(grimoire):
    grimoire.add("Releases need a changelog", category="fact")
    first = grimoire.add_many([{"content": "Deploys on Tuesday", "key": "deploy.day", "ttl": "30d"}])[0]
    assert "supersedes" not in first.data
    second = grimoire.add_many([{"content": "Deploys on Friday", "key": "deploy.day"}])[0]
    assert second.data["supersedes"] == first.id


@SIZES
def test_an_entry_that_has_yet_to_expire_is_a_duplicate(grimoire, filler):
    grimoire.add("Caches live a day", category="fact", ttl="30d")
    with pytest.raises(GrimoireError, match="an identical memory already exists"):
        grimoire.add_many([*filler, {"content": "Caches live a day"}])


def test_a_chat_message_given_its_turn_keeps_it(protea):
    g = Grimoire.open(protea)
    chat = g.config.of_kind("chat").name
    written = g.add_many([{"content": "hello", "category": chat, "role": "user", "turn": 7}])
    assert written[0].data["turn"] == 7
    assert g.add_many([{"content": "and then", "category": chat, "role": "user"}])[0].data["turn"] == 8


def test_a_local_entry_and_a_tracked_one_never_supersede_each_other_and_the_refusal_says_which_is_which(sabre):
    g = Grimoire.open(sabre)
    tracked = g.add_many([{"content": "hello", "category": "semantic", "key": "db.x"}])[0]
    local = g.add_many([{"content": "a local note", "category": "cache", "ttl": "1h"}])[0]
    hint = "use a category of the same kind of tracking, or another key"
    cases = [
        (
            {"content": "bye", "category": "cache", "ttl": "1h", "key": "db.x"},
            f"{tracked.id} is in the tracked category semantic; an entry of cache cannot supersede it (key db.x)",
        ),
        (
            {"content": "a tracked note", "category": "semantic", "supersedes": local.id},
            f"{local.id} is local (cache); an entry of semantic cannot supersede it",
        ),
    ]
    for item, message in cases:
        with pytest.raises(Refused) as refused:
            g.add_many([item])
        assert (refused.value.message, refused.value.hint) == (message, hint)


def test_an_imported_archived_entry_neither_replaces_its_keys_holder_nor_duplicates_it(grimoire):
    held = grimoire.add_many([{"content": "Deploys on Tuesday", "key": "deploy.day"}])[0]
    imported(grimoire, line(OLD, "Deploys on Tuesday", key="deploy.day", **ARCHIVED))
    assert "superseded_by" not in in_file(MEMORY / "facts.yaml")[held.id]
    assert grimoire.get("deploy.day").id == held.id


def test_an_archived_entry_and_one_superseded_earlier_in_the_batch_are_not_superseded(grimoire):
    imported(grimoire, line(OLD, "Queues drained hourly", **ARCHIVED))
    with pytest.raises(Refused) as archived:
        grimoire.add_many([{"content": "Queues drain every 30 minutes", "supersedes": OLD}])
    assert (archived.value.message, archived.value.hint) == (
        f"{OLD} is archived and cannot be superseded",
        "add a new memory instead",
    )
    first = grimoire.add("Caches live a day", category="fact")
    with pytest.raises(Refused) as twice:
        grimoire.add_many(
            [
                {"content": "Caches live two days", "supersedes": first.id},
                {"content": "Caches live a week", "supersedes": first.id},
            ]
        )
    newer = "MEM-20261122-002"
    assert (twice.value.message, twice.value.hint) == (
        f"item 2: {first.id} is already superseded by {newer}",
        f"supersede {newer} instead",
    )


def test_what_a_refused_duplicate_says_and_names(grimoire):
    keyed = grimoire.add_many([{"content": "Deploys on Tuesday", "key": "deploy.day"}])[0]
    plain = grimoire.add("Caches live a day", category="fact")
    with pytest.raises(Duplicate) as again:
        grimoire.add_many([{"content": "Deploys on Tuesday", "key": "deploy.day"}])
    assert (again.value.message, again.value.hint, again.value.of) == (
        f"{keyed.id} already holds this under the key deploy.day",
        "nothing to add; give the key a new value",
        keyed.id,
    )
    with pytest.raises(Duplicate) as same:
        grimoire.add_many([{"content": "Caches live a day"}])
    assert (same.value.hint, same.value.of) == (
        f'nothing to add; to change it use `mem supersede {plain.id} "..."`',
        plain.id,
    )


def test_which_entries_are_checked_for_duplicates(grimoire):
    grimoire.add("Deploys on Tuesday", category="fact")
    keyed = grimoire.add_many([{"content": "Deploys on Tuesday", "key": "deploy.day"}])[0]  # known by its key
    assert keyed.data["key"] == "deploy.day"
    unchecked = grimoire.add_many([Request("Deploys on Tuesday", dedupe=False)])[0]
    assert unchecked.content == "Deploys on Tuesday"
    with pytest.raises(Duplicate):
        grimoire.add_many([Request("Deploys on Tuesday", dedupe=True, key="release.day")])


def test_a_batch_without_near_lookups_notes_none_and_entries_know_their_file(grimoire):
    grimoire.add("The checkout service retries payments three times", category="fact")
    store = grimoire.store
    near = [Request("The checkout service retries payments three times!!")]
    assert add_many(store, near, grimoire.now(), near=False)[0].near_duplicate is None
    written = grimoire.add_many([line(OLD, "Queues drained hourly", **ARCHIVED), {"content": "Caches live a day"}])
    assert [e.file for e in written] == [str(MEMORY / "archive" / "facts.yaml"), str(MEMORY / "facts.yaml")]


def test_a_chat_message_said_twice_is_no_duplicate(protea):
    g = Grimoire.open(protea)
    item = {"content": "The deploy failed on a full disk", "category": g.config.of_kind("chat").name, "role": "user"}
    assert [e.data["turn"] for e in g.add_many([item, item])] == [1, 2]
