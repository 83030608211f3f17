"""Semantic search, the `semantic` extra (retrieval/semantic.py): a tiny static
model built here (no network), its vectors in the catalog, the hybrid ranking
and every fallback to lexical results."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest
from conftest import mem, mem_process
from ruamel.yaml import YAML

from grimoire_cli.retrieval.semantic import RRF_K

pytest.importorskip("model2vec")

CACHE_FOLDER = "grimoires/loa/memory/.cache"
CACHE = CACHE_FOLDER + "/index.sqlite3"
# Each topic a direction of the model: a text's vector is its words' mean, so
# "payment outage" and "stripe was down" are neighbours though they share no word.
TOPICS = {
    (1, 0, 0): "payment payments outage stripe down revenue fell mrr",
    (0, 1, 0): "deploy deploys friday fridays release",
    (0, 0, 1): "database postgres backup backups nightly",
}
WEIGHT = 0.1  # retrieval.semantic_weight's default
STRIPE = "Stripe was down for two hours"
DEPLOY = "We deploy on fridays after the release"
BACKUP = "The postgres backup runs nightly"


def tiny_model(folder, topics=TOPICS):
    """A model2vec folder (tokenizer.json, model.safetensors, config.json) of a few words, 3 dimensions."""
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    words = ["[UNK]", "[PAD]", *(w for text in topics.values() for w in text.split())]
    vocabulary = {word: i for i, word in enumerate(dict.fromkeys(words))}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocabulary, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    vectors = np.zeros((len(vocabulary), 3), dtype=np.float32)
    for direction, text in topics.items():
        for word in text.split():
            vectors[vocabulary[word]] = direction
    StaticModel(vectors, tokenizer, normalize=True).save_pretrained(str(folder))
    return folder


def configure(repo, **retrieval):
    """The config's retrieval section with these keys set (the others kept)."""
    path = repo / ".loa.config.yaml"
    lines = path.read_text().splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("  retrieval: {")]
    settings = {**YAML(typ="safe").load(lines[at].split(":", 1)[1]), **retrieval}
    lines[at] = "  retrieval: " + json.dumps(settings)
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def model(tmp_path):
    return tiny_model(tmp_path / "tiny-model")


@pytest.fixture
def seeded(repo, model):
    """Three memories of three topics and the tiny model configured (semantic off)."""
    configure(repo, semantic_model=str(model))
    ids = {name: mem("add", "-c", "fact", text).out.strip() for name, text in (("stripe", STRIPE), ("deploy", DEPLOY))}
    ids["backup"] = mem("add", "-c", "fact", BACKUP).out.strip()
    return ids


def hits(*args):
    result = mem("query", *args, "--json", "--explain")
    assert result.code in (0, 1), result.err
    return json.loads(result.out), result


def vector_rows(repo):
    with sqlite3.connect(repo / CACHE) as db:
        vectors = dict(
            db.execute("SELECT e.id, v.vector FROM vectors v JOIN entries e ON e.rowid = v.rowid").fetchall()
        )
        assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(vectors)  # none of a deleted row
        model = db.execute("SELECT value FROM meta WHERE key='vectors_model'").fetchone()
    return vectors, model[0] if model else None


# -- ranking ---------------------------------------------------------------------------


def test_a_paraphrase_lexical_search_misses_is_found_by_meaning(repo, seeded):
    found, result = hits("payment outage")
    assert found == [] and result.code == 1  # no word in common
    found, result = hits("payment outage", "--semantic")
    assert result.code == 0 and result.err == ""
    assert [h["id"] for h in found] == [seeded["stripe"]]  # the other topics are orthogonal: cosine 0
    assert found[0]["explain"] == {"tier": 0.0, "semantic_rank": 1, "cosine": 1.0}
    assert found[0]["score"] == pytest.approx(WEIGHT * 61 / 61 / (1 + WEIGHT))
    # retrieval.semantic: true turns it on for every query, --semantic or not.
    configure(repo, semantic=True)
    assert [h["id"] for h in hits("payment outage")[0]] == [seeded["stripe"]]


def test_loading_a_model_starts_no_thread(repo, seeded):
    """A process with a thread never forks the parallel parser: tqdm's monitor thread, which loading and using a
    model started, would leave a semantic query's cold parse to one core (and test_parallel.py, run after this file
    in one worker, then compared nothing)."""
    import threading

    from grimoire_cli import Grimoire

    configure(repo, semantic=True)
    assert Grimoire.open(repo).query("payment outage")
    assert [t.name for t in threading.enumerate()] == [threading.main_thread().name]


def test_the_hybrid_ranking_fuses_both_ranks(repo, seeded):
    """Reciprocal rank fusion, K = 60: an entry both rankings found comes before
    one only the meaning found; the score is the formula's, 1 = first in both."""
    mixed = mem("add", "-c", "fact", "The outage drill is on fridays").out.strip()  # words of two topics
    found, _ = hits("stripe outage", "--semantic")
    ranks = {h["id"]: (h["explain"].get("lexical_rank"), h["explain"].get("semantic_rank")) for h in found}
    assert ranks == {seeded["stripe"]: (1, 1), mixed: (2, 2)}
    assert [h["id"] for h in found] == [seeded["stripe"], mixed]
    assert found[0]["score"] == pytest.approx(1.0)
    assert found[1]["score"] == pytest.approx((1 / 62 + WEIGHT / 62) * 61 / (1 + WEIGHT))
    found, _ = hits("revenue fell", "--semantic")  # no match by words: the nearest by meaning, best first
    assert [h["id"] for h in found] == [seeded["stripe"], mixed]
    assert found[1]["explain"]["cosine"] == pytest.approx(0.5**0.5, abs=1e-6)
    assert [h["id"] for h in hits("revenue fell", "--semantic", "--limit", "1")[0]] == [seeded["stripe"]]


def test_the_semantic_weight_orders_a_lexical_only_hit_against_a_semantic_only_one(repo, model):
    topics = {**TOPICS, (-1, 0, 0): "ledger"}  # "ledger" points away from payments: no semantic hit
    other = tiny_model(model.parent / "signed", topics)
    configure(repo, semantic_model=str(other), semantic_weight=0.5)
    ledger = mem("add", "-c", "fact", "The payment ledger is audited monthly ledger ledger ledger").out.strip()
    stripe = mem("add", "-c", "fact", STRIPE).out.strip()
    found, _ = hits("payment", "--semantic")
    assert [(h["id"], h["explain"].get("lexical_rank"), h["explain"].get("semantic_rank")) for h in found] == [
        (ledger, 1, None),
        (stripe, None, 1),
    ]
    configure(repo, semantic_weight=2)  # the meaning weighs more: its first comes first
    assert [h["id"] for h in hits("payment", "--semantic")[0]] == [stripe, ledger]


def test_a_lexical_match_past_the_best_fifty_counts_by_its_meaning_alone(repo, model):
    """Each ranking gives the fusion its best `semantic.CANDIDATES` (50, as
    the fusion was measured), or the limit if it asks more: under it, the 51st
    match by words is fused as one only the meaning found."""
    topics = {**TOPICS, (-1, 0, 0): "ledger"}  # "ledger" points away from payments: no semantic hit
    configure(repo, semantic_model=str(tiny_model(model.parent / "signed", topics)), semantic_weight=2)
    configure(repo, recency_weight=0)
    from test_coverage import add  # two hours apart: no neighbours (test_coverage imports this module)

    # The weakest match by words (one "payment" among many words), the nearest by meaning.
    far = add("payment figures were reviewed once more by the finance team that quarter", 0)
    for n in range(50):  # stronger by words, never near: the ledger outweighs the payment
        add(f"payment ledger ledger {n}", 2 + 2 * n)
    found, _ = hits("payment", "--semantic", "--limit", "3")
    assert found[0]["id"] == far
    assert found[0]["explain"] == {"tier": 0.0, "semantic_rank": 1, "cosine": pytest.approx(1.0)}
    assert found[0]["score"] == pytest.approx(2 / (RRF_K + 1) * (RRF_K + 1) / (1 + 2))  # weight 2, first by meaning
    assert [hit["explain"]["lexical_rank"] for hit in found[1:]] == [1, 2]


def test_an_unlimited_hybrid_ranking_holds_and_counts_what_either_found(repo, seeded):
    """The library's hybrid ranking without a limit (`mem context` reads past
    its first lines so): every entry either ranking found, and their number."""
    from grimoire_cli import Grimoire
    from grimoire_cli.retrieval.search import ranked
    from grimoire_cli.storage.catalog.queries import Filter

    mixed = mem("add", "-c", "fact", "The outage drill is on fridays").out.strip()  # found by both
    grimoire = Grimoire.open(repo)
    everything = Filter(at=grimoire.now().timestamp())
    for limit in (None, 5):
        found = ranked(
            grimoire.store, "outage", everything, recency_weight=0.2, limit=limit, include_archive=False, semantic=True
        )
        assert [row.id for row in found] == [mixed, seeded["stripe"]] and found.total == 2


def test_explain_shows_both_ranks(repo, seeded):
    result = mem("query", "stripe outage", "--semantic", "--explain")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert seeded["stripe"] in lines[0]
    assert "lexical_rank=1  semantic_rank=1  cosine=1.000" in lines[1] and "relevance=1.000" in lines[1]
    only_meaning = mem("query", "revenue", "--semantic", "--explain").out.splitlines()
    assert only_meaning[1].split() == ["tier=0.000", "semantic_rank=1", "cosine=1.000"]


def test_every_filter_applies_to_what_the_meaning_finds(repo, seeded):
    error = mem("add", "-c", "error", "Payments failed: stripe down", "-t", "billing").out.strip()
    unsure = mem("add", "-c", "fact", "Maybe revenue fell", "--confidence", "0.85").out.strip()

    def found(*args):
        return {h["id"] for h in hits("payment outage", "--semantic", *args)[0]}

    assert found() == {seeded["stripe"], error, unsure}
    assert found("-c", "error") == {error}
    assert found("-t", "billing") == {error}
    assert found("--min-confidence", "0.9") == set()  # each below: 0.8, 0.6 (the categories' defaults), 0.85
    assert found("--since", "2026-11-23") == set()  # MEM_NOW is 2026-11-22
    newer = mem("supersede", seeded["stripe"], "Stripe was down for three hours").out.strip()
    assert found() == {newer, error, unsure}
    assert found("--include-superseded") == {seeded["stripe"], newer, error, unsure}
    assert mem("archive", error, "--reason", "manual", "--no-commit").code == 0
    assert found() == {newer, unsure}
    assert found("--archived") == {newer, unsure, error}
    assert found("--tier", "long") == set()  # tiers off: every memory is hot


def test_context_ranks_by_meaning_too(repo, seeded):
    assert seeded["stripe"] not in mem("context", "payment outage").out
    result = mem("context", "payment outage", "--semantic")
    assert result.code == 0 and seeded["stripe"] in result.out and seeded["deploy"] not in result.out, result.err
    configure(repo, semantic=True)
    assert seeded["stripe"] in mem("context", "payment outage").out


def test_the_library_takes_semantic(repo, seeded):
    from grimoire_cli import Grimoire

    g = Grimoire.open(repo)
    assert [h.entry.id for h in g.query("payment outage", semantic=True)] == [seeded["stripe"]]
    assert g.query("payment outage", semantic=True).notes == []
    assert list(g.query("payment outage")) == []


# -- vectors in the catalog -----------------------------------------------------------


def test_nothing_is_embedded_while_semantic_is_off(repo, seeded):
    assert mem("query", "stripe").code == 0
    assert mem("context", "stripe").code == 0
    assert vector_rows(repo) == ({}, None)


def test_vectors_follow_every_write_and_equal_a_rebuild(repo, seeded, model):
    assert mem("query", "stripe", "--semantic").code == 0
    vectors, name = vector_rows(repo)
    assert set(vectors) == set(seeded.values()) and str(model) in name
    added = mem("add", "-c", "fact", "Revenue fell in March").out.strip()
    newer = mem("supersede", seeded["stripe"], "Stripe was down all night").out.strip()
    assert mem("archive", seeded["backup"], "--reason", "manual", "--no-commit").code == 0
    assert set(vector_rows(repo)[0]) == set(seeded.values()) - {seeded["backup"]}  # an archived row is gone
    assert mem("query", "stripe", "--semantic", "--archived").code == 0
    after, _ = vector_rows(repo)
    assert set(after) == {*seeded.values(), added, newer}
    assert all(after[i] == vectors[i] for i in seeded.values())  # the unchanged texts were not embedded again
    # A hand edit of one entry's text embeds that entry again, on the next semantic read.
    facts = repo / "grimoires/loa/memory/facts.yaml"
    facts.write_text(facts.read_text().replace("after the release", "after the postgres backup"))
    assert mem("query", "stripe", "--semantic", "--archived").code == 0
    edited, _ = vector_rows(repo)
    assert edited[seeded["deploy"]] != after[seeded["deploy"]]
    # The catalog rebuilt from the files holds the same vectors.
    shutil.rmtree(repo / CACHE_FOLDER)
    assert mem("query", "stripe", "--semantic", "--archived").code == 0
    assert vector_rows(repo)[0] == edited


def test_a_new_model_embeds_every_entry_again(repo, seeded, model):
    assert mem("query", "stripe", "--semantic").code == 0
    before, name = vector_rows(repo)
    flipped = tiny_model(model.parent / "flipped", {tuple(-x for x in k): v for k, v in TOPICS.items()})
    configure(repo, semantic_model=str(flipped))
    assert mem("query", "stripe", "--semantic").code == 0
    after, other = vector_rows(repo)
    assert other != name and str(flipped) in other
    assert set(after) == set(before) and all(after[i] != before[i] for i in before)


def test_a_relative_model_folder_is_the_repository_s(repo, seeded, model):
    tiny_model(repo / "models/tiny")
    configure(repo, semantic_model="models/tiny")
    assert [h["id"] for h in hits("payment outage", "--semantic")[0]] == [seeded["stripe"]]


# -- fallbacks: a clear line, lexical results ------------------------------------------


def test_a_missing_model_folder_says_so_and_ranks_lexically(repo, seeded):
    configure(repo, semantic=True, semantic_model="./no-such-model")
    result = mem("query", "stripe")
    assert result.code == 0 and seeded["stripe"] in result.out
    assert result.err.startswith("warning: semantic model folder ") and result.err.count("\n") == 1
    assert "no-such-model not found (retrieval.semantic_model); lexical results only" in result.err
    nothing = mem("query", "payment outage")  # found nothing: still says why it ranked lexically
    assert (
        nothing.code == 1
        and nothing.err.startswith("warning: semantic model folder ")
        and "no memories match" in nothing.err
    )
    context = mem("context", "stripe")
    assert context.code == 0 and seeded["stripe"] in context.out and "lexical results only" in context.err
    assert json.loads(mem("context", "stripe", "--json").out)["notes"][0].startswith("semantic model folder")


def test_the_lexical_fallback_keeps_the_limit_and_the_archive(repo, seeded):
    configure(repo, semantic=True, semantic_model="./no-such-model")
    refund = mem("add", "-c", "fact", "Stripe sent the refund report").out.strip()
    found, result = hits("stripe", "--limit", "1")
    assert [hit["id"] for hit in found] == [refund] and "lexical results only" in result.err
    assert mem("archive", refund, "--reason", "manual", "--no-commit").code == 0
    assert {hit["id"] for hit in hits("stripe", "--archived")[0]} == {refund, seeded["stripe"]}


def test_an_archived_entry_is_ranked_by_its_words_too(repo, seeded):
    assert mem("archive", seeded["stripe"], "--reason", "manual", "--no-commit").code == 0
    found, _ = hits("stripe outage", "--semantic", "--archived")
    assert [(h["id"], h["explain"].get("lexical_rank"), h["explain"].get("semantic_rank")) for h in found] == [
        (seeded["stripe"], 1, 1)
    ]


def test_a_broken_model_folder_says_so(repo, seeded, tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken/config.json").write_text("{}")
    configure(repo, semantic_model=str(tmp_path / "broken"))
    result = mem("query", "stripe", "--semantic")
    assert result.code == 0 and seeded["stripe"] in result.out
    assert result.err.startswith(f"warning: semantic model {tmp_path / 'broken'} could not be loaded (")


def test_without_the_extra_the_query_says_how_to_install_it(repo, seeded):
    code = (
        "import sys; sys.modules['model2vec'] = None;"
        "from grimoire_cli.cli.main import main; sys.exit(main(sys.argv[1:]))"
    )
    for args in (["query", "stripe", "--semantic"], ["context", "stripe", "--semantic"]):
        result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=repo)
        assert result.returncode == 0 and seeded["stripe"] in result.stdout, result.stderr
        assert result.stderr == (
            "warning: semantic search needs the semantic extra: pip install 'grimoire-cli[semantic]'; "
            "lexical results only\n"
        )


def test_no_model_cached_and_no_network_says_so(repo, seeded, tmp_path):
    configure(repo, semantic=True, semantic_model="minishlab/potion-base-8M")
    offline = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}  # an empty cache, no network
    result = mem_process("query", "stripe", cwd=repo, env=offline)
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 0 and seeded["stripe"] in out, err
    assert err.startswith("warning: semantic model 'minishlab/potion-base-8M' is not cached and could not be fetched (")
    assert (
        err.endswith("; lexical results only: connect once, or set retrieval.semantic_model to a model folder\n")
        and err.count("\n") == 1
    )


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"semantic": "yes"}, "retrieval.semantic must be"),
        ({"semantic_weight": -1}, "retrieval.semantic_weight must be from 0 to 10"),
        ({"semantic_model": ""}, "retrieval.semantic_model must be a model name or a folder"),
    ],
)
def test_a_bad_semantic_setting_is_a_config_error(repo, setting, message):
    configure(repo, **setting)
    result = mem("query", "stripe")
    assert result.code == 3 and message in result.err and result.err.startswith("error: "), result.err


def test_a_warm_query_without_semantic_imports_neither_numpy_nor_the_extra(repo, seeded):
    assert mem("query", "stripe").code == 0
    code = (
        "import sys; from grimoire_cli.cli.main import main; rc = main(['query', 'stripe']);"
        "sys.stderr.write(','.join(m for m in ('numpy', 'model2vec', 'grimoire_cli.retrieval.semantic') if m in sys.modules));"
        "sys.exit(rc)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, env=dict(os.environ)
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_the_retrieval_bench_ranks_by_meaning_or_says_why_not(tmp_path, model):
    """`make bench-retrieval BENCH_SEMANTIC=1` on a LoCoMo-shaped conversation:
    the hybrid with a model folder; offline without one, one line and lexical."""
    turns = [("D1:1", STRIPE), ("D1:2", DEPLOY), ("D1:3", BACKUP)]
    sample = {
        "sample_id": "s1",
        "conversation": {
            "session_1_date_time": "1 Jan 2024",
            "session_1": [{"dia_id": dia, "speaker": "Ann", "text": text} for dia, text in turns],
        },
        "qa": [{"question": "payment outage?", "evidence": ["D1:1"], "category": 4}],
    }
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([sample]))
    bench = [sys.executable, "benchmarks/bench_retrieval.py", "--data", str(data), "--semantic"]
    offline = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def overall(*args):
        result = subprocess.run([*bench, *args], capture_output=True, text=True, cwd=root, env=offline)
        assert result.returncode == 0, result.stderr
        return result.stdout.splitlines()

    hybrid = overall("--model", str(model))
    assert "ranking: hybrid (semantic extra)" in hybrid
    assert [line.split() for line in hybrid if line.startswith("overall")] == [["overall", "1", *["1.000"] * 3]]
    lexical = overall()
    assert lexical[0].startswith("semantic: semantic model 'minishlab/potion-base-8M' is not cached and could not be")
    assert "ranking: lexical" in lexical
    assert [line.split() for line in lexical if line.startswith("overall")] == [["overall", "1", *["0.000"] * 3]]
