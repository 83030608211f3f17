"""The journal's protocol, step by step, on real files (storage/journal.py):
what mutants of it changed and no test noticed (`make mutation`,
benchmarks/mutation.md). The crash-injection tests run the same writes in
`mem` processes, which import the unmutated package."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from grimoire_cli.core import faults
from grimoire_cli.core.errors import LockTimeout
from grimoire_cli.storage import journal


def temps(folder: Path) -> list[Path]:
    return sorted(folder.glob(f".*{journal.TMP_SUFFIX}"))


def umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


@pytest.fixture
def layout(tmp_path):
    """A cache folder and a memory folder holding one file (mode 0640)."""
    cache, memory = tmp_path / "cache", tmp_path / "memory"
    memory.mkdir()
    old = memory / "facts.yaml"
    old.write_text("old facts\n")
    old.chmod(0o640)
    return cache, memory


def test_a_multi_file_write_lands_every_file_with_its_mode_and_leaves_nothing_behind(layout):
    cache, memory = layout
    journal.cache_folder(cache)
    journal.replace_all(
        cache, {memory / "facts.yaml": b"new facts\n", memory / "sub" / "deeper" / "new.yaml": b"a new file\n"}
    )
    assert (memory / "facts.yaml").read_bytes() == b"new facts\n"
    assert (memory / "sub" / "deeper" / "new.yaml").read_bytes() == b"a new file\n"
    assert (memory / "facts.yaml").stat().st_mode & 0o777 == 0o640
    assert (memory / "sub" / "deeper" / "new.yaml").stat().st_mode & 0o777 == 0o666 & ~umask()
    assert temps(memory) == temps(memory / "sub" / "deeper") == []
    assert not (cache / journal.JOURNAL).exists() and not (cache / "journal.tmp").exists()
    assert not journal.pending(cache)


def test_a_temp_file_is_named_to_be_found_and_swept(layout):
    _cache, memory = layout
    made = Path(journal._temp_copy(memory / "facts.yaml", b"x"))
    assert made.parent == memory and made.name.startswith(".facts.yaml.") and made.name.endswith(".mem-tmp")
    assert made.read_bytes() == b"x" and made.stat().st_mode & 0o777 == 0o640


def test_a_temp_file_that_cannot_be_written_is_removed(layout):
    _, memory = layout
    with pytest.raises(TypeError):
        journal._temp_copy(memory / "facts.yaml", "text, not bytes")  # type: ignore[arg-type]
    assert temps(memory) == []


def _crash_at(step: str, write) -> None:
    """Run `write` in a forked child armed to crash at `step`; the child must crash there."""
    child = os.fork()
    if child == 0:  # pragma: no cover - the child ends with os._exit either way
        faults.arm((step, 1))
        write()
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == faults.CRASHED, step


@pytest.mark.parametrize(
    ("step", "committed"),
    [
        ("journal.temp", False),
        ("journal.written", False),
        ("journal.committed", True),
        ("journal.renamed", True),
        ("journal.landed", True),
    ],
)
def test_a_multi_file_write_crashed_at_each_step_recovers_to_the_old_or_the_new_files(layout, step, committed):
    cache, memory = layout
    (memory / "decisions.yaml").write_text("old decisions\n")
    journal.cache_folder(cache)
    new = {memory / "facts.yaml": b"new facts\n", memory / "decisions.yaml": b"new decisions\n"}
    _crash_at(step, lambda: journal.replace_all(cache, new))
    assert journal.pending(cache) is committed
    journal.recover(cache, [memory])
    expected = ["new facts\n", "new decisions\n"] if committed else ["old facts\n", "old decisions\n"]
    assert [(memory / name).read_text() for name in ("facts.yaml", "decisions.yaml")] == expected
    assert temps(memory) == [] and not journal.pending(cache)
    assert sorted(path.name for path in memory.iterdir()) == ["decisions.yaml", "facts.yaml"]


def test_a_write_that_fails_before_the_commit_point_changes_nothing_and_leaves_no_temp(layout):
    cache, memory = layout
    (memory / "blocker").write_text("a file where a folder is needed")
    with pytest.raises(OSError):
        journal.replace_all(cache, {memory / "facts.yaml": b"new\n", memory / "blocker" / "x.yaml": b"new\n"})
    assert (memory / "facts.yaml").read_text() == "old facts\n"
    assert temps(memory) == []
    assert not journal.pending(cache)


def test_a_single_file_whose_rename_fails_leaves_no_temp(layout):
    _cache, memory = layout
    (memory / "a-folder").mkdir()
    with pytest.raises(OSError):
        journal.write_atomic(memory / "a-folder", b"new\n")
    assert temps(memory) == []


def _committed(cache: Path, memory: Path) -> list[Path]:
    """What a writer that crashed after its commit point, one rename done, leaves."""
    journal.cache_folder(cache)
    first, second = memory / "facts.yaml", memory / "decisions.yaml"
    second.write_text("old decisions\n")
    renamed = memory / ".facts.yaml.1.mem-tmp"
    pending = memory / ".decisions.yaml.2.mem-tmp"
    pending.write_text("new decisions\n")
    first.write_text("new facts\n")  # its temp already renamed over it
    (cache / journal.JOURNAL).write_text(json.dumps([[str(renamed), str(first)], [str(pending), str(second)]]))
    return [first, second]


def test_recovery_finishes_a_committed_write_and_sweeps_what_is_left(layout):
    cache, memory = layout
    first, second = _committed(cache, memory)
    stray = memory / ".other.yaml.3.mem-tmp"  # a temp of a write that never committed
    stray.write_text("never committed\n")
    (cache / "journal.tmp").write_text("[")  # a journal never put in place
    assert journal.pending(cache)
    journal.recover(cache, [memory, memory, cache / "gone"])
    assert (first.read_text(), second.read_text()) == ("new facts\n", "new decisions\n")
    assert temps(memory) == []
    assert not journal.pending(cache) and not (cache / "journal.tmp").exists()


def test_recovery_reaches_its_crash_point_after_each_rename(layout):
    """Crash injection's `recover.renamed` (the crash tests arm it in `mem`
    processes): armed in a forked child, recovery ends there, the journal kept."""
    cache, memory = layout
    _committed(cache, memory)
    child = os.fork()
    if child == 0:  # pragma: no cover - the child ends with os._exit either way
        faults.arm(("recover.renamed", 1))
        journal.recover(cache, [memory])
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == faults.CRASHED
    assert journal.pending(cache) and (memory / "decisions.yaml").read_text() == "new decisions\n"


def test_a_single_file_write_reaches_its_crash_point_with_the_temp_file_written(layout):
    _cache, memory = layout
    child = os.fork()
    if child == 0:  # pragma: no cover - the child ends with os._exit either way
        faults.arm(("atomic.temp", 1))
        journal.write_atomic(memory / "facts.yaml", b"new facts\n")
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == faults.CRASHED
    assert (memory / "facts.yaml").read_text() == "old facts\n"
    assert [path.read_text() for path in temps(memory)] == ["new facts\n"]


def test_a_torn_journal_is_no_commit_point(layout):
    cache, memory = layout
    _first, second = _committed(cache, memory)
    (cache / journal.JOURNAL).write_text('[["half')
    journal.recover(cache, [memory])
    assert second.read_text() == "old decisions\n"
    assert temps(memory) == [] and not journal.pending(cache)


def test_the_lock_is_waited_for_until_the_timeout_and_then_refused(layout):
    cache, _ = layout
    with journal.locked(cache, 5):
        began = time.monotonic()
        with pytest.raises(LockTimeout) as refused, journal.locked(cache, 1):
            pass
        waited = time.monotonic() - began
    assert 1 <= waited < 3
    assert refused.value.message == "another mem process has held the grimoire lock for 1s"
    assert refused.value.hint == "retry, or look for a stuck mem process"


def test_a_lock_released_while_waiting_is_taken(layout):
    cache, _ = layout
    holder = journal.locked(cache, 5)
    holder.__enter__()
    threading.Timer(0.3, holder.__exit__, (None, None, None)).start()
    began = time.monotonic()
    with journal.locked(cache, 5):
        assert time.monotonic() - began >= 0.25


def test_the_cache_folder_ignores_itself_and_keeps_an_edited_ignore_file(tmp_path):
    cache = journal.cache_folder(tmp_path / "a" / "cache")
    assert (cache / ".gitignore").read_text() == "# derived cache of mem: never commit\n*\n"
    (cache / ".gitignore").write_text("*\nmine\n")
    journal.cache_folder(cache)
    assert (cache / ".gitignore").read_text() == "*\nmine\n"


def test_a_kept_value_is_read_back_and_an_unreadable_one_is_none(tmp_path):
    cache = tmp_path / "cache"
    assert journal.keep(cache, "last.json", {"at": 1, "hot": [2, 3]}) is True
    assert json.loads((cache / "last.json").read_text()) == {"at": 1, "hot": [2, 3]}
    assert journal.kept(cache, "last.json") == {"at": 1, "hot": [2, 3]}
    assert journal.kept(cache, "missing.json") is None
    (cache / "torn.json").write_text("{")
    assert journal.kept(cache, "torn.json") is None
    (cache / "folder.json").mkdir()
    assert journal.keep(cache, "folder.json", 1) is False
