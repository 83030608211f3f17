"""`g.lifecycle`: tiers, forgetting and consolidation
(docs/tiers-and-consolidation.md; Samaritan's and Protea's designs). Each
method is one call an agent runtime makes; the work is done by the module it
names.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.bounds import whole
from ..core.errors import BadInput
from .host import Namespace

if TYPE_CHECKING:
    from ..core.model import Entry
    from ..lifecycle.compaction import Compacted
    from ..lifecycle.consolidation import Consolidated
    from ..retrieval.tiers import Aged


def hours(text: str, option: str) -> float:
    """`24h`, `2d`, `90m` as hours."""
    from ..core.clock import span_seconds

    seconds = span_seconds(text)
    if seconds is None:
        raise BadInput(f"cannot read {option} {text!r}", "give a span like 24h, 2d or 90m")
    return seconds / 3600


class Lifecycle(Namespace):
    """The tiers, forgetting and consolidation of the grimoire it serves."""

    def age(
        self,
        *,
        older_than: str | None = None,
        most: int | None = None,
        max_rows: int | None = None,
        dry_run: bool = False,
        categories: list[str] | None = None,
    ) -> Aged:
        """The hot / long-term split now, what moved since the last `age`
        (recorded unless `dry_run`); `most` tightens it for this run. `older_than`
        (24h) ages for good (Samaritan's aging): what it moves stays long-term,
        recorded in local state (storage/aging.py); `moved_to_long` is then what
        this run moved, at most `max_rows` (Samaritan's cap: the least important,
        then the oldest, first; the rest stay hot). `categories` (with `older_than`)
        ages only their entries for good (an adapter's own rows). With `dry_run`, only shown."""
        from ..retrieval.tiers import age

        if most is not None:
            whole(most, "--max", 0)
        if max_rows is not None:
            whole(max_rows, "--max-rows", 0)
            if older_than is None:
                raise BadInput("--max-rows caps the moves of an aging for good", "give --older-than too, e.g. 24h")
        moment = self.grimoire.now()
        if older_than is None:
            if categories is not None:
                raise BadInput("categories narrow an aging for good", "give older_than too, e.g. 24h")
            return age(self.store, moment, most=most, dry_run=dry_run)
        return self._age_for_good(moment, hours(older_than, "--older-than"), most, max_rows, dry_run, categories)

    def _age_for_good(
        self,
        moment: datetime,
        older_than_hours: float,
        most: int | None,
        max_rows: int | None,
        dry_run: bool,
        categories: list[str] | None = None,
    ) -> Aged:
        """`age` with `older_than`: what it moves (hot now, long-term under the
        tightened split, at most `max_rows` of them), recorded unless `dry_run`;
        under the lock, so two agings never lose one."""
        from ..core.clock import iso
        from ..retrieval.tiers import age, in_tier
        from ..storage import aging

        with self.store.lock(writing=not dry_run):
            hot_before = set(in_tier(self.store, moment, "hot"))
            aged = age(self.store, moment, older_than_hours=older_than_hours, most=most, dry_run=True)
            moving = sorted(hot_before & set(aged.long))
            if categories is not None:  # the others are not this caller's to age: they stay hot, unrecorded
                held = self.store.by_id(moving, include_archive=False)
                moving = [i for i in moving if i in held and held[i].category in categories]
            if max_rows is not None and len(moving) > max_rows:
                moving = self._least_important(moving, moment)[:max_rows]
            staying = hot_before & set(aged.long) - set(moving)
            if not dry_run and staying:  # a cut would move them all: the moved ones, one by one
                aging.record_ids(self.config.local_dir, moving, iso(moment))
            elif not dry_run:
                cut = moment.timestamp() - older_than_hours * 3600
                aging.record(self.config.local_dir, cut, iso(moment))
                pushed = self._born_after(moving, cut) if most is not None else []
                if pushed:  # what --max moved, younger than the cut, stays long-term too
                    aging.record_ids(self.config.local_dir, pushed, iso(moment))
        aged.hot, aged.long = sorted(set(aged.hot) | staying), sorted(set(aged.long) - staying)
        aged.moved_to_long, aged.moved_to_hot = sorted(moving), []
        aged.since, aged.recorded, aged.dry_run = None, not dry_run, dry_run
        return aged

    def _born_after(self, ids: list[str], cut: float) -> list[str]:
        """Those of these entries born after `cut` (POSIX time)."""
        return [e.id for e in self.store.by_id(ids, include_archive=False).values() if (e.born or 0) > cut]

    def _least_important(self, ids: list[str], moment: datetime) -> list[str]:
        """These entries' ids, the least important (effective importance) first, then the oldest."""
        decay = self.config.settings.decay
        at = moment.timestamp()

        def rank(entry: Entry) -> tuple[int, float, str]:
            born = entry.born if entry.born is not None else at
            return decay.of(entry.importance, at - born), born, entry.id

        return [entry.id for entry in sorted(self.store.by_id(ids, include_archive=False).values(), key=rank)]

    def expiring(self, days: int) -> list[Entry]:
        """Active entries that expire within `days` (not those living a day or
        less: `lifecycle.rules.expiring_within`), newest first; no chat messages."""
        from ..lifecycle.archiving import expiring

        return expiring(self.store, self.grimoire.now(), whole(days, "days", 0), self.config.names_of_kind("chat"))

    def review_page(self, first: int, last: int | None) -> tuple[list[dict[str, Any]], int]:
        """`g.review().page(first, last)` (the web view's review page): the
        same entries and pairs, with only the entries shown read whole."""
        from ..lifecycle.reviewing import review_page

        return review_page(self.store, self.grimoire.now(), first, last)

    def heat(self, entry: Entry) -> dict[str, Any]:
        """What is computed of an entry at read time: its effective importance
        (decayed) and, when active, its tier (hot or long)."""
        from ..retrieval.tiers import in_tier

        moment = self.grimoire.now()
        age = moment.timestamp() - entry.born if entry.born is not None else None
        out: dict[str, Any] = {
            "effective_importance": self.config.settings.decay.of(entry.importance, age),
            "memory_tier": None,
        }
        if entry.is_active(moment):
            out["memory_tier"] = "hot" if entry.id in in_tier(self.store, moment, "hot") else "long"
        return out

    # -- consolidation and compaction ------------------------------------------

    def consolidate(
        self,
        transcript: str | list[dict[str, Any]],
        *,
        command: str | None = None,
        session_id: str | None = None,
        dry_run: bool = False,
        where: str = "the transcript",
        into: str | None = None,
    ) -> Consolidated:
        """Summarize a conversation (its text in any format `mem consolidate`
        reads, or a list of {role, content}) through the summarizer `command`
        (default consolidate.command) and save what it extracts, with a
        summary entry, in one lock. `dry_run` saves nothing. `into`: one note
        category for every fact, decision and preference it extracts (an
        adapter's own, where its reads find them)."""
        import json

        from ..lifecycle.consolidation import consolidate
        from ..lifecycle.transcripts import read_transcript

        text = transcript if isinstance(transcript, str) else json.dumps(list(transcript))
        settings = self.config.settings.consolidate
        return consolidate(
            self.store,
            self.grimoire.now(),
            read_transcript(text, where),
            command=command or settings.command,
            option="--with" if command else "consolidate.command",
            timeout=settings.timeout,
            session_id=session_id,
            dry_run=dry_run,
            into=into,
        )

    def compact(
        self,
        *,
        category: str | None = None,
        keep: int | Mapping[str, int] | None = None,
        command: str | None = None,
        summarize: bool = True,
        dry_run: bool = False,
        keep_total: int | None = None,
    ) -> Compacted:
        """Condense each category's active entries past the newest `keep`
        (compaction.keep; with `keep_total`, only a `keep` given or set per
        category) and past the newest `keep_total` of the whole grimoire (Protea's
        keep_recent) into one entry; a mapping `keep` names the categories and
        each one's keep (0: none beyond the total). Through the summarizer `command`
        (default consolidate.command) or, without `summarize`, from their
        summaries; archive them superseded by it, in one commit. A dry run
        runs no command: it lists what would be condensed."""
        from ..lifecycle.compaction import compact

        if isinstance(keep, Mapping):
            if category is not None or keep_total is None:
                raise BadInput("a keep per category goes with a total and no category", "give keep_total=N")
            for name, count in keep.items():
                whole(count, f"the keep of {name}", 0)
        elif keep is not None:
            whole(keep, "--keep", hint="keep the newest N entries of each category, e.g. --keep 200")
        if keep_total is not None:
            whole(keep_total, "--keep-total", hint="keep the newest N entries of the grimoire, e.g. --keep-total 200")
        if command is not None and not summarize:
            raise BadInput("--with and --no-summary ask for two things", "give one of them")
        return compact(
            self.store,
            self.grimoire.now(),
            category=category,
            keep=keep,
            command=(command or self.config.settings.consolidate.command) if summarize else None,
            summarize=summarize,
            timeout=self.config.settings.consolidate.timeout,
            dry_run=dry_run,
            keep_total=keep_total,
        )
