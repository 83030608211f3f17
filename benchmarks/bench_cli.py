"""Whole-process timings of `mem` commands on generated grimoires.

Prints, per size, the median of several runs of each command with the cache
warm and cold, beside `python -c pass`, a trivial Typer command (the floor)
and `grep -ri` over the same files.

    python benchmarks/bench_cli.py [--sizes 1000,10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
MEM = str(Path(sys.executable).parent / "mem")


def timed(cmd: list[str], cwd: Path, runs: int, before=None, env=None) -> float:
    samples = []
    for _ in range(runs):
        if before:
            before()
        started = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from generate import build

    env = dict(os.environ, MEM_NOW="2026-12-31T00:00:00Z", MEM_SESSION_ID="bench")
    floor_script = "import typer\napp = typer.Typer()\n@app.command()\ndef hello():\n    pass\napp()\n"
    rows = []
    py_pass = timed([sys.executable, "-c", "pass"], HERE, args.runs)
    typer_floor = timed([sys.executable, "-c", floor_script], HERE, args.runs)
    print(f"python -c pass: {py_pass:.0f} ms   trivial Typer command (floor): {typer_floor:.0f} ms   runs per cell: {args.runs}")
    for size in [int(s) for s in args.sizes.split(",")]:
        folder = DATA / f"g{size}"
        if not (folder / ".loa.config.yaml").exists():
            shutil.rmtree(folder, ignore_errors=True)
            started = time.perf_counter()
            build(folder, size)
            print(f"generated {size} entries in {time.perf_counter() - started:.1f} s")
        cache = folder / "grimoires/loa/memory/.cache"
        drop = lambda: shutil.rmtree(cache, ignore_errors=True)  # noqa: E731
        some_id = subprocess.run([MEM, "list", "--recent", "1", "--json"], cwd=folder, capture_output=True, text=True, env=env).stdout
        import json

        entry_id = json.loads(some_id)[0]["id"]
        commands = {
            "mem --help": [MEM, "--help"],
            "mem query": [MEM, "query", "flaky runner disk"],
            "mem context": [MEM, "context", "deploy canary"],
            "mem list": [MEM, "list", "--recent", "20"],
            "mem validate": [MEM, "validate"],
            "mem apply": [MEM, "apply", entry_id, "--success"],
        }
        for name, cmd in commands.items():
            cold = timed(cmd, folder, args.runs, before=drop, env=env)
            warm = timed(cmd, folder, args.runs, env=env)
            rows.append((size, name, warm, cold))
        counter = iter(range(10**6))
        add = lambda: [MEM, "add", "-c", "fact", f"bench fact number {next(counter)} about the cache"]  # noqa: E731
        samples = []
        for _ in range(args.runs):
            started = time.perf_counter()
            subprocess.run(add(), cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            samples.append((time.perf_counter() - started) * 1000)
        rows.append((size, "mem add", statistics.median(samples), float("nan")))
        grep = timed(["grep", "-ri", "runner", "grimoires"], folder, args.runs)
        rows.append((size, "grep -ri", grep, float("nan")))
    print(f"{'entries':>8} {'command':<14} {'warm ms':>9} {'cold ms':>9} {'warm/floor':>11}")
    for size, name, warm, cold in rows:
        print(f"{size:>8} {name:<14} {warm:9.0f} {cold:9.0f} {warm / typer_floor:11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
