"""`Grimoire`: the library facade. Every `mem` command is one method here."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from . import clock
from .config import CONFIG_NAME, DEFAULT_CONFIG_TEXT, Config, find_root, load_config
from .errors import BadInput, NotFound, Refused
from .model import Entry, next_id, sort_key
from .store import Store

if TYPE_CHECKING:  # imported where used: `mem query` never needs them
    from .adding import Duplicates, Request


class InitResult:
    """What `init` created and what it found already there."""

    __slots__ = ("root", "created", "existing")

    def __init__(self, root: str):
        self.root = root
        self.created: list[str] = []
        self.existing: list[str] = []

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
        entry = self.store.by_id([entry_id]).get(entry_id)
        if entry is None:
            raise NotFound(f"no memory with id {entry_id}", "list ids with `mem list` (add --archived for the archive)")
        if not chain:
            return entry
        first = entry
        seen = {first.id}
        while first.supersedes and first.supersedes not in seen:
            older = self.store.by_id([first.supersedes]).get(first.supersedes)
            if older is None:
                break
            first = older
            seen.add(first.id)
        out = [first]
        while out[-1].superseded_by and out[-1].superseded_by not in {e.id for e in out}:
            newer = self.store.by_id([out[-1].superseded_by]).get(out[-1].superseded_by)
            if newer is None:
                break
            out.append(newer)
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
        where, params = self._filter(self.now(), states, categories, tags)
        # Newest first: `sort_key` reversed (unreadable times last).
        rowids = self.store.ordered(where, params, "born IS NULL, born DESC, seq DESC, id DESC", recent or None, include_archive=archived)
        loaded = self.store.load(rowids)
        return [loaded[r] for r in rowids if r in loaded]

    def _filter(self, moment: datetime, states: set[str], categories: Iterable[str] | None, tags: Iterable[str] | None,
                min_confidence: float | None = None) -> tuple[str, dict[str, Any]]:
        """SQL for: in one of `states` at `moment`, of the categories, with all the tags, at or above the confidence."""
        from .catalog import filter_sql

        wanted = [self.config.category(c).name for c in categories or []]
        return filter_sql(states, moment.timestamp(), wanted, tags or [], min_confidence)

    def get(self, key: str) -> Entry:
        """The active entry with this key."""
        from .catalog import filter_sql

        where, params = filter_sql({"active"}, self.now().timestamp(), key=key)
        rowids = self.store.ordered(where, params, "rowid", 1, include_archive=False)
        if not rowids:
            raise NotFound(f"no active memory with key {key!r}", "see keys with `mem list --json`")
        return self.store.load(rowids)[rowids[0]]

    # -- writing -------------------------------------------------------------

    def add(self, content: str, category: str | None = None, **options: Any) -> Entry:
        """Remember one thing; returns the written entry (see `Entry.notes`)."""
        from .adding import Request

        return self.add_many([Request(content=content, category=category, **options)])[0]

    def supersede(self, entry_id: str, content: str, **options: Any) -> Entry:
        return self.add(content, supersedes=entry_id, **options)

    def add_many(self, items: Iterable[Request | dict[str, Any]], skip_invalid: bool = False) -> list[Entry]:
        """Write many entries under one lock, one write per file; all or nothing.

        With `skip_invalid`, invalid items are left out and reported in
        `self.last_rejected` as (index, message) instead of failing all.
        """
        from .adding import Request
        from .errors import GrimoireError

        requests = [item if isinstance(item, Request) else Request.from_mapping(item) if isinstance(item, dict) else _bad(item) for item in items]
        self.last_rejected: list[tuple[int, str]] = []
        with self.store.lock():
            batch = _Batch(self.store, self.now(), single=len(requests) == 1)
            written: list[Entry] = []
            for index, request in enumerate(requests):
                try:
                    entry = self._prepare(request, batch)
                except GrimoireError as exc:
                    if not skip_invalid:
                        if len(requests) > 1:
                            exc.message = f"item {index + 1}: {exc.message}"
                        raise
                    self.last_rejected.append((index, str(exc)))
                    continue
                written.append(entry)
            self._write(written, batch.updates)
        return written

    def _prepare(self, request: Request, batch: "_Batch") -> Entry:
        from .adding import build, check_id

        moment = batch.moment
        if request.key and not request.supersedes:
            holder = batch.by_key(request.key)
            if holder is not None:
                request.supersedes = holder.id
        if request.id:
            new_id = check_id(request.id, batch.taken)
        else:
            from .clock import parse_time
            from .model import id_day

            when = parse_time(request.timestamp) if request.timestamp else moment
            new_id = next_id(batch.taken.of_day(id_day(when)), when)
        data, notes = build(request, self.config, moment, batch.existing, batch.taken, new_id)
        old = batch.existing.get(request.supersedes) if request.supersedes else None
        if old is not None:
            if old.archived:
                raise Refused(f"{old.id} is archived and cannot be superseded", "add a new memory instead")
            current = batch.updates.get(old.id, old.data)
            if current.get("superseded_by"):
                raise Refused(f"{old.id} is already superseded by {current['superseded_by']}", f"supersede {current['superseded_by']} instead")
        exact, near, score = batch.duplicates(data["category"], data["content"]).of(data)
        if exact is not None:
            raise Refused(f"an identical memory already exists: {exact}", f"nothing to add; to change it use `mem supersede {exact} \"...\"`")
        if near is not None:
            notes.append(f"near duplicate of {near} ({score:.0f}% alike); if it replaces it, use --supersedes {near}")
        entry = Entry(data, self.config.relative(self.store.category_path(data["category"])), None)
        entry.notes = notes
        batch.added(entry, old)
        return entry

    def _write(self, written: list[Entry], updates: dict[str, dict[str, Any]]) -> None:
        """Stage new entries and in-place updates, one write per file (they land together)."""
        updates = dict(updates)
        for entry in written:
            # Superseded within the same batch: written with its final data.
            if entry.id in updates:
                entry.data = updates.pop(entry.id)
        by_file: dict[Path, list[Entry]] = {}
        for entry in written:
            path = self.store.ensure_file(entry.category)
            by_file.setdefault(path, []).append(entry)
        located = self._locate(updates)
        for path in {**located, **by_file}:
            batch = by_file.get(path, [])
            spans = self.store.write(path, located.get(path), [entry.data for entry in batch])
            for entry, span in zip(batch, spans):
                entry.line = span[0]

    def _locate(self, updates: dict[str, dict[str, Any]]) -> dict[Path, dict[str, dict[str, Any]]]:
        """Updates grouped by the file each entry lives in."""
        located: dict[Path, dict[str, dict[str, Any]]] = {}
        if updates:
            paths = {self.config.relative(p): p for _, p, _ in self.store.category_files()}
            for entry in self.store.by_id(list(updates)).values():
                located.setdefault(paths[entry.file], {})[entry.id] = updates[entry.id]
        return located

    def apply(self, entry_id: str, success: bool) -> Entry:
        """Record one application of a memory and whether it helped."""
        with self.store.lock():
            entry = self._find(entry_id)
            if entry.archived:
                raise Refused(f"{entry_id} is archived", "apply an active memory")
            from .lifecycle import apply_outcome

            new = apply_outcome(entry.data, success, self.now())
            self._write([], {entry_id: new})
            entry.data = new
            return entry

    def _find(self, entry_id: str) -> Entry:
        found = self.store.by_id([entry_id]).get(entry_id)
        if found is None:
            raise NotFound(f"no memory with id {entry_id}", "list ids with `mem list`")
        return found

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
        from .search import hits

        if limit is None:
            limit = self.config.retrieval["max_per_query"]
        if limit < 1:
            raise BadInput("the limit must be at least 1")
        return hits(self.store, self._ranked(text, limit, categories, tags, min_confidence, include_expired, include_superseded, archived))

    def _ranked(self, text, limit=None, categories=None, tags=None, min_confidence=None, include_expired=False,
                include_superseded=False, archived=False):
        from .search import ranked

        moment = self.now()
        floor = self.config.retrieval["min_confidence"] if min_confidence is None else min_confidence
        states = {"active"} | ({"expired"} if include_expired else set()) | ({"superseded"} if include_superseded else set())
        if archived:
            states.add("archived")
        where, params = self._filter(moment, states, categories, tags, floor)
        return ranked(self.store, text, where, params, moment, float(self.config.retrieval["recency_weight"]), limit, archived)

    def context(self, text: str | None = None, budget: int = 400):
        """A `## Active Memory` block of the best active entries within `budget` tokens."""
        from .context import MAX_MISSES, PRIORITY_ORDER, SHORTEST_LINE, render

        if budget < 20:
            raise BadInput("the budget must be at least 20 tokens")
        moment = self.now()
        # `render` reads at most the lines that fit plus MAX_MISSES that do
        # not: order only that many, and the rest only if the guard leaves
        # some out.
        limit = budget // SHORTEST_LINE + MAX_MISSES + 1
        if text and text.strip():
            ranking = self._ranked(text, limit=limit)
            first, total = [scored.rowid for scored in ranking], ranking.total
            rest = lambda: [scored.rowid for scored in self._ranked(text)]  # noqa: E731
        else:  # by value: decisions and preferences first, then importance, tier, ...
            where, params = self._filter(moment, {"active"}, None, None)
            first = self.store.ordered(where, params, PRIORITY_ORDER, limit, include_archive=False)
            total = len(first) if len(first) < limit else self.store.count(where, params, include_archive=False)
            rest = lambda: self.store.ordered(where, params, PRIORITY_ORDER, include_archive=False)  # noqa: E731

        def order():
            yield from first
            if total > len(first):
                yield from rest()[len(first):]

        from .guard import scan_fields

        # The guard runs as the last line of defence: nothing that looks like
        # a secret reaches a prompt, even if it was written by hand. It runs
        # on the entries whose line would fit, not on every one read.
        return render(self._loaded(order()), total, budget, moment, safe=lambda e: not scan_fields({"c": e.content, "s": e.summary}))

    def _loaded(self, rowids: Iterator[int], chunk: int = 32):
        """Entries in order, loaded a few at a time."""
        from itertools import islice

        while True:
            part = list(islice(rowids, chunk))
            if not part:
                return
            loaded = self.store.load(part)
            yield from (loaded[rowid] for rowid in part if rowid in loaded)

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

        from .adding import Request

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

        # A commit a crashed writer left half done is finished first (validate reads files directly).
        self.store.recover_if_needed()
        return validate(self.store, list(paths) if paths else None)


class ImportResult:
    """Ids imported, and (line number, message) of each line refused."""

    __slots__ = ("imported", "rejected")

    def __init__(self) -> None:
        self.imported: list[str] = []
        self.rejected: list[tuple[int, str]] = []

    def to_dict(self) -> dict[str, Any]:
        return {"imported": self.imported, "rejected": [{"line": n, "error": m} for n, m in self.rejected]}


class _Batch:
    """What `add_many` needs to know about the grimoire, read lazily from the catalog.

    Entries written earlier in the same batch count as existing, so a batch
    is checked as if its items had been added one by one.
    """

    def __init__(self, store: Store, moment: datetime, single: bool = False):
        self.store = store
        self.moment = moment
        self.single = single
        self.taken = _Taken(store)
        self.existing = _Existing(store)
        self.updates: dict[str, dict[str, Any]] = {}  # old id -> its new data
        self._groups: dict[str, Duplicates] = {}
        self._keys: dict[str, Entry | None] = {}

    def duplicates(self, category: str, content: str | None = None) -> Duplicates:
        """Active entries of one category (duplicate checks compare within it);
        for a batch of one, only those whose length could make them 90 % alike."""
        if category not in self._groups:
            from .adding import Duplicates, alike_lengths
            from .catalog import filter_sql
            from .model import normalize_text

            where, params = filter_sql({"active"}, self.moment.timestamp(), [category])
            if self.single and content is not None:
                low, high = alike_lengths(len(normalize_text(content)))
                where += " AND e.nlen BETWEEN :low AND :high"
                params.update(low=low, high=high)
            pairs = [(entry_id, norm) for entry_id, norm in self.store.columns("id, norm", where, params, skip_damaged=True)
                     if entry_id not in self.updates and norm is not None]
            self._groups[category] = Duplicates(pairs)
        return self._groups[category]

    def by_key(self, key: str) -> Entry | None:
        if key not in self._keys:
            from .catalog import filter_sql

            where, params = filter_sql({"active"}, self.moment.timestamp(), key=key)
            ids = [row[0] for row in self.store.columns("id", where, params, skip_damaged=True) if row[0] not in self.updates]
            self._keys[key] = self.existing.get(ids[0]) if ids else None
        return self._keys[key]

    def added(self, entry: Entry, old: Entry | None) -> None:
        if old is not None:
            self.updates[old.id] = {**self.updates.get(old.id, old.data), "superseded_by": entry.id}
            for group in self._groups.values():
                group.remove(old.id)
            for key, holder in list(self._keys.items()):
                if holder is not None and holder.id == old.id:
                    self._keys[key] = None
        from .model import normalize_text

        self.taken.add(entry.id)
        self.existing.new[entry.id] = entry
        self.duplicates(entry.category).add(entry.id, normalize_text(entry.content))
        if entry.key:
            self._keys[entry.key] = entry


class _Taken:
    """Ids in use: the grimoire's (asked of the catalog per day) and this batch's."""

    def __init__(self, store: Store):
        self.store = store
        self.new: set[str] = set()
        self._days: dict[str, set[str]] = {}

    def of_day(self, day: str) -> set[str]:
        if day not in self._days:
            self._days[day] = set(self.store.ids_of_day(day, skip_damaged=True))
        return self._days[day] | {i for i in self.new if i.startswith(f"MEM-{day}-")}

    def add(self, entry_id: str) -> None:
        self.new.add(entry_id)

    def __contains__(self, entry_id: object) -> bool:
        from .model import parse_id

        if not isinstance(entry_id, str):
            return False
        if entry_id in self.new:
            return True
        parsed = parse_id(entry_id)
        if parsed:
            return entry_id in self.of_day(parsed[0])
        return bool(self.store.by_id([entry_id], skip_damaged=True))


class _Existing:
    """A read-only id -> Entry view of the grimoire plus this batch's new entries."""

    def __init__(self, store: Store):
        self.store = store
        self.new: dict[str, Entry] = {}
        self._read: dict[str, Entry | None] = {}

    def get(self, entry_id: str, default: Any = None) -> Entry | None:
        if entry_id in self.new:
            return self.new[entry_id]
        if entry_id not in self._read:
            self._read[entry_id] = self.store.by_id([entry_id], skip_damaged=True).get(entry_id)
        found = self._read[entry_id]
        return found if found is not None else default

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and self.get(entry_id) is not None


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
