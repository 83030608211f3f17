"""Parsing the files a catalog sync must read, on every core when there is
enough to read (a fresh clone, a deleted cache: megabytes of YAML at once).

Each new file whose lines at column 0 are only items' `-`, comments and
blank lines (see `chunks`) is cut into slices of whole items, and forked
worker processes make each slice's chunks (hashes, spans, byte offsets),
read them (`emitted`, or the YAML parser) and compute their catalog rows.
A slice counts only when it reads as exactly its chunks' items, starting
on their `-` lines, with no anchor or alias (they tie items together) and
no line break but `\n`; otherwise, and for a file that does not split or
does not parse, the file is parsed whole here, the way a sequential sync
would, so its items and its error (with file:line) are the ones it always
had. Files come back in the order asked, so rows are numbered as a
sequential sync numbers them.

Processes are forked only from a process with a single thread (forking
copies one thread and whatever locks the others held); elsewhere, and below
`PARALLEL_BYTES`, parsing stays in this process. `MEM_PARSE_WORKERS=N` sets
the number of workers whatever the size (1: never fork).

A cold `mem validate` cuts and reads files the same way (`cut`,
`read_slice`) in the same kind of pool (`forked_pool`), to check their
entries (`validate_files`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core.errors import Damaged
from .catalog.rows import Prepared, prepare, word_counts, word_set
from .chunks import (
    OTHER_BREAKS,
    Chunk,
    Placed,
    anchor_or_alias,
    chunk_text,
    item_starts,
    make_chunks,
    parse_chunked,
    preamble_ok,
)
from .emitted import decode
from .yamlio import parse_entries

if TYPE_CHECKING:
    from concurrent.futures import Future

PARALLEL_BYTES = 1 << 20  # less text parses faster than worker processes start
SLICES_PER_WORKER = 16  # smaller slices even out the workers' shares


class Job(NamedTuple):
    """One file to parse: its path (for messages), text, the chunk hashes
    the catalog holds rows for (see `chunks.parse_chunked`), and whether it
    is an archive file (a row says so)."""

    where: str
    text: str
    known: dict[bytes, int]
    archived: bool = False


class Parsed(NamedTuple):
    """A file's items, placed, and when workers parsed it, their catalog rows
    and word counts (`catalog.rows.prepare`, `word_counts`)."""

    placed: list[Placed]
    prepared: list[Prepared] | None = None
    counts: dict[str, int] | None = None


class Slice(NamedTuple):
    """A run of whole items of a job's file, from the `-` line numbered
    `first` (0-based) to the next slice's: its text, the item starts in it
    (0-based, relative to `first`) and the byte offset of its first line."""

    job: int
    first: int
    text: str
    starts: list[int]
    offset: int


class _Found(NamedTuple):
    """What a worker sends back for a slice: its items placed (spans relative
    to the slice's first line, offsets in the file), their rows and word counts."""

    placed: list[Placed]
    prepared: list[Prepared]
    counts: dict[str, int]


# What forked workers read: set before the pool starts, inherited by fork,
# so no file's text is pickled to reach them.
_SLICES: list[Slice] = []


def parse_files(jobs: list[Job], given: int | None = None) -> Iterator[Parsed | Damaged]:
    """Each job's placed items (or its Damaged), in the order of `jobs`;
    `given`: the processes asked for (MEM_PARSE_WORKERS), else by size."""
    workers = workers_for(sum(len(job.text) for job in jobs if not job.known), given)
    slices = cut(jobs, workers) if workers > 1 else []
    if not slices:
        for job in jobs:
            yield _here(job)
        return
    global _SLICES
    _SLICES = slices
    try:
        with forked_pool(workers) as pool:
            try:
                futures = [
                    pool.submit(_parse_slice, index, jobs[piece.job].where, jobs[piece.job].archived)
                    for index, piece in enumerate(slices)
                ]
            except Exception:  # no process could be started (limits): every file is parsed here
                futures = []
            by_job: dict[int, list[int]] = {}
            for index, piece in enumerate(slices):
                by_job.setdefault(piece.job, []).append(index)
            for number, job in enumerate(jobs):
                yield _gathered(job, [(slices[i], futures[i] if futures else None) for i in by_job.get(number, [])])
    finally:
        _SLICES = []


@contextmanager
def forked_pool(workers: int) -> Iterator[Any]:
    """A pool of `workers` forked processes that leave Ctrl-C to this one.
    A caller that stops mid-way (an error, an interrupt) cancels the tasks
    not started, rather than waiting for every one of them to run."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=ignore_ctrl_c
    ) as pool:
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def ignore_ctrl_c() -> None:
    """In a worker: Ctrl-C reaches the whole process group, and the main
    process alone answers it (it cancels the slices left and says so once)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _gathered(job: Job, pieces: list[tuple[Slice, Future[Any] | None]]) -> Parsed | Damaged:
    """A job from its slices' results (`pieces`: each slice and its future),
    or parsed here when it has none or one did not read as its chunks."""
    placed: list[Placed] = []
    prepared: list[Prepared] = []
    counts: dict[str, int] = {}
    for piece, future in pieces:
        found = result_or_none(future) if future is not None else None
        if found is None:
            return _here(job)
        placed.extend(
            Placed(item, (start + piece.first, stop + piece.first), digest, offset)
            for item, (start, stop), digest, offset in found.placed
        )
        prepared.extend(found.prepared)
        for word, n in found.counts.items():
            counts[word] = counts.get(word, 0) + n
    return Parsed(placed, prepared, counts) if pieces else _here(job)


def result_or_none(future: Future[Any]) -> Any:
    """A task's result; None when its worker is gone (killed, out of memory,
    or no process could be started): the caller then does the work itself."""
    try:
        return future.result()
    except Exception:  # BrokenProcessPool, OSError from fork: doing it here gives the same answer
        return None


def _here(job: Job) -> Parsed | Damaged:
    try:
        return Parsed(parse_chunked(job.text, job.where, job.known))
    except Damaged as exc:
        return exc


def _parse_slice(index: int, where: str, archived: bool) -> _Found | None:
    """In a worker: the items of one slice, placed, with their catalog rows
    and word counts (counts cross between processes far faster than a set
    per item); None when the slice does not read as its chunks (the file is
    then parsed whole here)."""
    found = read_slice(_SLICES[index], where)
    if found is None:
        return None
    chunks, items = found
    prepared = [prepare(item, archived) for item in items]
    counts = word_counts(word_set(item, row.texts) for item, row in zip(items, prepared))
    return _Found(
        [Placed(item, chunk.span, chunk.digest, chunk.offset) for item, chunk in zip(items, chunks)], prepared, counts
    )


def read_slice(piece: Slice, where: str) -> tuple[list[Chunk], list[Any]] | None:
    """A slice's chunks (spans relative to its first line) and their items,
    or None when it does not read as exactly those chunks' items. Chunks in
    the emitter's layout are read as such (`emitted`); if one is not, the
    slice is parsed as YAML."""
    if OTHER_BREAKS.search(piece.text):
        return None
    chunks = make_chunks(piece.text.split("\n"), piece.starts, piece.offset)
    items = [decode(chunk.text) for chunk in chunks]
    if any(item is None for item in items):
        if any(item is None and anchor_or_alias(chunk.text) for item, chunk in zip(items, chunks)):
            return None  # anchors tie items together (one repeated is an error only the whole parse sees)
        try:
            items, spans = parse_entries(piece.text, where)
        except Damaged:
            return None
        if [start - 1 for start, _ in spans] != piece.starts:
            return None
    return chunks, items


def workers_for(size: int, given: int | None = None) -> int:
    """How many processes to parse `size` characters of new files with
    (`given`: the number asked for, MEM_PARSE_WORKERS)."""
    if given is not None:
        workers = given
    elif size < PARALLEL_BYTES:
        return 1
    else:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if workers < 2 or threading.active_count() > 1 or not hasattr(os, "fork"):
        return 1
    return workers


def cut(jobs: list[Job], workers: int) -> list[Slice]:
    """New files that split into items, cut into about SLICES_PER_WORKER
    slices per worker of similar size; files left out are parsed here.
    Only the lines are looked at here: the workers make the chunks."""
    total = sum(len(job.text) for job in jobs if not job.known)
    target = max(total // (workers * SLICES_PER_WORKER), 1)
    out = []
    for number, job in enumerate(jobs):
        if job.known:
            continue  # a changed file: its unchanged chunks are not parsed at all
        lines = job.text.split("\n")
        starts = item_starts(lines)
        if not starts or not preamble_ok(lines, starts[0]):
            continue
        offset = len(chunk_text(lines, 0, starts[0]).encode("utf-8", "surrogatepass"))
        bounds = starts + [len(lines)]
        first = 0  # index into starts of the slice being gathered
        size = 0
        for index in range(len(starts)):
            size += sum(map(len, lines[bounds[index] : bounds[index + 1]])) + bounds[index + 1] - bounds[index]
            if size >= target or index + 1 == len(starts):
                begin, end = bounds[first], bounds[index + 1]
                text = chunk_text(lines, begin, end)
                out.append(Slice(number, begin, text, [start - begin for start in starts[first : index + 1]], offset))
                offset += len(text.encode("utf-8", "surrogatepass"))
                first, size = index + 1, 0
    return out
