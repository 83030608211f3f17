"""SABRE's memory helpers (the SABRE design's calls) over a `Grimoire`: the same
names, argument order, defaults and return shapes, so code written for
SABRE's runtime namespace runs unchanged (docs/adapters.md).

The grimoire opened in a scope is the persona: no helper takes a persona.
Where SABRE and mem differ (ids are text, mem runs no step of a procedure),
docs/adapters.md says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput, NotFound
from ..facade.kinds import check_category_name
from ..kinds.procedures import episodes_of, sabre_step
from .sabre_cache import WorkingMemory, cache_through, instrument, marked
from .sabre_procedures import procedure_of

if TYPE_CHECKING:
    from ..api import Grimoire
    from ..core.config import Config
    from ..core.model import Entry

# SABRE's memory types (clear_memory, memory_stats) and the kind of category holding each.
MEMORY_TYPES = {"semantic": "note", "episodic": "episode", "procedural": "procedure", "prospective": "task"}
_TRIGGER_UNITS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hour": 3600,
    "d": 86400,
    "day": 86400,
}
_RELATIVE = re.compile(r"^\+?\s*(\d+)\s*([a-z]+?)s?\Z")


def ttl_of(seconds: int | None) -> str:
    """SABRE's TTL in seconds as a grimoire ttl in the largest unit that holds
    it exactly (3600 -> 1h, 90 -> 90s); None is permanent."""
    if seconds is None:
        return "permanent"
    if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds <= 0:
        raise BadInput(f"bad ttl {seconds!r}", "give the TTL in seconds as a positive whole number, e.g. ttl=3600")
    from ..core.clock import seconds_ttl

    return seconds_ttl(seconds)


def due_of(trigger: str) -> dict[str, Any]:
    """`time:+1hour`, `time:+30min`, `time:<ISO>`, `event:<name>` or
    `condition:<expr>` as the options of `Grimoire.tasks.add`."""
    kind, _, value = trigger.partition(":") if isinstance(trigger, str) else ("", "", "")
    if kind == "event" and value:
        return {"on": value}
    if kind == "condition" and value:
        return {"condition": value}  # checked by the task (kinds/conditions.py)
    if kind != "time" or not value:
        raise BadInput(
            f"cannot read trigger {trigger!r}",
            'give "time:+1hour", "time:2026-12-01T09:00:00Z", "event:<name>" or "condition:<expr>"',
        )
    relative = _RELATIVE.match(value.strip().lower())
    if relative is None:
        return {"due": value.strip()}  # an ISO time, checked by the task
    size = _TRIGGER_UNITS.get(relative[2])
    if size is None:
        raise BadInput(f"cannot read trigger {trigger!r}", "use a unit of seconds, minutes, hours or days")
    return {"due": "+" + ttl_of(int(relative[1]) * size)}


class Sabre:
    """SABRE's helpers over one persona's grimoire. `namespace()` gives them
    as the plain functions SABRE injects into its runtime. `run_step`, when
    given, is how `execute_procedure` runs a step (mem runs nothing itself);
    `transcript_of` is how `consolidate_conversation` reads a conversation."""

    def __init__(
        self,
        grimoire: Grimoire,
        *,
        run_step: Callable[[dict[str, Any], dict[str, Any]], Any] | None = None,
        transcript_of: Callable[[str], Any] | None = None,
    ):
        self.grimoire = grimoire
        self.run_step = run_step
        self.transcript_of = transcript_of
        self.working = WorkingMemory()  # what timed helpers keep in this process (`helpers`)

    def namespace(self) -> dict[str, Any]:
        """Every helper by its SABRE name, to put in a runtime's namespace."""
        names = (
            "remember_fact recall_fact search_facts update_fact remember_episode recall_episodes search_episodes "
            "remember_procedure recall_procedure list_procedures execute_procedure schedule_task get_pending_tasks "
            "complete_task cancel_task list_memory_categories memory_stats clear_memory auto_cache no_cache "
            "cacheable consolidate_conversation"
        )
        return {name: getattr(self, name) for name in names.split()}

    # -- categories: SABRE's are free-form, a grimoire's are configured ------------

    def _placed(self, category: str | None, kind: str, *, writing: bool = False) -> tuple[str | None, list[str]]:
        """Where SABRE's `category` is in this grimoire: a configured category
        of `kind`; with `memory_schema.new_categories`, `general` (SABRE's
        default) is the kind's default category and a write names a new one
        (the facade adds it on first use). Otherwise the kind's default
        category, `category` kept as a tag (a read filters on the tag)."""
        config = self.grimoire.config
        if writing and category is not None:
            check_category_name(category)
        free_form = config.settings.new_categories is not None
        if free_form and category == "general":
            return _default_category(config, kind), []
        spec = config.categories.get(category or "")
        if spec is not None and spec.kind == kind:
            return spec.name, []
        if free_form and writing and spec is None:
            return category, []
        return None, [category] if category else []

    # -- semantic memory --------------------------------------------------------

    def remember_fact(self, key: str, value: Any, ttl: int | None = 3600, category: str = "general") -> str:
        """Upsert `value` under `key` for `ttl` seconds; the id of the entry holding it."""
        placed, tags = self._placed(category, "note", writing=True)
        self._check_seconds(placed, ttl_of(ttl))
        return self.grimoire.facts.remember(key, value, ttl=ttl_of(ttl), category=placed, tags=tags).entry.id

    def _check_seconds(self, category: str | None, ttl: str) -> None:
        """Loa's own categories keep whole days; SABRE's facts live for seconds
        (3600 by default), which its preset's semantic category serves."""
        config = self.grimoire.config
        spec = config.categories.get(category or _default_category(config, "note"))
        if spec is not None and not spec.takes_ttl(ttl):
            raise BadInput(
                f"the {spec.name} category keeps whole days, not SABRE's ttl of {ttl}",
                "run `mem init --preset sabre` first (its semantic category keeps seconds), or give ttl in days (86400)",
            )

    def recall_fact(self, key: str) -> Any:
        """The value, or None when missing or expired. A dict comes back with
        `_cached_at`, the time it was remembered."""
        try:
            entry = self.grimoire.facts.recall_entry(key)
        except NotFound:
            return None
        from ..kinds.facts import value_of

        value = value_of(entry)
        if isinstance(value, dict) and "_cached_at" not in value:
            value = {**value, "_cached_at": entry.timestamp}
        return value

    def search_facts(self, category: str | None = None, pattern: str | None = None) -> dict[str, Any]:
        """key -> value of the active facts in `category` (a category or a tag)
        whose key matches `pattern` (a glob; without wildcards, a substring)."""
        from ..kinds.facts import value_of

        glob = pattern if pattern is None or any(c in pattern for c in "*?[") else f"*{pattern}*"
        placed, tags = self._placed(category, "note")
        found = self.grimoire.facts.list(glob, categories=[placed] if placed else None)
        return {e.key: value_of(e) for e in found if e.key and set(tags) <= set(e.tags)}

    def update_fact(self, key: str, value: Any) -> str:
        """Replace the value, keeping the fact's ttl and category and restarting
        its expiry, even for the same value (a new fact gets the defaults)."""
        current = self._holder(key)
        if current is None:
            return self.remember_fact(key, value)
        return self.grimoire.facts.remember(
            key, value, ttl=current.data.get("ttl"), category=current.category, tags=current.tags, refresh=True
        ).entry.id

    def _holder(self, key: str) -> Entry | None:
        try:
            return self.grimoire.get(key)
        except NotFound:
            return None

    # -- episodic memory --------------------------------------------------------

    def remember_episode(self, event: str, context: dict[str, Any] | None = None, learned: str | None = None) -> str:
        """Record an event (a slug), its context and lesson; the new entry's id."""
        return self.grimoire.episodes.add(event, context=context, learned=learned).id

    def recall_episodes(self, query: str, time_range: str | None = None, limit: int = 5) -> list[dict[str, Any]]:
        """Episodes matching `query`, best first; `time_range` as `since`
        takes it (30d, 48h, an ISO date). Context fields are at top level too."""
        self._check_time(time_range, "time_range")
        hits = self.grimoire.episodes.list(query, since=time_range, limit=limit)
        return [self._episode(hit.entry) for hit in hits]

    def search_episodes(self, event_type: str | None = None, date_range: tuple | None = None) -> list[dict[str, Any]]:
        """Episodes of one event, created within `date_range` = (start, end), newest first."""
        since, until = tuple(date_range) if date_range else (None, None)
        self._check_time(since, "date_range start")
        self._check_time(until, "date_range end")
        found = self.grimoire.episodes.list(None, event=event_type, since=since, until=until, limit=1000)
        return [self._episode(hit.entry) for hit in found]

    def _check_time(self, value: Any, argument: str) -> None:
        """A span back from now (30d, 48h) or an ISO date, told by SABRE's argument when bad."""
        from ..core.clock import back_time

        if isinstance(value, str):
            back_time(value, self.grimoire.now(), argument)

    def _episode(self, entry: Entry) -> dict[str, Any]:
        context = entry.data.get("context") or {}
        return {
            **context,
            "id": entry.id,
            "timestamp": entry.timestamp,
            "persona": self.grimoire.config.scope,
            "conversation_id": entry.data.get("source", {}).get("session_id"),
            "event": entry.data.get("event"),
            "context": context,
            "learned": entry.data.get("learned"),
        }

    # -- procedural memory ------------------------------------------------------

    def remember_procedure(
        self,
        name: str,
        steps: list[dict[str, Any]],
        category: str = "general",
        *,
        description: str | None = None,
        learned_from: list[dict[str, str]] | None = None,
        avg_execution_time: str | None = None,
    ) -> str:
        """Keep a workflow: steps of {action, name?, description?, condition?}; the entry's id.
        The rest of SABRE's procedure YAML may come as keywords: `learned_from`
        ([{episode: id}], ids of this grimoire) and `avg_execution_time` (kept as given)."""
        if not isinstance(steps, list) or not steps:
            raise BadInput(f"the steps of {name!r} are not a list of steps", 'give steps=[{"action": "..."}, ...]')
        placed, tags = self._placed(category, "procedure", writing=True)
        document: dict[str, Any] = {
            "name": name,
            "steps": [sabre_step(step, number) for number, step in enumerate(steps, 1)],
        }
        if description is not None:
            document["description"] = description
        if tags:
            document["tags"] = tags
        metadata = {"avg_execution_time": avg_execution_time} if avg_execution_time is not None else None
        saved = self.grimoire.procedures.add(
            document, category=placed, related=episodes_of(learned_from), metadata=metadata
        )
        return saved.entry.id

    def recall_procedure(self, name: str) -> dict[str, Any] | None:
        """The procedure as SABRE's YAML shapes it, or None."""
        try:
            checklist = self.grimoire.procedures.get(name, template=True)
        except NotFound:
            return None
        return procedure_of(checklist.entry, checklist.steps, checklist.description, self.grimoire.config.scope)

    def list_procedures(self, category: str | None = None) -> list[dict[str, Any]]:
        """The active procedures (of a category: a procedure category or a tag), by name."""
        placed, tags = self._placed(category, "procedure")
        found = self.grimoire.procedures.list(category=placed)
        return [
            procedure_of(e, e.data.get("steps") or [], e.data.get("description"), self.grimoire.config.scope)
            for e in found
            if set(tags) <= set(e.tags)
        ]

    def execute_procedure(self, name: str, params: dict[str, Any] | None = None) -> list[Any]:
        """Run the steps in order through `run_step(step, params)` (mem runs
        no code itself) and record the outcome on the procedure; the results."""
        if self.run_step is None:
            raise BadInput(
                "mem runs no procedure step itself", "give Sabre(grimoire, run_step=...) the runtime's step runner"
            )
        procedure = self.recall_procedure(name)
        if procedure is None:
            raise NotFound(f"no active procedure named {name!r}", "list them with list_procedures()")
        results, success = [], False
        try:
            for step in procedure["steps"]:
                results.append(self.run_step(step, dict(params or {})))
            success = True
        finally:
            self.grimoire.apply(procedure["id"], success)
        return results

    # -- prospective memory -----------------------------------------------------

    def schedule_task(self, task: str, trigger: str, context: dict[str, Any] | None = None) -> str:
        """Defer `task` until its trigger (`time:+1hour`, `event:<name>`,
        `condition:<expr>`); the task's id."""
        options = due_of(trigger)
        if "due" in options and not options["due"].startswith("+"):
            from ..kinds.tasks import due_time

            try:
                due_time(options["due"], self.grimoire.now())
            except BadInput:
                raise BadInput(
                    f"cannot read trigger {trigger!r} as a time to come",
                    'give "time:+1hour", or "time:" and an ISO time later than now, like time:2026-12-01T09:00:00Z',
                ) from None
        return self.grimoire.tasks.add(task, context=context, **options).id

    def get_pending_tasks(self, context: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """The pending tasks that are due, oldest due first; given the
        runtime's `context`, the condition tasks that hold against it too."""
        return [_task(e) for e in self.grimoire.tasks.due(context=context)]

    def complete_task(self, task_id: str) -> None:
        self.grimoire.tasks.end(task_id, "done")

    def cancel_task(self, task_id: str) -> None:
        self.grimoire.tasks.end(task_id, "cancelled")

    # -- introspection ----------------------------------------------------------

    def list_memory_categories(self) -> list[str]:
        """The categories of this persona's grimoire, by name."""
        return [c["name"] for c in self.grimoire.categories()]

    def memory_stats(self) -> dict[str, Any]:
        """Active entries per memory type and per category, bytes on disk, cache hits and misses."""
        stats = self.grimoire.stats().to_dict()
        per_category = {name: counts.get("active", 0) for name, counts in stats["categories"].items()}
        kinds = {c["name"]: c["kind"] for c in self.grimoire.categories()}
        by_type = {
            memory_type: {"count": sum(n for name, n in per_category.items() if kinds.get(name) == kind)}
            for memory_type, kind in MEMORY_TYPES.items()
        }
        return {
            **by_type,
            "categories": per_category,
            "bytes": stats["bytes"],
            "cache": stats["cache"],
        }

    def clear_memory(self, category: str | None = None, confirm: bool = False) -> int:
        """Archive, in one commit with reason `cleared`, every entry not yet
        archived (active, expired or superseded) of a memory type, a category
        or a tag (None: every category of the persona's scope). Returns how
        many entries that is; without `confirm` nothing moves (the count is
        what would). Git history and the archive keep them."""
        names = self.grimoire.config.categories
        if category is None or (category in names and category not in MEMORY_TYPES):
            whole = [category] if category else list(names)
            return len(self.grimoire.archive(categories=whole, dry_run=not confirm).archived)
        chosen = self._to_clear(category)
        if confirm and chosen:
            self.grimoire.archive(chosen, reason="cleared")
        return len(chosen)

    def _to_clear(self, category: str) -> list[str]:
        """The ids a memory type (semantic: the keyed facts) or a tag (a free-form category) holds."""
        if category in MEMORY_TYPES:
            kind = MEMORY_TYPES[category]
            if kind == "note":
                every = self.grimoire.list(expired=True, superseded=True)
                return [e.id for e in every if e.key]
            every = self.grimoire.list(
                categories=self.grimoire.config.names_of_kind(kind), expired=True, superseded=True
            )
            return [e.id for e in every]
        return [e.id for e in self.grimoire.list(tags=[category], expired=True, superseded=True)]

    # -- auto-caching -----------------------------------------------------------

    def auto_cache(
        self, ttl: int = 3600, category: str = "cache"
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Cache-through: a call's result is kept `ttl` seconds under a key
        made of the function's name and arguments, in the first local
        category (else `category`'s), `category` kept as a tag. Hits and
        misses are counted per `category` in the catalog (`mem stats`)."""
        kept_for = ttl_of(ttl)  # a bad ttl is refused where it is written, before any call
        return lambda function: cache_through(self, function, kept_for, category)

    def cacheable(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """`auto_cache()` with its defaults, as a bare decorator: always
        persisted, however fast (SABRE names it for structural data only)."""
        return self.auto_cache()(function)

    @staticmethod
    def no_cache(function: Callable[..., Any]) -> Callable[..., Any]:
        """Never cached: the function itself, marked so `helpers()` leaves it alone."""
        return marked(function, "never")

    def helpers(self, target: Any, *, threshold: float = 1.0, ttl: int = 3600) -> Any:
        """What SABRE's runtime does for its undecorated helpers, called once
        on them: `target` (a function, a mapping of names to helpers, a
        module, class or object) with each public function timed; a call
        slower than `threshold` seconds is persisted for `ttl` seconds as
        `@auto_cache()` would, later calls served from it; a faster one stays
        in working memory (`self.working`). Marked functions are left alone."""
        return instrument(self, target, threshold, ttl_of(ttl))

    # -- consolidation ----------------------------------------------------------

    async def consolidate_conversation(self, conversation_id: str, persona: str) -> None:
        """Summarize the conversation (read through `transcript_of`) with
        consolidate.command and save what it extracts in `persona`'s grimoire."""
        if self.transcript_of is None:
            raise BadInput("no way to read a conversation", "give Sabre(grimoire, transcript_of=...)")
        grimoire = self.grimoire if persona == self.grimoire.config.scope else self.grimoire.in_scope(persona)
        grimoire.lifecycle.consolidate(self.transcript_of(conversation_id), session_id=conversation_id)


def _default_category(config: Config, kind: str) -> str:
    """The category a write of `kind` goes to when it names none."""
    if kind == "note":
        from ..kinds.facts import fact_category

        return fact_category(config, None).name
    return config.of_kind(kind).name


def _task(entry: Entry) -> dict[str, Any]:
    trigger_type, _, trigger_value = str(entry.data.get("trigger", "")).partition(":")
    return {
        "id": entry.id,
        "task": entry.data.get("task"),
        "context": entry.data.get("context") or {},
        "trigger_type": trigger_type,
        "trigger_value": trigger_value,
        "status": entry.data.get("status"),
        "scheduled_for": entry.data.get("due_at"),
    }
