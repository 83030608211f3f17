"""Every write path crashed at every step of its protocol (issue 44).

A real `mem` subprocess runs with `MEM_FAULT=<step>:<n>` (grimoire_cli/core/faults.py),
so the nth time it reaches that step it ends with `os._exit`: a crash, not an
exception some `finally` could tidy up after. For each write path and step,
n counts up until the command runs to the end (the step has no more
occurrences). After each crash, the next commands recover: `mem validate` (a
reader: it rolls a committed journal forward) and the next writer's lock (it
drops the temp files of a commit that never reached its commit point). Then:

- the files (all but .git, the catalog cache and local/) are byte for byte
  the old ones or the new ones an uncrashed run writes;
- git (HEAD's tree, the index) is old or new too, and never ahead of the files;
- `mem validate` is clean (merge-fixup's old state: as before the command),
  and no temp file or journal is left anywhere.

The outcome of each cell is kept in MATRIX, printed at the end of the run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import git, mem, with_preset

from grimoire_cli.core.faults import CRASHED

MEMORY = Path("grimoires/loa/memory")
MEM = str(Path(sys.executable).parent / "mem")
# Every step a write reaches (grimoire_cli/core/faults.py's callers), in protocol order.
STEPS = [
    "atomic.temp",
    "journal.temp",
    "journal.written",
    "journal.committed",
    "journal.renamed",
    "journal.landed",
    "git.committed",
    "git.staged",
]
# write path -> step -> the outcome after the crash at each occurrence.
MATRIX: dict[str, dict[str, list[str]]] = {}


class Scenario(NamedTuple):
    """A write path: how to make the grimoire it starts from (in the cwd), and the command that writes."""

    setup: Callable[[Path], None]
    command: Callable[[Path], list[str]]


# -- the starting grimoires ----------------------------------------------------


def _seeded(repo: Path) -> None:
    """Facts and decisions, committed."""
    for n in range(3):
        assert mem("add", "-c", "fact", f"fact number {n} about the queue layer").code == 0
        assert mem("add", "-c", "decision", f"decision number {n} about the deploy window").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "seed", cwd=repo)


def _import_file(repo: Path) -> list[str]:
    lines = [
        json.dumps(
            {"content": f"imported memory {n} about step {n * 13}", "category": ["fact", "decision", "learning"][n % 3]}
        )
        for n in range(6)
    ]
    lines.append(json.dumps({"content": "an imported replacement of the first fact", "supersedes": "MEM-20261122-001"}))
    source = repo.parent / "import.jsonl"
    source.write_text("\n".join(lines) + "\n")
    return [MEM, "import", str(source)]


def _protea(repo: Path) -> None:
    assert mem("init", "--preset", "protea").code == 0
    for n in range(1, 7):
        assert (
            mem(
                "add",
                "-c",
                "observation",
                f"Generation {n} scored {n * 7} on the maze",
                "-t",
                "maze",
                env={"MEM_NOW": f"2026-11-{n:02d}T10:00:00Z"},
            ).code
            == 0
        )
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "seed", cwd=repo)


def _consolidating(repo: Path) -> None:
    with_preset(repo, "samaritan")
    with_preset(repo, "sabre")
    answer = {
        "facts": [{"content": "The user's dog is called Rex", "importance": 6}],
        "decisions": [{"content": "We deploy on tuesdays only", "importance": 8}],
        "episodes": [
            {"content": "The friday deploy broke checkout", "importance": 7, "event": "deploy", "outcome": "failure"}
        ],
        "procedures": [],
        "preferences": [{"content": "The user prefers short answers", "importance": 5}],
        "summary": "A chat about the dog and deploy days.",
        "model": "test-model-1",
    }
    script = repo.parent / "summarizer.py"
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.stdin.read()\nprint({json.dumps(answer)!r})\n")
    script.chmod(0o755)
    turns = [
        {"role": role, "content": f"turn {n} about the dog and deploys"}
        for n, role in enumerate(["user", "assistant"] * 3)
    ]
    (repo.parent / "chat.json").write_text(json.dumps(turns))


_TOOL = """
import sys
from anthropic.types.beta import BetaMemoryTool20250818CreateCommand as Create
from anthropic.types.beta import BetaMemoryTool20250818DeleteCommand as Delete
from anthropic.types.beta import BetaMemoryTool20250818RenameCommand as Rename
from anthropic.types.beta import BetaMemoryTool20250818StrReplaceCommand as StrReplace
from grimoire_cli import Grimoire
from grimoire_cli.integrations.anthropic import GrimoireMemoryTool
tool = GrimoireMemoryTool(Grimoire.open("."))
print(tool.execute(eval(sys.argv[1])))
"""


def _tool(command: str) -> list[str]:
    return [sys.executable, "-c", _TOOL, command]


def _tool_files(repo: Path) -> None:
    for path in ("decision/database.md", "fact/queues.md"):
        assert (
            subprocess.run(
                _tool(f"Create(command='create', path='/memories/{path}', file_text='About {path}.')"),
                cwd=repo,
                capture_output=True,
            ).returncode
            == 0
        )
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "seed", cwd=repo)


def _diverged(repo: Path) -> None:
    """A merge git made without mem's hooks: each side added memories with
    the same ids in files the other never touched, so the ids collide."""
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "base", cwd=repo)
    issued = repo / MEMORY / "local" / "issued-ids.json"
    git("checkout", "-qb", "theirs", cwd=repo)
    assert mem("add", "-c", "learning", "their learning about the cache").code == 0
    assert mem("add", "-c", "preference", "their preference for short logs").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "theirs", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    issued.unlink()  # numbered as another clone would number them
    assert mem("add", "-c", "fact", "our fact about the cache").code == 0
    assert mem("add", "-c", "error", "our error in the deploy").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "ours", cwd=repo)
    git("merge", "-q", "--no-edit", "theirs", cwd=repo)


SCENARIOS = {
    "add": Scenario(_seeded, lambda repo: [MEM, "add", "-c", "fact", "a new fact about the cache"]),
    "import": Scenario(_seeded, _import_file),
    "supersede": Scenario(_seeded, lambda repo: [MEM, "supersede", "MEM-20261122-001", "the queue layer is now kafka"]),
    "supersede-across-files": Scenario(
        _seeded,
        lambda repo: [
            MEM,
            "add",
            "-c",
            "learning",
            "--supersedes",
            "MEM-20261122-001",
            "the queue layer taught us to batch",
        ],
    ),
    "archive+commit": Scenario(
        _seeded, lambda repo: [MEM, "archive", "MEM-20261122-001", "MEM-20261122-002", "--reason", "manual"]
    ),
    "compact+commit": Scenario(
        _protea, lambda repo: [MEM, "compact", "-c", "observation", "--keep", "2", "--no-summary"]
    ),
    "consolidate": Scenario(
        _consolidating,
        lambda repo: [MEM, "consolidate", str(repo.parent / "chat.json"), "--with", str(repo.parent / "summarizer.py")],
    ),
    "memory-tool-rename": Scenario(
        _tool_files,
        lambda repo: _tool(
            "Rename(command='rename', old_path='/memories/decision/database.md', new_path='/memories/fact/database.md')"
        ),
    ),
    "memory-tool-delete": Scenario(
        _tool_files, lambda repo: _tool("Delete(command='delete', path='/memories/fact/queues.md')")
    ),
    "merge-fixup": Scenario(_diverged, lambda repo: [MEM, "merge-fixup", "post-merge", "0"]),
}


# -- running and judging -------------------------------------------------------


class State(NamedTuple):
    files: dict[str, bytes]  # every file but .git, the catalog cache, local/ (git-ignored bookkeeping) and temp files
    head: str  # HEAD's tree
    index: str  # `git ls-files -s`


def _state(repo: Path) -> State:
    files = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo)
        if (
            path.is_file()
            and rel.parts[0] != ".git"
            and ".cache" not in rel.parts
            and "local" not in rel.parts
            and path.suffix != ".mem-tmp"
        ):
            files[rel.as_posix()] = path.read_bytes()
    return State(files, git("rev-parse", "HEAD^{tree}", cwd=repo), git("ls-files", "-s", cwd=repo))


def _run(repo: Path, argv: list[str], fault: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEM_FAULT": fault or ""}
    return subprocess.run(argv, cwd=repo, capture_output=True, env=env, timeout=60)


def _outcome(after: State, old: State, new: State) -> str:
    """`old`, `new`, or which part is which (files first: git is never ahead of them)."""
    parts = {
        "files": (after.files, old.files, new.files),
        "index": (after.index, old.index, new.index),
        "HEAD": (after.head, old.head, new.head),
    }
    said = {}
    for name, (now, before, later) in parts.items():
        assert now in (before, later), f"{name} is neither the old nor the new state: {_differing(now, before, later)}"
        said[name] = "old" if now == before else "new"
    if len(set(said.values())) == 1 or (old.head == new.head and old.index == new.index):
        return said["files"]
    return ", ".join(f"{name} {state}" for name, state in said.items())


def _differing(now, before, later) -> object:
    """What differs from the old and from the new state (the files' names, for a message)."""
    if not isinstance(now, dict):
        return now
    return {
        "not old": sorted(k for k in {*now, *before} if now.get(k) != before.get(k)),
        "not new": sorted(k for k in {*now, *later} if now.get(k) != later.get(k)),
    }


def _leftovers(repo: Path) -> list[str]:
    """Temp files and journals anywhere in the grimoire, its cache included."""
    found = [p for p in (repo / "grimoires").rglob("*") if p.name.endswith(".mem-tmp") or p.name.startswith("journal.")]
    return [str(p.relative_to(repo)) for p in found]


def _sweep(repo: Path) -> None:
    """What the next writer does first: take the lock, which finishes or drops a crashed commit."""
    from grimoire_cli import Grimoire

    grimoire = Grimoire.open(repo)
    with grimoire.store.lock():
        pass


# States a crash may leave for a path that also commits: files and git each
# old or new, git never ahead of the files, the index never behind HEAD.
ALLOWED = {"old", "new", "files new, index old, HEAD old", "files new, index new, HEAD old"}


# The canonical multi-file write (import) and a write with a commit (archive)
def _grimoire(tmp_path: Path, monkeypatch, setup: Callable[[Path], None]) -> Path:
    """A git repo with a grimoire `setup` filled, in its own folder (copied whole per run), as the working directory."""
    repo = tmp_path / "base" / "repo"
    repo.mkdir(parents=True)
    git("init", "-q", cwd=repo)
    monkeypatch.chdir(repo)
    assert mem("init").code == 0
    setup(repo)
    return repo


def _finished(repo: Path, argv: list[str], tmp_path: Path) -> Path:
    """A copy of `repo` where `argv` ran to its end, uninterrupted: the new state."""
    done = tmp_path / "done" / "repo"
    shutil.copytree(repo.parent, done.parent, symlinks=True)
    finished = _run(done, argv)
    assert finished.returncode == 0, finished.stderr
    return done


# run in `make test-fast`; the rest, ~2.5 minutes with the memory tool's SDK import, in `make test`.
FAST = {"import", "archive+commit"}


@pytest.mark.parametrize(
    "path", [pytest.param(name, marks=() if name in FAST else pytest.mark.slow) for name in SCENARIOS]
)
def test_a_crash_at_any_step_leaves_the_old_or_the_new_state(path, tmp_path, monkeypatch):
    scenario = SCENARIOS[path]
    base = _grimoire(tmp_path, monkeypatch, scenario.setup)
    old = _state(base)
    valid_before = mem("validate").code
    argv = scenario.command(base)
    new = _state(_finished(base, argv, tmp_path))
    assert new != old
    rows = MATRIX.setdefault(path, {})
    for step in STEPS:
        rows[step] = []
        for nth in range(1, 50):
            run = tmp_path / f"{step}-{nth}" / "repo"
            shutil.copytree(base.parent, run.parent, symlinks=True)
            crashed = _run(run, argv, f"{step}:{nth}")
            if crashed.returncode == 0:
                assert _state(run) == new, (step, nth, _differing(_state(run).files, old.files, new.files))
                break
            assert crashed.returncode == CRASHED, (step, nth, crashed.stderr)
            monkeypatch.chdir(run)
            checked = mem("validate")
            outcome = _outcome(_state(run), old, new)
            # Clean, or (merge-fixup's old state: the ids git left colliding) what it said of the old state.
            assert checked.code == (valid_before if outcome == "old" else 0), (step, nth, checked.out, checked.err)
            _sweep(run)
            assert _outcome(_state(run), old, new) == outcome  # the sweep changes nothing tracked
            assert _leftovers(run) == [], (step, nth)
            assert outcome in ALLOWED, (step, nth, outcome)
            rows[step].append(outcome)
            shutil.rmtree(run.parent)
    assert any(rows.values()), "no step was reached: the faults are not wired"


def matrix_lines() -> list[str]:
    """The matrix as text: one line per write path, each step's outcomes (n = 1, 2, ...)."""
    lines = []
    for path, rows in MATRIX.items():
        cells = [f"{step}: {'/'.join(outcomes)}" for step, outcomes in rows.items() if outcomes]
        lines.append(f"{path}: " + "; ".join(cells))
    return lines


def test_a_crash_during_recovery_is_recovered_by_the_next_command(tmp_path, monkeypatch):
    """Recovery crashed too (after its first rename), then the next command: exactly the new state."""
    repo = _grimoire(tmp_path, monkeypatch, _seeded)
    argv = _import_file(repo)
    done = _finished(repo, argv, tmp_path)
    assert _run(repo, argv, "journal.renamed:1").returncode == CRASHED
    assert _run(repo, [MEM, "validate"], "recover.renamed:1").returncode == CRASHED
    assert (repo / MEMORY / ".cache" / "journal.json").exists()
    assert _run(repo, [MEM, "validate"]).returncode == 0
    assert _leftovers(repo) == []
    assert _state(repo) == _state(done)


def test_a_bad_fault_is_bad_input(repo):
    assert mem("validate", env={"MEM_FAULT": "journal.temp"}).code == 2
    assert mem("validate", env={"MEM_FAULT": "journal.temp:0"}).code == 2


def test_the_commit_point_names_every_temp_file_and_its_target(tmp_path, monkeypatch):
    """Crashed just after the journal is in place: it lists each changed file's
    temp file (beside it, with the suffix the sweep looks for) and nothing else."""
    repo = _grimoire(tmp_path, monkeypatch, _seeded)
    argv = _import_file(repo)
    old = _state(repo)
    done = _finished(repo, argv, tmp_path)
    changed = {name for name, data in _state(done).files.items() if old.files.get(name) != data}
    assert _run(repo, argv, "journal.committed:1").returncode == CRASHED
    pairs = json.loads((repo / MEMORY / ".cache" / "journal.json").read_text())
    assert {Path(target).relative_to(repo.resolve()).as_posix() for _, target in pairs} == changed
    for tmp, target in pairs:
        assert Path(tmp).parent == Path(target).parent and Path(tmp).name.startswith(f".{Path(target).name}.")
        assert (
            tmp.endswith(".mem-tmp")
            and Path(tmp).read_bytes() == (done / Path(target).relative_to(repo.resolve())).read_bytes()
        )
    assert _state(repo).files == old.files  # nothing renamed yet
