"""Checking grimoire files entry by entry, for `mem validate`: one file
(`compute`), or many on every core (`compute_all`).

A file's result is a plain dict (it crosses between processes and is kept
in the catalog): its problems as `validate.Problem` fields, whether it is
damaged (unreadable as a grimoire: exit 3), its entry count, the link
records the cross-file rules read, and each chunk's result by chunk hash,
kept for the next validation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core.config import Config, is_inside
from ..core.errors import Damaged
from ..storage.chunks import KNOWN, Placed, parse_reusing
from ..storage.store import Store
from ..storage.yamlio import ENTRY_ID_LINE

if TYPE_CHECKING:
    from ..storage.parallel import Slice


def _classify(config: Config, path: Path) -> tuple[str | None, bool]:
    """(category, is_archive) of a grimoire file from its name and folder."""
    archived = (
        path.parent.resolve() in (config.archive_dir, config.local_dir / "archive") or path.parent.name == "archive"
    )
    category = config.category_for_file(path.name)
    return (category.name if category else None), archived


class FileToCheck(NamedTuple):
    """A file to check: its path, the path shown, its bytes (None when it
    could not be read) and the results kept from its last validation, by
    chunk hash (chunks.py), for the entries whose text is unchanged."""

    path: Path
    rel: str
    data: bytes | None
    known: dict[bytes, Any]


class _Work(NamedTuple):
    """What forked workers check: set before the pool starts, inherited by
    fork, so no file is pickled to reach them."""

    store: Store
    files: list[FileToCheck]
    sliced: list[int]  # the file each job of `slices` was cut from
    slices: list[Slice]


_WORK: _Work | None = None


def compute_all(store: Store, files: list[FileToCheck]) -> list[dict[str, Any]]:
    """Each file's result (`compute`). A cold validation is CPU-bound (YAML,
    schema, guard), so with enough new text it runs on every core: files
    that split into items are cut into slices of whole items (as a catalog
    sync cuts them, `storage.parallel`), so a few big files keep every core
    busy to the end; the rest are checked whole, each in one worker."""
    from ..storage import parallel

    # Only what must be checked again counts towards going parallel.
    workers = parallel.workers_for(
        sum(len(file.data or b"") for file in files if not file.known), store.runtime.parse_workers
    )
    if workers < 2:
        return [compute(store.config, store, *file) for file in files]
    early: dict[int, dict[str, Any]] = {}  # files that cannot be read, with their problem
    jobs: list[parallel.Job] = []
    numbers: list[int] = []  # the file of each job
    for index, file in enumerate(files):
        if file.known:
            continue  # a changed file: its unchanged entries are not checked at all
        result = _empty()
        text = _read_text(store, file.path, file.rel, file.data, result)
        if text is None:
            early[index] = result
        else:
            jobs.append(parallel.Job(file.rel, text, {}))
            numbers.append(index)
    slices = parallel.cut(jobs, workers)
    parts_of: dict[int, list[int]] = {}  # file -> its slices
    for number, piece in enumerate(slices):
        parts_of.setdefault(numbers[piece.job], []).append(number)
    whole = sorted(
        (i for i in range(len(files)) if i not in parts_of and i not in early), key=lambda i: -len(files[i].data or b"")
    )

    global _WORK
    _WORK = _Work(store, files, numbers, slices)  # the catalog is not touched there
    try:
        with parallel.forked_pool(workers) as pool:
            # Whole files first, biggest first, so the last tasks to finish are small slices.
            for_file = {i: pool.submit(_compute_in_worker, i) for i in whole}
            for_slice = [pool.submit(_check_slice, n) for n in range(len(slices))]
            out = []
            for index, file in enumerate(files):
                if index in early:
                    out.append(early[index])
                    continue
                if index in parts_of:
                    parts = [parallel.result_or_none(for_slice[n]) for n in parts_of[index]]
                    done = _joined(store.config, file, parts) if None not in parts else None
                else:
                    done = parallel.result_or_none(for_file[index])
                # A slice that does not read as its items, or a worker gone: checked here, whole.
                out.append(done if done is not None else compute(store.config, store, *file))
            return out
    except (OSError, RuntimeError):  # no processes to be had: do it here
        return [compute(store.config, store, *file) for file in files]
    finally:
        _WORK = None


def _compute_in_worker(index: int) -> dict[str, Any]:
    assert _WORK is not None
    return compute(_WORK.store.config, _WORK.store, *_WORK.files[index])


def _check_slice(index: int) -> dict[str, Any] | None:
    """In a worker: one slice's part of its file's result (lines numbered in
    the file), or None when it does not read as its items."""
    from ..storage.parallel import read_slice

    assert _WORK is not None
    piece = _WORK.slices[index]
    config = _WORK.store.config
    path, rel = _WORK.files[_WORK.sliced[piece.job]][:2]
    found = read_slice(piece, rel)
    if found is None:
        return None
    chunks, items = found
    result = _empty()
    category, archived = _classify(config, path)
    _check_placed(
        config,
        rel,
        category,
        archived,
        piece.text.split("\n"),
        [Placed(item, chunk.span, chunk.digest, chunk.offset) for item, chunk in zip(items, chunks)],
        {},
        result,
        piece.first,
    )
    return result


def _joined(config: Config, file: FileToCheck, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A file's result from its slices' parts, in order."""
    result = _empty()
    for part in parts:
        for name in ("problems", "links", "chunks"):
            result[name].extend(part[name])
        result["entries"] += part["entries"]
    _category_problem(config, file.path, file.rel, result)
    return result


def _empty() -> dict[str, Any]:
    return {"problems": [], "damaged": False, "entries": 0, "links": [], "chunks": []}


def compute(
    config: Config, store: Store, path: Path, rel: str, data: bytes | None, known: dict[bytes, Any]
) -> dict[str, Any]:
    """One file's problems and link records; `known` holds results by chunk
    hash (chunks.py) from its last validation, for the entries whose text is
    unchanged. Also returns every chunk's result, to keep for the next time."""
    result = _empty()
    text = _read_text(store, path, rel, data, result)
    if text is None:
        return result
    category, archived = _classify(config, path)
    try:
        # A kept result serves every chunk with its text.
        lines, placed = parse_reusing(text, rel, (lambda chunk: chunk.digest in known) if known else None)
    except Damaged as exc:
        _file_problem(result, rel, exc.line or 1, "yaml", exc.problem)
        return result
    _check_placed(config, rel, category, archived, lines, placed, known, result)
    _category_problem(config, path, rel, result)
    return result


def _check_placed(
    config: Config,
    rel: str,
    category: str | None,
    archived: bool,
    lines: list[str],
    placed: list[Placed],
    known: dict[bytes, Any],
    result: dict[str, Any],
    base: int = 0,
) -> None:
    """Every rule of one entry for each item placed in `lines` (the file's,
    or a slice's starting `base` lines into it), into `result`."""
    from .entry_rules import check_entry, link_of  # the guard and jsonschema: only for what changed

    kind = config.categories[category].kind if category in config.categories else "note"
    _check_layout(rel, lines, placed, base, result)
    for item, (start, stop), digest, _ in placed:
        if item is KNOWN:
            problems, link = known[digest]
        else:
            block = lines[start - 1 : stop]
            problems = check_entry(config, item, block, archived, category)
            link = link_of(item, block, archived, kind) if isinstance(item, dict) else None
        start += base
        result["problems"].extend(
            {"file": rel, "line": start + offset, "id": entry_id, "rule": rule, "message": message}
            for offset, entry_id, rule, message in problems
        )
        if link is not None:
            result["entries"] += 1
            result["links"].append([rel, start, *link[:7], {name: start + offset for name, offset in link[7].items()}])
        result["chunks"].append((digest, [problems, link]))


def _check_layout(rel: str, lines: list[str], placed: list[Placed], base: int, result: dict[str, Any]) -> None:
    """Writes edit an entry by its lines (storage/textedit.py), so each must start with `- ` at column 0:
    a file a formatter indented (or wrote in flow style) reads fine but cannot be written. Said once, at its first such entry,
    so that a clean validate means the next write works."""
    for _, (start, _stop), _, _ in placed:
        if not (lines[start - 1].startswith("- ") or lines[start - 1].rstrip() == "-"):
            result["problems"].append(
                {
                    "file": rel,
                    "line": base + start,
                    "id": None,
                    "rule": "layout",
                    "message": "entries are not written one per `- ` line at column 0 (an indented list or flow style), "
                    "so mem cannot change them in place; rewrite the file in block style, each entry "
                    "starting with '- id:' at column 0",
                }
            )
            return


def _category_problem(config: Config, path: Path, rel: str, result: dict[str, Any]) -> None:
    if config.category_for_file(path.name) is None:
        result["problems"].append(
            {
                "file": rel,
                "line": 1,
                "id": None,
                "rule": "category-file",
                "message": f"{path.name} is not the storage_file of any configured category",
            }
        )


def _file_problem(
    result: dict[str, Any], rel: str, line: int, rule: str, message: str, entry_id: str | None = None
) -> None:
    """A problem that makes the file unreadable as a grimoire (exit 3)."""
    result["problems"].append({"file": rel, "line": line, "id": entry_id, "rule": rule, "message": message})
    result["damaged"] = True


def _read_text(store: Store, path: Path, rel: str, data: bytes | None, result: dict[str, Any]) -> str | None:
    """The file's text, or None with the problem that keeps it from being read."""
    config = store.config
    try:
        real = path.resolve()
        if path.is_symlink() and not is_inside(config.root, real) and not is_inside(Path.cwd().resolve(), real):
            raise Damaged(
                rel,
                1,
                f"symlink leads outside the repository ({real})",
                "replace it with a regular file",
                "outside-repository",
            )
        if data is None:
            data = path.read_bytes()
    except OSError as exc:
        _file_problem(result, rel, 1, "unreadable", f"cannot read: {exc.strerror}")
        return None
    except Damaged as exc:
        _file_problem(result, rel, exc.line or 1, exc.kind, exc.problem)
        return None
    conflict = re.search(rb"^(<{7}|={7}|>{7})( |$)", data, re.M)
    if conflict:
        line = data[: conflict.start()].count(b"\n") + 1
        named = ENTRY_ID_LINE.search(data[conflict.start() :].decode("utf-8", "replace"))
        _file_problem(
            result,
            rel,
            line,
            "merge-conflict",
            "unresolved merge conflict markers; keep the right version of the entry and remove the markers",
            named.group(1) if named else None,
        )
        return None
    try:
        return store.decode(path, data)
    except Damaged as exc:
        _file_problem(result, rel, exc.line or 1, exc.kind, exc.problem)
        return None
