"""`mem validate`: every rule a grimoire must keep, each problem with file:line.

The result is one `Report`; the CLI renders it as text, JSON or GitHub
annotations. Parsing problems make the report `damaged` (exit 3); other
problems make it not `ok` (exit 1).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.config import Config
from ..core.errors import BadInput
from ..core.model import ID_RE, epoch
from ..storage import chunks, yamlio
from ..storage.chunks import content_hash
from ..storage.store import Store
from . import validate_files


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
        return {
            "ok": self.ok,
            "files": self.files,
            "entries": self.entries,
            "problems": [asdict(p) for p in self.problems],
        }

    @classmethod
    def combined(cls, reports: Iterable[Report]) -> Report:
        """One report of several (one per scope)."""
        out = cls()
        for report in reports:
            out.files += report.files
            out.entries += report.entries
            out.problems += report.problems
            out.damaged = out.damaged or report.damaged
        out.problems.sort(key=lambda p: (p.file, p.line, p.rule))
        return out


def _default_paths(store: Store) -> list[Path]:
    config = store.config
    found = {file.path for file in store.files() if file.path.exists()}
    for folder in config.folders():
        if folder.is_dir():
            found.update(p for p in folder.glob("*.y*ml") if p.suffix in (".yaml", ".yml"))
    return sorted(found)


def expand(paths: Iterable[str]) -> list[Path]:
    """The files named, folders replaced by the YAML files in them (BadInput
    naming one that does not exist)."""
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
    targets = expand(paths) if paths else _default_paths(store)
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
    _check_links(links, context, report, store.runtime.now())
    report.problems.sort(key=lambda p: (p.file, p.line, p.rule))
    return report


def _rules_version(config: Config) -> str:
    """What a cached file result depends on besides the file: config and rule code."""
    from .. import __version__
    from ..core import schemas
    from ..guard import instructions as guard_instructions
    from ..guard import rules as guard_rules
    from ..guard import scan as guard
    from ..storage import emitted, parallel
    from . import entry_rules

    parts = [
        __version__,
        repr(sorted(tuple(c) for c in config.categories.values())),
        str(config.storage_dir),
        str(config.archive_dir),
    ]
    for source in (
        *(
            Path(m.__file__)
            for m in (
                entry_rules,
                guard,
                guard_instructions,
                guard_rules,
                chunks,
                emitted,
                parallel,
                yamlio,
                validate_files,
            )
            if m.__file__
        ),
        Path(__file__),
        schemas.schema_dir() / "memory.schema.json",
        schemas.schema_dir() / "kinds.schema.json",
    ):
        try:
            parts.append(str(source.stat().st_mtime_ns))
        except OSError:
            parts.append("?")
    return "|".join(parts)


def _file_results(store: Store, files: list[tuple[Path, str]], version: str) -> list[dict[str, Any]]:
    """Per file: problems inside it and its link records, from the catalog when
    unchanged; a changed file re-checks only the entries whose text changed."""
    out: list[dict[str, Any] | None] = []
    pending: list[tuple[int, Path, str, bytes | None, str | None]] = []
    for index, (path, rel) in enumerate(files):
        try:
            data = path.read_bytes()
        except OSError:
            data = None
        key = f"{version}|{rel}|{path.resolve()}|{content_hash(data)}" if data is not None else None
        cached = store.reads.report(rel, key) if key is not None else None
        out.append(cached)
        if cached is None:
            pending.append((index, path, rel, data, key))
    kept = [store.reads.chunk_reports(rel, version) for _, _, rel, _, _ in pending]
    results = validate_files.compute_all(
        store, [validate_files.FileToCheck(p, r, d, c) for (_, p, r, d, _), c in zip(pending, kept)]
    )
    for (index, _, rel, _, key), result in zip(pending, results):
        chunks = result.pop("chunks")
        out[index] = result
        if key is not None:
            store.reads.keep_report(rel, key, result)
            store.reads.keep_chunk_reports(rel, version, chunks)
    return out  # type: ignore[return-value]


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
    expires_at: Any
    lines: dict[str, int]  # field -> line, for the fields these rules name


def _display(config: Config, path: Path) -> str:
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(config.root))
    except ValueError:
        return str(path)


def _check_links(items: list[_Link], context: list[_Link], report: Report, now: datetime) -> None:
    """The rules across entries: ids, both ends of each link, one active entry
    per key (an entry expired by `now` is not active)."""
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
            report.problems.append(
                Problem(
                    item.file,
                    item.line,
                    item.id,
                    "duplicate-id",
                    f"id also used at {first.file}:{first.line}; ids must be unique across the grimoire"
                    " (after a merge made without mem's hooks: `mem merge-fixup post-merge` renumbers the side not yet pushed)",
                )
            )
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
                problem(
                    "supersede-link",
                    f"supersedes {old}, but {old} is not marked superseded_by {entry_id}",
                    "supersedes",
                )
        new = item.superseded_by
        if isinstance(new, str) and ID_RE.match(new):
            target = everything.get(new)
            if target is None:
                problem("dangling-reference", f"superseded_by {new}, which does not exist", "superseded_by")
            elif target.supersedes != entry_id and not (
                isinstance(target.related, list) and entry_id in target.related
            ):
                # A condensed entry (`mem compact`) names the many it replaces in related_memories.
                problem(
                    "supersede-link",
                    f"superseded_by {new}, but {new} does not say it supersedes {entry_id}",
                    "superseded_by",
                )
        for related in item.related if isinstance(item.related, list) else []:
            if isinstance(related, str) and related not in everything:
                problem("dangling-reference", f"related memory {related} does not exist", "related_memories")
        key = item.key
        expired = _expired(item.expires_at, now)
        if isinstance(key, str) and not item.archived and not item.superseded_by and not expired:
            other = keys.get(key)
            if other is not None and key.startswith("procedure:"):  # kinds.procedures.identity
                problem(
                    "name-unique",
                    f"procedure {key.partition(':')[2]!r} is also active at {other.file}:{other.line}; "
                    "supersede one of them",
                    "name",
                )
            elif other is not None and key.startswith("insight:"):  # entry_rules.link_of
                problem(
                    "rule-unique",
                    f"insight rule {key.partition(':')[2]!r} is also active at {other.file}:{other.line}; "
                    "archive one of them (mem learn keeps one insight per rule)",
                    "rule_id",
                )
            elif other is not None:
                problem(
                    "key-unique",
                    f"key {key!r} is also active at {other.file}:{other.line}; supersede one of them",
                    "key",
                )
            else:
                keys[key] = item


def _expired(expires_at: Any, now: datetime) -> bool:
    """Whether a stored `expires_at` has passed (one that does not read as a time is reported elsewhere: not expired here)."""
    stamp = epoch(expires_at)
    return stamp is not None and stamp <= now.timestamp()
