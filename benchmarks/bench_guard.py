"""The guard on real text: how often it refuses text that holds no secret,
and what it costs per KB.

Corpora: the LoCoMo dialogue turns, 5,279 commit messages and the benign
lines of the secret-scanner corpora (`secrets/benign_dev.jsonl`,
`secrets/must_accept.jsonl`) from `../shared/benchmarks` (measured in
place, never copied here; found from a git worktree too), and this
repository's own prose and code, split into lines: README, docs and every
Python source line, where `password`, `token` and `secret` are names all
the time. Prints the refusal rate of each (secrets and personal data, and
instruction-shaped text, guard_instructions.py) and the median cost of
`scan` per KB of text.

Then the secret-scanner corpora (`secrets/`, bench_guard_corpora.py) run
through `mem scan --jsonl` in one process: recall on gitleaks' true
positives (as written, bare, in prose, after an assignment), detect-secrets'
positive cases, refusals of benign lines and placeholders, throughput, the
misses by rule; and `mem add` at 10k entries (bench_cli.py, whole process).
`--library` runs the corpora through `guard.scan` in this process instead
(for a checkout without `mem scan`: `PYTHONPATH=<its root> … --library`).

    python benchmarks/bench_guard.py [--runs 5] [--show 10] [--library] [--no-add]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# `../shared` beside the checkout, or beside the folder of its worktrees.
SHARED = next(
    (up / "shared" / "benchmarks" for up in ROOT.parents if (up / "shared" / "benchmarks").exists()),
    ROOT.parent / "shared" / "benchmarks",
)


def own_lines() -> list[str]:
    """This repository's README, docs and Python lines (non-blank), the fake
    secrets of the guard's own tests left out (they are meant to be found)."""
    prose = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", ROOT / "benchmarks" / "README.md"]
    files = [*prose, *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.rglob("*.py"))]
    out = []
    for path in files:
        if ".venv" in path.parts or path.name in ("test_guard.py", "test_poison.py") or ".data" in path.parts:
            continue
        out.extend(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return out


def corpora() -> dict[str, list[str]]:
    found = {"own README, docs and code lines": own_lines()}
    if SHARED.exists():
        data = json.loads((SHARED / "locomo" / "locomo-dev.json").read_text())
        found["LoCoMo turns"] = [
            t["text"] for s in data for k, v in s["conversation"].items() if re.fullmatch(r"session_\d+", k) for t in v
        ]
        found["commit messages"] = (SHARED / "guard" / "commit-messages.txt").read_text().splitlines()
        for name in ("benign_dev", "must_accept"):
            rows = (SHARED / "secrets" / f"{name}.jsonl").read_text().splitlines()
            found[f"secrets/{name}.jsonl"] = [json.loads(row)["text"] for row in rows if row.strip()]
    return found


def cost(scan, lines: list[str], runs: int, size: float) -> float:
    """The median cost of `scan` over `lines`, in µs per KB."""
    costs = []
    for _ in range(runs):
        started = time.perf_counter()
        for line in lines:
            scan(line)
        costs.append((time.perf_counter() - started) * 1_000_000 / size)
    return statistics.median(costs)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--show", type=int, default=0, help="print this many refused lines of each corpus")
    parser.add_argument(
        "--library", action="store_true", help="scan the secret corpora with guard.scan in process, not `mem scan`"
    )
    parser.add_argument("--no-add", action="store_true", help="leave out `mem add` at 10k entries")
    args = parser.parse_args()
    from grimoire_cli.guard.instructions import scan as instructions
    from grimoire_cli.guard.scan import scan

    for name, lines in corpora().items():
        found_in = [(line, scan(line), instructions(line)) for line in lines]
        refused = [(line, secrets + shaped) for line, secrets, shaped in found_in if secrets or shaped]
        for_secrets = sum(1 for _, secrets, _ in found_in if secrets)
        size = sum(len(line.encode()) for line in lines) / 1024
        print(
            f"{name}: {len(refused)} of {len(lines)} refused ({100 * len(refused) / len(lines):.2f} %; "
            f"{for_secrets} for secrets or personal data, {sum(1 for *_, shaped in found_in if shaped)} instruction-shaped); "
            f"µs per KB, median of {args.runs}, {size:.0f} KB: {cost(scan, lines, args.runs, size):.0f} (secrets), "
            f"{cost(instructions, lines, args.runs, size):.0f} (instructions)"
        )
        for line, found in refused[: args.show]:
            print(f"    {', '.join(f.kind for f in found)}: {line[:140]}")
    if (SHARED / "secrets").exists():
        sys.path.insert(0, str(HERE))
        from bench_guard_corpora import measure

        print(
            f"\nsecret-scanner corpora through {'guard.scan (library)' if args.library else '`mem scan --jsonl` (one process)'}:"
        )
        print(
            "\n".join(
                measure(
                    SHARED / "secrets",
                    (lambda texts: [[f.kind for f in scan(t)] for t in texts]) if args.library else mem_scan,
                )
            )
        )
    if not args.no_add:
        print("\nmem add at 10k entries (bench_cli.py, whole process):", flush=True)
        subprocess.run(
            [sys.executable, str(HERE / "bench_cli.py"), "--sizes", "10000", "--only", "mem add", "--runs", "15"],
            cwd=HERE,
            check=True,
        )
    return 0


def mem_scan(texts: list[str]) -> list[list[str]]:
    """The kinds `mem scan --jsonl` finds in each text (one process for all)."""
    mem = str(Path(sys.executable).parent / "mem")
    done = subprocess.run(
        [mem, "scan", "--jsonl", "-"],
        input="".join(json.dumps({"text": t}) + "\n" for t in texts).encode(),
        capture_output=True,
        env=dict(os.environ, MEM_NOW="2026-12-31T00:00:00Z"),
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"mem scan failed: {done.stderr.decode()[:300]}")
    return [json.loads(line)["kinds"] for line in done.stdout.decode().splitlines()]


if __name__ == "__main__":
    raise SystemExit(main())
