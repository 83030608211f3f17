"""MCP session start: spawn `mem mcp`, send `initialize`, wait for its answer.

What an agent's client waits for before it can list the tools. Each run
starts a new server in a small grimoire, writes the initialize request on
its stdin and times from spawn to the response line; then it closes stdin
and waits for the exit (not timed). A `mem --help` run, the CLI's own floor,
is interleaved with each, so both see the same machine load. Prints the
median, min and max of each, in ms, and the median of each start over the
`--help` run beside it.

    python benchmarks/bench_mcp_start.py [--runs 9]

For where the time goes: `python -X importtime -m grimoire_cli mcp`
(docs/agents.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_cli import ENV, MEM  # noqa: E402

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def session_start(folder: Path) -> float:
    """Milliseconds from spawning `mem mcp` to reading its initialize response."""
    started = time.perf_counter()
    server = subprocess.Popen(
        [MEM, "mcp"], cwd=folder, env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    server.stdin.flush()
    line = server.stdout.readline()
    elapsed = (time.perf_counter() - started) * 1000
    server.stdin.close()
    if server.wait(timeout=30) != 0 or json.loads(line or b"{}").get("id") != 1:
        raise SystemExit(
            f"mem mcp did not answer initialize: {line[:200]!r} {server.stderr.read().decode(errors='replace')[:500]}"
        )
    return elapsed


def help_run(folder: Path) -> float:
    started = time.perf_counter()
    subprocess.run([MEM, "--help"], cwd=folder, env=ENV, capture_output=True, check=True)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(HERE.parent / "grimoire_cli")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
        subprocess.run([MEM, "init"], cwd=folder, env=ENV, capture_output=True, check=True)
        session_start(folder)  # the first run warms the disk cache; not counted
        starts, helps = [], []
        for _ in range(args.runs):
            starts.append(session_start(folder))
            helps.append(help_run(folder))
    print(f"\nMCP session start (spawn `mem mcp` + initialize answered), {args.runs} runs; ms")
    print(f"{'':<22} {'median':>7} {'min':>7} {'max':>7}")
    for label, values in (("mem mcp + initialize", starts), ("mem --help", helps)):
        print(f"{label:<22} {statistics.median(values):7.0f} {min(values):7.0f} {max(values):7.0f}", flush=True)
    # Each start over the --help run right after it: steadier than either under a varying load.
    print(f"× --help, paired: median {statistics.median(s / h for s, h in zip(starts, helps)):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
