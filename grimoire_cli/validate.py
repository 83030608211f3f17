"""`mem validate`: every rule a grimoire must keep, each problem with file:line.

The result is one `Report`; the CLI renders it as text, JSON or GitHub
annotations. Parsing problems make the report `damaged` (exit 3); other
problems make it not `ok` (exit 1).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .clock import parse_time
from .config import Config
from .errors import BadInput, Damaged
from .guard import scan_fields
from .model import ID_RE, expires_at, parse_id
from .store import Store


@dataclass
class Problem:
    file: str
    line: int
    id: str | None
    rule: str
    message: str

    def __str__(self) -> str:
        who = f"{self.id}: " if self.id else ""
        return f"{self.file}:{self.line}: [{self.rule}] {who}{self.message}"


@dataclass
class Report:
    files: list[str] = field(default_factory=list)
    entries: int = 0
    problems: list[Problem] = field(default_factory=list)
    damaged: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "files": self.files, "entries": self.entries, "problems": [asdict(p) for p in self.problems]}


@dataclass
class _Item:
    data: dict[str, Any]
    file: str
    line: int
    lines: list[str]  # the entry's text, to find a field's line
    archived: bool
    category: str | None  # the category its file belongs to


def _field_line(item: _Item, name: str) -> int:
    pattern = re.compile(rf"^(?:- |\s+)(?:- )?{re.escape(name)}:")
    for offset, text in enumerate(item.lines):
        if pattern.match(text):
            return item.line + offset
    return item.line


def _classify(config: Config, path: Path) -> tuple[str | None, bool]:
    """(category, is_archive) of a grimoire file from its name and folder."""
    archived = path.parent.resolve() == config.archive_dir or path.parent.name == "archive"
    category = config.category_for_file(path.name)
    return (category.name if category else None), archived


def _default_paths(store: Store) -> list[Path]:
    config = store.config
    found = {path for _, path, _ in store.category_files() if path.exists()}
    for folder in (config.storage_dir, config.archive_dir):
        if folder.is_dir():
            found.update(p for p in folder.glob("*.y*ml") if p.suffix in (".yaml", ".yml"))
    return sorted(found)


def _expand(paths: Iterable[str]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and ".cache" not in p.parts))
        elif path.exists() or path.is_symlink():
            out.append(path)
        else:
            raise BadInput(f"no such file or folder: {raw}", "give grimoire files or folders to validate")
    return out


def validate(store: Store, paths: Iterable[str] | None = None) -> Report:
    """Check the given files (default: the whole grimoire) against every rule.

    Per-file results (problems found inside one file, and the link fields
    of its entries) are kept in the catalog under the file's content hash,
    so only files changed since the last validation are parsed and checked;
    the cross-file rules (unique ids, links, unique keys) always run.
    """
    config = store.config
    report = Report()
    targets = _expand(paths) if paths else _default_paths(store)
    checked: set[Path] = set()
    links: list[_Link] = []
    version = _rules_version(config)
    named = [(path, _display(config, path)) for path in targets]
    for (path, rel), result in zip(named, _file_results(store, named, version)):
        report.files.append(rel)
        checked.add(path.resolve())
        report.problems.extend(Problem(**p) for p in result["problems"])
        report.damaged = report.damaged or result["damaged"]
        report.entries += result["entries"]
        links.extend(_Link(*row) for row in result["links"])
    # Entries of the rest of the grimoire resolve references from the checked files.
    context: list[_Link] = []
    if paths:
        rest = [(path, _display(config, path)) for path in _default_paths(store) if path.resolve() not in checked]
        for result in _file_results(store, rest, version):
            context.extend(_Link(*row) for row in result["links"])
    _check_links(links, context, report)
    report.problems.sort(key=lambda p: (p.file, p.line, p.rule))
    return report


def _rules_version(config: Config) -> str:
    """What a cached file result depends on besides the file: config and rule code."""
    from . import __version__, guard, schemas

    parts = [__version__, repr(sorted((n, c.storage_file, c.confidence_required) for n, c in config.categories.items())),
             str(config.storage_dir), str(config.archive_dir)]
    for source in (Path(__file__), Path(guard.__file__), schemas.schema_dir() / "memory.schema.json"):
        try:
            parts.append(str(source.stat().st_mtime_ns))
        except OSError:
            parts.append("?")
    return "|".join(parts)


def _file_results(store: Store, files: list[tuple[Path, str]], version: str) -> list[dict[str, Any]]:
    """Per file: problems inside it and its link records, from the catalog when unchanged."""
    from .catalog import Stale, content_hash

    out: list[dict[str, Any] | None] = []
    pending: list[tuple[int, Path, str, bytes | None, str | None]] = []
    for index, (path, rel) in enumerate(files):
        try:
            data = path.read_bytes()
        except OSError:
            data = None
        key = f"{version}|{rel}|{path.resolve()}|{content_hash(data)}" if data is not None else None
        cached = None
        if key is not None:
            try:
                cached = store.catalog.report(rel, key)
            except Stale:
                pass
        out.append(cached)
        if cached is None:
            pending.append((index, path, rel, data, key))
    for (index, _, rel, _, key), result in zip(pending, _compute_all(store, [(p, r, d) for _, p, r, d, _ in pending])):
        out[index] = result
        if key is not None:
            store.catalog.keep_report(rel, key, result)
    return out  # type: ignore[return-value]


# Files at least this big in all are checked by two or more processes: a
# cold validation is CPU-bound (YAML, schema, guard), files are independent,
# and the machines this runs on have several cores.
PARALLEL_BYTES = 1 << 20
_WORKER_STORE: Store | None = None


def _compute_all(store: Store, files: list[tuple[Path, str, bytes | None]]) -> list[dict[str, Any]]:
    import os

    size = sum(len(data or b"") for _, _, data in files)
    workers = min(len(files), os.cpu_count() or 1)
    if workers < 2 or size < PARALLEL_BYTES:
        return [_compute(store, *item) for item in files]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _WORKER_STORE
    _WORKER_STORE = store  # forked workers inherit it; the catalog is not touched there
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            # Biggest first, so the last file to finish is a small one.
            order = sorted(range(len(files)), key=lambda i: -len(files[i][2] or b""))
            done = dict(zip(order, pool.map(_compute_in_worker, [files[i] for i in order])))
        return [done[i] for i in range(len(files))]
    except (OSError, RuntimeError):  # no processes to be had: do it here
        return [_compute(store, *item) for item in files]
    finally:
        _WORKER_STORE = None


def _compute_in_worker(item: tuple[Path, str, bytes | None]) -> dict[str, Any]:
    assert _WORKER_STORE is not None
    return _compute(_WORKER_STORE, *item)


def _compute(store: Store, path: Path, rel: str, data: bytes | None) -> dict[str, Any]:
    local = Report()
    items = _read_items(store, path, rel, local, data)
    for item in items:
        _check_entry(store.config, item, local)
    return {
        "problems": [asdict(p) for p in local.problems],
        "damaged": local.damaged,
        "entries": len(items),
        "links": [_link_of(item) for item in items],
    }


@dataclass
class _Link:
    """What the cross-file rules need of one entry."""

    file: str
    line: int
    id: Any
    supersedes: Any
    superseded_by: Any
    related: Any
    key: Any
    archived: bool
    lines: dict[str, int]  # field -> line, for the fields these rules name


def _link_of(item: _Item) -> list[Any]:
    data = item.data
    names = ("supersedes", "superseded_by", "related_memories", "key")
    return [item.file, item.line, data.get("id"), data.get("supersedes"), data.get("superseded_by"),
            data.get("related_memories"), data.get("key"), item.archived, {n: _field_line(item, n) for n in names if n in data}]


def _display(config: Config, path: Path) -> str:
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(config.root))
    except ValueError:
        return str(path)


def _read_items(store: Store, path: Path, rel: str, report: Report, data: bytes | None) -> list[_Item]:
    config = store.config
    category, archived = _classify(config, path)
    try:
        real = path.resolve()
        if path.is_symlink() and config.root not in real.parents and Path.cwd().resolve() not in real.parents:
            raise Damaged(f"{rel}:1: symlink leads outside the repository ({real})", "replace it with a regular file")
        if data is None:
            data = path.read_bytes()
    except OSError as exc:
        report.problems.append(Problem(rel, 1, None, "unreadable", f"cannot read: {exc.strerror}"))
        report.damaged = True
        return []
    except Damaged as exc:
        report.problems.append(Problem(rel, 1, None, "outside-repository", exc.message.split(": ", 1)[-1]))
        report.damaged = True
        return []
    conflict = re.search(rb"^(<{7}|={7}|>{7})( |$)", data, re.M)
    if conflict:
        line = data[: conflict.start()].count(b"\n") + 1
        named = re.search(rb"^- +id: *['\"]?(MEM-\d{8}-\d+)", data[conflict.start():], re.M)
        entry_id = named.group(1).decode() if named else None
        report.problems.append(Problem(rel, line, entry_id, "merge-conflict", "unresolved merge conflict markers; keep the right version of the entry and remove the markers"))
        report.damaged = True
        return []
    try:
        text = store.decode(path, data)
        from .yamlio import parse_entries

        entries, spans = parse_entries(text, rel)
    except Damaged as exc:
        match = re.match(r"^(.*?):(\d+): (.*)$", exc.message)
        line = int(match.group(2)) if match else 1
        message = match.group(3) if match else exc.message
        rule = "too-large" if "MB limit" in message else "encoding" if "UTF-8" in message else "yaml"
        report.problems.append(Problem(rel, line, None, rule, message))
        report.damaged = True
        return []
    lines = text.split("\n")
    items = []
    for entry, (start, stop) in zip(entries, spans):
        if not isinstance(entry, dict):
            report.problems.append(Problem(rel, start, None, "schema", f"an entry must be a mapping, found {type(entry).__name__}"))
            continue
        items.append(_Item(entry, rel, start, lines[start - 1 : stop], archived, category))
    if category is None:
        report.problems.append(Problem(rel, 1, None, "category-file", f"{path.name} is not the storage_file of any configured category"))
    return items


def _check_entry(config: Config, item: _Item, report: Report) -> None:
    from .schemas import entry_validator

    data = item.data
    entry_id = data.get("id") if isinstance(data.get("id"), str) else None

    def problem(rule: str, message: str, name: str | None = None) -> None:
        line = _field_line(item, name) if name else item.line
        report.problems.append(Problem(item.file, line, entry_id, rule, message))

    for error in sorted(entry_validator().iter_errors(data), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.absolute_path)
        top = str(error.absolute_path[0]) if error.absolute_path else None
        if error.validator == "additionalProperties" and not where:
            extra = sorted(set(data) - set(entry_validator().schema["properties"]))
            top = extra[0] if extra else None
        problem("schema", f"{where + ': ' if where else ''}{error.message}", top)
    if entry_id and not parse_id(entry_id):
        problem("id-format", "id must be MEM-YYYYMMDD-NNN with NNN >= 001", "id")
    category = data.get("category")
    if item.category and category != item.category:
        problem("category-file", f"category {category!r} does not match its file (which holds {item.category!r})", "category")
    if isinstance(category, str):
        spec = config.categories.get(category)
        if spec is None:
            problem("category", f"unknown category {category!r}; configured: {', '.join(config.categories)}", "category")
        elif isinstance(data.get("confidence"), (int, float)) and data["confidence"] < spec.confidence_required:
            problem("confidence-floor", f"confidence {data['confidence']} is below the {category} floor {spec.confidence_required}", "confidence")
    ttl = data.get("ttl")
    source = data.get("source") if isinstance(data.get("source"), dict) else {}
    stamp = source.get("timestamp")
    if isinstance(ttl, str) and isinstance(stamp, str):
        try:
            wanted = expires_at(stamp, ttl) if re.match(r"^(permanent|\d+d)\Z", ttl) else None
        except BadInput:
            wanted = None
        present = data.get("expires_at")
        if ttl == "permanent" and present is not None:
            problem("expires-at", "a permanent entry must not have expires_at", "expires_at")
        elif ttl != "permanent" and wanted and present is None:
            problem("expires-at", f"expires_at is missing; with ttl {ttl} it must be {wanted}", "ttl")
        elif wanted and present is not None and _same_time(present, wanted) is False:
            problem("expires-at", f"expires_at {present} does not equal source.timestamp + ttl ({wanted})", "expires_at")
    archive_fields = [k for k in ("archived", "archived_at", "archive_reason") if k in data]
    if item.archived and not data.get("archived"):
        problem("archive", "an entry in the archive must have archived: true, archived_at and archive_reason")
    elif not item.archived and archive_fields:
        problem("archive", "archive fields are only allowed in archive files; run `mem archive` to move it", archive_fields[0])
    for field_name, finding in scan_fields({k: v for k, v in data.items() if k not in ("id", "supersedes", "superseded_by", "related_memories")}):
        problem("secret", f"{finding.kind} in {field_name} ({finding}); remove it and reference where the secret is kept instead", field_name.split(".")[0])


def _same_time(a: Any, b: str) -> bool | None:
    try:
        return parse_time(str(a)) == parse_time(b)
    except BadInput:
        return None


def _check_links(items: list[_Link], context: list[_Link], report: Report) -> None:
    by_id: dict[str, _Link] = {}
    for item in context:
        if isinstance(item.id, str):
            by_id.setdefault(item.id, item)
    seen: dict[str, _Link] = {}
    for item in items:
        if not isinstance(item.id, str):
            continue
        first = seen.get(item.id) or by_id.get(item.id)
        if first is not None:
            report.problems.append(Problem(item.file, item.line, item.id, "duplicate-id", f"id also used at {first.file}:{first.line}; ids must be unique across the grimoire"))
        else:
            seen[item.id] = item
    everything = {**by_id, **seen}
    keys: dict[str, _Link] = {}
    for item in items:
        entry_id = item.id if isinstance(item.id, str) else None

        def problem(rule: str, message: str, name: str) -> None:
            report.problems.append(Problem(item.file, item.lines.get(name, item.line), entry_id, rule, message))

        old = item.supersedes
        if isinstance(old, str) and ID_RE.match(old):
            target = everything.get(old)
            if target is None:
                problem("dangling-reference", f"supersedes {old}, which does not exist", "supersedes")
            elif target.superseded_by != entry_id:
                problem("supersede-link", f"supersedes {old}, but {old} is not marked superseded_by {entry_id}", "supersedes")
        new = item.superseded_by
        if isinstance(new, str) and ID_RE.match(new):
            target = everything.get(new)
            if target is None:
                problem("dangling-reference", f"superseded_by {new}, which does not exist", "superseded_by")
            elif target.supersedes != entry_id:
                problem("supersede-link", f"superseded_by {new}, but {new} does not say it supersedes {entry_id}", "superseded_by")
        for related in item.related if isinstance(item.related, list) else []:
            if isinstance(related, str) and related not in everything:
                problem("dangling-reference", f"related memory {related} does not exist", "related_memories")
        key = item.key
        if isinstance(key, str) and not item.archived and not item.superseded_by:
            other = keys.get(key)
            if other is not None:
                problem("key-unique", f"key {key!r} is also active at {other.file}:{other.line}; supersede one of them", "key")
            else:
                keys[key] = item
