"""Whole-process timings of `mem` commands on generated grimoires.

Prints, per size, the median of several runs of each command with the
catalog warm and cold, beside `python -c pass`, a trivial Typer command
(the floor, measured in the same run) and `grep -ri` over the same files,
and each warm figure as a ratio to the floor.

    python benchmarks/bench_cli.py [--sizes 1000,10000,100000] [--text zipf,dense] [--runs 9]

`--text` picks the generated text (see generate.py): `zipf`, words as in
natural language, and `dense`, 100 words drawn uniformly, where any query
matches most entries (a stress case for ranking).

Generated grimoires are kept in benchmarks/.data (git-ignored) and reused;
the commands that write (add, apply, supersede, archive) change them, which
is harmless: every run picks fresh ids.
"""

from __future__ import annotations

import argparse
import json
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
# Measured as installed: a pip install (not editable) compiles every module to
# bytecode, as Typer and pydantic in site-packages already are. The package is
# compiled before measuring, and PYTHONDONTWRITEBYTECODE (set on this machine)
# is dropped so a stale .pyc is refreshed, not recompiled on every run (that
# alone cost mem ~50 ms a command that the floor never paid).
ENV = dict(
    {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    MEM_NOW="2026-12-31T00:00:00Z",
    MEM_SESSION_ID="bench",
    GIT_AUTHOR_NAME="bench",
    GIT_AUTHOR_EMAIL="bench@example.invalid",
    GIT_COMMITTER_NAME="bench",
    GIT_COMMITTER_EMAIL="bench@example.invalid",
)


def run(cmd: list[str], cwd: Path) -> float:
    # Output goes to a pipe, as to a terminal or an agent: GNU grep sees a
    # /dev/null stdout and stops at its first match, which is not a search.
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, env=ENV)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode not in (0, 1):
        raise SystemExit(
            f"{' '.join(cmd[1:])} failed ({done.returncode}): {done.stderr.decode(errors='replace').strip()}"
        )
    return elapsed


FLOOR_SCRIPT = "import typer\napp = typer.Typer()\n@app.command()\ndef hello():\n    pass\napp()\n"
FLOORS: list[float] = []  # every floor sample of the current command
RATIOS: list[float] = []  # each run over the floor run made right after it


def median(make_cmd, cwd: Path, runs: int, before=None) -> float:
    """Median of `runs` runs; a floor run is interleaved with each, so the
    ratio to the floor compares runs made under the same machine load."""
    samples = []
    for number in range(runs):
        if before:
            before()
        samples.append(run(make_cmd(number), cwd))
        FLOORS.append(run([sys.executable, "-c", FLOOR_SCRIPT], HERE))
        RATIOS.append(samples[-1] / FLOORS[-1])
    return statistics.median(samples)


SEED = """
from grimoire_cli import Grimoire
g = Grimoire.open()
for n in range(20):
    g.facts.remember(f"bench.key.{n}", {"n": n, "rows": list(range(n % 5))})
for n in range(10):
    g.tasks.add(f"bench task {n} due soon", due="+1h")
    g.tasks.add(f"bench task {n} on an event", on=f"bench.event.{n}")
for n in range(5):
    g.tasks.fire(f"bench.event.{n}")
"""
# Episodes and procedures (issue 16, second part): 200 episodes of 10 events, 10 procedures.
SEED_EPISODES = """
from grimoire_cli import Grimoire
g = Grimoire.open()
g.add_many([{"content": f"ci-{n % 10} (failure): runner {n} ran out of disk during the cache step",
             "category": "episode", "event": f"ci-{n % 10}", "outcome": "failure",
             "learned": f"runner {n} ran out of disk during the cache step", "context": {"runner": f"r{n}", "job": "test"}}
            for n in range(200)])
for n in range(10):
    g.procedures.add({"name": f"bench-runbook-{n}", "description": f"Runbook {n}",
                     "steps": ["Check the runner", {"name": "Clean the cache", "run": "rm -rf {path}"}]})
"""


# Protea (issue 17): 50 generations of observations and crash logs, reflections, directives.
SEED_PROTEA = """
from grimoire_cli import Grimoire
g = Grimoire.open()
items = []
for gen in range(50):
    day = f"2026-12-{1 + gen % 28:02d}T{gen % 24:02d}:00:00Z"
    items += [{"content": f"generation {gen} candidate {c} scored {(gen * 7 + c * 13) % 100} on the maze", "category": "observation",
               "importance": 1 + (gen * 7 + c * 13) % 10, "timestamp": day} for c in range(4)]
    items.append({"content": f"generation {gen} crashed: recursion depth exceeded in mutate()", "category": "crash_log", "timestamp": day})
    if gen % 5 == 0:
        items.append({"content": f"reflection after generation {gen}: smaller mutations survive longer", "category": "reflection", "timestamp": day})
items += [{"content": f"directive {n}: keep the maze solver under 200 lines", "category": "directive"} for n in range(3)]
g.add_many(items)
"""
# A 60-turn Claude Code session with tool calls between the turns, and a
# summarizer that answers at once (sh: no interpreter to start) with 5 new items.
SUMMARIZER = """#!/bin/sh
cat > /dev/null
n=$(date +%s%N)
printf '{"facts": [{"content": "bench fact %s one", "importance": 6, "topic": "bench"}, {"content": "bench fact %s two", "importance": 4}], "decisions": [{"content": "bench decision %s", "importance": 8}], "episodes": [{"content": "bench episode %s", "importance": 5, "event": "bench"}], "preferences": [{"content": "bench preference %s", "importance": 5}], "summary": "a bench session %s"}' $n $n $n $n $n $n
"""


def transcript(path: Path, turns: int = 60) -> None:
    lines = []
    for n in range(turns // 2):
        lines.append(
            {
                "type": "user",
                "sessionId": "bench",
                "message": {
                    "role": "user",
                    "content": f"question {n}: why does the runner run out of disk during the cache step? " * 3,
                },
            }
        )
        lines.append(
            {
                "type": "assistant",
                "sessionId": "bench",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": f"answer {n}: the cache step keeps every layer; prune it first. " * 4},
                        {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "df -h"}},
                    ],
                },
            }
        )
        lines.append(
            {
                "type": "user",
                "sessionId": "bench",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "x" * 400}],
                },
            }
        )
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")


def ids(folder: Path, *args: str) -> list[str]:
    done = subprocess.run([MEM, "list", "--json", *args], cwd=folder, capture_output=True, text=True, env=ENV)
    if done.returncode not in (0, 1):  # 1: nothing listed, and `[]` printed
        raise SystemExit(f"mem list failed ({done.returncode}): {done.stderr.strip()}")
    return [item["id"] for item in json.loads(done.stdout)]


def measure(
    size: int, kind: str, runs: int, cold_runs: int, only: set[str] | None = None
) -> list[tuple[str, float, float | None, float, float]]:
    from generate import build

    folder = DATA / f"{kind}{size}"
    if not (folder / ".loa.config.yaml").exists():
        shutil.rmtree(folder, ignore_errors=True)
        started = time.perf_counter()
        build(folder, size, kind)
        print(f"generated {size} entries in {time.perf_counter() - started:.1f} s", flush=True)
    memory = folder / "grimoires/loa/memory"
    drop = lambda: shutil.rmtree(memory / ".cache", ignore_errors=True)
    rows: list[tuple[str, float, float | None, float, float]] = []

    def wanted(name: str) -> bool:
        return not only or any(word in name for word in only)

    def both(name: str, make_cmd, warm_up: list[str] | None = None) -> None:
        """Cold (no catalog), then warm; `warm_up` fills the catalog between
        them (by default the command itself; a write would use up its ids)."""
        if not wanted(name):
            return
        cold = median(lambda _: make_cmd(), folder, cold_runs, before=drop)
        run(warm_up or make_cmd(), folder)
        FLOORS.clear()
        RATIOS.clear()
        warm = median(lambda _: make_cmd(), folder, runs)
        rows.append((name, warm, cold, statistics.median(FLOORS), statistics.median(RATIOS)))

    both("mem --help", lambda: [MEM, "--help"])
    both("mem query", lambda: [MEM, "query", "flaky runner disk"])
    both("mem context", lambda: [MEM, "context", "deploy canary"])
    both("mem context (no query)", lambda: [MEM, "context"])
    both("mem list --recent 20", lambda: [MEM, "list", "--recent", "20"])
    both("mem validate", lambda: [MEM, "validate"])

    # Cold for one file: a hand edit (a comment line appended) before each run.
    facts = memory / "facts.yaml"

    def touch_one() -> None:
        with open(facts, "a", encoding="utf-8") as handle:
            handle.write(f"# edited by hand {time.time_ns()}\n")

    def one(name: str, make_cmd, before=None) -> None:
        if not wanted(name):
            return
        FLOORS.clear()
        RATIOS.clear()
        rows.append(
            (
                name,
                median(make_cmd, folder, runs, before=before),
                None,
                statistics.median(FLOORS),
                statistics.median(RATIOS),
            )
        )

    one("query after editing 1 file", lambda _: [MEM, "query", "flaky runner disk"], before=touch_one)
    one("validate after editing 1 file", lambda _: [MEM, "validate"], before=touch_one)
    reader = [MEM, "query", "warm"]  # fills the catalog without writing
    run(reader, folder)

    # SABRE's kinds (issue 16): the preset's categories beside the generated
    # ones, 20 facts and 20 tasks (5 due: their events fired); the generated notes stay the bulk.
    if not (memory / "tasks.yaml").exists():
        subprocess.run([MEM, "init", "--preset", "sabre"], cwd=folder, env=ENV, check=True, capture_output=True)
        subprocess.run([sys.executable, "-c", SEED], cwd=folder, env=ENV, check=True)
    both("mem recall", lambda: [MEM, "recall", "bench.key.7"])
    both("mem tasks", lambda: [MEM, "tasks"])
    both("mem due", lambda: [MEM, "due"])
    both("mem get", lambda: [MEM, "get", "bench.key.7"])
    run([MEM, "check"], folder)  # archives what expired (a commit) once; the runs measured find nothing to do
    one("mem check", lambda _: [MEM, "check"])
    both("mem facts 'bench.*'", lambda: [MEM, "facts", "bench.*"])
    both("mem remember", lambda: [MEM, "remember", "bench.key.3", f"value {time.time_ns()}"], reader)
    if "- id:" not in (memory / "procedures.yaml").read_text():
        subprocess.run([sys.executable, "-c", SEED_EPISODES], cwd=folder, env=ENV, check=True)
    both("mem episodes QUERY", lambda: [MEM, "episodes", "disk cache runner"])
    both("mem episodes --event --since", lambda: [MEM, "episodes", "--event", "ci-3", "--since", "30d"])
    both("mem procedure show", lambda: [MEM, "procedure", "show", "bench-runbook-3", "--param", "path=/tmp/x"])
    both("mem procedures", lambda: [MEM, "procedures"])
    both(
        "mem episode",
        lambda: [MEM, "episode", "ci-bench", "--learned", f"run {time.time_ns()}", "--outcome", "success"],
        reader,
    )

    # Samaritan and Protea (issue 17): the protea preset and 50 generations; a
    # second config, the same but with tiers on; a 60-turn transcript.
    if not (memory / "crash_logs.yaml").exists() or not (memory / "summaries.yaml").exists():
        for preset in ("sabre", "protea"):  # sabre again: its summary category is newer than the data
            subprocess.run([MEM, "init", "--preset", preset], cwd=folder, env=ENV, check=True, capture_output=True)
        subprocess.run([sys.executable, "-c", SEED_PROTEA], cwd=folder, env=ENV, check=True)
    tiers = folder / ".tiers.config.yaml"
    tiers.write_text(
        (folder / ".loa.config.yaml")
        .read_text()
        .replace("memory_schema:\n", "memory_schema:\n  tiers: {enabled: true}\n", 1)
    )
    both("mem context --recipe evolution", lambda: [MEM, "context", "--recipe", "evolution"])
    both("mem context (tiers on)", lambda: [MEM, "--config", str(tiers), "context"])
    both("mem query --tier long", lambda: [MEM, "query", "flaky runner disk", "--tier", "long"])
    summarizer = folder / ".summarizer.sh"
    summarizer.write_text(SUMMARIZER)
    summarizer.chmod(0o755)
    session = folder / ".session.jsonl"
    transcript(session)
    prompt = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from grimoire_cli.lifecycle.consolidation import prompt_for; "
            "from grimoire_cli.lifecycle.transcripts import read_transcript; "
            "sys.stdout.write(prompt_for(read_transcript(open(sys.argv[1]).read(), 'x'), 60)[0])",
            str(session),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    one(
        "summarizer alone (sh)",
        lambda _: ["sh", "-c", f"{summarizer} < {folder / '.prompt.txt'}"],
        before=lambda: (folder / ".prompt.txt").write_text(prompt),
    )
    both("mem consolidate (60 turns)", lambda: [MEM, "consolidate", str(session), "--with", str(summarizer)], reader)

    # The Persistent Memory System (issue 18): 10,000 generated execution records in one call.
    from executions import generate

    batch = folder / ".runs.jsonl"
    if not batch.exists():
        batch.write_text("".join(json.dumps(record) + "\n" for record in generate(10000)))
    one("mem observe (10,000 records)", lambda _: [MEM, "observe", str(batch)])
    # The rows that read the log read one of 100,000 steps exactly (the row above grows it at each run).
    steps = folder / ".steps100k.jsonl"
    if not steps.exists():
        records, total = generate(60000, seed=18), 0
        for count, record in enumerate(records, 1):  # noqa: B007 (count is read after the loop)
            total += len(record["steps"])
            if total >= 100000:
                break
        steps.write_text("".join(json.dumps(record) + "\n" for record in records[:count]))
    if any(wanted(name) for name in ("tools", "recommend", "patterns", "learn")):
        subprocess.run([MEM, "init", "--preset", "pms"], cwd=folder, env=ENV, check=True, capture_output=True)
        (memory / "local" / "observations.jsonl").unlink(missing_ok=True)
        # Checked and redacted, as mem keeps it
        subprocess.run([MEM, "observe", str(steps)], cwd=folder, env=ENV, check=True, capture_output=True)
    both("mem tools", lambda: [MEM, "tools"])
    both("mem recommend", lambda: [MEM, "recommend", "create shipment", "--context", "support"])
    both("mem patterns", lambda: [MEM, "patterns", "--min-usage", "100"])
    both("mem learn (100,000 steps)", lambda: [MEM, "learn"])
    log = memory / "local" / "observations.jsonl"

    def replace_log() -> None:
        """A copy of the log in its place (another inode): the catalog reads all of it again, the grimoire's entries stay indexed."""
        shutil.copyfile(log, log.with_suffix(".copy"))
        os.replace(log.with_suffix(".copy"), log)

    one("mem learn (log read again)", lambda _: [MEM, "learn"], before=replace_log)

    # Claude Code's hooks (issue 19), fed a payload on stdin as Claude Code does
    # (through `sh -c 'exec …'`: a millisecond or two the floor does not pay).
    # pre-compact runs with a summarizer configured and the transcript touched
    # before each run, so each run starts a detached consolidation (waited out
    # before the next run: only the hook's own time is measured).
    hooked = folder / ".agent.config.yaml"
    hooked.write_text(
        (folder / ".loa.config.yaml")
        .read_text()
        .replace("memory_schema:\n", f"memory_schema:\n  consolidate: {{command: {json.dumps(str(summarizer))}}}\n", 1)
    )
    payloads = folder / ".hook-payloads"
    payloads.mkdir(exist_ok=True)
    for event, more in (
        ("session-start", {"source": "startup"}),
        ("pre-compact", {"trigger": "auto"}),
        (
            "post-tool-use",
            {"tool_name": "Bash", "tool_input": {"command": "make test"}, "tool_response": {"stdout": "ok"}},
        ),
    ):
        (payloads / event).write_text(
            json.dumps(
                {
                    "session_id": "bench-hooks",
                    "transcript_path": str(session),
                    "cwd": str(folder),
                    "hook_event_name": event,
                    **more,
                }
            )
        )

    def hook(event: str, config: Path | None = None) -> list[str]:
        given = f"--config {config} " if config else ""
        return ["sh", "-c", f"exec {MEM} {given}agent hook {event} < {payloads / event}"]

    def next_state() -> None:
        time.sleep(1.5)  # the last run's consolidation finishes first
        os.utime(session, ns=(time.time_ns(), time.time_ns()))

    run(hook("session-start"), folder)
    one("agent hook session-start", lambda _: hook("session-start"))
    one("agent hook post-tool-use", lambda _: hook("post-tool-use"))
    one("agent hook pre-compact (starts consolidate)", lambda _: hook("pre-compact", hooked), before=next_state)

    # Writes, cold (no catalog) and warm; each run takes fresh ids.
    fresh = iter(ids(folder, "-c", "fact"))  # permanent: never run out to expiry
    both("mem add", lambda: [MEM, "add", "-c", "fact", f"bench fact {time.time_ns()} about the cache"], reader)
    both("mem apply", lambda: [MEM, "apply", next(fresh), "--success"], reader)
    both(
        "mem supersede",
        lambda: [MEM, "supersede", next(fresh), f"revised at {time.time_ns()}: the runner disk is small"],
        reader,
    )
    both(
        "mem archive (10, commit)",
        lambda: [MEM, "archive", *[next(fresh) for _ in range(10)], "--reason", "manual"],
        reader,
    )
    one("grep -ri", lambda _: ["grep", "-ri", "runner", "grimoires"])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--text", default="zipf", help="comma-separated kinds of generated text: zipf, dense")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--cold-runs", type=int, default=0, help="runs of each cold cell (default: --runs; fewer at 100k saves minutes)"
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated words: measure only the rows whose name holds one (e.g. query,context)",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(HERE.parent / "grimoire_cli")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    from generate import match_fractions

    for kind in args.text.split(","):
        shares = match_fractions(kind=kind)
        for size in [int(s) for s in args.sizes.split(",")]:
            rows = measure(
                size, kind, args.runs, args.cold_runs or args.runs, {w for w in args.only.split(",") if w} or None
            )
            py_pass = statistics.median(run([sys.executable, "-c", "pass"], HERE) for _ in range(args.runs))
            print(
                f"\n{size} entries, {kind} text (the query matches {100 * shares['flaky runner disk']:.0f} % of entries, the context "
                f"query {100 * shares['deploy canary']:.0f} %); medians of {args.runs} runs ({args.cold_runs or args.runs} cold); "
                f"python -c pass {py_pass:.0f} ms"
            )
            print(
                "floor: a trivial Typer command, run right after each warm run; ratio = median over runs of run / its floor"
            )
            print(f"{'command':<30} {'warm ms':>8} {'cold ms':>8} {'floor ms':>9} {'warm/floor':>11}")
            for name, warm, cold, floor, ratio in rows:
                cold_text = f"{cold:8.0f}" if cold is not None else f"{'':>8}"
                print(f"{name:<30} {warm:8.0f} {cold_text} {floor:9.0f} {ratio:11.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
