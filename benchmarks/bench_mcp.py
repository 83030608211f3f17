"""Round trips to `mem mcp` over stdio against the same calls in process.

One server process, driven by the MCP SDK's client session as an agent's
client would; each of `--calls` calls of `query` and `context` is timed from
request to parsed answer, and the same call through the Python API (one
`Grimoire`, results turned into the same JSON) is timed right after it, so
both see the same machine load. Prints p50 and p95 of each and of the
difference (what MCP adds: framing, the pipe, opening the grimoire anew).

    python benchmarks/bench_mcp.py [--size 10000] [--calls 200]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_cli import DATA, ENV, MEM  # noqa: E402

QUERY = "flaky runner disk"  # bench_cli's query and context words, for comparable figures
CONTEXT = "deploy canary"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def measure(folder: Path, calls: int) -> dict[str, tuple[list[float], list[float]]]:
    import os

    from mcp import ClientSession, StdioServerParameters, stdio_client

    from grimoire_cli import Grimoire

    os.environ.update({k: v for k, v in ENV.items() if k.startswith("MEM_")})  # the in-process clock is the server's
    grimoire = Grimoire.open(folder)
    moment = grimoire.now()
    local = {
        "query": lambda: [hit.to_dict(False, moment) for hit in grimoire.query(QUERY)],
        "context": lambda: grimoire.context(CONTEXT).to_dict(),
    }
    arguments = {"query": {"text": QUERY}, "context": {"query": CONTEXT}}
    out: dict[str, tuple[list[float], list[float]]] = {}
    params = StdioServerParameters(command=MEM, args=["mcp"], cwd=str(folder), env=ENV)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as client:
            await client.initialize()
            for name in ("query", "context"):
                remote_ms, local_ms = [], []
                for n in range(calls + 5):  # the first five warm both up
                    started = time.perf_counter()
                    result = await client.call_tool(name, arguments[name])
                    answer = json.loads(result.content[0].text)
                    middle = time.perf_counter()
                    expected = local[name]()
                    ended = time.perf_counter()
                    if result.is_error or (
                        name == "query" and [h["id"] for h in answer] != [h["id"] for h in expected]
                    ):
                        raise SystemExit(
                            f"{name}: the server's answer differs from the library's: {result.content[0].text[:200]}"
                        )
                    if n >= 5:
                        remote_ms.append((middle - started) * 1000)
                        local_ms.append((ended - middle) * 1000)
                out[name] = (remote_ms, local_ms)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--text", default="zipf")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(HERE.parent / "grimoire_cli")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    folder = DATA / f"{args.text}{args.size}"
    if not (folder / ".loa.config.yaml").exists():
        from generate import build

        shutil.rmtree(folder, ignore_errors=True)
        build(folder, args.size, args.text)
    subprocess.run([MEM, "query", QUERY], cwd=folder, env=ENV, capture_output=True, check=True)  # the catalog warm

    import anyio

    found = anyio.run(measure, folder, args.calls)
    print(f"\nmem mcp over stdio, {args.size} entries ({args.text}), {args.calls} calls each; ms")
    print(
        f"{'call':<9} {'mcp p50':>8} {'mcp p95':>8} {'api p50':>8} {'api p95':>8} {'+p50':>6} {'+p95':>6} {'paired p50':>11} {'paired p95':>11}"
    )
    for name, (remote, local) in found.items():
        paired = [r - here for r, here in zip(remote, local)]
        row = [statistics.median(remote), percentile(remote, 0.95), statistics.median(local), percentile(local, 0.95)]
        print(
            f"{name:<9} {row[0]:8.1f} {row[1]:8.1f} {row[2]:8.1f} {row[3]:8.1f} {row[0] - row[2]:6.1f} {row[1] - row[3]:6.1f} "
            f"{statistics.median(paired):11.1f} {percentile(paired, 0.95):11.1f}",
            flush=True,
        )
    print(
        "+p50, +p95: what MCP adds at that percentile (target: +p95 <= 10 ms); paired: each round trip minus the in-process\n"
        "call made right after it, whose p95 also holds the noise of two processes sharing the machine's cores"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
