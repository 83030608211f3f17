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
    import subprocess

    from grimoire_cli import Grimoire

    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    Grimoire.init(folder)
    grimoire = Grimoire.open(folder)
    batch = items(count)
    written = grimoire.add_many(batch, skip_invalid=True)
    # Supersede about 2% of them.
    for entry in written[: max(1, count // 50)]:
        grimoire.supersede(entry.id, entry.content + " (revised)")
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-qm", "grimoire"], cwd=folder, check=True)


if __name__ == "__main__":
    build(Path(sys.argv[1]), int(sys.argv[2]))
