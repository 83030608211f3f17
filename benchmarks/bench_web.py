"""`mem serve` at 10k entries: each page's HTML, and `query` over MCP on HTTP.

One real server process (`mem serve --port 0 --token T`, the console script);
each page is fetched `--calls` times (after five to warm up), timed from
request to the whole body read; then the SDK's streamable HTTP client calls
`query` as many times, timed from request to parsed answer, its ids checked
against `mem query --json`. Prints p50 and p95 per row (targets, issue 39:
page p95 <= 50 ms, MCP-over-HTTP query p95 <= 20 ms).

Its grimoire (`.data/web-zipf10000`, built once, see `build`) holds what every
page draws: generate.py's entries, the sabre, protea and pms presets' kinds
with bench_cli.py's seeds (facts, tasks, episodes, procedures, observations,
crash logs: thousands of near-duplicate pairs for the review queue), outcomes
recorded on some decisions (every effectiveness tier), and an execution log
of `--runs` generated records observed and learnt from (tools, patterns, insights).

    python benchmarks/bench_web.py [--size 10000] [--calls 100] [--only archive,mcp] [--rebuild]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_cli import DATA, ENV, MEM, SEED, SEED_EPISODES, SEED_PROTEA  # noqa: E402
from bench_mcp import QUERY, percentile  # noqa: E402

TOKEN = "a-benchmark-token-long-enough"
HEADERS = {"authorization": f"Bearer {TOKEN}", "accept": "text/html"}
PRESETS = ("sabre", "protea", "pms")
BUILT = ".built"  # written last: a build cut short is built again
# Outcomes on the first 120 decisions: 3 applications each, 0-3 of them
# successes, so each effectiveness tier (ineffective, low, medium, high) holds 30.
SEED_OUTCOMES = """
from grimoire_cli import Grimoire
g = Grimoire.open()
for n, entry in enumerate(g.list(categories=["decision"])[:120]):
    for k in range(3):
        g.apply(entry.id, k < n % 4)
"""


def mem(folder: Path, *args: str) -> None:
    subprocess.run([MEM, *args], cwd=folder, env=ENV, check=True, capture_output=True)


def build(folder: Path, size: int, text: str, runs: int) -> None:
    """The grimoire every page is measured on, through the real write paths
    (`mem init --preset`, the API, `mem observe`, `mem learn`), committed."""
    from executions import generate as executions
    from generate import build as entries

    shutil.rmtree(folder, ignore_errors=True)
    entries(folder, size, text)
    for preset in PRESETS:
        mem(folder, "init", "--preset", preset)
    for seed in (SEED, SEED_EPISODES, SEED_PROTEA, SEED_OUTCOMES):
        subprocess.run([sys.executable, "-c", seed], cwd=folder, env=ENV, check=True)
    log = folder / ".runs.jsonl"
    log.write_text("".join(json.dumps(record) + "\n" for record in executions(runs)))
    mem(folder, "observe", str(log))
    mem(folder, "learn")
    subprocess.run(["git", "add", "-A"], cwd=folder, env=ENV, check=True)
    subprocess.run(["git", "commit", "-qm", "bench_web's grimoire"], cwd=folder, env=ENV, check=True)
    (folder / BUILT).touch()


def fetch_ms(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, headers=HEADERS), timeout=30) as response:
        response.read()
    return (time.perf_counter() - started) * 1000


def page_rows(base: str, pages: dict[str, str], calls: int) -> dict[str, list[float]]:
    rows = {}
    for name, path in pages.items():
        timings = [fetch_ms(base + path) for _ in range(calls + 5)]
        rows[name] = timings[5:]  # the first five warm the server up
    return rows


async def mcp_query_ms(url: str, calls: int, expected: list[str]) -> list[float]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    timings = []
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for n in range(calls + 5):
            started = time.perf_counter()
            result = await session.call_tool("query", {"text": QUERY})
            ids = [hit["id"] for hit in json.loads(result.content[0].text)]
            if n >= 5:
                timings.append((time.perf_counter() - started) * 1000)
            if ids != expected:
                raise SystemExit(f"/mcp query differs from mem query: {ids[:5]} != {expected[:5]}")
    return timings


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--text", default="zipf")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--only", default="", help="the rows to measure, comma-separated (default: every one)")
    parser.add_argument("--runs", type=int, default=10000, help="execution records in the observation log")
    parser.add_argument("--rebuild", action="store_true", help="build the grimoire again")
    args = parser.parse_args()
    # Its own folder: bench_cli.py's grimoire of the same size is whatever its rows left in it.
    folder = DATA / f"web-{args.text}{args.size}"
    if args.rebuild or not (folder / BUILT).exists():
        build(folder, args.size, args.text, args.runs)
    # What expired is archived first (as `make bench`'s bench_cli.py does before
    # this runs): the archive page then shows thousands, whichever ran first.
    subprocess.run([MEM, "check"], cwd=folder, env=ENV, capture_output=True, check=True)
    queried = subprocess.run([MEM, "query", QUERY, "--json"], cwd=folder, env=ENV, capture_output=True, check=True)
    expected = [hit["id"] for hit in json.loads(queried.stdout)]
    server = subprocess.Popen(
        [MEM, "serve", "--port", "0", "--token", TOKEN], cwd=folder, env=ENV, stderr=subprocess.PIPE
    )
    try:
        assert server.stderr is not None
        base = server.stderr.readline().decode().split()[1].rstrip("/")  # "serving http://127.0.0.1:PORT/ ..."
        pages = {
            "overview": "/",
            "search": f"/search?q={QUERY.replace(' ', '+')}",
            "entry": f"/entry/{expected[0]}",
            "archive": "/archive",
            "review": "/review",
            "tiers": "/tiers",
            "learning": "/learning",
        }
        only = {name.strip() for name in args.only.split(",") if name.strip()}
        rows = page_rows(base, {name: path for name, path in pages.items() if not only or name in only}, args.calls)
        if not only or "mcp" in only:
            import anyio

            rows["mcp query"] = anyio.run(mcp_query_ms, base + "/mcp", args.calls, expected)
    finally:
        server.terminate()
        server.communicate(timeout=10)
    print(f"\nmem serve, {args.size} entries ({args.text}), {args.calls} requests each; ms")
    print(f"{'page':<10} {'p50':>8} {'p95':>8}")
    for name, timings in rows.items():
        print(f"{name:<10} {statistics.median(timings):8.1f} {percentile(timings, 0.95):8.1f}", flush=True)
    print("targets (issue 39): page p95 <= 50 ms; mcp query (MCP over HTTP) p95 <= 20 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
