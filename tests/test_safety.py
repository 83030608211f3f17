"""Crashes, concurrent writers, hostile files: nothing is lost, half-written or executed."""

from __future__ import annotations

import json
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import examples, git, mem, mem_process
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.slow  # an import killed at 30 moments (~50 s) and twenty concurrent writers

MEM = str(Path(sys.executable).parent / "mem")
MEMORY = Path("grimoires/loa/memory")


def _entries(repo: Path) -> dict[str, dict]:
    out = mem_process("export", "--archived", cwd=repo)
    assert out.returncode == 0, out.stderr
    return {item["id"]: item for item in map(json.loads, out.stdout.decode().splitlines())}


def _grimoire_files(folder: Path) -> set[str]:
    """Every file of a grimoire folder (local state included) but its cache."""
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and ".cache" not in p.relative_to(folder).parts
    }


def test_import_killed_at_30_moments_is_all_or_nothing(repo, tmp_path):
    # Some existing entries, and an import touching every category that also
    # supersedes one of them (so an existing file is rewritten, not only appended).
    for i in range(6):
        assert (
            mem("add", "-c", ["fact", "decision", "learning"][i % 3], f"existing memory number {i} about queues").code
            == 0
        )
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "seed", cwd=repo)
    before = _entries(repo)
    target = sorted(before)[0]
    lines = [
        json.dumps(
            {
                "content": f"imported memory {i} about the deploy pipeline step {i * 13}",
                "category": ["fact", "decision", "learning", "error", "preference"][i % 5],
                "tags": [f"batch{i % 7}"],
            }
        )
        for i in range(600)
    ]
    lines.append(json.dumps({"content": "imported memory that replaces an existing one", "supersedes": target}))
    source = tmp_path / "import.jsonl"
    source.write_text("\n".join(lines) + "\n")
    snapshot = tmp_path / "snapshot"
    shutil.copytree(repo / MEMORY, snapshot, ignore=shutil.ignore_patterns(".cache"))

    # Timed twice (the first run may compile bytecode), kills spread over the faster.
    durations = []
    for _ in range(2):
        shutil.rmtree(repo / MEMORY)
        shutil.copytree(snapshot, repo / MEMORY)
        started = time.perf_counter()
        done = mem_process("import", str(source), cwd=repo)
        assert done.returncode == 0, done.stderr
        durations.append(time.perf_counter() - started)
    duration = min(durations)
    full = _entries(repo)
    assert len(full) == len(before) + len(lines)

    # 30 moments from 5% to 200% of the measured duration (a loaded machine
    # runs the killed imports slower than the timed one), in a seeded order.
    rng = random.Random(20261122)
    moments = [duration * (0.05 + 1.95 * i / 29) * rng.uniform(0.95, 1.05) for i in range(30)]
    rng.shuffle(moments)
    outcomes = {"absent": 0, "present": 0}
    for attempt, moment in enumerate(moments):
        shutil.rmtree(repo / MEMORY)
        shutil.copytree(snapshot, repo / MEMORY)
        process = subprocess.Popen(
            [MEM, "import", str(source)], cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(moment)
        process.send_signal(signal.SIGKILL)
        process.wait()
        check = mem_process("validate", cwd=repo)
        assert check.returncode == 0, (attempt, check.stdout, check.stderr)
        now = _entries(repo)
        if len(now) == len(before):
            assert now == before, attempt
            outcomes["absent"] += 1
        else:
            assert set(now) == set(full), (attempt, len(now))
            assert now[target].get("superseded_by"), attempt
            outcomes["present"] += 1
        assert mem_process("add", "-c", "fact", f"after crash {attempt}", cwd=repo).returncode == 0
        # Nothing left beside the grimoire files, whatever its name: a temp file
        # that lost its suffix would not match a `*.mem-tmp` glob.
        assert _grimoire_files(repo / MEMORY) == _grimoire_files(snapshot), attempt
    # The kills landed on both sides of the commit point.
    assert outcomes["absent"] > 0 and outcomes["present"] > 0, outcomes


def test_twenty_processes_mixing_writes_lose_nothing(repo):
    seeds = [
        mem(
            "add", "-c", ["fact", "learning", "decision", "preference"][i % 4], f"seed memory {i} on topic {i * 31}"
        ).out.strip()
        for i in range(24)
    ]
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "seed", cwd=repo)
    commands = []
    for i in range(6):
        commands.append(["add", "-c", "fact", f"concurrent fact {i} about the cache layer"])
    for i in range(5):
        commands.append(["supersede", seeds[i], f"revised seed {i} written concurrently"])
    for i in range(5):  # two processes apply the same entry: both must count
        commands.append(["apply", seeds[10 + i % 3], "--success"])
    for i in range(4):
        commands.append(["archive", seeds[16 + i], "--reason", "manual"])
    assert len(commands) == 20
    procs = [
        subprocess.Popen([MEM, *cmd], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for cmd in commands
    ]
    results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
    assert all(code == 0 for code, _, _ in results), [(c, e) for c, _, e in results if c]
    entries = _entries(repo)
    # Nothing lost, ids unique (export would have repeated an id otherwise).
    assert all(s in entries for s in seeds)
    contents = [e["content"] for e in entries.values()]
    assert len(contents) == len(set(contents))
    for i in range(6):
        assert f"concurrent fact {i} about the cache layer" in contents
    for i in range(5):
        new = entries[seeds[i]]["superseded_by"]
        assert entries[new]["supersedes"] == seeds[i]
        assert entries[new]["content"] == f"revised seed {i} written concurrently"
    applied = {seeds[10]: 2, seeds[11]: 2, seeds[12]: 1}
    for entry_id, count in applied.items():
        assert entries[entry_id]["effectiveness"]["applications"] == count
    for i in range(4):
        assert entries[seeds[16 + i]]["archived"] is True
    assert mem_process("validate", cwd=repo).returncode == 0
    log = git("log", "--format=%s", cwd=repo).splitlines()
    assert sum(1 for subject in log if subject.startswith("mem archive")) == 4
    assert git("status", "--porcelain", "--", str(MEMORY / "archive"), cwd=repo) == ""


def _limited(seconds: int, megabytes: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes * 2**20, megabytes * 2**20))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))

    return apply


def test_a_50_mb_file_is_reported_in_bounded_time_and_memory(repo):
    assert mem("add", "-c", "decision", "We keep decisions in git").code == 0
    entry = "- id: MEM-20260101-{n:03d}\n  category: fact\n  summary: filler\n  content: {pad}\n"
    pad = "x" * 900
    with open(MEMORY / "facts.yaml", "w") as handle:
        for n in range(1, 55_000):
            handle.write(entry.format(n=n, pad=pad))
    assert (MEMORY / "facts.yaml").stat().st_size > 50 * 2**20
    started = time.perf_counter()
    done = subprocess.run(
        [MEM, "validate", "--format", "json"],
        cwd=repo,
        capture_output=True,
        text=True,
        preexec_fn=_limited(60, 1024),
        timeout=120,
    )
    elapsed = time.perf_counter() - started
    assert done.returncode == 3, done.stderr
    problem = json.loads(done.stdout)["problems"][0]
    assert problem["file"].endswith("facts.yaml") and problem["line"] == 1 and problem["rule"] == "too-large"
    assert elapsed < 30
    # Other files keep working.
    assert "keep decisions" in mem("query", "decisions git").out


def test_non_utf8_and_hostile_yaml_are_reported_not_run(repo, tmp_path):
    marker = tmp_path / "executed"
    (MEMORY / "facts.yaml").write_bytes(b"- id: MEM-20260101-001\n  content: caf\xe9\n")
    (MEMORY / "errors.yaml").write_text(f"- !!python/object/apply:os.system ['touch {marker}']\n")
    (MEMORY / "learnings.yaml").write_text(
        "- &a [x, x, x, x, x, x, x, x, x]\n- &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "- &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n- [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    )
    (MEMORY / "preferences.yaml").write_text("- " * 5000 + "deep\n")
    (MEMORY / "decisions.yaml").write_text("id: MEM-20260101-002\ncontent: a mapping, not a list\n")
    done = subprocess.run(
        [MEM, "validate", "--format", "json"],
        cwd=repo,
        capture_output=True,
        text=True,
        preexec_fn=_limited(30, 1024),
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    problems = {Path(p["file"]).name: p for p in json.loads(done.stdout)["problems"]}
    assert problems["facts.yaml"]["rule"] == "encoding" and problems["facts.yaml"]["line"] == 2
    assert set(problems) >= {"facts.yaml", "errors.yaml", "learnings.yaml", "preferences.yaml", "decisions.yaml"}
    assert not marker.exists()


def test_symlinks_leading_outside_are_refused(repo, tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_text("- id: MEM-20260101-001\n  category: fact\n  summary: outside\n  content: outside\n")
    facts = MEMORY / "facts.yaml"
    facts.unlink()
    facts.symlink_to(outside)
    result = mem("validate", "--format", "json")
    assert result.code == 3
    assert json.loads(result.out)["problems"][0]["rule"] == "outside-repository"
    add = mem("add", "-c", "fact", "must not be written through the link")
    assert add.code == 3 and "outside the repository" in add.err
    assert "must not" not in outside.read_text()
    # A symlink that stays inside the repository is fine.
    facts.unlink()
    inside = repo / "facts-real.yaml"
    inside.write_text("")
    facts.symlink_to(inside)
    assert mem("add", "-c", "fact", "written through an inside link").code == 0


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "sk-",
                "AKIA",
                "token",
                ": ",
                "=",
                "@",
                "-",
                "+1 ",
                "(555) ",
                "4111",
                "1111",
                " ",
                "x",
                "ghp_",
                "eyJ",
                "://",
                "user:pw@",
                "0",
                "9",
                "\n",
                "key",
                "AIza",
                "GB82",
                "WEST",
                "_live_",
                "SG.",
            ]
        ),
        max_size=40,
    ).map("".join)
)
def test_guard_gates_never_change_findings(text):
    from grimoire_cli.guard.scan import scan, scan_fields

    assert scan(text) == scan(text, gated=False)
    fields = {"content": text, "summary": text[::-1], "tags": [text[:5]], "source": {"agent": text[3:]}}
    assert scan_fields(fields) == scan_fields(fields, gated=False)


def test_a_half_done_commit_is_finished_before_anything_reads(repo):
    """The states a SIGKILL can leave, made by hand: after the journal, roll forward; before it, roll back."""
    assert mem("add", "-c", "fact", "kept fact about queues").code == 0
    facts = MEMORY / "facts.yaml"
    before = facts.read_text()
    added = before + (
        "- id: MEM-20261122-002\n  category: fact\n  summary: landed by recovery\n  content: landed by recovery\n"
        '  confidence: 0.9\n  ttl: permanent\n  source:\n    session_id: s\n    timestamp: "2026-11-22T10:00:00Z"\n'
    )
    # Killed after the journal: the commit is finished by the next command, even a read.
    tmp = facts.with_name(".facts.yaml.abc123.mem-tmp")
    tmp.write_text(added)
    (MEMORY / ".cache" / "journal.json").write_text(json.dumps([[str(tmp.resolve()), str(facts.resolve())]]))
    assert mem_process("validate", cwd=repo).returncode == 0
    assert facts.read_text() == added and not tmp.exists()
    assert not (MEMORY / ".cache" / "journal.json").exists()
    # Killed before the journal: only a temp file; the next writer drops it.
    stray = facts.with_name(".facts.yaml.def456.mem-tmp")
    stray.write_text("- garbage\n")
    assert mem_process("add", "-c", "fact", "another fact about caches", cwd=repo).returncode == 0
    assert not stray.exists()
    assert "landed by recovery" in facts.read_text() and "- garbage" not in facts.read_text()


def test_a_killed_writers_temp_file_beside_the_issued_ids_is_swept(repo):
    """Found by the 30 kills above under load: a kill while the record of issued ids (storage/issued.py) was being
    replaced left its temp file in local/, which the next writer did not sweep (a grimoire without local categories)."""
    mem("add", "-c", "fact", "the first fact of the day")
    local = repo / MEMORY / "local"
    stray = local / ".issued-ids.json.x1y2z3.mem-tmp"
    stray.write_text('{"20261122": 1')
    assert mem("add", "-c", "fact", "the second fact of the day").code == 0
    assert not stray.exists()
