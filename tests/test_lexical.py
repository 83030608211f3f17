"""Issue 38.1: what a person types finds what they wrote — partial words,
identifiers, scripts without spaces and accents, through the real `mem`."""

import json

from conftest import mem


def add(text: str) -> str:
    result = mem("add", "-c", "fact", text)
    assert result.code == 0, result.err
    return result.out.strip()


def found(text: str) -> list[str]:
    result = mem("query", text, "--json")
    ids = [hit["id"] for hit in json.loads(result.out)]
    assert result.code == (0 if ids else 1), result.err
    return ids


def test_a_partial_word_or_one_too_short_to_correct_matches_as_a_prefix(repo):
    database = add("PostgreSQL 16 is the database")
    runner = add("The runner restarts nightly")
    assert found("postgre") == [database]           # a partial last word
    assert found("which db is postgre") == [database]
    assert found("pos") == [database]               # too short to correct
    assert set(found("postgre nightly")) == {database, runner}
    assert database in mem("context", "postgre").out
    # a word that matches as it is is not widened
    cat = add("The cat sleeps on the server")
    assert found("cat") == [cat]                    # not "category" below
    add("category rules apply")
    assert found("cat") == [cat]
    assert found("runners") == [runner]             # typo correction first
    assert found("zebra") == []
