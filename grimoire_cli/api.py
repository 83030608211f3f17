"""`Grimoire`: the library facade. Every `mem` command is one method here."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from . import clock
from .adding import Request, build, check_id, duplicate_of
from .config import CONFIG_NAME, DEFAULT_CONFIG_TEXT, Config, find_root, load_config
from .errors import BadInput, NotFound, Refused
from .lifecycle import apply_outcome
from .model import Entry, next_id, sort_key
from .store import Store


@dataclass
class InitResult:
    root: str
    created: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.root, "created": self.created, "existing": self.existing}


GITATTRIBUTES_LINE = "{storage}/**/*.yaml merge=grimoire"


class Grimoire:
    """A grimoire found from a working directory, like the `mem` command finds it."""

    def __init__(self, config: Config):
        self.config = config
        self.store = Store(config)
        self._index = None  # search.Index over the last query's candidates
        self._index_key: tuple[str, ...] | None = None

    @classmethod
    def open(cls, path: str | os.PathLike = ".", config: str | os.PathLike | None = None) -> "Grimoire":
        return cls(load_config(path, config))

    @classmethod
    def init(cls, path: str | os.PathLike = ".", config: str | os.PathLike | None = None) -> InitResult:
        """Create config, folders, category files, ignore and merge rules; never overwrite."""
        start = Path(path).resolve()
        root = find_root(start)
        result = InitResult(str(root))
        config_path = Path(config) if config else None
        if config_path is None:
            config_path = root / CONFIG_NAME
        rel = lambda p: os.path.relpath(p, root)  # noqa: E731
        if config_path.exists():
            result.existing.append(rel(config_path))
        else:
            config_path.write_text(DEFAULT_CONFIG_TEXT, encoding="utf-8")
            result.created.append(rel(config_path))
        grimoire = cls(load_config(root, config_path))
        conf = grimoire.config
        for folder in (conf.storage_dir, conf.archive_dir):
            folder.mkdir(parents=True, exist_ok=True)
        ignore = conf.storage_dir / ".gitignore"
        _ensure_lines(ignore, ["# derived files of mem: never commit", ".cache/"], result, rel)
        for name in conf.categories:
            path = grimoire.store.category_path(name)
            if path.exists():
                result.existing.append(rel(path))
            else:
                grimoire.store.ensure_file(name)
                result.created.append(rel(path))
        keep = conf.archive_dir / ".gitkeep"
        if not any(conf.archive_dir.iterdir()):
            keep.touch()
        storage = conf.storage_dir.relative_to(conf.root).as_posix()
        _ensure_lines(conf.root / ".gitattributes", [GITATTRIBUTES_LINE.format(storage=storage)], result, rel)
        return result

    # -- reading -------------------------------------------------------------

    def now(self) -> datetime:
        return clock.now()

    def entries(self, include_archive: bool = True) -> list[Entry]:
        return list(self.store.entries(include_archive=include_archive))

    def show(self, entry_id: str, chain: bool = False) -> Entry | list[Entry]:
        """One entry by id (archive included); with `chain`, its supersede chain oldest first."""
        by_id = {e.id: e for e in self.entries()}
        entry = by_id.get(entry_id)
        if entry is None:
            raise NotFound(f"no memory with id {entry_id}", "list ids with `mem list` (add --archived for the archive)")
        if not chain:
            return entry
        first = entry
        seen = {first.id}
        while first.supersedes and first.supersedes in by_id and first.supersedes not in seen:
            first = by_id[first.supersedes]
            seen.add(first.id)
        out = [first]
        while out[-1].superseded_by and out[-1].superseded_by in by_id and out[-1].superseded_by not in {e.id for e in out}:
            out.append(by_id[out[-1].superseded_by])
        return out

    def list(
        self,
        categories: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        archived: bool = False,
        expired: bool = False,
        superseded: bool = False,
        recent: int | None = None,
    ) -> list[Entry]:
        """Active entries newest first; the flags add those states (archived: only the archive)."""
        states = {"archived"} if archived else {"active"} | ({"expired"} if expired else set()) | ({"superseded"} if superseded else set())
        out = self._select(self.now(), states, categories, tags, include_archive=archived)
        out.sort(key=sort_key, reverse=True)
        return out[:recent] if recent else out

    def _select(self, moment: datetime, states: set[str], categories: Iterable[str] | None, tags: Iterable[str] | None,
                include_archive: bool, min_confidence: float | None = None) -> list[Entry]:
        """Entries in one of `states` at `moment`, of the categories, carrying all the tags, at or above the confidence."""
        wanted_categories = {self.config.category(c).name for c in categories or []}
        wanted_tags = set(tags or [])
        return [
            e for e in self.store.entries(include_archive=include_archive)
            if e.state(moment) in states
            and (not wanted_categories or e.category in wanted_categories)
            and wanted_tags.issubset(e.tags)
            and (min_confidence is None or e.confidence >= min_confidence)
        ]

    def get(self, key: str) -> Entry:
        """The active entry with this key."""
        moment = self.now()
        for entry in self.store.entries(include_archive=False):
            if entry.key == key and entry.is_active(moment):
                return entry
        raise NotFound(f"no active memory with key {key!r}", "see keys with `mem list --json`")

    # -- writing -------------------------------------------------------------

    def add(self, content: str, category: str | None = None, **options: Any) -> Entry:
        """Remember one thing; returns the written entry (see `Entry.notes`)."""
        return self.add_many([Request(content=content, category=category, **options)])[0]

    def supersede(self, entry_id: str, content: str, **options: Any) -> Entry:
        return self.add(content, supersedes=entry_id, **options)

    def add_many(self, items: Iterable[Request | dict[str, Any]], skip_invalid: bool = False) -> list[Entry]:
        """Write many entries under one lock, one write per file; all or nothing.

        With `skip_invalid`, invalid items are left out and reported in
        `self.last_rejected` as (index, message) instead of failing all.
        """
        from .errors import GrimoireError

        requests = [item if isinstance(item, Request) else Request.from_mapping(item) if isinstance(item, dict) else _bad(item) for item in items]
        self.last_rejected: list[tuple[int, str]] = []
        with self.store.lock():
            moment = self.now()
            # A damaged file blocks writes to its own category only (checked in _write).
            existing = {e.id: e for e in self.store.entries(skip_damaged=True)}
            taken = set(existing)
            active = [e for e in existing.values() if e.is_active(moment)]
            keyed = {e.key: e for e in active if e.key}
            written: list[Entry] = []
            updates: dict[str, dict[str, Any]] = {}  # old id -> its new data
            for index, request in enumerate(requests):
                try:
                    entry = self._prepare(request, moment, existing, taken, active, keyed, updates)
                except GrimoireError as exc:
                    if not skip_invalid:
                        if len(requests) > 1:
                            exc.message = f"item {index + 1}: {exc.message}"
                        raise
                    self.last_rejected.append((index, str(exc)))
                    continue
                written.append(entry)
            self._write(written, updates)
        for entry in written:
            entry.skipped = list(self.store.skipped)
        return written

    def _prepare(self, request, moment, existing, taken, active, keyed, updates) -> Entry:
        if request.key and request.key in keyed and not request.supersedes:
            request.supersedes = keyed[request.key].id
        if request.id:
            new_id = check_id(request.id, taken)
        else:
            from .clock import parse_time

            new_id = next_id(taken, parse_time(request.timestamp) if request.timestamp else moment)
        data, notes = build(request, self.config, moment, existing, taken, new_id)
        old = existing.get(request.supersedes) if request.supersedes else None
        if old is not None:
            if old.archived:
                raise Refused(f"{old.id} is archived and cannot be superseded", "add a new memory instead")
            current = updates.get(old.id, old.data)
            if current.get("superseded_by"):
                raise Refused(f"{old.id} is already superseded by {current['superseded_by']}", f"supersede {current['superseded_by']} instead")
        exact, near, score = duplicate_of(data, active)
        if exact is not None:
            raise Refused(f"an identical memory already exists: {exact.id}", f"nothing to add; to change it use `mem supersede {exact.id} \"...\"`")
        if near is not None:
            notes.append(f"near duplicate of {near.id} ({score:.0f}% alike); if it replaces it, use --supersedes {near.id}")
        if old is not None:
            updates[old.id] = {**updates.get(old.id, old.data), "superseded_by": new_id}
            active[:] = [e for e in active if e.id != old.id]
        entry = Entry(data, self.config.relative(self.store.category_path(data["category"])), None)
        entry.notes = notes
        taken.add(new_id)
        existing[new_id] = entry
        active.append(entry)
        if data.get("key"):
            keyed[data["key"]] = entry
        return entry

    def _write(self, written: list[Entry], updates: dict[str, dict[str, Any]]) -> None:
        by_file: dict[Path, list[Entry]] = {}
        for entry in written:
            path = self.store.ensure_file(entry.category)
            self.store.read(path)  # raises Damaged for a damaged target
            by_file.setdefault(path, []).append(entry)
        for path, batch in by_file.items():
            self.store.append(path, [entry.data for entry in batch])
            for entry, span in zip(batch, self.store.read(path).spans[-len(batch):]):
                entry.line = span[0]
        self._splice_updates(updates)

    def _splice_updates(self, updates: dict[str, dict[str, Any]]) -> None:
        """Rewrite entries in place, grouped by the file each lives in."""
        if not updates:
            return
        located: dict[Path, dict[str, dict[str, Any]]] = {}
        for _, path, _ in self.store.category_files():
            for item in self.store.read(path).entries:
                if isinstance(item, dict) and item.get("id") in updates:
                    located.setdefault(path, {})[item["id"]] = updates[item["id"]]
        for path, changes in located.items():
            self.store.splice(path, changes)

    def apply(self, entry_id: str, success: bool) -> Entry:
        """Record one application of a memory and whether it helped."""
        with self.store.lock():
            entry = self._find(entry_id)
            if entry.archived:
                raise Refused(f"{entry_id} is archived", "apply an active memory")
            new = apply_outcome(entry.data, success, self.now())
            self._splice_updates({entry_id: new})
            entry.data = new
            return entry

    def _find(self, entry_id: str) -> Entry:
        for entry in self.store.entries():
            if entry.id == entry_id:
                return entry
        raise NotFound(f"no memory with id {entry_id}", "list ids with `mem list`")

    def query(
        self,
        text: str,
        limit: int | None = None,
        categories: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        min_confidence: float | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
        archived: bool = False,
    ):
        """Ranked hits (`hit.entry`, `hit.score`, `hit.parts`); filters apply first."""
        from .search import Index, rank

        moment = self.now()
        floor = self.config.retrieval["min_confidence"] if min_confidence is None else min_confidence
        states = {"active"} | ({"expired"} if include_expired else set()) | ({"superseded"} if include_superseded else set())
        if archived:
            states.add("archived")
        pool = self._select(moment, states, categories, tags, include_archive=archived, min_confidence=floor)
        if limit is None:
            limit = self.config.retrieval["max_per_query"]
        if limit < 1:
            raise BadInput("the limit must be at least 1")
        # The index is kept while the same entries are asked about (benchmarks, agents).
        key = tuple(e.id for e in pool)
        if self._index is None or self._index_key != key:
            self._index, self._index_key = Index(pool), key
        return rank(self._index, text, moment, float(self.config.retrieval["recency_weight"]), limit)

    def context(self, text: str | None = None, budget: int = 400):
        """A `## Active Memory` block of the best active entries within `budget` tokens."""
        from .context import priority_key, render
        from .guard import scan_fields

        if budget < 20:
            raise BadInput("the budget must be at least 20 tokens")
        moment = self.now()
        if text and text.strip():
            ordered = [hit.entry for hit in self.query(text, limit=10_000)]
        else:
            ordered = sorted(self.list(), key=priority_key)
        # Last line of defence: nothing that looks like a secret reaches a prompt.
        ordered = [e for e in ordered if not scan_fields({"c": e.content, "s": e.summary})]
        return render(ordered, budget, moment)

    def stats(self) -> dict[str, Any]:
        """Counts per category, state and tier; oldest and newest; bytes on disk."""
        moment = self.now()
        entries = self.entries()
        by_category: dict[str, dict[str, int]] = {}
        tiers: dict[str, int] = {}
        for entry in entries:
            states = by_category.setdefault(entry.category, {})
            state = entry.state(moment)
            states[state] = states.get(state, 0) + 1
            tiers[entry.tier] = tiers.get(entry.tier, 0) + 1
        ordered = sorted(entries, key=sort_key)
        size = sum(p.stat().st_size for _, p, _ in self.store.category_files() if p.exists())
        return {
            "entries": len(entries),
            "categories": by_category,
            "tiers": tiers,
            "oldest": ordered[0].id if ordered else None,
            "newest": ordered[-1].id if ordered else None,
            "bytes": size,
        }

    def export(self, archived: bool = False) -> list[Entry]:
        """Every entry (active files; the archive too with `archived`), oldest first."""
        return sorted(self.store.entries(include_archive=archived), key=sort_key)

    def import_lines(self, lines: Iterable[str], skip_invalid: bool = False) -> "ImportResult":
        """Import JSON Lines entries; all or nothing unless `skip_invalid`."""
        import json

        result = ImportResult()
        requests: list[tuple[int, Request]] = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                if not isinstance(item, dict):
                    raise BadInput("a line must be a JSON object")
                if item.get("archived"):
                    raise BadInput("archived entries are not imported")
                requests.append((number, Request.from_mapping(item)))
            except (ValueError, BadInput) as exc:
                result.rejected.append((number, str(exc) if isinstance(exc, BadInput) else f"not JSON: {exc}"))
        if result.rejected and not skip_invalid:
            raise BadInput(_rejected_message(result.rejected), "fix those lines, or use --skip-invalid to import the rest")
        written = self.add_many([r for _, r in requests], skip_invalid=skip_invalid)
        result.rejected.extend((requests[i][0], message) for i, message in self.last_rejected)
        result.rejected.sort()
        result.imported = [e.id for e in written]
        return result

    def archive(self, ids: Iterable[str] | None = None, reason: str | None = None, dry_run: bool = False, commit: bool = True):
        """Move expired and ineffective entries (or `ids`) to the archive and commit just that."""
        from .archiving import archive

        return archive(self, ids, reason, dry_run, commit)

    def check(self, commit: bool = True):
        """Session start: archive expired entries (auto_archive) and report what is due."""
        from .archiving import check

        return check(self, commit)

    def review(self):
        """Low-tier, ineffective, expiring-soon and near-duplicate entries."""
        from .lifecycle import review

        return review(self.store.entries(include_archive=False), self.now(), self.config.lifecycle["warn_before_archive_days"])

    def validate(self, paths: Iterable[str] | None = None):
        from .validate import validate

        return validate(self.store, list(paths) if paths else None, self.now())


@dataclass
class ImportResult:
    imported: list[str] = field(default_factory=list)
    rejected: list[tuple[int, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"imported": self.imported, "rejected": [{"line": n, "error": m} for n, m in self.rejected]}


def _rejected_message(rejected: list[tuple[int, str]]) -> str:
    shown = "; ".join(f"line {n}: {m}" for n, m in rejected[:5])
    more = f" (and {len(rejected) - 5} more)" if len(rejected) > 5 else ""
    return f"{len(rejected)} invalid line(s), nothing imported: {shown}{more}"


def _bad(item: Any):
    raise BadInput(f"cannot add {type(item).__name__}; give a Request or a mapping")


def _ensure_lines(path: Path, lines: list[str], result: InitResult, rel) -> None:
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    missing = [line for line in lines if line not in current.splitlines()]
    if not missing:
        result.existing.append(rel(path))
        return
    prefix = current if not current or current.endswith("\n") else current + "\n"
    path.write_text(prefix + "\n".join(missing) + "\n", encoding="utf-8")
    (result.existing if current else result.created).append(rel(path))
