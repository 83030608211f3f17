"""The guard on real text: how often it refuses text that holds no secret,
and what it costs per KB.

Corpora: the LoCoMo dialogue turns and 5,279 commit messages from
`../shared/benchmarks` (measured in place, never copied here), and this
repository's own prose and code, split into lines: README, docs and every
Python source line, where `password`, `token` and `secret` are names all
the time. Prints the refusal rate of each and the median cost of `scan`
per KB of text.

    python benchmarks/bench_guard.py [--runs 5] [--show 10]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared" / "benchmarks"


def own_lines() -> list[str]:
    """This repository's README, docs and Python lines (non-blank), the fake
    secrets of the guard's own tests left out (they are meant to be found)."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.rglob("*.py"))]
    out = []
    for path in files:
        if ".venv" in path.parts or path.name == "test_guard.py" or ".data" in path.parts:
            continue
        out.extend(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return out


def corpora() -> dict[str, list[str]]:
    found = {"own README, docs and code lines": own_lines()}
    if SHARED.exists():
        data = json.loads((SHARED / "locomo" / "locomo-dev.json").read_text())
        found["LoCoMo turns"] = [t["text"] for s in data for k, v in s["conversation"].items() if re.fullmatch(r"session_\d+", k) for t in v]
        found["commit messages"] = (SHARED / "guard" / "commit-messages.txt").read_text().splitlines()
    return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--show", type=int, default=0, help="print this many refused lines of each corpus")
    args = parser.parse_args()
    from grimoire_cli.guard import scan

    for name, lines in corpora().items():
        refused = [(line, scan(line)) for line in lines]
        refused = [(line, found) for line, found in refused if found]
        size = sum(len(line.encode()) for line in lines) / 1024
        costs = []
        for _ in range(args.runs):
            started = time.perf_counter()
            for line in lines:
                scan(line)
            costs.append((time.perf_counter() - started) * 1000 / size)
        print(f"{name}: {len(refused)} of {len(lines)} refused ({100 * len(refused) / len(lines):.2f} %); "
              f"{statistics.median(costs) * 1000:.0f} µs per KB (median of {args.runs}, {size:.0f} KB)")
        for line, found in refused[: args.show]:
            print(f"    {', '.join(f.kind for f in found)}: {line[:140]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
