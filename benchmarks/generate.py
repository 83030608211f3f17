"""Generate a realistic grimoire of N entries (all categories, varied 20-80 word
contents, tags, some superseded and some expired) through the public API."""

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


def items(count: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(20, 80))]
        category = CATEGORIES[i % 5]
        # A timestamp spread over the past year; errors older than 30 days are expired.
        day = rng.randint(0, 364)
        out.append({
            "content": f"Memory {i}: " + " ".join(words) + ".",
            "category": category,
            "confidence": 0.95,
            "tags": rng.sample(TAGS, k=rng.randint(1, 3)),
            "timestamp": f"2026-{1 + day // 31 % 12:02d}-{1 + day % 28:02d}T{rng.randint(0, 23):02d}:00:00Z",
        })
    return out


def build(folder: Path, count: int) -> None:
    """Write `count` entries, supersede 2% of them through the API, and commit.

    The bulk is appended straight through the store (one write per file):
    `add_many` would check each generated item against every other for
    near duplicates, which is the right thing for user input but makes a
    100k fixture take hours.
    """
    import subprocess

    from grimoire_cli import Grimoire
    from grimoire_cli.adding import Request, build as build_entry
    from grimoire_cli.model import format_id

    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    Grimoire.init(folder)
    grimoire = Grimoire.open(folder)
    store = grimoire.store
    moment = grimoire.now()
    by_category: dict[str, list[dict]] = {}
    per_day: dict[str, int] = {}
    with store.lock():
        for item in items(count):
            day = item["timestamp"][:10].replace("-", "")
            per_day[day] = per_day.get(day, 0) + 1
            data, _ = build_entry(Request.from_mapping(item), grimoire.config, moment, {}, set(), format_id(day, per_day[day]))
            by_category.setdefault(data["category"], []).append(data)
        for category, batch in by_category.items():
            store.write(store.ensure_file(category), appended=batch)
    written = grimoire.list(expired=True)
    # Supersede about 2% of them (at most 200: each is its own command's worth of work).
    for entry in written[: min(200, max(1, count // 50))]:
        grimoire.supersede(entry.id, entry.content + " (revised)")
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-qm", "grimoire"], cwd=folder, check=True)


if __name__ == "__main__":
    build(Path(sys.argv[1]), int(sys.argv[2]))
