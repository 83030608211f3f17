"""A grimoire file's bytes as the store reads them: from inside the
repository only, with the stamp of what was read, as UTF-8 text within a
size limit; and what a sync knows of a file it must parse again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from ..core.config import is_inside
from ..core.errors import Damaged
from .layout import Stamp

# Bigger files are reported, not parsed: mem never writes one, and parsing
# one would take tens of seconds and gigabytes.
MAX_FILE_BYTES = 32 * 1024 * 1024


class GrimoireFile(NamedTuple):
    """One configured grimoire file (it may not exist yet)."""

    category: str
    path: Path
    rel: str  # relative to the repository root: the catalog's name for it
    archived: bool


class Reread(NamedTuple):
    """A file whose bytes differ from what its catalog rows describe."""

    file: GrimoireFile
    stamp: Stamp
    digest: str
    text: str
    known: dict[bytes, int]  # its chunk hashes the catalog holds rows for
    had_rows: bool


def decode(rel: str, data: bytes) -> str:
    """The text of a grimoire file, or Damaged naming the first bad line (or its size)."""
    if len(data) > MAX_FILE_BYTES:
        raise Damaged(
            rel,
            1,
            f"file is {len(data) / 2**20:.0f} MB, over the {MAX_FILE_BYTES // 2**20} MB limit",
            "split or trim it; mem never writes a file this large",
            "too-large",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise Damaged(rel, line, "not UTF-8 text", "re-save the file as UTF-8", "encoding") from None


def check_inside(root: Path, path: Path, rel: str) -> None:
    """Damaged when `path` resolves outside the repository (a symlink out)."""
    real = path.resolve()
    if not is_inside(root, real):
        raise Damaged(
            rel,
            None,
            f"resolves outside the repository ({real})",
            "replace the symlink with a regular file",
            "outside-repository",
        )


def unwritable(exc: OSError, folder: str) -> Damaged:
    """A write the system refused in `folder` (permissions, a full disk), as one error line."""
    return Damaged(
        folder,
        None,
        f"cannot write: {exc.strerror or exc}",
        "check the permissions of the grimoire's folders and the free space",
        "unwritable",
    )


def read_stamped(path: Path, rel: str) -> tuple[bytes, Stamp | None]:
    """A file's bytes and the stamp of what was read (None: no such file)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(), Stamp.of(os.fstat(handle.fileno()))
    except FileNotFoundError:
        return b"", None
    except OSError as exc:
        raise Damaged(rel, 1, f"cannot read: {exc.strerror}", "check the file's permissions", "unreadable") from None
