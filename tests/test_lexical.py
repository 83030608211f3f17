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
    assert found("postgre") == [database]  # a partial last word
    assert found("which db is postgre") == [database]
    assert found("pos") == [database]  # too short to correct
    assert set(found("postgre nightly")) == {database, runner}
    assert database in mem("context", "postgre").out
    # a word that matches as it is is not widened
    cat = add("The cat sleeps on the server")
    assert found("cat") == [cat]  # not "category" below
    add("category rules apply")
    assert found("cat") == [cat]
    assert found("runners") == [runner]  # typo correction first
    assert found("zebra") == []


def test_identifiers_find_each_other_split_and_joined(repo):
    snake = add("call create_shipment after the order is paid")
    camel = add("the createShipment handler retries twice")
    prose = add("we create a shipment per order line")
    kebab = add("set retrieval.recency-weight to zero")
    assert set(found("create shipment")) == {snake, camel, prose}
    # the spelled identifier first, whichever way it is spelled; prose last
    for spelling in ("create_shipment", "createShipment", "CreateShipment", "createshipment"):
        assert set(found(spelling)[:2]) == {snake, camel}, spelling
    assert found("recencyWeight") == [kebab]
    assert found("recency_weight") == [kebab]
    assert found("retrieval.recency-weight") == [kebab]
    assert camel in mem("context", "create_shipment").out


def test_a_catalog_of_the_previous_schema_is_rebuilt_with_the_aliases(repo):
    import sqlite3

    camel = add("the createShipment handler retries twice")
    assert found("create_shipment") == [camel]
    # the catalog as the last version left it: no aliases column
    with sqlite3.connect(repo / "grimoires/loa/memory/.cache/index.sqlite3") as db:
        db.execute("DROP TABLE fts")
        db.execute("CREATE VIRTUAL TABLE fts USING fts5(summary, content, tags, tokenize='porter unicode61')")
        db.execute("UPDATE meta SET value = '22' WHERE key = 'version'")
    assert found("create_shipment") == [camel]
    assert found("create shipment") == [camel]


def test_scripts_without_spaces_are_found_by_any_part(repo):
    japanese = add("日本語のメモ")
    ramen = add("東京でラーメンを食べた")
    thai = add("ภาษาไทยง่ายมาก")
    assert found("日本語") == [japanese]  # the start of a run
    assert found("メモ") == [japanese]  # its end
    assert found("ラーメン") == [ramen]  # its middle
    assert found("本") == [japanese]  # one character
    assert found("Tokyo東京") == [ramen]  # a run inside a mixed word
    assert found("ไทย") == [thai] and found("ง่าย") == [thai]
    assert found("中国語") == []  # no pair of it is written anywhere
    assert found("語の") == [japanese]
    assert japanese in mem("context", "日本語").out


def test_a_catalog_of_version_23_is_rebuilt_with_the_pairs_of_spaceless_scripts(repo):
    import sqlite3

    japanese = add("日本語のメモ")
    assert found("メモ") == [japanese]
    with sqlite3.connect(repo / "grimoires/loa/memory/.cache/index.sqlite3") as db:
        db.execute("UPDATE fts SET aliases = ''")  # as version 23 indexed it: no pairs
        db.execute("UPDATE meta SET value = '23' WHERE key = 'version'")
    assert found("メモ") == [japanese]


def test_accents_are_folded_before_typo_correction(repo):
    dessert = add("Crème brûlée is on the dessert menu")
    crime = add("the crime scene was sealed")
    owner = add("Nguyễn owns the billing service")
    cafe = add("we met at the café on friday")
    # "creme" is the folded "crème", not a typo of "crime"
    assert found("creme") == [dessert]
    assert found("creme brulee") == [dessert]
    assert found("CRÈME") == [dessert]
    assert found("crime") == [crime]
    assert found("cafe") == [cafe] and found("café") == [cafe]
    assert found("nguyen") == [owner]  # two marks on one letter
    assert dessert in mem("context", "creme").out


def test_a_thai_word_is_asked_whole_with_its_tone_marks(repo):
    easy = add("ภาษาไทยง่ายมาก")
    add("ขายของ")  # holds "าย", not "ง่าย"
    assert found("ง่าย") == [easy]
    assert found("ภาษาไทยงาย") == []  # a tone mark is part of the word
