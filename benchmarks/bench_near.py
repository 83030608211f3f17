"""Recall of the indexed near-duplicate lookup (memory/duplicates.py) against
the full scan a single `mem add` does, on bench_scale's zipf texts.

    python benchmarks/bench_near.py [--size 10000] [--queries 3000] [--seed 5]

The grimoire holds `size` texts (generate.py's zipf text, its "Memory i:"
prefix dropped so no text carries a word of its own). Each query is a near
copy of one of them made by one kind of edit, repeated while the copy stays
90 % alike: `typo` (a character inserted, deleted or replaced anywhere),
`words` (a word inserted, deleted or replaced), `clause` (1-3 words before
or after), `cut` (1-3 adjacent words deleted), `swap` (two adjacent words)
and `mixed`; half the queries stop at a random score in 90-99.5, half at
the edge (the last edit still 90 % alike, marked `!`). 200 fresh texts are
asked too. Printed: per kind, the queries whose full scan finds a near
duplicate, how many of those the indexed lookup misses, and how many it
answers with another id; the texts each lookup compared; the seconds of each.
Exit 1 when the indexed lookup misses more than 1 % of them.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
STYLES = ("typo", "words", "clause", "cut", "swap", "mixed")


def edit(text: str, style: str, vocabulary: list[str], rng: random.Random) -> str:
    words = text.split(" ")
    place = rng.randrange(len(words))
    if style == "typo":
        at, char = rng.randrange(len(text) + 1), rng.choice("abcdefghijklmnopqrstuvwxyz ")
        return [text[:at] + char + text[at:], text[:at] + text[at + 1 :], text[:at] + char + text[at + 1 :]][
            rng.randrange(3)
        ]
    if style == "words":
        change = rng.randrange(3)
        if change == 0:
            words.insert(place, rng.choice(vocabulary))
        elif change == 1 and len(words) > 2:
            del words[place]
        else:
            words[place] = rng.choice(vocabulary)
    elif style == "clause":
        extra = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 3)))
        return f"{text} {extra}" if rng.random() < 0.5 else f"{extra} {text}"
    elif style == "cut" and len(words) > 4:
        del words[place : place + rng.randint(1, 3)]
    elif style == "swap" and len(words) > 1:
        place = min(place, len(words) - 2)
        words[place : place + 2] = words[place : place + 2][::-1]
    elif style == "mixed":
        return edit(text, rng.choice(STYLES[:-1]), vocabulary, rng)
    return " ".join(words)


def near_copy(text: str, style: str, edge: bool, vocabulary: list[str], rng: random.Random) -> str:
    from rapidfuzz import fuzz

    target = 90 if edge else rng.uniform(90, 99.5)
    current = text
    for _ in range(400):
        following = edit(current, style, vocabulary, rng)
        if fuzz.ratio(following, text) < target:
            break
        current = following
    return current


def main() -> int:
    from generate import items

    from grimoire_cli.core.model import normalize_text
    from grimoire_cli.memory.duplicates import Duplicates

    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    stored = [normalize_text(item["content"]).split(": ", 1)[1] for item in items(args.size, seed=7)]
    vocabulary = sorted({word for text in stored[:2000] for word in text.split()})
    queries = []
    for number in range(args.queries):
        style, edge = STYLES[number % len(STYLES)], number // len(STYLES) % 2 == 0
        queries.append((style, edge, near_copy(stored[rng.randrange(len(stored))], style, edge, vocabulary, rng)))
    queries += [("fresh", False, normalize_text(item["content"]).split(": ", 1)[1]) for item in items(200, seed=99)]
    pairs = [(f"id{n}", text) for n, text in enumerate(stored)]
    answers = {}
    for indexed in (False, True):
        table = Duplicates(pairs, indexed=indexed)
        started = time.perf_counter()
        answers[indexed] = [table.of({"content": text})[1] for _, _, text in queries]
        compared = sum(len(table._compared(text)) for _, _, text in queries) / len(queries)
        print(
            f"{'indexed' if indexed else 'full scan'}: {time.perf_counter() - started:.1f} s, {compared:.0f} texts compared a lookup"
        )
    found, missed, other = Counter(), Counter(), Counter()
    for (style, edge, _), want, got in zip(queries, answers[False], answers[True]):
        kind = style + "!" * edge
        found[kind] += want is not None
        missed[kind] += want is not None and got is None
        other[kind] += want is not None and got not in (None, want)
    print(f"{'edit':<8}{'found':>7}{'missed':>8}{'other':>7}")
    for kind in sorted(found):
        print(f"{kind:<8}{found[kind]:>7}{missed[kind]:>8}{other[kind]:>7}")
    total, lost = sum(found.values()), sum(missed.values())
    print(f"{'all':<8}{total:>7}{lost:>8}{sum(other.values()):>7}")
    return 1 if lost > total / 100 else 0


if __name__ == "__main__":
    sys.exit(main())
