"""Generate a grimoire of N entries (all categories, varied 20-80 word
contents, tags, some superseded and some expired) through the public API.

Two kinds of text:

- `zipf` (the default): words drawn as in natural language, Zipf's law over
  a 5,000-word vocabulary with English function words at its head. The
  benchmark's query words sit at fixed ranks, chosen so that "flaky runner
  disk" matches about a third of the entries: the breadth of the broadest
  tenth of 3-word queries over real conversational text (LoCoMo turns,
  measured: median 12 %, 90th percentile 35 %). `python generate.py --stats`
  prints the match fractions of the benchmark queries.
- `dense`: every word drawn uniformly from 100 technical words, so any
  3-word query matches ~75 % of the entries. A stress case for ranking
  (which must score every match), not a realistic grimoire.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

WORDS = """cache index query deploy build runner disk memory timeout retry queue worker schema migration release branch
merge commit review token budget prompt agent session latency throughput postgres sqlite redis kafka docker kubernetes
nightly flaky test fixture coverage lint format typing module import config secret rotate backup restore replica shard
upload download bucket region cluster node pod service gateway proxy header cookie auth login logout user team owner
incident alert pager metric trace log span error warning crash panic leak profile benchmark median p95 rollout canary""".split()
TAGS = ["ci", "db", "search", "deploy", "security", "perf", "api", "infra", "docs", "testing"]
CATEGORIES = ["fact", "decision", "learning", "error", "preference"]
KINDS = ("zipf", "dense")

# English function words, most frequent first: the head of real text.
FUNCTION_WORDS = """the of and to a in is that for it was on with as be at by this have from or an are not but
we they which you were all their has been there one will would when so if can who what more out up about into
than them its only other also then these some could our after should no any over just how most very because""".split()
# Content ranks (1 = the most frequent content word) of the benchmark's query words.
QUERY_RANKS = {"deploy": 12, "runner": 25, "disk": 18, "flaky": 40, "canary": 60}
ZIPF_EXPONENT = 1.0
ZIPF_OFFSET = 2.7  # Zipf-Mandelbrot: flattens the very top, as measured on real corpora
CONTENT_WORDS = 5000
FUNCTION_SHARE = 0.45  # of the tokens of English prose


def _pseudo_words(count: int, rng: random.Random) -> list[str]:
    """Pronounceable made-up words: a long tail that no query in the benchmark hits."""
    onsets, vowels, codas = (
        "b c d f g h k l m n p r s t v w z br cl dr gr pl st tr".split(),
        "a e i o u ai ea ou".split(),
        ["", "n", "r", "s", "t", "l", "m", "nd", "st"],
    )
    out: set[str] = set()
    while len(out) < count:
        word = "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.randint(2, 3))) + rng.choice(codas)
        if word not in WORDS:
            out.add(word)
    words = sorted(out)
    rng.shuffle(words)
    return words


def _zipf_sampler(rng: random.Random):
    """A function drawing one word of zipf text."""
    import itertools

    tail = _pseudo_words(CONTENT_WORDS - len(WORDS), rng)
    others = [w for w in WORDS if w not in QUERY_RANKS]
    rng.shuffle(others)
    # The other technical words are common in a project's memory: ranks 1-1000.
    content = tail[:]
    for word, place in zip(others, sorted(rng.sample(range(1000), len(others)))):
        content.insert(place, word)
    for word, rank in sorted(QUERY_RANKS.items(), key=lambda item: item[1]):
        content.insert(rank - 1, word)
    content = content[:CONTENT_WORDS]
    content_weights = list(
        itertools.accumulate(1 / (rank + ZIPF_OFFSET) ** ZIPF_EXPONENT for rank in range(1, len(content) + 1))
    )
    function_weights = list(
        itertools.accumulate(1 / (rank + ZIPF_OFFSET) ** ZIPF_EXPONENT for rank in range(1, len(FUNCTION_WORDS) + 1))
    )

    def draw() -> str:
        if rng.random() < FUNCTION_SHARE:
            return rng.choices(FUNCTION_WORDS, cum_weights=function_weights)[0]
        return rng.choices(content, cum_weights=content_weights)[0]

    return draw


def items(count: int, seed: int = 7, kind: str = "zipf") -> list[dict]:
    rng = random.Random(seed)
    draw = _zipf_sampler(random.Random(seed + 1)) if kind == "zipf" else lambda: rng.choice(WORDS)
    out = []
    for i in range(count):
        words = [draw() for _ in range(rng.randint(20, 80))]
        category = CATEGORIES[i % 5]
        # A timestamp spread over the past year; errors older than 30 days are expired.
        day = rng.randint(0, 364)
        out.append(
            {
                "content": f"Memory {i}: " + " ".join(words) + ".",
                "category": category,
                "confidence": 0.95,
                "tags": rng.sample(TAGS, k=rng.randint(1, 3)),
                "timestamp": f"2026-{1 + day // 31 % 12:02d}-{1 + day % 28:02d}T{rng.randint(0, 23):02d}:00:00Z",
            }
        )
    return out


def build(folder: Path, count: int, kind: str = "zipf") -> None:
    """Write `count` entries, supersede 2% of them through the API, and commit.

    The bulk is appended straight through the store (one write per file):
    `add_many` would check each generated item against every other for
    near duplicates, which is the right thing for user input but makes a
    100k fixture take hours.
    """
    import subprocess

    from grimoire_cli import Grimoire
    from grimoire_cli.core.model import format_id
    from grimoire_cli.memory.request import Request
    from grimoire_cli.memory.request import build as build_entry

    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    Grimoire.init(folder)
    grimoire = Grimoire.open(folder)
    store = grimoire.store
    moment = grimoire.now()
    by_category: dict[str, list[dict]] = {}
    per_day: dict[str, int] = {}
    with store.lock():
        for item in items(count, kind=kind):
            day = item["timestamp"][:10].replace("-", "")
            per_day[day] = per_day.get(day, 0) + 1
            data, _ = build_entry(
                Request.from_mapping(item),
                grimoire.config,
                moment,
                {},
                set(),
                format_id(day, per_day[day]),
                grimoire.runtime,
            )
            by_category.setdefault(data["category"], []).append(data)
        for category, batch in by_category.items():
            store.write(store.ensure_file(category), appended=batch)
    written = grimoire.list(expired=True)
    # Supersede about 2% of them (at most 200: each is its own command's worth of work).
    for entry in written[: min(200, max(1, count // 50))]:
        grimoire.supersede(entry.id, entry.content + " (revised)")
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-qm", "grimoire"],
        cwd=folder,
        check=True,
    )


def match_fractions(count: int = 20000, kind: str = "zipf") -> dict[str, float]:
    """Share of generated entries each benchmark query (and each of its words) matches."""
    import re

    docs = [set(re.findall(r"\w+", item["content"].lower())) for item in items(count, kind=kind)]
    out = {}
    for query in ("flaky runner disk", "deploy canary", *QUERY_RANKS):
        wanted = set(query.split())
        out[query] = sum(1 for doc in docs if doc & wanted) / len(docs)
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--stats"]:
        for kind in KINDS:
            print(kind, {query: f"{100 * share:.1f} %" for query, share in match_fractions(kind=kind).items()})
    else:
        build(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "zipf")
