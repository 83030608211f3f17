"""Issue 38.3: coverage. Each of a query's best matches gains
retrieval.coverage_weight × the share of the query's terms it holds, so an
entry holding several of them passes one that repeats a single rare one;
through the real `mem`."""

import json

import pytest
from conftest import at_the_first_call_of, corrupt_the_catalog, mem, mem_process, row_of
from test_semantic import configure

from grimoire_cli import Grimoire
from grimoire_cli.core.errors import Damaged
from grimoire_cli.retrieval.search import covered, expression, ranked
from grimoire_cli.storage.catalog.queries import Filter

WEIGHT = 0.15  # retrieval.coverage_weight's default


NOW = "2026-03-05T00:00:00Z"


def add(text: str, hour: int) -> str:
    # Two hours apart: no two notes in one sitting, so no neighbours.
    result = mem("add", "-c", "fact", text, env={"MEM_NOW": f"2026-03-{1 + hour // 24:02d}T{hour % 24:02d}:00:00Z"})
    assert result.code == 0, result.err
    return result.out.strip()


def explained(text: str, *options: str) -> list[dict]:
    result = mem("query", text, "--json", "--explain", *options, env={"MEM_NOW": NOW})
    assert result.code == 0, result.err
    return json.loads(result.out)


def notes() -> dict[str, str]:
    """One note repeats the query's rarest word; another holds all three of
    its words, the two others common ones (four more notes hold them)."""
    ids = {
        "repeats": add("rollback, rollback: the rollback runbook", 2),
        "holds": add("when a deploy fails its canary, rollback", 4),
    }
    for n in range(4):
        add(f"the deploy of service {n} passed its canary", 6 + 2 * n)
    for n, word in enumerate(("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")):
        add(f"notes about {word} and other things", 14 + 2 * n)
    return ids


def test_an_entry_holding_more_of_the_query_passes_one_repeating_a_word(repo):
    ids = notes()
    configure(repo, coverage_weight=0)
    before = [hit["id"] for hit in explained("rollback deploy canary")]
    assert before.index(ids["repeats"]) < before.index(ids["holds"])
    assert all(hit["explain"]["coverage"] == 0 for hit in explained("rollback deploy canary"))

    configure(repo, coverage_weight=WEIGHT)
    hits = explained("rollback deploy canary")
    assert hits[0]["id"] == ids["holds"]
    coverage = {hit["id"]: hit["explain"]["coverage"] for hit in hits}
    assert coverage[ids["holds"]] == pytest.approx(WEIGHT)  # all three terms
    assert coverage[ids["repeats"]] == pytest.approx(WEIGHT / 3)
    assert all(hit["explain"]["neighbours"] == 0 for hit in hits)
    for hit in hits:
        parts = hit["explain"]
        blend = 0.8 * parts["relevance"] + 0.2 * parts["recency"] + parts["prior"]
        assert hit["score"] == pytest.approx(blend + parts["neighbours"] + parts["coverage"], abs=1e-5)


def test_the_first_hits_do_not_depend_on_the_limit(repo):
    ids = notes()
    assert [hit["id"] for hit in explained("rollback deploy canary", "-n", "1")] == [ids["holds"]]
    many = [hit["id"] for hit in explained("rollback deploy canary", "-n", "20")]
    assert many[:3] == [hit["id"] for hit in explained("rollback deploy canary", "-n", "3")]


def test_a_query_of_one_term_adds_no_coverage(repo):
    notes()
    assert all(hit["explain"]["coverage"] == 0 for hit in explained("rollback"))


def test_a_query_of_two_terms_is_covered(repo):
    """Two terms are the fewest that coverage orders: holding both is worth the whole weight."""
    ids = notes()
    coverage = {hit["id"]: hit["explain"]["coverage"] for hit in explained("rollback canary")}
    assert coverage[ids["holds"]] == pytest.approx(WEIGHT)
    assert coverage[ids["repeats"]] == pytest.approx(WEIGHT / 2)
    assert sorted(coverage.values()).count(pytest.approx(WEIGHT / 2)) == 5  # the runbook and the four deploys


def test_an_unlimited_ranking_is_covered_as_a_limited_one(repo):
    """The library's ranking without a limit (`mem context` asks one of its
    due tasks) re-orders the same pool: its first rows are the limited ones'."""
    ids = notes()
    grimoire = Grimoire.open(repo)
    store = grimoire.store
    everything = Filter(at=grimoire.now().timestamp())
    unlimited = ranked(
        store, "rollback deploy canary", everything, recency_weight=0.2, limit=None, include_archive=False
    )
    limited = ranked(store, "rollback deploy canary", everything, recency_weight=0.2, limit=3, include_archive=False)
    assert len(unlimited) == unlimited.total == limited.total == 6
    assert [row.id for row in unlimited][:3] == [row.id for row in limited]
    assert unlimited[0].id == ids["holds"] and unlimited[0].coverage == pytest.approx(WEIGHT)


def test_a_catalog_failing_between_the_ranking_and_its_coverage_is_named(repo):
    """Another program overwrites the catalog after the ranking read its rows.
    A catalog in memory numbers the rows afresh (an archived memory left a gap
    on disk), so coverage must not ask it: the query would show other entries
    than it ranked, or lose one. The cache is named; the next query answers."""
    ids = notes()
    assert mem("archive", ids["repeats"], "--reason", "manual", "--no-commit").code == 0
    grimoire = Grimoire.open(repo)
    store = grimoire.store
    query = expression(store, "rollback deploy canary")
    assert query is not None
    rows, _ = store.reads.ranked(
        query, Filter(at=grimoire.now().timestamp()), recency_weight=0.2, limit=None, include_archive=False
    )
    corrupt_the_catalog(store)
    with pytest.raises(Damaged, match="the cache failed during a read"):
        covered(store, query, rows, WEIGHT, include_archive=False)
    assert store.catalog.in_memory
    assert {hit.entry.id for hit in grimoire.query("rollback deploy canary")} == {row.id for row in rows}


def test_a_query_reads_one_state_though_another_process_reindexes_between_its_reads(repo):
    """Another program rewrites the file between the ranking and its coverage (a `git pull`): the newest
    memory, which the ranking found, is gone, another in its place, and a `mem list` in another process
    re-indexes the file; the new memory takes the row number the old one had. The query's coverage and load
    read the state its ranking read: the memory it ranked, with its coverage, and not the one that took
    its number (which holds none of the query's words)."""
    notes()
    ranked_one = add("rollback the deploy whose canary failed", 40)
    facts = repo / "grimoires/loa/memory/facts.yaml"
    before = facts.read_text()
    start = before.index(f"- id: {ranked_one}")
    other = "MEM-20260303-999"
    replaced = before[:start] + before[start:].replace(ranked_one, other).replace(
        "rollback the deploy whose canary failed", "notes about kappa"
    )

    def pull() -> None:
        number = row_of(repo, ranked_one)
        facts.write_text(replaced)
        assert mem_process("list", cwd=repo, env={"MEM_NOW": NOW}).returncode == 0
        assert row_of(repo, ranked_one) is None and row_of(repo, other) == number  # the premise: the number came back

    grimoire = Grimoire.open(repo)
    with at_the_first_call_of("terms_held", pull) as done:
        hits = grimoire.query("rollback deploy canary", limit=50)
    assert done
    found = {hit.entry.id: hit for hit in hits}
    assert other not in found
    assert found[ranked_one].entry.content == "rollback the deploy whose canary failed"
    assert found[ranked_one].parts["coverage"] == pytest.approx(WEIGHT)
    grimoire.store.refresh()  # the next command reads the new state
    assert ranked_one not in {hit.entry.id for hit in grimoire.query("rollback deploy canary", limit=50)}


def test_explain_shows_the_coverage_line(repo):
    ids = notes()
    result = mem("query", "rollback deploy canary", "--explain", env={"MEM_NOW": NOW})
    assert result.code == 0, result.err
    first = result.out.split(ids["repeats"])[0]
    assert f"coverage={WEIGHT}" in first.replace(" ", ""), result.out


@pytest.mark.parametrize("value", [-0.1, 1.5, "much"])
def test_a_bad_coverage_weight_is_a_config_error(repo, value):
    configure(repo, coverage_weight=value)
    result = mem("query", "rollback")
    assert result.code == 3 and result.err.startswith("error: "), result.err
    assert "retrieval.coverage_weight must be" in result.err and result.err.count("\n") == 1
