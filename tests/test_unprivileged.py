"""Permissions and the lock, as a user the system says no to (issue 44).

Root reads and writes through any file mode, so run as root these tests
could not fail. Under root they run `mem` as `nobody` (setpriv) in a folder
nobody owns; as any other user, as that user; where neither is possible
they are skipped, saying why.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import pytest
from conftest import NOW, ROOT

NOBODY = 65534
MEMORY = Path("grimoires/loa/memory")
# The interpreters that may run mem as nobody: this one, or the system's of
# the same version (this one may sit in a folder only root can enter).
CANDIDATES = [sys.executable, f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"]


def _as_nobody() -> list[str]:
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def _environment(home: Path) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MEM_NOW": NOW,
        "MEM_SESSION_ID": "test-session",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_TEMPLATE_DIR": "",
        "PYTHONPATH": os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        env[name] = os.environ.get(name, "test")
    return env


def _runner(home: Path) -> tuple[list[str], str] | str:
    """(the prefix that runs a command as the unprivileged user, its Python), or why there is none."""
    if os.geteuid() != 0:
        return [], sys.executable
    if shutil.which("setpriv") is None:
        return "running as root and setpriv is not installed: no way to drop the privileges"
    for python in CANDIDATES:
        if Path(python).exists():
            tried = subprocess.run(
                [*_as_nobody(), python, "-c", "import ruamel.yaml, typer, rapidfuzz, grimoire_cli"],
                env=_environment(home),
                capture_output=True,
                cwd=home,
            )
            if tried.returncode == 0:
                return _as_nobody(), python
    return f"running as root and no Python nobody may run with mem's packages (tried {', '.join(CANDIDATES)})"


class Unprivileged:
    """A folder the unprivileged user owns, and `mem`/`git` run in it as that user."""

    def __init__(self, folder: Path, prefix: list[str], python: str):
        self.folder, self.prefix, self.python = folder, prefix, python
        self.repo = folder / "repo"
        self.env = _environment(folder / "home")

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*self.prefix, *args],
            cwd=self.repo if self.repo.exists() else self.folder,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=60,
        )

    def mem(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return self.run(self.python, "-m", "grimoire_cli", *args, env=env)


@pytest.fixture
def nobody():
    folder = Path(tempfile.mkdtemp(prefix="mem-unprivileged-"))  # not under pytest's root-only folder
    try:
        (folder / "home").mkdir()
        (folder / "home" / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
        if os.geteuid() == 0:
            for path in (folder, folder / "home", folder / "home" / ".gitconfig"):
                os.chown(path, NOBODY, NOBODY)
        found = _runner(folder / "home")
        if isinstance(found, str):
            pytest.skip(found)
        user = Unprivileged(folder, *found)
        assert user.run("git", "init", "-q", "repo").returncode == 0
        done = user.mem("init")
        assert done.returncode == 0, done.stderr
        assert user.mem("add", "-c", "fact", "the first fact, written as an unprivileged user").returncode == 0
        yield user
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), (
        done.stderr
    )
    return done.stderr


def test_an_unreadable_grimoire_file_is_reported_with_its_place(nobody):
    facts = nobody.repo / MEMORY / "facts.yaml"
    assert nobody.run("chmod", "000", str(facts)).returncode == 0
    checked = nobody.mem("validate")
    assert (
        checked.returncode == 3
        and "grimoires/loa/memory/facts.yaml:1: [unreadable] cannot read: Permission denied" in checked.stdout
    )
    listed = nobody.mem("list")
    assert "warning: skipped a damaged file (run `mem validate`): grimoires/loa/memory/facts.yaml:1" in listed.stderr
    assert "Traceback" not in listed.stderr


def test_a_grimoire_folder_mem_may_not_write_in_is_one_error_line_and_nothing_written(nobody):
    memory = nobody.repo / MEMORY
    before = {p.name: p.read_bytes() for p in memory.iterdir() if p.is_file()}
    assert nobody.run("chmod", "555", str(memory)).returncode == 0
    try:
        done = nobody.mem("add", "-c", "fact", "a fact that cannot be written")
    finally:
        nobody.run("chmod", "755", str(memory))
    assert done.returncode == 3
    assert _one_error_line(done) == (
        "error: grimoires/loa/memory: cannot write: Permission denied "
        "(hint: check the permissions of the grimoire's folders and the free space)\n"
    )
    assert {p.name: p.read_bytes() for p in memory.iterdir() if p.is_file()} == before
    assert nobody.mem("validate").returncode == 0


def test_a_read_only_file_is_replaced_whole_and_keeps_its_mode(nobody):
    """A write replaces a file (temp file and rename, in a folder mem may write in): its mode is kept."""
    facts = nobody.repo / MEMORY / "facts.yaml"
    assert nobody.run("chmod", "444", str(facts)).returncode == 0
    assert nobody.mem("add", "-c", "fact", "a second fact over a read-only file").returncode == 0
    assert facts.stat().st_mode & 0o777 == 0o444 and "a second fact" in facts.read_text()


def test_the_lock_wait_is_bounded_by_mem_lock_timeout(nobody):
    lock = nobody.repo / MEMORY / ".cache" / "write.lock"
    assert lock.exists()  # made by the unprivileged user's first write
    with open(lock, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        done = nobody.mem("add", "-c", "fact", "a fact that waits for the lock", env={"MEM_LOCK_TIMEOUT": "0.3"})
        waited = time.monotonic() - started
    assert done.returncode == 3 and 0.3 <= waited < 10, (done.returncode, waited)
    assert _one_error_line(done).startswith("error: another mem process has held the grimoire lock")
    assert nobody.mem("add", "-c", "fact", "a fact once the lock is free").returncode == 0
