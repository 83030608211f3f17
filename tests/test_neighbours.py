"""Issue 38.3: a match written right next to one of the query's best
matches, in the same sitting, is lifted (a question's answer is often the
next entry, in other words than the question's), through the real `mem`."""

import json
import sqlite3

from conftest import mem
from test_semantic import configure


def add(text: str, at: str) -> str:
    result = mem("add", "-c", "fact", text, env={"MEM_NOW": at})
    assert result.code == 0, result.err
    return result.out.strip()


def explained(text: str) -> list[dict]:
    result = mem("query", text, "--json", "--explain")
    assert result.code == 0, result.err
    return json.loads(result.out)


def conversation(repo) -> dict[str, str]:
    # Neighbours alone: with coverage (test_coverage.py) "later", holding two of
    # the question's words, passes the answer, which holds one.
    configure(repo, coverage_weight=0)
    return {
        "question": add("Caroline: which instrument do you play, Mel?", "2026-03-01T10:00:00Z"),
        "answer": add("Mel: the clarinet, since I was young; it helps me relax", "2026-03-01T10:01:00Z"),
        "aside": add("Caroline: lovely!", "2026-03-01T10:02:00Z"),  # next to it, but matches no word
        # next in the file too, but three hours later: another sitting
        "later": add("Mel: the violin is the instrument my daughter loves", "2026-03-01T13:00:00Z"),
        "beach": add("Mel: the kids and I went to the beach, since they love it", "2026-03-02T10:00:00Z"),
    }


def test_the_entry_after_a_strong_match_in_the_same_sitting_is_lifted(repo):
    ids = conversation(repo)
    hits = explained("what instrument does Mel play")
    order = [hit["id"] for hit in hits]
    # The answer shares only "Mel" with the question, as every other entry does.
    assert order[:2] == [ids["question"], ids["answer"]]
    near = {hit["id"]: hit["explain"]["neighbours"] for hit in hits}
    assert near[ids["answer"]] > 0
    assert near[ids["later"]] == 0 and near[ids["beach"]] == 0  # another sitting
    assert ids["aside"] not in order  # a neighbour that does not match is never added
    for hit in hits:
        parts = hit["explain"]
        blend = 0.8 * parts["relevance"] + 0.2 * parts["recency"] + parts["prior"]
        assert abs(hit["score"] - (blend + parts["neighbours"])) < 1e-5


def test_neighbours_rank_alike_with_and_without_materialized_tables(repo, monkeypatch):
    from grimoire_cli import Grimoire
    from grimoire_cli.storage.catalog import queries

    ids = conversation(repo)
    answers = []
    for materialize in (True, False):
        if materialize and sqlite3.sqlite_version_info < (3, 35):
            continue
        monkeypatch.setattr(queries, "MATERIALIZE", materialize)
        hits = Grimoire.open(repo).query("what instrument does Mel play")
        answers.append([(h.entry.id, round(h.score, 9), round(h.parts["neighbours"], 9)) for h in hits])
    assert answers[0][1][0] == ids["answer"] and answers[0][1][2] > 0
    assert all(answer == answers[0] for answer in answers)
