"""Ids purged from the archive (`mem archive --purge`, lifecycle/purging.py):
never issued again.

A purged entry is gone from every file, so numbering, which reads the ids
in use from the files, could hand its id out again: to an import that
names it, to a fresh clone numbering an old day, to a renumbered local
entry. People may cite it in commits and pull requests, so each purged id
is kept in `<archive_dir>/purged-ids.txt`, one `<id> <purged at>` a line
under a header comment, tracked and committed with the purge itself, and
numbering counts those ids as in use (memory/adding.py, memory/local_ids.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..core.model import parse_id

FILE = "purged-ids.txt"
HEADER = "# Ids purged from the archive by `mem archive --purge`: never issued again. One id a line.\n"


def read(archive_dir: Path) -> set[str]:
    """The purged ids of one grimoire (none when the file is missing or unreadable)."""
    try:
        text = (archive_dir / FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return {
        word for word in (line.split(maxsplit=1)[0] for line in text.splitlines() if line.strip()) if parse_id(word)
    }


def of_day(archive_dir: Path, day: str) -> set[str]:
    """The purged ids of one day (`YYYYMMDD`)."""
    return {entry_id for entry_id in read(archive_dir) if entry_id.startswith(f"MEM-{day}-")}


def added(text: str | None, ids: Iterable[str], when: str) -> str:
    """The file's text (None: a new file) with these ids appended, each with the time of its purge."""
    base = text or HEADER
    if not base.endswith("\n"):
        base += "\n"
    return base + "".join(f"{entry_id} {when}\n" for entry_id in ids)
