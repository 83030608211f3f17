"""LoCoMo retrieval benchmark (protocol: ../shared/benchmarks/locomo/README.md).

One grimoire per conversation built through the public API (`add_many`),
every question ranked through `Grimoire.query`, and R@5, R@10, MRR printed
overall and per category with build time and per-query latency.

    python benchmarks/bench_retrieval.py [--data PATH] [--semantic [--model NAME|FOLDER]]

`--semantic` (make bench-retrieval BENCH_SEMANTIC=1) ranks by the hybrid of
the semantic extra (retrieval/semantic.py) with the model given (default:
retrieval.semantic_model's); where the model cannot be had (no extra, no
network, not cached) it says so in one line and ranks lexically.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared/benchmarks/locomo/locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def turns(sample: dict) -> list[tuple[str, str]]:
    conv = sample["conversation"]
    out = []
    for key in sorted((k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])):
        date = conv.get(f"{key}_date_time", "")
        for turn in conv[key]:
            out.append((turn["dia_id"], f"[{date}] {turn['speaker']}: {turn['text']}"))
    return out


def evidence_ids(raw: list[str], valid: set[str]) -> list[str]:
    out = []
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            part = part.strip()
            if not part:
                continue
            part = re.sub(r"^D:(\d+)", r"D\1", part)
            match = re.fullmatch(r"D(\d+):0*(\d+)", part)
            if not match:
                continue
            norm = f"D{match.group(1)}:{match.group(2)}"
            if norm in valid and norm not in out:
                out.append(norm)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--semantic", action="store_true", help="the hybrid ranking of the semantic extra")
    parser.add_argument("--model", help="retrieval.semantic_model for --semantic (a name or a folder)")
    args = parser.parse_args()
    semantic = args.semantic
    data_path = Path(args.data)
    if not data_path.exists():
        print(f"error: LoCoMo data not found at {data_path}", file=sys.stderr)
        return 2
    os.environ.setdefault("MEM_NOW", "2026-01-01T00:00:00Z")
    os.environ.setdefault("MEM_SESSION_ID", "locomo")
    from grimoire_cli import Grimoire

    samples = json.loads(data_path.read_text())
    metrics = {"r5": [], "r10": [], "mrr": []}
    per_cat: dict[int, dict[str, list[float]]] = {c: {"r5": [], "r10": [], "mrr": []} for c in CATEGORIES}
    build_times, latencies = [], []
    memories = 0
    with tempfile.TemporaryDirectory() as tmp:
        for sample in samples:
            folder = Path(tmp) / sample["sample_id"]
            folder.mkdir()
            subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
            Grimoire.init(folder)
            if semantic and args.model:
                config = folder / ".loa.config.yaml"
                config.write_text(
                    config.read_text().replace(
                        "integrate_with_oracle: true}",
                        f"integrate_with_oracle: true, semantic_model: {json.dumps(args.model)}}}",
                    )
                )
            grimoire = Grimoire.open(folder)
            conv_turns = turns(sample)
            memories = max(memories, len(conv_turns))
            started = time.perf_counter()
            # The guard refuses nothing the protocol needs; an exact repeat of a
            # turn's text is a real duplicate and is skipped like any user's.
            added = grimoire.add_many(
                [{"content": text, "category": "fact", "metadata": {"dia_id": dia}} for dia, text in conv_turns],
                skip_invalid=True,
            )
            warm = grimoire.query("warm up the index", limit=1, semantic=semantic)
            if warm.notes:  # the model cannot be had: said once, then lexical only
                print(f"semantic: {warm.notes[0]}")
                semantic = False
            build_times.append(time.perf_counter() - started)
            valid = {dia for dia, _ in conv_turns}
            for qa in sample["qa"]:
                if qa.get("category") not in CATEGORIES:
                    continue
                relevant = evidence_ids(qa.get("evidence", []), valid)
                if not relevant:
                    continue
                started = time.perf_counter()
                hits = grimoire.query(qa["question"], limit=10, min_confidence=0, semantic=semantic)
                latencies.append((time.perf_counter() - started) * 1000)
                ranked = [h.entry.data.get("metadata", {}).get("dia_id") for h in hits]
                r5 = len(set(ranked[:5]) & set(relevant)) / len(relevant)
                r10 = len(set(ranked[:10]) & set(relevant)) / len(relevant)
                rr = next((1 / (i + 1) for i, d in enumerate(ranked) if d in relevant), 0.0)
                for bucket in (metrics, per_cat[qa["category"]]):
                    bucket["r5"].append(r5)
                    bucket["r10"].append(r10)
                    bucket["mrr"].append(rr)
            rejected = len(added.rejected)
            if rejected:
                print(f"{sample['sample_id']}: {rejected} turns not written (duplicates or refused)")
    mean = lambda xs: sum(xs) / len(xs) if xs else 0.0
    latencies.sort()
    print(f"queries: {len(metrics['r5'])}  conversations: {len(samples)}  largest: {memories} memories")
    print(f"ranking: {'hybrid (semantic extra)' if semantic else 'lexical'}")
    print(f"{'split':<12} {'n':>4} {'R@5':>6} {'R@10':>6} {'MRR':>6}")
    print(
        f"{'overall':<12} {len(metrics['r5']):>4} {mean(metrics['r5']):6.3f} {mean(metrics['r10']):6.3f} {mean(metrics['mrr']):6.3f}"
    )
    for cat, name in CATEGORIES.items():
        m = per_cat[cat]
        print(f"{name:<12} {len(m['r5']):>4} {mean(m['r5']):6.3f} {mean(m['r10']):6.3f} {mean(m['mrr']):6.3f}")
    print(
        f"index build (add_many + first query) per conversation: median {statistics.median(build_times) * 1000:.0f} ms"
    )
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(f"per-query latency in process: p50 {statistics.median(latencies):.2f} ms  p95 {p95:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
