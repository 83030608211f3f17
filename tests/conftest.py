"""Shared fixtures: real temp repos, the real `mem` entry point, a fixed clock."""

from __future__ import annotations

import itertools
import os
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings
from typer.testing import CliRunner

from grimoire_cli.cli.main import main as mem_main

NOW = "2026-11-22T10:00:00Z"
ARCHIVED = {
    "archived": True,
    "archived_at": "2026-11-21T10:00:00Z",
    "archive_reason": "manual",
}  # the archive fields of an export's archived line
ROOT = Path(__file__).resolve().parent.parent

# Hypothesis profiles, chosen by $HYPOTHESIS_PROFILE (default ci; pytest's
# --hypothesis-profile still wins). ci is the full strength `make test` and CI
# run: each property test gets the count it passes to `examples`. Its parent is
# the profile Hypothesis chose for itself, so a run where $CI is set keeps
# Hypothesis's own CI settings (derandomized, no example database) as before.
# dev (`make test-fast`) runs a tenth of the examples.
CI_EXAMPLES = 100
settings.register_profile("ci", settings.default, max_examples=CI_EXAMPLES)
settings.register_profile("dev", settings.default, max_examples=CI_EXAMPLES // 10)
# soak (`make soak`, not CI): 25 times the ci examples, for the long runs that find rare sequences.
settings.register_profile("soak", settings.default, max_examples=CI_EXAMPLES * 25)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def examples(ci_count: int) -> int:
    """A property test's example count: `ci_count` under the ci profile, the
    same share of the loaded profile's max_examples under any other."""
    return max(1, round(ci_count * settings.default.max_examples / CI_EXAMPLES))


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    """No test touches $HOME or the user's git config; the clock is fixed."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_TEMPLATE_DIR", "")
    for name, value in {
        "GIT_AUTHOR_NAME": "Test Author",
        "GIT_AUTHOR_EMAIL": "author@test.invalid",
        "GIT_COMMITTER_NAME": "Test Author",
        "GIT_COMMITTER_EMAIL": "author@test.invalid",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MEM_NOW", NOW)
    # Git hooks and the merge driver find the `mem` installed beside this Python.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("MEM_SESSION_ID", "test-session")
    for name in ("MEM_CONFIG", "MEM_AGENT", "MEM_PHASE"):
        monkeypatch.delenv(name, raising=False)
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")


@dataclass
class Run:
    code: int
    out: str
    err: str


def mem(*args: str, input: str | bytes | None = None, env: dict | None = None) -> Run:
    """The real `mem` command, in process (fast); cwd is the caller's."""
    runner = CliRunner()
    with runner.isolation(input=input, env=env) as (out, err, _):
        code = mem_main([str(a) for a in args])
        sys.stdout.flush()
        sys.stderr.flush()
        return Run(code, out.getvalue().decode(), err.getvalue().decode())


def mem_process(
    *args: str, cwd: Path, input: bytes | None = None, env: dict | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    """The installed console script in a real subprocess."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [str(Path(sys.executable).parent / "mem"), *map(str, args)],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=full_env,
        timeout=timeout,
    )


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def fresh_repo(path: Path, monkeypatch, preset: str | None = None) -> Path:
    """A new git repo at `path` with `mem init` (and the preset's) done, as the working directory."""
    path.mkdir()
    git("init", "-q", cwd=path)
    monkeypatch.chdir(path)
    result = mem("init", *(("--preset", preset) if preset else ()))
    assert result.code == 0, result.err
    return path


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """A fresh git repo with `mem init` done, as the working directory."""
    return fresh_repo(tmp_path / "repo", monkeypatch)


def corrupt_the_catalog(store) -> None:
    """Another program overwrites the catalog's file and its WAL: the next query fails (`Stale`). Called outside
    a `reading` block, where no snapshot would read on from the pages it has."""
    for path in store.cache.glob("index.sqlite3*"):
        path.write_bytes(b"\0not a database" * 4096)


@contextmanager
def at_the_first_call_of(name: str, action, where: str = ""):
    """Run `action` when a function whose name holds `name` (in a file whose path ends with `where`) is first
    called: another program acting at that very point of mem's work, every time (under mutmut the function is
    reached through a trampoline of its name)."""
    done = []

    def hook(frame, event, _arg):
        code = frame.f_code
        if event == "call" and not done and name in code.co_name and code.co_filename.endswith(where):
            done.append(name)
            action()

    sys.setprofile(hook)
    try:
        yield done
    finally:
        sys.setprofile(None)


def row_of(repo: Path, entry_id: str) -> int | None:
    """The catalog row scope loa's entry with this id has now (None: none), read as another program would."""
    db = sqlite3.connect(repo / "grimoires/loa/memory/.cache/index.sqlite3")
    try:
        row = db.execute("SELECT rowid FROM entries WHERE id=?", (entry_id,)).fetchone()
    finally:
        db.close()
    return row[0] if row else None


_BACKUPS = itertools.count(1)


def wal_pinned(repo: Path) -> bool:
    """Whether a reader pins the catalog's WAL: a write lands in it (`mem add`, a memory of its own), then
    another program's full checkpoint (TRUNCATE) cannot finish while any read transaction is open."""
    assert mem("add", "-c", "fact", f"The nightly backup number {next(_BACKUPS)} runs at 02:00 UTC").code == 0
    (index,) = repo.glob("grimoires/*/memory/.cache/index.sqlite3")
    db = sqlite3.connect(index)
    try:
        return db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 1
    finally:
        db.close()


def with_preset(repo: Path, name: str) -> Path:
    """`repo` with a preset added (mem init --preset NAME), committed."""
    assert mem("init", "--preset", name).code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "start", cwd=repo)
    return repo


@pytest.fixture
def sabre(repo) -> Path:
    """`repo` with SABRE's preset, committed."""
    return with_preset(repo, "sabre")


@pytest.fixture
def protea(repo) -> Path:
    """`repo` with Protea's preset, committed."""
    return with_preset(repo, "protea")


@pytest.fixture
def grimoire(repo):
    from grimoire_cli import Grimoire

    return Grimoire.open(repo)


STARTED: list = []  # web test clients started by `started`, stopped after each test


def started(client):
    """A Starlette TestClient, started as a server is (its lifespan run) and stopped after the test, so the
    app's worker thread ends with it: a process left with threads never forks (tests/test_parallel.py)."""
    STARTED.append(client)
    return client.__enter__()


@pytest.fixture(autouse=True)
def _stop_started_clients():
    yield
    while STARTED:
        STARTED.pop().__exit__(None, None, None)


def catalog_dump(repo: Path) -> dict:
    """Everything in the scope loa's catalog except row numbers (to compare an
    incrementally kept catalog with a rebuild)."""
    with sqlite3.connect(repo / "grimoires/loa/memory/.cache" / "index.sqlite3") as db:
        entries = db.execute(
            "SELECT e.path, s.path, s.idx, s.start, s.stop, s.id, s.chunk, mapping, archived, e.id, category, key, confidence, "
            "importance, tier, born, expires, superseded_by, tags, seq, norm, data FROM entries e "
            "JOIN spans s ON s.rowid = e.rowid ORDER BY s.path, s.idx"
        ).fetchall()
        assert (
            len(entries)
            == db.execute("SELECT count(*) FROM entries").fetchone()[0]
            == db.execute("SELECT count(*) FROM spans").fetchone()[0]
        )
        fts = db.execute(
            "SELECT s.path, s.idx, f.summary, f.content, f.tags, f.aliases FROM fts f JOIN spans s ON s.rowid = f.rowid "
            "ORDER BY s.path, s.idx"
        ).fetchall()
        count = db.execute("SELECT count(*) FROM fts").fetchone()[0]
        words = db.execute("SELECT word, path, n FROM words ORDER BY word, path").fetchall()
        files = db.execute("SELECT path, size, hash FROM files ORDER BY path").fetchall()
        # The narrow copy ranking joins must match entries row for row.
        columns = "path, mapping, archived, id, category, key, confidence, importance, tier, born, expires, superseded_by, tags, seq"
        ranks = db.execute(f"SELECT rowid, {columns} FROM ranks ORDER BY rowid").fetchall()
        assert ranks == db.execute(f"SELECT rowid, {columns} FROM entries ORDER BY rowid").fetchall()
    return {"entries": entries, "fts": fts, "fts_rows": count, "words": words, "files": files, "ranks": len(ranks)}


def _summary_lines() -> list[str]:
    """What this process ran of the model test (issue 34 asks CI for at least 2,000 steps) and of crash injection."""
    lines = []
    model = sys.modules.get("test_model")
    if model is not None and model.STEPS[0]:
        lines.append(f"model test (test_model.py): {model.STEPS[0]:,} steps checked")
        lines.append("  rules that did their work: " + ", ".join(f"{name} {n}" for name, n in model.RUNS.most_common()))
    crashes = sys.modules.get("test_crash_injection")
    if crashes is not None and crashes.MATRIX:
        lines.append(
            "crash injection (test_crash_injection.py), write path -> step: outcome after recovery (n = 1, 2, ...):"
        )
        lines.extend("  " + line for line in crashes.matrix_lines())
    return lines


# The longest files first (`make test`'s --durations, 2 cores: the model test's store machine alone 360-480 s, the
# team of clones 4 x 60 s, the crash matrix and the 30 kills 40-55 s a test). A process runs whole files in the
# order given (--dist loadfile --no-loadscope-reorder; xdist's own order puts the files of most tests first, which
# started the model test when half the run was over, to run on alone at its end).
FIRST = ("test_model.py", "test_team.py", "test_crash_injection.py", "test_safety.py")


def pytest_collection_modifyitems(items) -> None:
    rank = {name: place for place, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST)))  # stable: each file's own order kept


# `make test` runs the files on several processes (pytest-xdist, one file to a process): each worker hands its
# summary lines to the process that prints the run's summary.
FROM_WORKERS: list[str] = []


def pytest_sessionfinish(session) -> None:
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["summary"] = _summary_lines()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    FROM_WORKERS.extend(getattr(node, "workeroutput", {}).get("summary", []))


def pytest_terminal_summary(terminalreporter) -> None:
    for line in FROM_WORKERS + _summary_lines():
        terminalreporter.write_line(line)
