"""What search makes of a query and says of its hits, pinned exactly
(retrieval/search.py): the query terms, the "filtered out" reasons, the score
parts, the newest-first order without a query. In process, on real
grimoires: the tests written to kill survivors of `make mutation`
(benchmarks/mutation.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import with_preset

from grimoire_cli import Grimoire
from grimoire_cli.retrieval.search import Hit, Hits, expression, filtered_out, ranked, terms
from grimoire_cli.storage.catalog.queries import Filter


@pytest.fixture
def words_known(grimoire):
    grimoire.add("PostgreSQL 16 is the database we deploy", "fact")
    grimoire.add("call create_shipment after the order is paid", "fact")
    grimoire.add("The parseConfig function reads yaml", "fact")
    grimoire.add("東京タワー は 高い", "fact")
    archived = grimoire.add("kafka brokers rebalance nightly", "fact")
    grimoire.archive([archived.id], reason="manual", commit=False)
    return grimoire


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what is the deploy", ['"deploy"']),  # stop words dropped
        ("the is", ['"the"', '"is"']),  # unless nothing else is left
        ("9999", ['"9999"']),  # a number is asked as it is
        ("deplyo", ['"deploy"']),  # one edit (a swap) from a known word
        ("dep", ['"dep"*']),  # too short to correct: a prefix
        ("abcd", ['"abcd"*']),  # nothing one edit away, matches nothing as it is
        ("ab", ['"ab"*']),
        ("x", ['"x"']),  # too short even for a prefix
        ("deploying", ['"deploying"']),  # matches as it is, through the stemmer
        ("deploy deploy", ['"deploy"']),
        ("createShipment", ['"createshipment"', '"create shipment"']),
        ("create_shipment", ['"create shipment"', '"createshipment"']),
        ("parseConfig", ['"parseconfig"', '"parse config"']),
        ("東京", ['"東京"']),
        ("東京タワー", ['"東京 京タ タワ ワー"']),  # its character pairs, as a phrase
        ("東", ['"東"*']),
        ("kafka", ['"kafka"']),  # only the archive holds it: known, not widened
        ("kafak", ['"kafka"']),  # corrected to an archived word too
        ('say "hi"', ['"say"*', '"hi"*']),
        ("naïve café", ['"naive"*', '"cafe"*']),
        ("привет", ['"привет"*']),  # not Latin, but written with spaces: a word like any other
        ("create_shipment deploy", ['"deploy"', '"create shipment"', '"createshipment"']),
        ("東京タワー deploy", ['"deploy"', '"東京 京タ タワ ワー"']),  # the run asked once, as its pairs
    ],
)
def test_a_query_is_asked_as_these_terms(words_known, text, expected):
    assert terms(words_known.store, text) == expected


def test_a_query_of_no_words_asks_nothing(words_known):
    assert expression(words_known.store, "!!") is None
    assert expression(words_known.store, "deploy database") == '"deploy" OR "database"'
    ranking = ranked(
        words_known.store,
        "!!",
        Filter(at=words_known.now().timestamp()),
        recency_weight=0.2,
        limit=5,
        include_archive=False,
    )
    assert list(ranking) == [] and ranking.total == 0


def test_a_limited_ranking_counts_every_match(grimoire):
    for n in range(3):
        grimoire.add(f"deploy note number {n}", "fact")
    chosen = Filter(at=grimoire.now().timestamp())
    found = ranked(grimoire.store, "deploy", chosen, recency_weight=0.2, limit=1, include_archive=False)
    assert len(found) == 1 and found.total == 3


def test_each_filter_says_what_it_left_out(grimoire):
    grimoire.add("deploy on tuesdays", "decision", confidence=0.95, tags=["ops"])
    assert grimoire.query("deploy", categories=["fact"]).filtered_out == {"category": 1}
    assert grimoire.query("deploy", tags=["nope"]).filtered_out == {"tag": 1}
    assert grimoire.query("deploy", min_confidence=0.99).filtered_out == {"confidence": 1}
    assert grimoire.query("deploy", since="2026-11-23").filtered_out == {"time": 1}
    assert grimoire.query("deploy", until="2026-11-21").filtered_out == {"time": 1}
    assert grimoire.query("deploy", tier="long").filtered_out == {"tier": 1}
    assert grimoire.query("deploy", categories=["fact"], tags=["nope"]).filtered_out == {"together": 1}
    for together in (
        {"min_confidence": 0.99},
        {"since": "2026-11-23"},
        {"until": "2026-11-21"},
        {"tier": "long"},
    ):
        assert grimoire.query("deploy", categories=["fact"], **together).filtered_out == {"together": 1}, together
    everything = {"include_expired": True, "include_superseded": True, "archived": True}
    assert grimoire.query("deploy", categories=["fact"], min_confidence=0.99, **everything).filtered_out == {
        "together": 1
    }  # two filters, neither enough alone
    assert grimoire.query("deploy").filtered_out == {}  # found: nothing to say
    assert grimoire.query("deploy", categories=["fact"], include_superseded=True).filtered_out == {"category": 1}
    assert grimoire.query("nothing matches this").filtered_out == {}
    assert grimoire.query("deploy", categories=["fact"], archived=True).filtered_out == {"category": 1}
    important = Filter(at=grimoire.now().timestamp(), min_importance=9)
    left_out = filtered_out(grimoire.store, "deploy", important, recency_weight=0.2, include_archive=False)
    assert left_out == {"importance": 1}
    both = Filter(at=grimoire.now().timestamp(), min_importance=9, categories=["fact"])
    assert filtered_out(grimoire.store, "deploy", both, recency_weight=0.2, include_archive=False) == {"together": 1}
    # Metadata the entry does not hold, and a category `mem context` leaves out (`excluded`), alone and with another.
    moment = grimoire.now().timestamp()
    other_team = Filter(at=moment, metadata=[("team", "web")])
    assert filtered_out(grimoire.store, "deploy", other_team, recency_weight=0.2, include_archive=False) == {
        "metadata": 1
    }
    not_decisions = Filter(at=moment, excluded=["decision"])
    assert filtered_out(grimoire.store, "deploy", not_decisions, recency_weight=0.2, include_archive=False) == {
        "category": 1
    }
    for with_it in (
        Filter(at=moment, excluded=["decision"], tags=["nope"]),
        Filter(at=moment, metadata=[("team", "web")], tags=["nope"]),
    ):
        assert filtered_out(grimoire.store, "deploy", with_it, recency_weight=0.2, include_archive=False) == {
            "together": 1
        }


def test_expired_superseded_and_archived_entries_are_counted_as_left_out(grimoire):
    brief = grimoire.add("the staging cache holds sessions", "learning", ttl="1d")
    old = grimoire.add("the build runs on jenkins", "decision", confidence=0.95)
    grimoire.supersede(old.id, "the pipeline runs on github actions")
    gone = grimoire.add("the queue uses rabbitmq", "fact")
    grimoire.archive([gone.id], reason="manual", commit=False)
    grimoire.runtime.fixed_now = grimoire.now() + timedelta(days=2)
    assert grimoire.query("staging cache").filtered_out == {"expired": 1}
    assert grimoire.query("staging cache", include_expired=True)[0].entry.id == brief.id
    assert grimoire.query("jenkins").filtered_out == {"superseded": 1}
    assert grimoire.query("rabbitmq").filtered_out == {"archived": 1}
    assert grimoire.query("rabbitmq", categories=["decision"]).filtered_out == {"together": 1}


def test_hits_keep_the_notes_of_the_hits_they_are_made_from(grimoire):
    """A ranking's notes (what it fell back on) travel with its hits; hits made of nothing or a plain list have
    none, and notes given win. Ranked by words alone unless asked: no note of semantic search."""
    grimoire.add("deploy on tuesdays", "decision")
    plain = Filter(at=grimoire.now().timestamp())
    assert ranked(grimoire.store, "deploy", plain, recency_weight=0.2, limit=5, include_archive=False).notes == []
    found = list(grimoire.query("deploy"))
    assert (Hits().notes, Hits(found).notes) == ([], [])
    noted = Hits(found, notes=["semantic search is off"])
    assert (Hits(noted).notes, Hits(noted, notes=[]).notes) == (["semantic search is off"], [])


def test_a_hit_gives_its_score_and_parts_rounded(grimoire):
    grimoire.add("deploy on tuesdays", "decision", confidence=0.95)
    hit = grimoire.query("deploy")[0]
    assert hit.to_dict(explain=True) | {"source": None} == {
        "id": "MEM-20261122-001",
        "category": "decision",
        "summary": "deploy on tuesdays",
        "content": "deploy on tuesdays",
        "confidence": 0.95,
        "ttl": "permanent",
        "source": None,
        "score": 1.045,
        "explain": {
            "bm25": 1e-06,
            "relevance": 1.0,
            "recency": 1.0,
            "prior": 0.045,
            "neighbours": 0.0,
            "coverage": 0.0,
            "tier": 0.0,
        },
    }
    viewed = hit.to_dict(moment=grimoire.now())
    assert (viewed["state"], viewed["tier"], viewed["score"], "explain" in viewed) == (
        "active",
        "unrated",
        1.045,
        False,
    )
    made = Hit(hit.entry, 0.12345678, {"relevance": 0.98765432}, scope="team")
    assert made.to_dict(explain=True)["score"] == 0.123457 and made.to_dict()["scope"] == "team"
    assert made.to_dict(explain=True)["explain"] == {"relevance": 0.987654}
    assert "scope" not in hit.to_dict() and Hit(hit.entry, 1.0).parts == {}
    assert repr(made).startswith("Hit(entry=Entry(") and repr(made).endswith(
        ", score=0.12345678, parts={'relevance': 0.98765432})"
    )


def test_a_hits_tier_bonus_is_in_its_parts(grimoire):
    entry = grimoire.add("deploy on tuesdays", "decision", confidence=0.95)
    for _ in range(3):
        grimoire.apply(entry.id, True)
    hit = grimoire.query("deploy")[0]
    assert hit.parts["tier"] == 0.1 and hit.entry.tier == "high"


def test_episodes_without_a_query_come_newest_first_scored_by_their_age(repo):
    grimoire = Grimoire.open(with_preset(repo, "sabre"))
    start = grimoire.now()
    older = grimoire.episodes.add("deploy.done", learned="the old deploy went fine")
    grimoire.runtime.fixed_now = start + timedelta(days=30)
    newer = grimoire.episodes.add("deploy.done", learned="the new deploy went fine")
    for text in (None, "  "):
        found = grimoire.episodes.list(text)
        assert [(h.entry.id, h.score, h.parts) for h in found] == [
            (newer.id, 1.0, {"recency": 1.0}),
            (older.id, 0.5, {"recency": 0.5}),
        ]
    found = grimoire.episodes.list("old deploy")
    assert [h.entry.id for h in found] == [older.id, newer.id] and found[0].score > found[1].score > 0
    assert [h.entry.id for h in grimoire.episodes.list("deploy", limit=1)] == [newer.id]
    assert [h.entry.id for h in grimoire.episodes.list(limit=1)] == [newer.id]
