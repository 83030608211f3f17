"""Safe writes: the grimoire lock, atomic replace, and the journal that makes
a write to several files land all or not at all.

A command's writes to several files (an import, a supersede, an archive)
must land together. Each new file text goes to a temp file beside its
target; then a journal naming every (temp, target) pair is written
atomically: that is the commit point. Then each temp replaces its target
and the journal is removed. A crash before the journal exists leaves only
temp files, which the next writer deletes; a crash after it is rolled
forward by the next writer (or reader). One file alone needs no journal:
its rename is atomic by itself.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..core.errors import LockTimeout
from ..core.faults import reached

JOURNAL = "journal.json"
LOCK_FILE = "write.lock"
TMP_SUFFIX = ".mem-tmp"
CACHE_IGNORE = "# derived cache of mem: never commit\n*\n"


def cache_folder(folder: Path) -> Path:
    """The cache folder (catalog, lock, journal), created with a `.gitignore`
    that keeps all of it out of git."""
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text(CACHE_IGNORE)
    return folder


@contextmanager
def locked(cache: Path, timeout: float) -> Iterator[None]:
    """An exclusive `flock` on the grimoire, waiting up to `timeout` seconds (MEM_LOCK_TIMEOUT)."""
    import fcntl

    handle = open(cache_folder(cache) / LOCK_FILE, "a+")
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockTimeout(
                        f"another mem process has held the grimoire lock for {timeout:.0f}s",
                        "retry, or look for a stuck mem process",
                    ) from None
                time.sleep(0.01)
        yield
    finally:
        handle.close()


def pending(cache: Path) -> bool:
    """Whether a crashed writer left a journal (readers then recover first)."""
    return (cache / JOURNAL).exists()


def recover(cache: Path, folders: Iterable[Path]) -> None:
    """Finish a commit a crashed process left half done; drop temp files of
    unfinished ones. Call with the lock held."""
    journal = cache / JOURNAL
    try:
        pairs = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        pairs = None
    except (OSError, ValueError):
        pairs = None  # a torn journal was never complete: the commit point was not reached
        journal.unlink(missing_ok=True)
    if pairs:
        for tmp, target in pairs:
            if os.path.exists(tmp):
                os.replace(tmp, target)
                fsync_dir(Path(target).parent)
                reached("recover.renamed")
        journal.unlink(missing_ok=True)
    journal.with_suffix(".tmp").unlink(missing_ok=True)  # a journal never put in place: no commit point
    for folder in set(folders):
        if folder.is_dir():
            for stray in folder.glob(f".*{TMP_SUFFIX}"):
                stray.unlink(missing_ok=True)


def kept(cache: Path, name: str) -> Any | None:
    """A JSON value `keep` left in the cache; None when there is none or it
    cannot be read (bookkeeping only: its reader starts afresh)."""
    try:
        return json.loads((cache / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def keep(cache: Path, name: str, value: Any) -> bool:
    """Keep a JSON value in the cache for the next command, best effort; whether it was kept."""
    try:
        write_atomic(cache_folder(cache) / name, json.dumps(value).encode("utf-8"))
        return True
    except OSError:
        return False


def write_atomic(path: Path, data: bytes) -> None:
    """One file on its own: temp, fsync, rename."""
    tmp = _temp_copy(path, data)
    reached("atomic.temp")
    try:
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def replace_all(cache: Path, files: dict[Path, bytes]) -> None:
    """Every file's new bytes, landing together (one file: a plain atomic write)."""
    if len(files) == 1:
        ((path, data),) = files.items()
        write_atomic(path, data)
        return
    temps: list[tuple[str, Path]] = []
    journal = cache / JOURNAL
    try:
        for path, data in files.items():
            temps.append((_temp_copy(path, data), path))
            reached("journal.temp")
        with open(journal.with_suffix(".tmp"), "w", encoding="utf-8") as handle:
            handle.write(json.dumps([[tmp, str(path)] for tmp, path in temps]))
            handle.flush()
            os.fsync(handle.fileno())
        reached("journal.written")
        os.replace(journal.with_suffix(".tmp"), journal)
        fsync_dir(journal.parent)
        reached("journal.committed")
    except BaseException:
        for tmp, _ in temps:
            Path(tmp).unlink(missing_ok=True)
        raise
    for tmp, path in temps:
        os.replace(tmp, path)
        reached("journal.renamed")
    for folder in {path.parent for _, path in temps}:
        fsync_dir(folder)
    reached("journal.landed")
    journal.unlink(missing_ok=True)


def _temp_copy(path: Path, data: bytes) -> str:
    """`data` in a fsynced temp file beside `path`, with the mode `path` has (or would get)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()  # what open() would have given a new file
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
