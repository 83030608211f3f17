"""The add pipeline: requests checked against the grimoire and written under one lock.

`request.build` makes each entry on its own; here each one is checked
against what the grimoire holds (exact duplicates refused, near ones noted,
a key's holder superseded, ids numbered per day) and all of them are
written in one lock, one write per file, all or nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, cast

from ..core.clock import parse_time
from ..core.errors import BadInput, Duplicate, GrimoireError, Refused
from ..core.model import Entry, format_id, id_day, normalize_text, parse_id
from ..storage import tombstones
from ..storage.catalog.queries import Filter
from ..storage.issued import in_use
from ..storage.store import Store
from .duplicates import Duplicates, alike_lengths
from .request import Request, build
from .superseding import inherit

# A batch of at most this many items looks up, per item, the entries of a
# length that could be NEAR alike; a larger one reads each category once.
WINDOWED = 32


def check_id(value: str, taken: Container[str]) -> str:
    """A caller-given id, refused when malformed or already used."""
    if not parse_id(value):
        raise BadInput(f"bad id {value!r}", "ids look like MEM-20260131-001")
    if value in taken:
        raise Refused(f"id {value} is already used", "leave the id out to get a fresh one")
    return value


class Rejected(NamedTuple):
    """An item `add_many(skip_invalid=True)` left out, and why (`duplicate_of`:
    the active entry it exactly duplicates, when that is why)."""

    index: int  # type: ignore[assignment]  # the item's place in the batch; tuple.index is not used
    message: str
    duplicate_of: str | None = None


class Added(list):
    """The entries written, in order; `rejected` the items left out (only
    with `skip_invalid`; otherwise the first bad item fails the batch)."""

    def __init__(self, written: Iterable[Entry] = (), rejected: list[Rejected] | None = None):
        super().__init__(written)
        self.rejected: list[Rejected] = [] if rejected is None else rejected


def add_many(
    store: Store,
    requests: list[Request],
    moment: datetime,
    *,
    skip_invalid: bool = False,
    after: Callable[[list[Entry]], list[Request]] | None = None,
    dry_run: bool = False,
    check_all: bool = False,
    check: Callable[[], None] | None = None,
    near: bool = True,
) -> Added:
    """Write many entries under one lock, one write per file; all or nothing
    unless `skip_invalid`. `after` makes more requests from the entries
    prepared (a summary listing their ids), checked in the same batch: one of
    them invalid fails it all. With `dry_run`, everything is checked and
    numbered, and nothing is written. With `check_all`, every item is checked
    as `skip_invalid` does, and nothing is written when one is rejected.
    `check` runs first under the lock and may raise: a condition of the
    caller's that no other writer can change before the write lands.
    Without `near`, no near duplicate is looked for (a caller that reports
    none: each lookup compares the item with every entry of a like length)."""
    from .local_ids import settle

    settle(store)  # a local entry whose id a pull gave to a tracked one: renamed before any id is edited or numbered
    result = Added()
    skip_invalid = skip_invalid or check_all
    with store.lock():
        if check is not None:
            check()
        batch = _Batch(store, moment, windowed=len(requests) <= WINDOWED, near=near)
        indexes = []
        for index, request in enumerate(requests):
            try:
                entry = _prepare(store, request, batch)
            except GrimoireError as exc:
                if not skip_invalid:
                    if len(requests) > 1:
                        exc.message = f"item {index + 1}: {exc.message}"
                    raise
                result.rejected.append(Rejected(index, str(exc), exc.of if isinstance(exc, Duplicate) else None))
                continue
            result.append(entry)
            indexes.append(index)
        _unlinked(result, indexes, batch, skip_invalid)
        if after is not None:
            result.extend(_prepare(store, request, batch) for request in after(list(result)))
        if not dry_run and not (check_all and result.rejected):
            _write(store, result, batch.updates)
    return result


def _unlinked(result: Added, indexes: list[int], batch: _Batch, skip_invalid: bool) -> None:
    """Refuse the entries whose `superseded_by` (given by an import, which may
    name a later line) names no entry that says it supersedes them: a
    condensed entry (`mem compact`) names them in related_memories instead."""
    for position in reversed(range(len(result))):
        entry = result[position]
        newer = entry.data.get("superseded_by")
        if not newer:
            continue
        other = batch.existing.get(newer)
        data = other.data if other is not None else {}
        if data.get("supersedes") == entry.id or entry.id in (data.get("related_memories") or ()):
            continue
        what = "which does not exist" if other is None else f"which does not say it supersedes {entry.id}"
        error = BadInput(
            f"superseded_by {newer}, {what}",
            "import the entry that supersedes it too (`mem export --archived` holds both)",
        )
        if not skip_invalid:
            error.message = f"item {indexes[position] + 1}: {error.message}"
            raise error
        result.rejected.append(Rejected(indexes[position], str(error)))
        del result[position]
        # Nor is the entry it superseded marked so: that edit was staged when the line was taken.
        replaced = entry.data.get("supersedes")
        if replaced and (batch.updates.get(replaced) or {}).get("superseded_by") == entry.id:
            batch.updates.pop(replaced)
    result.rejected.sort(key=lambda rejected: rejected.index)


def prepare(store: Store, requests: list[Request], moment: datetime) -> list[Entry]:
    """The checked, numbered entries of `requests`, inside the caller's
    `store.lock()` (for a write that stages more than new entries: `mem
    compact`); nothing is written, an invalid request fails them all."""
    batch = _Batch(store, moment, windowed=len(requests) <= WINDOWED)
    return [_prepare(store, request, batch) for request in requests]


def _prepare(store: Store, request: Request, batch: _Batch) -> Entry:
    """The entry for one request, checked against the grimoire and the batch so far."""
    config = store.config
    if (
        request.category in config.categories
        and config.categories[request.category].kind == "chat"
        and (request.fields or {}).get("role")
    ):
        batch.chat(request)  # a message (`mem chat add`); anything else gets the kind's hint
    # An import's entry that is no longer active
    retired = bool(request.superseded_by or (request.archive or {}).get("archived"))
    # A key, or a procedure's name, has one active entry: a new one replaces it.
    holder = None if request.supersedes or retired else batch.holder(request)
    if holder is not None:
        if (
            request.key
            and holder.key == request.key
            and request.category in (None, holder.category)
            and isinstance(request.content, str)
            and normalize_text(holder.content) == normalize_text(request.content)
        ):
            raise Duplicate(
                f"{holder.id} already holds this under the key {request.key}",
                "nothing to add; give the key a new value",
                holder.id,
            )
        request.supersedes = holder.id
    old = batch.existing.get(request.supersedes) if request.supersedes else None
    # An imported line with its id is a whole entry restated: nothing to carry over
    if old is not None and request.id is None:
        request = inherit(request, old, config)
    batch.existing.prefetch(request.related)
    if request.id:
        new_id = check_id(request.id, batch.taken)
    else:
        day = id_day(parse_time(request.timestamp) if request.timestamp else batch.moment)
        new_id = batch.taken.fresh(day)
    data, notes = build(request, config, batch.moment, batch.existing, batch.taken, new_id, batch.store.runtime)
    if (
        holder is not None
        and holder.category == data["category"]
        and config.category(holder.category).kind == "procedure"
    ):
        from ..kinds.procedures import same

        # The same version again (a transcript consolidated twice): a copy superseding it would be noise in the history.
        if same(
            holder,
            {k: data[k] for k in ("name", "description", "params", "steps") if k in data},
            data.get("tags") or [],
        ):
            raise Duplicate(
                f"{holder.id} already holds this version of the procedure {data.get('name')}",
                "nothing to add; change what differs to make a new version",
                holder.id,
            )
    if old is not None and config.category(old.category).tracked != config.category(data["category"]).tracked:
        # The link would dangle in every other clone (a local file is nobody else's).
        what = (
            f"in the tracked category {old.category}"
            if config.category(old.category).tracked
            else f"local ({old.category})"
        )
        raise Refused(
            f"{old.id} is {what}; an entry of {data['category']} cannot supersede it"
            + (f" (key {data['key']})" if data.get("key") else ""),
            "use a category of the same kind of tracking, or another key",
        )
    current = (batch.updates.get(old.id, old.data) or {}) if old is not None else {}
    # An import restores a link both ends of which it holds (the older may be archived since).
    if old is not None and current.get("superseded_by") != new_id:
        if old.archived:
            raise Refused(f"{old.id} is archived and cannot be superseded", "add a new memory instead")
        if current.get("superseded_by"):
            raise Refused(
                f"{old.id} is already superseded by {current['superseded_by']}",
                f"supersede {current['superseded_by']} instead",
            )
    # A keyed entry is known by its key: two keys may well hold the same value.
    # An episode is an occurrence: the same thing happening again is news (and
    # a chat message said twice was said twice).
    # A summary records one consolidation, which may well say what an earlier one said;
    # an insight is known by its rule, whose new numbers may read as the old ones did.
    # An entry no longer active duplicates nothing: the same text may well be active again.
    checked = (
        "key" not in data and config.category(data["category"]).kind not in ("episode", "chat", "summary", "insight")
        if request.dedupe is None
        else request.dedupe
    )
    checked = checked and not retired
    exact, near, score = (
        batch.duplicates(data["category"], data["content"]).of(data, near=batch.near) if checked else (None, None, 0.0)
    )
    if exact is not None:
        raise Duplicate(
            f"an identical memory already exists: {exact}",
            f'nothing to add; to change it use `mem supersede {exact} "..."`',
            exact,
        )
    entry = Entry(
        data, config.relative(store.category_path(data["category"], bool(data.get("archived")))), None, notes=notes
    )
    if near is not None:
        entry.near_duplicate = (near, score)
        notes.append(f"near duplicate of {near} ({score:.0f}% alike); if it replaces it, use --supersedes {near}")
    batch.added(entry, old)
    return entry


def _write(store: Store, written: list[Entry], updates: Mapping[str, dict[str, Any] | None]) -> None:
    """Stage new entries and in-place updates, one write per file (they land together)."""
    updates = dict(updates)
    for entry in written:
        # Superseded within the same batch: written with its final data.
        if entry.id in updates:
            entry.data = updates.pop(entry.id) or entry.data
    by_file: dict[Path, list[Entry]] = {}
    for entry in written:
        by_file.setdefault(store.ensure_file(entry.category, entry.archived), []).append(entry)
    located = _locate(store, updates)
    for path in {**located, **by_file}:
        batch = by_file.get(path, [])
        spans = store.write(path, located.get(path), [entry.data for entry in batch])
        for entry, span in zip(batch, spans):
            entry.line = span[0]


def _locate(store: Store, updates: Mapping[str, dict[str, Any] | None]) -> dict[Path, dict[str, dict[str, Any] | None]]:
    """Updates grouped by the file each entry lives in."""
    located: dict[Path, dict[str, dict[str, Any] | None]] = {}
    if updates:
        paths = {file.rel: file.path for file in store.files()}
        for entry in store.by_id(list(updates), unique=True).values():
            located.setdefault(paths[cast(str, entry.file)], {})[entry.id] = updates[entry.id]
    return located


def update(store: Store, entry_id: str, new: dict[str, Any]) -> None:
    """Rewrite one entry's lifecycle fields in place (inside `store.lock()`)."""
    _write(store, [], {entry_id: new})


def update_many(store: Store, updates: dict[str, dict[str, Any]]) -> None:
    """Rewrite several entries' lifecycle fields in place, one write per file (inside `store.lock()`)."""
    _write(store, [], updates)


class _Batch:
    """What `add_many` needs to know about the grimoire, read lazily from the catalog.

    Entries written earlier in the same batch count as existing, so a batch
    is checked as if its items had been added one by one.
    """

    def __init__(self, store: Store, moment: datetime, windowed: bool = False, near: bool = True):
        self.store = store
        self.moment = moment
        self.windowed = windowed
        self.near = near
        self.taken = _Taken(store)
        self.existing = _Existing(store)
        self.updates: dict[str, dict[str, Any] | None] = {}  # old id -> its new data (None: removed)
        self._groups: dict[str, Duplicates] = {}
        self._windows: dict[tuple[str, tuple[int, int]], list[tuple[str, str]]] = {}
        self._new: dict[str, dict[str, str]] = {}  # this batch's entries by category: id -> normalized content
        self._turns: dict[str, int] = {}  # a chat category's last turn so far
        self._keys: dict[str, Entry | None] = {}  # holders by identity (`_identities`)
        self._held: dict[str, list[str]] = {}  # a holder's id -> the identities it holds in `_keys`

    def duplicates(self, category: str, content: str | None = None) -> Duplicates:
        """Active entries of one category (duplicate checks compare within it).
        A small batch asks, per item, only for those whose length could make
        them NEAR alike (`windowed`) and compares it with each; a large one
        reads the category once and compares an item only with the entries
        that share the most of its rarest words (`Duplicates(indexed=True)`)."""
        if self.windowed and content is not None:
            window = alike_lengths(len(normalize_text(content)))
            if (category, window) not in self._windows:
                chosen = Filter(at=self.moment.timestamp(), categories=[category], lengths=window)
                self._windows[category, window] = self.store.reads.normalized(chosen)
            known = [
                (entry_id, norm) for entry_id, norm in self._windows[category, window] if entry_id not in self.updates
            ]
            return Duplicates(known + list(self._new.get(category, {}).items()))
        if category not in self._groups:
            chosen = Filter(at=self.moment.timestamp(), categories=[category])
            pairs = self.store.reads.normalized(chosen)
            self._groups[category] = Duplicates(
                ((entry_id, norm) for entry_id, norm in pairs if entry_id not in self.updates), indexed=True
            )
            self._groups[category].extend(self._new.get(category, {}).items())
        return self._groups[category]

    def chat(self, request: Request) -> None:
        """A chat message (kinds/chat.py): numbered after the last active one;
        the category's expired messages are removed by this same write."""
        from ..kinds.chat import expired, next_turn

        category = request.category or ""
        if category not in self._turns:
            self._turns[category] = next_turn(self.store, category, self.moment) - 1
            self.updates.update((entry_id, None) for entry_id in expired(self.store, category, self.moment))
        fields = dict(request.fields or {})
        if "turn" not in fields:
            self._turns[category] += 1
            fields["turn"] = self._turns[category]
        request.fields = fields

    def _identities(self, category: str | None, data: dict[str, Any]) -> list[tuple[str, Filter]]:
        """What an entry is the one active holder of, each with the filter that
        finds the current holder: its key, a procedure's name, an insight's rule."""
        from ..kinds.procedures import identity

        out = []
        if data.get("key"):
            out.append((data["key"], Filter(at=self.moment.timestamp(), key=data["key"])))
        procedures = self.store.config.names_of_kind("procedure")
        if category in procedures and isinstance(data.get("name"), str):
            out.append(
                (identity(data["name"]), Filter(at=self.moment.timestamp(), categories=procedures, name=data["name"]))
            )
        insights = self.store.config.names_of_kind("insight")
        if category in insights and isinstance(data.get("rule_id"), str):
            out.append(
                (
                    f"insight:{data['rule_id']}",
                    Filter(at=self.moment.timestamp(), categories=insights, name=data["rule_id"]),
                )
            )
        return out

    def holder(self, request: Request) -> Entry | None:
        """The active entry the request replaces: its key's holder, else the
        active version of its procedure's name."""
        found = self._identities(request.category, {**(request.fields or {}), "key": request.key})
        if not found:
            return None
        ident, chosen = found[0]
        if ident not in self._keys:
            ids = [i for i in self.store.ids(chosen) if i not in self.updates]
            self._hold(ident, self.existing.get(ids[0]) if ids else None)
        return self._keys[ident]

    def _hold(self, ident: str, entry: Entry | None) -> None:
        self._keys[ident] = entry
        if entry is not None:
            self._held.setdefault(entry.id, []).append(ident)

    def added(self, entry: Entry, old: Entry | None) -> None:
        if old is not None:
            self.updates[old.id] = {**self.updates.get(old.id, old.data), "superseded_by": entry.id}
            for group in self._groups.values():
                group.remove(old.id)
            self._new.get(old.category, {}).pop(old.id, None)
            for ident in self._held.pop(old.id, ()):
                holder = self._keys.get(ident)
                if holder is not None and holder.id == old.id:
                    self._keys[ident] = None
        self.taken.add(entry.id)
        self.existing.new[entry.id] = entry
        if entry.archived or entry.superseded_by or entry.is_expired(self.moment):
            return  # an import's entry no longer active: holds no key, duplicates nothing
        self._new.setdefault(entry.category, {})[entry.id] = normalize_text(entry.content)
        if entry.category in self._groups:
            self._groups[entry.category].add(entry.id, normalize_text(entry.content))
        for ident, _ in self._identities(entry.category, entry.data):
            self._hold(ident, entry)


class _Taken:
    """Ids in use: the grimoire's (asked of the catalog once per day) and this batch's.

    Each day's ids are read once and kept with the highest number among
    them, both updated as the batch adds: numbering one more id costs the
    same whatever the day already holds (a bulk import of a day's entries
    stays linear).
    """

    def __init__(self, store: Store):
        self.store = store
        self.new: set[str] = set()
        self._days: dict[str, set[str]] = {}  # day -> the ids in use that day, this batch's included
        self._added: dict[str, set[str]] = {}  # day -> this batch's ids of that day
        self._highest: dict[str, int] = {}  # day -> the highest number in use or ever issued that day
        self._issued: dict[str, int] | None = None

    def fresh(self, day: str) -> str:
        """A new id of `day`: past every id in use, and past every id this
        clone ever issued, though its entry be gone (storage/issued.py).
        Only numbering looks at those: an id given explicitly may be one."""
        if day not in self._highest:
            if self._issued is None:
                self._issued = self.store.issued()
            numbers = (
                parsed[1]
                for parsed in map(parse_id, self.of_day(day) | in_use(self._issued, day))
                if parsed and parsed[0] == day
            )
            self._highest[day] = max(numbers, default=0)
        return format_id(day, self._highest[day] + 1)

    def of_day(self, day: str) -> set[str]:
        if day not in self._days:
            known = set(self.store.reads.ids_of_day(day))
            # The ids of files too damaged to read, and ids purged from the archive, count as taken (never reused).
            known |= {i for i in self.store.ids_in_damaged() if i.startswith(f"MEM-{day}-")}
            known |= tombstones.of_day(self.store.config.archive_dir, day)
            self._days[day] = known | self._added.get(day, set())
        return self._days[day]

    def add(self, entry_id: str) -> None:
        self.new.add(entry_id)
        parsed = parse_id(entry_id)
        if parsed is None:
            return
        day, number = parsed
        self._added.setdefault(day, set()).add(entry_id)
        if day in self._days:
            self._days[day].add(entry_id)
        if day in self._highest and number > self._highest[day]:
            self._highest[day] = number

    def __contains__(self, entry_id: object) -> bool:
        if not isinstance(entry_id, str):
            return False
        if entry_id in self.new:
            return True
        parsed = parse_id(entry_id)
        if parsed:
            return entry_id in self.of_day(parsed[0])
        return bool(self.store.by_id([entry_id])) or entry_id in self.store.ids_in_damaged()


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
            self._read[entry_id] = self.store.by_id([entry_id], unique=True).get(entry_id)
        found = self._read[entry_id]
        return found if found is not None else default

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and self.get(entry_id) is not None

    def prefetch(self, ids: Iterable[str]) -> None:
        """Read these ids in one catalog query (a condensed entry relates
        thousands: a query each cost a bulk write one per id)."""
        unknown = [i for i in dict.fromkeys(ids) if isinstance(i, str) and i not in self.new and i not in self._read]
        if len(unknown) < 2:
            return
        try:
            found = self.store.by_id(unknown, unique=True)
        except GrimoireError:
            return  # an id two entries share: each is then asked for alone, which names it if it matters
        self._read.update((entry_id, found.get(entry_id)) for entry_id in unknown)
