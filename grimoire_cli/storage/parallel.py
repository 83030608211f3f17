"""Parsing the files a catalog sync must read, on every core when there is
enough to read (a fresh clone, a deleted cache: megabytes of YAML at once).

Each new file that splits into chunks (see `chunks`) is cut into slices of
whole chunks, and the slices are parsed in forked worker processes. A slice
counts only when the parser finds exactly its chunks' items, starting on
their `-` lines; otherwise, and for a file that does not split or does not
parse, the file is parsed whole here, the way a sequential sync would, so
its items and its error (with file:line) are the ones it always had. Files
come back in the order asked, so rows are numbered as a sequential sync
numbers them.

Processes are forked only from a process with a single thread (forking
copies one thread and whatever locks the others held); elsewhere, and below
`PARALLEL_BYTES`, parsing stays in this process. `MEM_PARSE_WORKERS=N` sets
the number of workers whatever the size (1: never fork).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Iterator, NamedTuple

from ..errors import Damaged
from .catalog.rows import Prepared, prepare, word_counts, word_set
from .chunks import Chunk, Placed, anchor_or_alias, parse_chunked, split
from .emitted import decode
from .yamlio import parse_entries

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


class _Slice(NamedTuple):
    job: int
    chunks: list[Chunk]


# What forked workers read: set before the pool starts, inherited by fork,
# so no file's text is pickled to reach them.
_SLICES: list[list[str]] = []  # each slice's chunks' texts
# What a worker sends back for a slice: its items, the line each starts on
# (relative to the slice's first; None: each on its chunk's first line),
# their rows and their word counts.
_Found = tuple[list, list[int] | None, list[Prepared], dict[str, int]]


def parse_files(jobs: list[Job]) -> Iterator[Parsed | Damaged]:
    """Each job's placed items (or its Damaged), in the order of `jobs`."""
    workers = _workers(sum(len(job.text) for job in jobs if not job.known))
    slices = _slices(jobs, workers) if workers > 1 else []
    if not slices:
        for job in jobs:
            yield _here(job)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _SLICES
    _SLICES = [[chunk.text for chunk in piece.chunks] for piece in slices]
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_ignore_ctrl_c) as pool:
            try:
                futures = [pool.submit(_parse_slice, index, jobs[piece.job].where, jobs[piece.job].archived) for index, piece in enumerate(slices)]
            except Exception:  # no process could be started (limits): every file is parsed here
                futures = []
            by_job: dict[int, list[int]] = {}
            for index, piece in enumerate(slices):
                by_job.setdefault(piece.job, []).append(index)
            try:
                for number, job in enumerate(jobs):
                    yield _gathered(job, [(slices[i].chunks, futures[i] if futures else None) for i in by_job.get(number, [])])
            except BaseException:  # the caller stopped (an error, an interrupt): drop the slices not started
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        _SLICES = []


def _ignore_ctrl_c() -> None:
    """In a worker: Ctrl-C reaches the whole process group, and the main
    process alone answers it (it cancels the slices left and says so once)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _gathered(job: Job, pieces: list[tuple[list[Chunk], Any]]) -> Parsed | Damaged:
    """A job from its slices' results (`pieces`: each slice's chunks and
    future), or parsed here when it has none or one did not fit."""
    placed: list[Placed] = []
    prepared: list[Prepared] = []
    counts: dict[str, int] = {}
    for chunks, future in pieces:
        found = _result(future) if future is not None else None
        if found is None or not _fits(found, chunks):
            return _here(job)
        placed.extend(Placed(item, chunk.span, chunk.digest, chunk.offset) for item, chunk in zip(found[0], chunks))
        prepared.extend(found[2])
        for word, n in found[3].items():
            counts[word] = counts.get(word, 0) + n
    return Parsed(placed, prepared, counts) if pieces else _here(job)


def _result(future) -> _Found | None:
    """A slice's result; None when its worker is gone (killed, out of
    memory, or no process could be started): the file is then parsed here."""
    try:
        return future.result()
    except Exception:  # BrokenProcessPool, OSError from fork: parsing here gives the same answer
        return None


def _here(job: Job) -> Parsed | Damaged:
    try:
        return Parsed(parse_chunked(job.text, job.where, job.known))
    except Damaged as exc:
        return exc


def _parse_slice(index: int, where: str, archived: bool) -> _Found | None:
    """In a worker: the items of one slice, the 0-based line each starts on,
    their catalog rows and word counts (counts cross between processes far
    faster than a set per item); None when the slice does not parse alone
    (the file is then parsed whole). Chunks in the emitter's layout are
    read as such (`emitted`); if one is not, the slice is parsed as YAML."""
    texts = _SLICES[index]
    items = [decode(text) for text in texts]
    starts = None
    if any(item is None for item in items):
        try:
            items, spans = parse_entries("".join(texts), where)
        except Damaged:
            return None
        starts = [start - 1 for start, _ in spans]
    prepared = [prepare(item, archived) for item in items]
    counts = word_counts(word_set(item, row.texts) for item, row in zip(items, prepared))
    return items, starts, prepared, counts


def _fits(found: _Found, chunks: list[Chunk]) -> bool:
    """Whether a slice parsed to exactly its chunks' items, one per chunk."""
    items, starts, _, _ = found
    if starts is None:
        return len(items) == len(chunks)
    base = chunks[0].start
    return len(items) == len(chunks) and all(base + start == chunk.start for start, chunk in zip(starts, chunks))


def _workers(size: int) -> int:
    """How many processes to parse `size` characters of new files with."""
    given = os.environ.get("MEM_PARSE_WORKERS", "").strip()
    if given.isdigit():
        workers = int(given)
    elif size < PARALLEL_BYTES:
        return 1
    else:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if workers < 2 or threading.active_count() > 1 or not hasattr(os, "fork"):
        return 1
    return workers


def _slices(jobs: list[Job], workers: int) -> list[_Slice]:
    """New files that split into chunks, cut into about SLICES_PER_WORKER
    slices per worker of similar size; files left out are parsed here."""
    total = sum(len(job.text) for job in jobs if not job.known)
    target = max(total // (workers * SLICES_PER_WORKER), 1)
    out = []
    for number, job in enumerate(jobs):
        if job.known:
            continue  # a changed file: its unchanged chunks are not parsed at all
        if anchor_or_alias(job.text):
            continue  # anchors tie items together (one repeated is an error only the whole parse sees)
        _, chunks = split(job.text)
        if not chunks:
            continue
        piece: list[Chunk] = []
        size = 0
        for chunk in chunks:
            piece.append(chunk)
            size += len(chunk.text)
            if size >= target:
                out.append(_Slice(number, piece))
                piece, size = [], 0
        if piece:
            out.append(_Slice(number, piece))
    return out
