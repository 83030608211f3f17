"""Scale curves of the bulk paths (issue 43): whole-process times at 1k and
10k entries (100k with `--max 100000` or SCALE_MAX=100000), and the exponent
fitted to them (log time against log size, least squares). A path whose
exponent passes 1.2 (10x the data costing more than ~16x the time) makes the
run exit 1.

    python benchmarks/bench_scale.py [--sizes 1000,10000] [--max 100000] [--only import,export] [--runs 1]

Every entry a path touches is of one day (MEM_NOW fixed): the case where ids
are numbered past each other. Seeded entries are spread over the five default
categories, except where a path reads one (consolidate, the merge driver). Each path gets a fresh grimoire in a temporary
folder, seeded straight through the store (one write per file, as
generate.py does), so setting up does not go through the paths measured.
`check` reuses the grimoire `archive` left (its archive holds the n entries).
Paths:

- import: `mem import` of n JSON Lines (no ids: each one is numbered);
- add_many: `Grimoire.add_many` of n items in one Python process, over the
  five categories (100k in one would pass the 32 MB a file may hold);
- archive: `mem archive` of n expired entries (with its commit);
- check: `mem check` with those n entries in the archive, nothing to do;
- compact: `mem compact --no-summary --keep 10` of n entries (with its commit);
- validate: `mem validate` of n entries, no catalog (a fresh clone);
- export: `mem export --archived` of n entries;
- rebuild: `mem list --recent 1` after deleting the catalog (n entries);
- consolidate: `mem consolidate` whose summarizer (an `sh` script) answers
  n / 10 facts, on a grimoire of n facts (both grow 10x);
- merge-file: the merge driver on two sides that each add n same-day entries
  (ids colliding) to a file of n entries;
- merge-fixup: `mem merge-fixup post-merge` after a merge (no hooks) of a
  branch that added n same-day decisions and learnings into one that added n
  same-day facts and errors: git took the theirs' files whole, their n ids
  colliding (two files a side: 100k in one file would pass the 32 MB limit);
- pull-rebase: `git pull --rebase` (hooks installed) of n published
  same-day entries into a clone holding n others of its own, the same ids,
  both over the five categories.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
MEM = str(BIN / "mem")
NOW = "2026-12-31T12:00:00Z"
DAY = "20261231"
LIMIT = 1.2  # the highest exponent a path may show
ENV = dict(
    {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    MEM_NOW=NOW,
    MEM_SESSION_ID="bench",
    GIT_AUTHOR_NAME="bench",
    GIT_AUTHOR_EMAIL="bench@example.invalid",
    GIT_COMMITTER_NAME="bench",
    GIT_COMMITTER_EMAIL="bench@example.invalid",
)
SUMMARIZER = "#!/bin/sh\ncat > /dev/null\ncat {answer}\n"


def texts(count: int, seed: int = 7) -> list[str]:
    """`count` distinct 20-80-word contents (generate.py's zipf text), none near another."""
    from generate import items

    return [item["content"] for item in items(count, seed=seed)]


CATEGORIES = ("fact", "decision", "learning", "error", "preference")


def seed(
    folder: Path,
    contents: list[str],
    *,
    category: str | tuple[str, ...] | None = None,
    timestamp: str = NOW,
    first: int = 1,
    ttl: str | None = None,
) -> None:
    """A committed grimoire in `folder` holding `contents`, all of one day,
    written straight through the store: in `category`, or spread over those
    given or the five (a file holds at most 32 MB: 100k entries in one would be refused)."""
    from grimoire_cli import Grimoire
    from grimoire_cli.core.model import format_id
    from grimoire_cli.memory.request import Request, build

    if not (folder / ".git").exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
        Grimoire.init(folder)
    grimoire = Grimoire.open(folder)
    store, moment, day = grimoire.store, grimoire.now(), timestamp[:10].replace("-", "")
    by_category: dict[str, list[dict]] = {}
    spread = (category,) if isinstance(category, str) else category or CATEGORIES
    with store.lock():
        for n, text in enumerate(contents):
            item = {
                "content": text,
                "category": spread[n % len(spread)],
                "timestamp": timestamp,
                "ttl": ttl,
            }
            data = build(
                Request.from_mapping({k: v for k, v in item.items() if v is not None}),
                grimoire.config,
                moment,
                {},
                set(),
                format_id(day, first + n),
                grimoire.runtime,
            )[0]
            by_category.setdefault(data["category"], []).append(data)
        for name, batch in by_category.items():
            store.write(store.ensure_file(name), appended=batch)
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    subprocess.run(["git", "commit", "-qm", "seed"], cwd=folder, check=True, env=ENV)


def memory(folder: Path) -> Path:
    return folder / "grimoires/loa/memory"


def drop_catalog(folder: Path) -> None:
    shutil.rmtree(memory(folder) / ".cache", ignore_errors=True)


def warm(folder: Path) -> None:
    """Fill the catalog (a read; exit 1 when it lists nothing)."""
    run([MEM, "list", "--recent", "1"], folder)


# Each case prepares `folder` for n entries and returns the command to time.
def case_import(folder: Path, n: int) -> list[str]:
    seed(folder, [])
    lines = folder / "lines.jsonl"
    lines.write_text(
        "".join(json.dumps({"content": text, "category": "fact", "tags": ["bench"]}) + "\n" for text in texts(n))
    )
    warm(folder)
    return [MEM, "import", str(lines)]


ADD_MANY = """
import json, sys
from grimoire_cli import Grimoire
categories = sys.argv[2].split(",")
texts = json.load(open(sys.argv[1]))
items = [{"content": text, "category": categories[n % len(categories)]} for n, text in enumerate(texts)]
Grimoire.open().add_many(items)
"""


def case_add_many(folder: Path, n: int) -> list[str]:
    seed(folder, [])
    (folder / "items.json").write_text(json.dumps(texts(n)))
    warm(folder)
    return [sys.executable, "-c", ADD_MANY, str(folder / "items.json"), ",".join(CATEGORIES)]


def case_archive(folder: Path, n: int) -> list[str]:
    seed(folder, texts(n), timestamp="2026-06-01T12:00:00Z", ttl="30d")  # expired since November
    warm(folder)
    return [MEM, "archive"]


def case_check(folder: Path, n: int) -> list[str]:
    case_archive(folder, n)
    run([MEM, "archive"], folder)
    seed(folder, texts(10, seed=11))  # a few active entries beside the large archive
    warm(folder)
    assert sum(path.stat().st_size for path in (memory(folder) / "archive").glob("*.yaml")) > 100 * n, (
        "the archive is not filled"
    )
    return [MEM, "check"]


def case_compact(folder: Path, n: int) -> list[str]:
    seed(folder, texts(n))
    warm(folder)
    return [MEM, "compact", "--no-summary", "--keep", "10"]


def case_validate(folder: Path, n: int) -> list[str]:
    seed(folder, texts(n))
    drop_catalog(folder)
    return [MEM, "validate"]


def case_export(folder: Path, n: int) -> list[str]:
    seed(folder, texts(n))
    warm(folder)
    return [MEM, "export", "--archived"]


def case_rebuild(folder: Path, n: int) -> list[str]:
    seed(folder, texts(n))
    drop_catalog(folder)
    return [MEM, "list", "--recent", "1"]


def case_consolidate(folder: Path, n: int) -> list[str]:
    seed(folder, texts(n), category="fact")  # the category its facts are checked against
    run([MEM, "init", "--preset", "samaritan"], folder)  # its summary category
    answer = folder / "answer.json"
    answer.write_text(
        json.dumps(
            {
                "facts": [{"content": text, "importance": 5} for text in texts(n // 10, seed=13)],
                "summary": "a bench session",
            }
        )
    )
    summarizer = folder / "summarizer.sh"
    summarizer.write_text(SUMMARIZER.format(answer=answer))
    summarizer.chmod(0o755)
    session = folder / "session.jsonl"
    session.write_text(
        "".join(
            json.dumps(
                {"type": role, "sessionId": "bench", "message": {"role": role, "content": f"turn {t}: the cache step"}}
            )
            + "\n"
            for t, role in enumerate(["user", "assistant"] * 10)
        )
    )
    warm(folder)
    return [MEM, "consolidate", str(session), "--with", str(summarizer)]


def case_merge_file(folder: Path, n: int) -> list[str]:
    seed(folder, texts(n), category="fact")
    facts = memory(folder) / "facts.yaml"
    base = facts.read_text()
    sides = []
    for side, text_seed in (("ours", 17), ("theirs", 19)):
        more = folder / side
        shutil.rmtree(more, ignore_errors=True)
        seed(more, texts(n, seed=text_seed), category="fact", first=n + 1)  # the same new ids on both sides
        sides.append(memory(more) / "facts.yaml")
    # Each side: the base's n entries, then its own n new ones (the seeded file's own header dropped).
    for side, path in zip(("ours", "theirs"), sides):
        added = path.read_text().split("\n- ", 1)[1]
        (folder / f"{side}.yaml").write_text(base.rstrip("\n") + "\n- " + added)
    (folder / "base.yaml").write_text(base)
    return [
        MEM,
        "merge-file",
        str(folder / "base.yaml"),
        str(folder / "ours.yaml"),
        str(folder / "theirs.yaml"),
        "grimoires/loa/memory/facts.yaml",
    ]


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, env=ENV, capture_output=True)


def case_merge_fixup(folder: Path, n: int) -> list[str]:
    seed(folder, [])
    git("checkout", "-qb", "theirs", cwd=folder)
    seed(folder, texts(n, seed=19), category=("decision", "learning"))  # ids -001.. in files ours never touches
    git("checkout", "-q", "-", cwd=folder)
    seed(folder, texts(n, seed=17), category=("fact", "error"))  # the same ids in other files
    git("merge", "-q", "--no-edit", "theirs", cwd=folder)  # no hooks: git takes decisions.yaml whole
    warm(folder)
    return [MEM, "merge-fixup", "post-merge", "0"]


def case_pull_rebase(folder: Path, n: int) -> list[str]:
    seed(folder / "base", [])
    git("clone", "-q", "--bare", "base", "remote.git", cwd=folder)
    clones = []
    for name, text_seed in (("published", 17), ("local", 19)):
        git("clone", "-q", "remote.git", name, cwd=folder)
        run([MEM, "hooks", "install"], folder / name)
        seed(folder / name, texts(n, seed=text_seed))  # the same n new ids on both, over the five categories
        clones.append(folder / name)
    git("push", "-q", "origin", "HEAD:main", cwd=clones[0])
    warm(clones[1])
    return ["git", "-C", str(clones[1]), "pull", "-q", "--rebase", "origin", "main"]


CASES: dict[str, Callable[[Path, int], list[str]]] = {
    "import": case_import,
    "add_many": case_add_many,
    "archive": case_archive,
    "check": case_check,
    "compact": case_compact,
    "validate": case_validate,
    "export": case_export,
    "rebuild": case_rebuild,
    "consolidate": case_consolidate,
    "merge-file": case_merge_file,
    "merge-fixup": case_merge_fixup,
    "pull-rebase": case_pull_rebase,
}
RESETS = {"validate": drop_catalog, "rebuild": drop_catalog}  # before each further run


def run(cmd: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, env=ENV)
    elapsed = time.perf_counter() - started
    if done.returncode not in ((0, 1) if cmd[0] == MEM else (0,)):  # mem's 1 is "problems found"; Python's, a traceback
        said = (done.stderr or done.stdout).decode(errors="replace").strip()
        raise SystemExit(f"{' '.join(cmd[1:3])} failed ({done.returncode}): {said[-2000:]}")
    return elapsed


def measure(name: str, n: int, runs: int, root: Path) -> float:
    """Median seconds of `runs` runs, each on a freshly prepared grimoire (a write changes it)."""
    samples = []
    for number in range(runs):
        folder = root / f"{name}-{n}-{number}"
        cmd = CASES[name](folder, n)
        samples.append(run(cmd, folder))
        shutil.rmtree(folder, ignore_errors=True)
    return statistics.median(samples)


def exponent(points: list[tuple[int, float]]) -> float:
    """The slope of log(time) against log(size), least squares."""
    xs, ys = [math.log(n) for n, _ in points], [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument(
        "--max",
        type=int,
        default=int(os.environ.get("SCALE_MAX", "0") or 0),
        help="add this size (e.g. 100000; SCALE_MAX)",
    )
    parser.add_argument("--only", default="", help="comma-separated paths: " + ", ".join(CASES))
    parser.add_argument("--runs", type=int, default=1, help="runs per cell (median)")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    os.environ.update(ENV)  # the seeding in this process: the same clock and author
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(HERE.parent / "grimoire_cli")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    sizes = sorted({int(s) for s in args.sizes.split(",")} | ({args.max} if args.max else set()))
    names = [name for name in CASES if not args.only or name in args.only.split(",")]
    print(f"{'path':<12}" + "".join(f"{f'{n:,}':>10}" for n in sizes) + f"{'exponent':>10}", flush=True)
    failed = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        for name in names:
            points = [(n, measure(name, n, args.runs, Path(tmp))) for n in sizes]
            slope = exponent(points) if len(points) > 1 else 0.0  # one size: nothing to fit
            if slope > LIMIT:
                failed.append(name)
            print(
                f"{name:<12}"
                + "".join(f"{t:9.2f}s" for _, t in points)
                + (f"{slope:10.2f}" if len(points) > 1 else f"{'-':>10}")
                + (" > 1.2" if slope > LIMIT else ""),
                flush=True,
            )
    if failed:
        print(f"exponent above {LIMIT}: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
