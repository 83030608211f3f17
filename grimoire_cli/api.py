"""`Grimoire`: the library facade. Every `mem` command is one method here or
on one of its namespaces (`g.facts`, `g.tasks`, ... in facade/), but for `mem
merge-file`: git runs the merge driver on three temp files, outside any
grimoire (`git.merge.merge_file`).

Methods take keyword-only options and return result objects (each with a
`to_dict()` that `--json` prints); the work is done by the feature modules
they call. Those are imported where used, so `import grimoire_cli` and a
`mem query` load only what they need.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, overload

from .core import bounds, faults
from .core.config import Config, load_config
from .core.errors import BadInput, NotFound, Refused, no_memory
from .core.model import Entry, sort_key
from .core.runtime import Runtime
from .core.scoring import words
from .retrieval.filters import filter_of
from .storage.catalog.queries import Order
from .storage.store import Store

if TYPE_CHECKING:  # the result and namespace types, imported where used: `mem query` needs none of them
    from .facade.chat import Chat
    from .facade.episodes import Episodes
    from .facade.facts import Facts
    from .facade.learning import Learning
    from .facade.lifecycle import Lifecycle
    from .facade.procedures import Procedures
    from .facade.tasks import Tasks
    from .git.hooks import HooksResult
    from .git.renumber import FixupResult
    from .git.settle import SettleResult
    from .lifecycle.archiving import ArchiveResult, CheckResult
    from .lifecycle.capture import Captured
    from .lifecycle.rules import Review
    from .memory.adding import Added
    from .memory.importing import ImportResult
    from .memory.request import Request
    from .memory.scaffold import InitResult
    from .memory.validate import Report
    from .retrieval.context import Context
    from .retrieval.scopes import ScopeInfo
    from .retrieval.search import Hits
    from .retrieval.stats import Stats


class Grimoire:
    """A grimoire found from a working directory, like the `mem` command finds it.
    The commands Loa's protocol defines are its methods; the kinds' calls
    are its namespaces' (`g.facts`, `g.episodes`, `g.procedures`, `g.tasks`,
    `g.chat`), as are tiers and consolidation's (`g.lifecycle`) and learning's
    (`g.learning`)."""

    def __init__(self, config: Config, runtime: Runtime | None = None):
        self.config = config
        self.runtime = runtime if runtime is not None else Runtime()
        self.store = Store(config, self.runtime)
        if self.runtime.fault is not None:
            faults.arm(self.runtime.fault)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike = ".",
        config: str | os.PathLike | None = None,
        *,
        scope: str | None = None,
        must_exist: bool = True,
        runtime: Runtime | None = None,
    ) -> Grimoire:
        """The grimoire of the repository holding `path`, its config found as
        the CLI finds it (`config`, else the runtime's MEM_CONFIG, else found
        upward), in `scope` (else the runtime's MEM_SCOPE; default: the
        config's own, `loa`). `runtime` (the clock, the session, the lock
        timeout...): without one, the environment's, as `mem` reads it
        (`Runtime.from_environment`). Without `must_exist` (validating files
        given by path), a folder that holds no grimoire is read with the
        default config instead of refused."""
        runtime = runtime if runtime is not None else Runtime.from_environment()
        return cls(load_config(path, config or runtime.config, scope or runtime.scope, must_exist), runtime)

    def with_runtime(self, runtime: Runtime) -> Grimoire:
        """The same grimoire, run with another runtime (a hook's session, say)."""
        return Grimoire(self.config, runtime)

    @classmethod
    def init(
        cls,
        path: str | os.PathLike = ".",
        config: str | os.PathLike | None = None,
        *,
        scope: str | None = None,
        preset: str | None = None,
        runtime: Runtime | None = None,
    ) -> InitResult:
        """Create config, folders, category files, ignore and merge rules;
        never overwrite. A `preset` (sabre) adds its categories to the config
        first. `config` and `scope` default to the runtime's (as for `open`)."""
        from .memory.scaffold import init

        runtime = runtime if runtime is not None else Runtime.from_environment()
        return init(path, config or runtime.config, scope or runtime.scope, preset, runtime)

    def in_scope(self, scope: str | None) -> Grimoire:
        """The same repository's grimoire of another scope (it must exist; None: the default), config read anew."""
        return Grimoire(load_config(self.config.root, self.config.path, scope), self.runtime)

    def _scoped(self, name: str) -> Grimoire:
        return self if name == self.config.scope else self.in_scope(name)

    def scopes(self) -> list[ScopeInfo]:
        """Every scope of the repository, with its counts of entries."""
        from .retrieval.scopes import info

        return [info(self._scoped(name).store, self.now(), name == self.config.scope) for name in self.config.scopes()]

    def query_scopes(self, text: str, scopes: Iterable[str] | None = None, **options: Any) -> Hits:
        """`query` in each of `scopes` (default: all), best first across them;
        each hit's `scope` says where it is. Options are `query`'s."""
        from .retrieval.scopes import merged

        names = list(dict.fromkeys(scopes)) if scopes else self.config.scopes()
        found = [(name, self._scoped(name).query(text, **options)) for name in names]
        return merged(found, options.get("limit") or self.config.retrieval["max_per_query"])

    # -- the namespaces ------------------------------------------------------
    # Each is a small object over this grimoire, built when asked for: a command
    # imports only the namespace it calls, and no namespace keeps the grimoire
    # (its catalog connection) alive after its last user drops it.

    @property
    def facts(self) -> Facts:
        """Keyed facts: `remember`, `recall`, `list`, `cached` (facade/facts.py)."""
        from .facade.facts import Facts

        return Facts(self)

    @property
    def tasks(self) -> Tasks:
        """Prospective tasks: `add`, `list`, `due`, `end`, `fire` (facade/tasks.py)."""
        from .facade.tasks import Tasks

        return Tasks(self)

    @property
    def episodes(self) -> Episodes:
        """Episodes: `add`, `list` (facade/episodes.py)."""
        from .facade.episodes import Episodes

        return Episodes(self)

    @property
    def procedures(self) -> Procedures:
        """Procedures: `add`, `get`, `list` (facade/procedures.py)."""
        from .facade.procedures import Procedures

        return Procedures(self)

    @property
    def chat(self) -> Chat:
        """Chat history: `add`, `recent` (facade/chat.py)."""
        from .facade.chat import Chat

        return Chat(self)

    @property
    def lifecycle(self) -> Lifecycle:
        """Tiers and forgetting: `age`, `heat`, `expiring`, `consolidate`, `compact` (facade/lifecycle.py)."""
        from .facade.lifecycle import Lifecycle

        return Lifecycle(self)

    @property
    def learning(self) -> Learning:
        """Learning from executions: `observe`, `tools`, `patterns`, `learn`, `insights`... (facade/learning.py)."""
        from .facade.learning import Learning

        return Learning(self)

    # -- reading -------------------------------------------------------------

    def now(self) -> datetime:
        """The runtime's clock: its fixed moment (MEM_NOW) when given, else the system time (UTC)."""
        return self.runtime.now()

    def entries(self, *, include_archive: bool = True) -> list[Entry]:
        """Every entry, in file order (the archive last, unless left out)."""
        return self.store.entries(include_archive=include_archive)

    def categories(self) -> builtins.list[dict[str, Any]]:
        """Each category of this scope: name, kind, ttl, floor, tracked, file."""
        from .facade.kinds import described

        return described(self.config, self.store)

    @overload
    def show(self, entry_id: str, *, chain: Literal[False] = False) -> Entry: ...
    @overload
    def show(self, entry_id: str, *, chain: Literal[True]) -> list[Entry]: ...
    @overload
    def show(self, entry_id: str, *, chain: bool) -> Entry | list[Entry]: ...

    def show(self, entry_id: str, *, chain: bool = False) -> Entry | list[Entry]:
        """One entry by id (archive included); with `chain`, its supersede chain oldest first."""
        entry = self._find(entry_id, "list ids with `mem list` (add --archived for the archive)")
        if not chain:
            return entry
        from .memory.superseding import chain_of

        return chain_of(self.store, entry)

    def show_many(self, ids: builtins.list[str]) -> builtins.list[Entry]:
        """The entries with these ids (archive included), in the order given; unknown ids left out."""
        found = self.store.by_id(list(ids))
        return [found[i] for i in ids if i in found]

    def _find(self, entry_id: str, hint: str = "list ids with `mem list`", *, unique: bool = False) -> Entry:
        found = self.store.by_id([entry_id], unique=unique).get(entry_id)
        if found is None:
            raise no_memory(entry_id, hint)
        return found

    def list(
        self,
        *,
        categories: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        archived: bool = False,
        expired: bool = False,
        superseded: bool = False,
        recent: int | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        tier: str | None = None,
        source: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> list[Entry]:
        """Active entries newest first; the flags add those states (archived:
        only the archive); `since`/`until` (30d, 48h, an ISO date or time) bound their creation time;
        `tier`, `source` and `meta` as `query`'s; a tag ending in `*` (`herm*`) is a prefix.
        Chat messages only when `categories` names their category (`g.chat.recent` quotes them)."""
        if recent is not None:
            bounds.whole(recent, "--recent")
        states = (
            {"archived"}
            if archived
            else {"active"} | ({"expired"} if expired else set()) | ({"superseded"} if superseded else set())
        )
        narrowing = dict(since=since, until=until, tier=tier, source=source, meta=meta)
        with self.store.reading():  # the rows and their load read one state (storage/handed.py)
            return self._loaded(self._listed(states, categories, tags, recent, **narrowing))

    def list_page(self, number: int, size: int, *, archived: bool = False) -> tuple[builtins.list[Entry], int]:
        """Page `number` (from 1) of `size` entries of `list(archived=...)`,
        and how many it holds in all: only that page's entries are read."""
        bounds.whole(number, "the page")
        with self.store.reading():
            rowids = self._listed({"archived"} if archived else {"active"}, None, None, None)
            return self._loaded(rowids[(number - 1) * size : number * size]), len(rowids)

    def _listed(
        self,
        states: set[str],
        categories: Iterable[str] | None,
        tags: Iterable[str] | None,
        recent: int | None,
        **narrowing: Any,
    ) -> builtins.list[int]:
        """The catalog rows `list` returns, in its order (newest first); `narrowing`: its since, until, tier, source, meta."""
        source, meta = narrowing.pop("source", None), narrowing.pop("meta", None)
        chosen = filter_of(self.config, self.now(), states, categories, tags, **narrowing)
        if not chosen.categories:
            chosen = chosen.but(excluded=self.config.names_of_kind("chat"))
        if source is not None or meta:  # imported only then, as in `query`
            from .facade.narrowing import narrowed

            chosen = narrowed(chosen, source, meta)
        return self.store.ordered(chosen, Order.NEWEST, recent, include_archive="archived" in states)

    def _loaded(self, rowids: builtins.list[int]) -> builtins.list[Entry]:
        loaded = self.store.load(rowids)
        return [loaded[r] for r in rowids if r in loaded]

    def get(self, key: str) -> Entry:
        """The active entry with this key."""
        from .kinds.facts import holder

        found = holder(self.store, key, self.now())
        if found is None:
            raise NotFound(f"no active memory with key {key!r}", "see the keys with `mem facts`")
        return found

    def query(
        self,
        text: str,
        *,
        limit: int | None = None,
        categories: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        min_confidence: float | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
        archived: bool = False,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        tier: str | None = None,
        semantic: bool | None = None,
        source: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Hits:
        """Ranked hits (`hit.entry`, `hit.score`, `hit.parts`); filters apply
        first. Without `min_confidence`, each category is filtered at the lower
        of retrieval.min_confidence and its own floor. When nothing is found,
        the result's `filtered_out` says what matched but was left out.
        `since`/`until` bound creation time, as for `list`; `tier` (hot, long,
        all) keeps one tier of memory (docs/tiers-and-consolidation.md); `source` those whose
        metadata.source it is, `meta` those whose metadata holds these values; `semantic` fuses in the nearest by meaning (None: retrieval.semantic)."""
        from .retrieval.search import Hits, filtered_out, hits, ranked

        bounds.text(text, "the query")
        if limit is not None:
            bounds.whole(limit, "the limit")
        if min_confidence is not None:
            bounds.fraction(min_confidence, "--min-confidence")
        if not words(text):
            raise BadInput("the query has no words to look for", 'give a word or two, e.g. mem query "deploy"')
        if limit is None:
            limit = self.config.retrieval["max_per_query"]
        retrieval = self.config.retrieval
        states = (
            {"active"} | ({"expired"} if include_expired else set()) | ({"superseded"} if include_superseded else set())
        )
        if archived:
            states.add("archived")
        chosen = filter_of(
            self.config,
            self.now(),
            states,
            categories,
            tags,
            *self.config.confidence_filter(min_confidence),
            since=since,
            until=until,
            tier=tier,
        )
        if source is not None or meta:  # imported only then: a warm `mem query` imports no facade module
            from .facade.narrowing import narrowed

            chosen = narrowed(chosen, source, meta)
        weight, store = float(retrieval["recency_weight"]), self.store
        with store.reading():  # the ranking, its coverage and the load read one state (storage/handed.py)
            found = ranked(
                store, text, chosen, recency_weight=weight, limit=limit, include_archive=archived, semantic=semantic
            )
            if found:
                return Hits(hits(store, found))
            return Hits(
                filtered_out=filtered_out(store, text, chosen, recency_weight=weight, include_archive=archived),
                notes=found.notes,
            )

    def context(
        self, text: str | None = None, *, budget: int = 400, recipe: str | None = None, semantic: bool | None = None
    ) -> Context:
        """A `## Active Memory` block of the best active entries within `budget`
        tokens; with a `recipe` (context.recipes; default context.recipe), its sections in order;
        `semantic` as `query`'s (not for a recipe)."""
        if text is not None:
            bounds.text(text, "the query")
        name = recipe or self.config.settings.context.recipe
        with self.store.reading():  # its rankings and loads read one state
            if name is not None:
                from .retrieval.recipes import build_recipe

                return build_recipe(self.store, text, budget, self.now(), name)
            from .retrieval.context import build

            return build(self.store, text, budget, self.now(), semantic)

    def stats(self) -> Stats:
        """Counts per category, state and tier; oldest and newest; bytes on disk."""
        from .retrieval.stats import stats

        return stats(self.store, self.now())

    def export(self, *, archived: bool = False) -> builtins.list[Entry]:
        """Every entry (active files; the archive too with `archived`), oldest first."""
        return sorted(self.store.entries(include_archive=archived), key=sort_key)

    def review(self) -> Review:
        """Low-tier, ineffective, expiring-soon and near-duplicate entries."""
        from .lifecycle.reviewing import review

        return review(self.store, self.now())

    def validate(self, paths: Iterable[str] | None = None) -> Report:
        """Every rule a grimoire must keep, over `paths` (default: the whole
        grimoire). Files of another scope are checked in that scope's
        grimoire (its ids, its links), as the pre-commit hook needs."""
        from .facade.scoped import validate_scoped

        return validate_scoped(self.store, paths, lambda name: self._scoped(name).store)

    # -- writing -------------------------------------------------------------

    def add(
        self,
        content: str,
        category: str | None = None,
        *,
        summary: str | None = None,
        confidence: float | None = None,
        tags: Iterable[str] = (),
        ttl: str | None = None,
        supersedes: str | None = None,
        key: str | None = None,
        importance: int | None = None,
        related: Iterable[str] = (),
        file_path: str | None = None,
        lines: str | None = None,
        session_id: str | None = None,
        agent: str | None = None,
        phase: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Entry:
        """Remember one thing (the options of `mem add`); returns the written
        entry, with `notes` and `near_duplicate` for the caller."""
        from .memory.request import Request

        request = Request(
            content,
            category=category,
            summary=summary,
            confidence=confidence,
            tags=list(tags),
            ttl=ttl,
            supersedes=supersedes,
            key=key,
            importance=importance,
            related=list(related),
            file_path=file_path,
            lines=lines,
            session_id=session_id,
            agent=agent,
            phase=phase,
            metadata=metadata,
        )
        return self.add_many([request])[0]

    def supersede(
        self,
        entry_id: str,
        content: str,
        *,
        summary: str | None = None,
        confidence: float | None = None,
        tags: Iterable[str] = (),
        ttl: str | None = None,
        importance: int | None = None,
    ) -> Entry:
        """A new memory replacing `entry_id`, in its category; the old one stays
        for audit. What is not given is carried over (`superseding.inherit`)."""
        return self.add(
            content,
            supersedes=entry_id,
            summary=summary,
            confidence=confidence,
            tags=tags,
            ttl=ttl,
            importance=importance,
        )

    def add_many(self, items: Iterable[Request | dict[str, Any]], *, skip_invalid: bool = False) -> Added:
        """Write many entries under one lock, one write per file; all or nothing.

        Returns the written entries (a list); with `skip_invalid`, invalid
        items are left out and listed in its `rejected` instead of failing all.
        """
        from .memory.adding import add_many
        from .memory.request import Request

        requests = [
            item if isinstance(item, Request) else Request.from_mapping(item) if isinstance(item, dict) else _bad(item)
            for item in items
        ]
        return add_many(self.store, requests, self.now(), skip_invalid=skip_invalid)

    def apply(self, entry_id: str, success: bool) -> Entry:
        """Record one application of a memory and whether it helped."""
        from .lifecycle.rules import apply_outcome
        from .memory.adding import update

        with self.store.lock():
            entry = self._find(entry_id, unique=True)
            if entry.archived:
                raise Refused(f"{entry_id} is archived", "apply an active memory")
            new = apply_outcome(entry.data, success, self.now())
            update(self.store, entry_id, new)
            entry.data = new
            return entry

    def import_lines(self, lines: Iterable[str], *, skip_invalid: bool = False, redact: bool = False) -> ImportResult:
        """Import JSON Lines entries; all or nothing unless `skip_invalid`.
        Every line is checked before anything is written, and every problem
        found is reported with its line number (`ImportRefused.rejected`).
        Archived entries land in the archive, as `export --archived` gives them.
        With `redact`, secrets in content and summary are replaced by
        `[redacted: <kind>]` instead of refusing the line."""
        from .memory.importing import import_lines

        return import_lines(self.store, lines, self.now(), skip_invalid=skip_invalid, redact=redact)

    def capture(self, commit: str = "HEAD", *, dry_run: bool = False) -> Captured:
        """The commit's `Decision:`, `Learning:`, `Error:` trailers as memories, as the auto_capture flags allow."""
        from .lifecycle.capture import capture

        self.store.check_writable()  # memory off: said even for a commit without trailers
        return capture(self.store, commit, self.now(), dry_run=dry_run)

    def archive(
        self,
        ids: Iterable[str] | None = None,
        *,
        categories: Iterable[str] | None = None,
        reason: str | None = None,
        dry_run: bool = False,
        commit: bool = True,
    ) -> ArchiveResult:
        """Move expired and ineffective entries (or `ids`, or every entry of
        `categories` not yet archived: reason `cleared`) to the archive and commit just that."""
        from .lifecycle.archiving import archive

        return archive(self.store, ids=ids, categories=categories, reason=reason, dry_run=dry_run, commit=commit)

    def purge(self, *, dry_run: bool = False, commit: bool = True) -> ArchiveResult:
        """Remove the archived entries older than archive.retention_days from the archive, in one commit."""
        from .lifecycle.purging import purge

        return purge(self.store, dry_run=dry_run, commit=commit)

    def check(self, *, commit: bool = True, archive: bool = True, remember: bool = False) -> CheckResult:
        """Session start: archive expired entries (auto_archive, unless not
        `archive`, or git is mid-operation or on a detached HEAD) and report
        what is due. With `remember` (a session hook, which says only what is
        new), `result.unreported` holds the due ids no earlier remembering
        check reported."""
        from .lifecycle.archiving import check, unreported

        result = check(self.store, commit=commit, archive_expired=archive)
        if remember:
            result.unreported = unreported(self.store, result)
        return result

    def check_scopes(self, **options: Any) -> dict[str | None, CheckResult]:
        """`check` (same options) in every scope of the repository, by scope name."""
        names: builtins.list[str | None] = [*self.config.scopes()] or [self.config.scope]
        return {name: (self._scoped(name) if name is not None else self).check(**options) for name in names}

    # -- git -----------------------------------------------------------------

    def hooks(self, action: str) -> HooksResult:
        """Install, uninstall or show mem's git hooks and merge driver in this clone."""
        from .git.hooks import run

        return run(self.config, action)

    def merge_fixup(
        self, hook: str, args: Iterable[str] = (), stdin: str = "", *, all_scopes: bool = False
    ) -> FixupResult:
        """Run by mem's git hooks after a merge, rebase or cherry-pick: renumber
        colliding ids in files the merge driver never saw; with `all_scopes`
        (the hooks), in every scope, another scope's ids labelled `scope:ID`."""
        from .git.renumber import FixupResult, fixup

        if not self.config.enabled:  # Loa's switch: the hook writes nothing, and says so
            return FixupResult(notes=["memory is off (memory_schema.enabled: false): nothing renumbered"])
        names = self.config.scopes() if all_scopes else []
        stores = [(None if name == self.config.scope else name, self._scoped(name).store) for name in names] or [
            (None, self.store)
        ]
        return fixup(stores, hook, list(args), stdin)

    def settle(self, entry_id: str, keep: str | None = None) -> SettleResult:
        """Chain the two successors a merge left on `entry_id` (a conflict): `keep` first, else by time."""
        from .git.settle import settle

        return settle(self.store, entry_id, keep)


def _bad(item: Any):
    raise BadInput(f"cannot add {type(item).__name__}; give a Request or a mapping")
