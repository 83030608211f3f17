"""Where entries sit in a file, and what a text edit changed: the data the
catalog hands to text edits and text edits hand back to the catalog.

Plain data, importable without SQLite or YAML (the merge driver uses
`textedit` with layouts it parsed itself).
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple


class Stamp(NamedTuple):
    """What `stat` says of a file; equal stamps mean the file was not rewritten.

    The change time is in it because nothing but the kernel sets it: an edit
    in place of the same size, its mtime set back (`os.utime`, `touch -r`),
    keeps size, mtime and inode, and still moves the change time."""

    size: int
    mtime_ns: int
    ino: int
    ctime_ns: int

    @classmethod
    def of(cls, stat: os.stat_result) -> Stamp:
        return cls(stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)


class Layout(NamedTuple):
    """Where each item of one file sits, in file order. Columns rather than
    rows: a file can hold tens of thousands of entries, and an edit reads
    them all."""

    ids: list[str | None]
    spans: list[tuple[int, int]]  # 1-based inclusive lines of the item's text
    offsets: list[int | None]  # the byte where the item's chunk starts; None when not known


class Appended(NamedTuple):
    """An entry a write added at the end of a file."""

    item: dict[str, Any]
    span: tuple[int, int]
    offset: int


class FileChange(NamedTuple):
    """What one write did to a file, by item position, so the catalog can
    follow without parsing it again."""

    changed: dict[int, Any]  # position -> new data
    removed: list[int]  # positions gone
    spans: list[tuple[int, int]]  # the new span of every remaining item, in order
    offsets: list[int | None]  # and its new byte offset
    appended: list[Appended]
    chunks: dict[int, bytes]  # new position -> new chunk hash, for items whose chunk text changed
