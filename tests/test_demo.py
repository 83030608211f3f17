"""`make demo`'s script, run as a newcomer would pipe it: it must finish and
write plain text when its output is not a terminal."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_demo_runs_and_writes_no_escape_codes_into_a_pipe(tmp_path):
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "TMPDIR": str(tmp_path),
    }
    done = subprocess.run(["bash", str(ROOT / "scripts/demo.sh")], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout + done.stderr  # issue 21.9: raw ANSI codes in a pipe
    assert "\n$ mem archive\n" in done.stdout and "mem archive: 1 memory" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("demo ok")
    assert list(tmp_path.iterdir()) == []  # the throw-away repository is removed
