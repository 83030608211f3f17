"""Each memory system's example usage through its adapter, call by call, as Markdown (issue 37).

For each system of docs/adapters.md: a new git repository set up as the guide says (its
`mem init`), the system's example usage run a statement at a time through the adapter's
Python API (tests/adapter_examples.py: the calls its adapter test plays), each statement
as written and what it returned or bound; then what `mem` shows of what was written, and
a line `N calls, M failed` (a call: one statement of the example). The clock is fixed
(MEM_NOW, moved where the example moves it) and git's author and dates are pinned, so two
runs print the same text.

    python scripts/adapter_transcripts.py [--system NAME]

Exits 1 when a call raised (the transcript says which and what), 2 on an unknown system.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this tree's package, and the examples its tests play

NOW = "2026-11-22T10:00:00Z"
LINE = 160  # a result longer than this, as one line of JSON, is shown an item (or key) a line
WIDTH = 400  # a line longer than this is cut
TEXT = 240  # a string longer than this is cut
ITEMS = 4  # a list of more items, longer than LINE as JSON, shows its first ITEMS


def shortened(value: Any) -> Any:
    """`value` as JSON-able data, long strings and lists cut (the cut said so)."""
    if callable(value):
        return f"<function {getattr(value, '__name__', type(value).__name__)}>"
    if isinstance(value, str):
        return value if len(value) <= TEXT else value[: TEXT - 1] + f"… ({len(value)} characters)"
    if isinstance(value, dict):
        return {str(key): shortened(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        every = [shortened(item) for item in value]
        if len(every) <= ITEMS or len(json.dumps(every, ensure_ascii=False)) <= LINE:
            return every  # a short list is shown whole, however many items
        return every[:ITEMS] + [f"… {len(every) - ITEMS} more"]
    if value is None or isinstance(value, bool | int | float):
        return value
    return repr(value)


def cut(line: str) -> str:
    return line if len(line) <= WIDTH else line[:WIDTH] + f" … ({len(line) - WIDTH} more characters)"


def shown(value: Any) -> list[str]:
    """What a call returned, as JSON: one line, or a long list or mapping an item or key a line."""
    data = shortened(value)
    line = json.dumps(data, ensure_ascii=False)
    if len(line) <= LINE or not isinstance(data, list | dict) or not data:
        return [cut(line)]
    if isinstance(data, list):
        inner = [json.dumps(item, ensure_ascii=False) for item in data]
    else:
        inner = [f"{json.dumps(key)}: {json.dumps(item, ensure_ascii=False)}" for key, item in data.items()]
    ends = "[]" if isinstance(data, list) else "{}"
    return [ends[0], *(f"  {cut(item)}{',' if n < len(inner) - 1 else ''}" for n, item in enumerate(inner)), ends[1]]


def pinned_environment(home: Path) -> None:
    """The fixed clock and a git of no one's configuration, as the tests run (tests/conftest.py)."""
    home.mkdir()
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
    for name in ("MEM_CONFIG", "MEM_AGENT", "MEM_PHASE", "MEM_SCOPE"):
        os.environ.pop(name, None)
    os.environ.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
            "GIT_TEMPLATE_DIR": "",
            "GIT_AUTHOR_NAME": "Transcript",
            "GIT_AUTHOR_EMAIL": "transcript@example.invalid",
            "GIT_COMMITTER_NAME": "Transcript",
            "GIT_COMMITTER_EMAIL": "transcript@example.invalid",
            "GIT_AUTHOR_DATE": NOW,
            "GIT_COMMITTER_DATE": NOW,
            "MEM_NOW": NOW,
            "MEM_SESSION_ID": "transcript",
            # a `mem` this script starts runs this tree's package, as the adapters here do
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
    )


def mem(*args: str, cwd: Path, now: str = NOW) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).parent / "mem"), *args]
    env = {**os.environ, "MEM_NOW": now}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def transcript(example: Any, folder: Path) -> tuple[str, int, int]:
    """The Markdown transcript of `example` run in a new repository under `folder`: (text, calls, failed)."""
    from adapter_examples import Session

    from grimoire_cli import Grimoire
    from grimoire_cli.core.clock import iso
    from grimoire_cli.core.runtime import Runtime

    repo, files = folder / "repo", folder / "files"
    repo.mkdir()
    files.mkdir()
    git("init", "-q", cwd=repo)
    setup = mem(*example.init, cwd=repo)
    if setup.returncode != 0:
        raise SystemExit(f"mem {' '.join(example.init)} failed: {setup.stderr}")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "mem init", cwd=repo)
    runtime = Runtime.from_environment()
    session = Session(example, Grimoire.open(repo, runtime=runtime, scope=example.scope), runtime, repo, files)
    opened = f'Grimoire.open(".", scope="{example.scope}")' if example.scope else 'Grimoire.open(".")'
    out = [
        f"## {example.system}",
        "",
        f"In a new git repository: `mem {' '.join(example.init)}`, committed; the adapter over `{opened}`; "
        f"the clock at {NOW}.",
    ]
    calls = failed = 0
    for scene in example.scenes:
        moved = ["everything so far committed (`git add -A && git commit`)"] if scene.commit else []
        moved += [f"the clock moved to {scene.at}"] if scene.at else []
        if moved:
            out += ["", "Then " + ", and ".join(moved) + ":"]
        out += ["", "```python"]
        for number, call in enumerate(session.play(scene)):
            out += [""] if number else []
            out += call.source.splitlines()
            if call.error is None:
                lines = shown(call.value)
                out += [f"# → {lines[0]}", *(f"#   {line}" for line in lines[1:])]
            else:
                out.append(f"# ✗ raised {type(call.error).__name__}: {call.error}")
            calls, failed = calls + 1, failed + (call.error is not None)
        out.append("```")
    scope = ("--scope", example.scope) if example.scope else ()
    now = iso(runtime.now())
    out += ["", f"What `mem` shows of it (at {now}):", "", "```console"]
    for view in (("stats",), ("list",)):
        shown_run = mem(*scope, *view, cwd=repo, now=now)
        out.append("$ " + " ".join(["mem", *scope, *view]))
        out += (shown_run.stdout + shown_run.stderr).rstrip("\n").splitlines()
    out += ["```", "", f"**{example.system}: {calls} call{'s' * (calls != 1)}, {failed} failed**", ""]
    return "\n".join(out), calls, failed


def main(argv: list[str] | None = None) -> int:
    from adapter_examples import EXAMPLES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--system", choices=sorted(EXAMPLES), help="run one system's example usage only")
    args = parser.parse_args(argv)
    chosen = [args.system] if args.system else list(EXAMPLES)
    with tempfile.TemporaryDirectory(prefix="mem-transcripts-") as temporary:
        pinned_environment(Path(temporary) / "home")
        texts, failures = [], 0
        for name in chosen:
            folder = Path(temporary) / name
            folder.mkdir()
            text, _, failed = transcript(EXAMPLES[name], folder)
            texts.append(text)
            failures += failed
    print("# Each memory system's example usage, through its adapter\n")
    print("Made by `make transcripts` (scripts/adapter_transcripts.py); the calls are tests/adapter_examples.py's.\n")
    print("\n".join(texts), end="")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
