"""`make mutation`: mutmut over the guarantee-carrying modules, one group at a
time, each against only the test files that bear on it, with one child process.

A whole-suite run is hours on two cores; a group's own tests make it minutes.
mutmut keeps its state in ./mutants and resets every result when the test
selection changes, so each group keeps its own copy in .mutation/GROUP, moved
to ./mutants while the group runs. mutmut's verdicts stand until a function
changes; each survivor not known to be equivalent is then tested again in a
fresh process with the group's `tests/test_*_pinned.py` (the tests written
to kill survivors: mutmut found the rest let it live), which is what a new
test is measured by.

    python scripts/mutation.py [GROUP ...]        run groups (default: all)
    python scripts/mutation.py --module PATH ...  only the mutants of these modules, each against its group's tests
    python scripts/mutation.py --mutmut-only ...  no fresh-process checks
    python scripts/mutation.py --recheck ...      only them, with today's tests
        [--only TEXT ...]                         of the mutants whose name holds TEXT
    python scripts/mutation.py --report           only rewrite the report
    python scripts/mutation.py --show NAME        one mutant's diff

The report (benchmarks/mutation.md, between its markers) is written from every
group's stored results, so running one group keeps the others' rows; a group
never run in this checkout (.mutation/ is not committed) keeps the rows and
survivors the report had.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

# Beside this script: the survivors no test can kill, and those named but not killed.
from mutation_verdicts import BEFORE_THE_FORK, EQUIVALENT, SURVIVORS

ROOT = Path(__file__).resolve().parent.parent
STORE = ROOT / ".mutation"
WORK = ROOT / "mutants"
REPORT = ROOT / "benchmarks" / "mutation.md"
BEGIN, END = "<!-- mutation:begin -->", "<!-- mutation:end -->"
FRESH = "fresh-process.json"  # beside mutmut's state: the verdicts of the fresh-process checks


@dataclasses.dataclass(frozen=True)
class Group:
    modules: tuple[str, ...]
    tests: tuple[str, ...]


# In the order issue 44 ranks them. The tests are the fast files that exercise
# the modules in-process (a `mem` subprocess imports the unmutated package).
GROUPS = {
    "guard": Group(
        ("grimoire_cli/guard/rules.py", "grimoire_cli/guard/scan.py"),
        (
            "tests/test_guard.py",
            "tests/test_guard_edges.py",
            "tests/test_guard_fields.py",
            "tests/test_guard_gitleaks.py",
            "tests/test_rule_edges.py",
            "tests/test_guard_pinned.py",
            # mutmut runs pytest in its own process: a server started with that
            # process's (closed) stderr fails, and it runs the unmutated package.
            "--deselect=tests/test_guard_fields.py::test_a_secret_in_a_tag_is_refused_by_the_real_mcp_server",
        ),
    ),
    # The crash-injection and safety tests write through `mem` processes, which
    # import the unmutated package (and take minutes): only their in-process ones.
    "journal": Group(
        ("grimoire_cli/storage/journal.py",),
        (
            "tests/test_journal_pinned.py",
            "tests/test_safety.py::test_a_half_done_commit_is_finished_before_anything_reads",
            "tests/test_safety.py::test_a_killed_writers_temp_file_beside_the_issued_ids_is_swept",
            "tests/test_crash_injection.py::test_the_commit_point_names_every_temp_file_and_its_target",
        ),
    ),
    # test_merge.py alone takes 7 minutes here (git merges through `mem` processes,
    # which run the unmutated package): test_merge_pinned.py makes the same
    # merges in process, the driver and the hooks called as git calls them.
    "merge": Group(
        (
            "grimoire_cli/git/renumber.py",
            "grimoire_cli/git/merge.py",
            "grimoire_cli/git/numbering.py",
            "grimoire_cli/git/sides.py",
            "grimoire_cli/git/trees.py",
            "grimoire_cli/git/echoes.py",
            "grimoire_cli/git/flattened.py",
            "grimoire_cli/git/mapping_cache.py",
            "grimoire_cli/git/chains.py",
        ),
        (
            "tests/test_merge_pinned.py",
            "tests/test_merge_driver_pinned.py",
            "tests/test_merge_texts_pinned.py",
            "tests/test_echoes_pinned.py",
            "tests/test_flattened_pinned.py",
            "tests/test_sides_pinned.py",
            "tests/test_trees_pinned.py",
            "tests/test_renumber_pinned.py",
            "tests/test_numbering_pinned.py",
            "tests/test_rule_edges.py::test_a_merge_keeps_the_later_last_applied_whichever_side_has_it",
        ),
    ),
    # The write path: what `mem add` checks and numbers, and the store that
    # stages, commits and re-reads files. Only in-process tests (`mem` in a
    # CliRunner): test_safety's kills run `mem` processes.
    "write": Group(
        ("grimoire_cli/memory/adding.py", "grimoire_cli/storage/store.py", "grimoire_cli/storage/handed.py"),
        (
            "tests/test_write_pinned.py",
            "tests/test_store_pinned.py",
            "tests/test_read_isolation.py",
            "tests/test_add.py",
            "tests/test_api.py",
            "tests/test_catalog.py",
            "tests/test_limits.py",
            "tests/test_rule_edges.py",
        ),
    ),
    # The catalog's connection: its fallback to memory, and the one snapshot a
    # command's reads see (storage/catalog/connection.py).
    "catalog": Group(
        ("grimoire_cli/storage/catalog/connection.py",),
        (
            "tests/test_connection_pinned.py",
            "tests/test_store_pinned.py",
            "tests/test_catalog.py",
            "tests/test_coverage.py",
        ),
    ),
    "entry_rules": Group(
        ("grimoire_cli/memory/entry_rules.py",),
        ("tests/test_validate.py", "tests/test_rule_edges.py", "tests/test_entry_rules_pinned.py"),
    ),
    "search": Group(
        ("grimoire_cli/retrieval/search.py",),
        (
            "tests/test_lexical.py",
            "tests/test_rule_edges.py",
            "tests/test_search_pinned.py",
            "tests/test_coverage.py",
            # A tiny model built in the test: the hybrid ranking's only in-process tests.
            "tests/test_semantic.py",
        ),
    ),
}

# mutmut's exit codes, folded into what the table counts.
DETECTED = {1, 3, 36, 37, -24, 24, 152, 255, -11, -9}
SURVIVED = {0}
NO_TESTS = {5, 33}


def stored(group: str) -> Path:
    return STORE / group


def run_group(name: str, group: Group, fresh: bool = True, modules: tuple[str, ...] = ()) -> None:
    """Run mutmut over one group in ./mutants, the group's stored state moved in
    and back out whatever happens; given `modules`, only their mutants (the
    group's others are generated, untested, so its state stays whole)."""
    if WORK.exists():
        sys.exit(f"error: {WORK} exists (a plain `mutmut run`?); remove it or move it away first")
    STORE.mkdir(exist_ok=True)
    if stored(name).exists():
        stored(name).rename(WORK)
    try:
        run_mutmut(group, tuple(dotted(module) + ".*" for module in modules))
        if fresh:
            check_in_fresh_processes(dataclasses.replace(group, modules=modules or group.modules), WORK, {})
    finally:
        if WORK.exists():
            WORK.rename(stored(name))


def configure(group: Group) -> None:
    """Point mutmut's configuration (read from pyproject.toml) at one group."""
    from mutmut import configuration

    base = configuration._load_config()
    configuration._config = dataclasses.replace(
        base,
        only_mutate=list(group.modules),
        pytest_add_cli_args_test_selection=selection(group),
    )


def selection(group: Group) -> list[str]:
    """The group's test arguments, less a test file not written yet."""
    return [arg for arg in group.tests if arg.startswith("-") or (ROOT / arg.split("::")[0]).exists()]


def dotted(module: str) -> str:
    """A module's path as mutmut's mutant names begin (`grimoire_cli.git.merge`)."""
    return module.removesuffix(".py").replace("/", ".")


def run_mutmut(group: Group, names: tuple[str, ...] = ()) -> None:
    from mutmut.__main__ import _run

    configure(group)
    try:
        _run(names, max_children=1)  # names: patterns of the mutants to test (none: all)
    except SystemExit as stop:
        if stop.code not in (None, 0):
            raise


def check_in_fresh_processes(group: Group, folder: Path, killed: dict[str, bool], only: tuple[str, ...] = ()) -> None:
    """Test each survivor mutmut left (but the equivalent ones), and each
    mutant no test of mutmut's selection reached, again in a new
    process: against today's tests (mutmut's verdict stands until the
    function changes), and with the code that runs once per process (imports,
    caches) run after the mutant is chosen. The verdicts go beside mutmut's
    in `folder`; a mutant `killed` holds true for is not tested again, nor,
    given `only`, one whose name holds none of those strings (a group of
    hundreds of survivors takes an hour: only the functions a new test is
    for)."""
    verdicts = dict(killed)
    for module in group.modules:
        for key, code in results_in(folder, module).items():
            wanted = not only or any(part in key for part in only)
            if (code in SURVIVED or code in NO_TESTS) and key not in EQUIVALENT and not verdicts.get(key) and wanted:
                verdicts[key] = killed_in_a_fresh_process(group, key, folder)
    (folder / FRESH).write_text(json.dumps(verdicts, indent=1), encoding="utf-8")


def recheck(name: str, group: Group, only: tuple[str, ...] = ()) -> None:
    """The fresh-process checks alone, in a group's stored state, with today's
    tests: what a new test kills, without a mutmut run."""
    folder = stored(name)
    if not folder.exists():
        sys.exit(f"error: no stored run of {name}; run `make mutation MODULES={name}` first")
    shutil.copytree(ROOT / "tests", folder / "tests", dirs_exist_ok=True)
    verdicts = folder / FRESH
    killed = json.loads(verdicts.read_text(encoding="utf-8")) if verdicts.exists() else {}
    check_in_fresh_processes(group, folder, killed, only)


def killed_in_a_fresh_process(group: Group, key: str, folder: Path) -> bool:
    # mutmut found that the rest of the group lets the mutant live: only the
    # tests written to kill survivors need to run (all of them when none is).
    tests = [arg for arg in selection(group) if arg.endswith("_pinned.py")] or selection(group)
    # The module's own pinned file first (test_sides_pinned.py for git/sides.py): with -x a
    # mutant it kills stops there, not after the group's other files (20 s a mutant here).
    own = f"test_{key.rsplit('.', 1)[0].rsplit('.', 1)[-1]}_pinned.py"
    tests.sort(key=lambda arg: not arg.endswith(own))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
        cwd=folder,  # `-m` puts the mutated package first on sys.path
        # and PYTHONPATH does for a `mem` process a test starts: it runs the mutant too.
        env={**os.environ, "MUTANT_UNDER_TEST": key, "PYTHONPATH": str(folder)},
        capture_output=True,
    )
    return run.returncode == 1


def results_in(folder: Path, module: str) -> dict[str, int | None]:
    meta = folder / (module + ".meta")
    if not meta.exists():
        return {}
    return json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]


def results(name: str, module: str) -> dict[str, int | None]:
    return results_in(stored(name), module)


def ran(name: str, module: str) -> bool:
    """Whether this checkout holds verdicts for `module` (a run of another module of its group with
    --module leaves its mutants generated and untested)."""
    return any(code is not None for code in results(name, module).values())


def killed_fresh(name: str) -> set[str]:
    verdicts = stored(name) / FRESH
    if not verdicts.exists():
        return set()
    return {key for key, killed in json.loads(verdicts.read_text(encoding="utf-8")).items() if killed}


def tally(codes: dict[str, int | None], fresh: set[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for key, code in codes.items():
        if code in DETECTED:
            counts["killed"] += 1
        elif (code in SURVIVED or code in NO_TESTS) and key in fresh:
            counts["killed in a fresh process"] += 1
        elif (code in SURVIVED or code in NO_TESTS) and key in EQUIVALENT:
            counts["equivalent"] += 1
        elif code in SURVIVED:
            counts["survived"] += 1
        elif code in NO_TESTS:
            counts["no tests"] += 1
        else:
            counts["not run"] += 1
    return counts


def table_rows(earlier: list[str]) -> list[str]:
    """One row per module; a group with no stored run here keeps the row the
    report had (`earlier`: its lines), as a run elsewhere measured it."""
    rows = [
        "| module | mutants | equivalent | killed by mutmut | then killed in a fresh process | survived | no test reaches it | before | after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, group in GROUPS.items():
        for module in group.modules:
            if not ran(name, module):
                rows.extend(line for line in earlier if line.startswith(f"| `{module}`"))
                continue
            counts = tally(results(name, module), killed_fresh(name))
            total = sum(counts.values())
            if not total:
                continue
            # A run stopped part way: its verdicts so far, over the mutants it reached.
            waiting = counts["not run"]
            real = total - counts["equivalent"] - waiting
            fresh = counts["killed in a fresh process"]
            rows.append(
                f"| `{module}`{f' ({waiting} not run yet)' if waiting else ''} | {total} | {counts['equivalent']} | "
                f"{counts['killed']} | {fresh} | {counts['survived']} | {counts['no tests']} | "
                f"{percent(counts['killed'], real)} | {percent(counts['killed'] + fresh, real)} |"
            )
    return rows


def percent(part: int, whole: int) -> str:
    # Rounded down: 620/623 is not 100 %.
    return f"{part}/{whole} = {100 * part // whole} %" if whole else "–"


def survivor_rows(earlier: list[str]) -> list[str]:
    rows = []
    for name, group in GROUPS.items():
        fresh = killed_fresh(name)
        for module in group.modules:
            if not ran(name, module):  # not run here: as the report had it
                rows.extend(line for line in earlier if line.startswith(f"- `{dotted(module)}."))
                continue
            for key, code in sorted(results(name, module).items()):
                if (code in SURVIVED or code in NO_TESTS) and key in fresh:
                    why = f" ({BEFORE_THE_FORK[key]}: mutmut cannot reach it)" if key in BEFORE_THE_FORK else ""
                    rows.append(f"- `{key}`: killed in a fresh process{why}")
                elif code in SURVIVED or code in NO_TESTS:
                    why = EQUIVALENT.get(key, "no test reaches it in-process" if code in NO_TESTS else "SURVIVES")
                    why += f": {SURVIVORS[key]}" if key in SURVIVORS else ""
                    rows.append(f"- `{key}`: {why}")
    return rows


def write_report() -> None:
    text = REPORT.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    earlier, _, tail = rest.partition(END)
    lines = earlier.splitlines()
    generated = "\n".join(
        [
            BEGIN,
            "",
            *table_rows(lines),
            "",
            "Survivors (`python scripts/mutation.py --show NAME`):",
            "",
            *(survivor_rows(lines) or ["- none"]),
            "",
            END,
        ]
    )
    REPORT.write_text(head + generated + tail, encoding="utf-8")


def show(name: str) -> None:
    """A mutant's diff, from the stored state of the group that holds it."""
    from mutmut.__main__ import show as mutmut_show

    for group_name, group in GROUPS.items():
        if any(name in results(group_name, module) for module in group.modules):
            stored(group_name).rename(WORK)
            try:
                configure(group)
                mutmut_show.callback(name)
            finally:
                WORK.rename(stored(group_name))
            return
    sys.exit(f"error: no stored run holds {name}; run its group first ({', '.join(GROUPS)})")


def modules_by_group(modules: list[str]) -> dict[str, tuple[str, ...]]:
    """Group name -> the given modules it holds (--module); exits naming a module no group holds."""
    out: dict[str, tuple[str, ...]] = {}
    for module in modules:
        holder = next((name for name, group in GROUPS.items() if module in group.modules), None)
        if holder is None:
            known = ", ".join(m for group in GROUPS.values() for m in group.modules)
            sys.exit(f"error: no group holds {module}; give one of {known}")
        out[holder] = (*out.get(holder, ()), module)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", help=f"groups to run: {', '.join(GROUPS)} (default: all)")
    parser.add_argument("--report", action="store_true", help="only rewrite benchmarks/mutation.md")
    parser.add_argument("--recheck", action="store_true", help="only the fresh-process checks, with today's tests")
    parser.add_argument(
        "--mutmut-only", action="store_true", help="no fresh-process checks (a first run, before new tests)"
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="TEXT", help="with --recheck: only mutants whose name holds TEXT"
    )
    parser.add_argument("--show", metavar="NAME", help="print one mutant's diff")
    parser.add_argument(
        "--module", action="append", default=[], metavar="PATH", help="run only this module's mutants (of its group)"
    )
    args = parser.parse_args()
    unknown = [name for name in args.groups if name not in GROUPS]
    if unknown:
        sys.exit(f"error: no group {', '.join(unknown)}; the groups are {', '.join(GROUPS)}")
    by_group = modules_by_group(args.module)
    os.chdir(ROOT)  # mutmut works in ./mutants of the current directory
    if args.show:
        show(args.show)
        return
    if args.recheck:
        for name in args.groups or GROUPS:
            recheck(name, GROUPS[name], tuple(args.only))
    elif by_group:
        for name, modules in by_group.items():
            run_group(name, GROUPS[name], fresh=not args.mutmut_only, modules=modules)
    elif not args.report:
        for name in args.groups or GROUPS:
            run_group(name, GROUPS[name], fresh=not args.mutmut_only)
    write_report()


if __name__ == "__main__":
    main()
