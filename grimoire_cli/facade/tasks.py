"""`g.tasks`: prospective tasks (docs/agent-personas.md), each waiting for a
time, an event or the next session. SABRE's own names for these calls are in
`adapters/sabre.py`; the work is done by `kinds/tasks.py`.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput, Duplicate
from .host import Namespace

if TYPE_CHECKING:
    from ..core.model import Entry


class Tasks(Namespace):
    """The prospective tasks of the grimoire it serves."""

    def add(
        self,
        text: str,
        *,
        due: str | None = None,
        on: str | None = None,
        next_session: bool = False,
        condition: str | None = None,
        context: dict[str, Any] | None = None,
        category: str | None = None,
        tags: Iterable[str] = (),
        importance: int | None = None,
    ) -> Entry:
        """Schedule a task with one trigger: `due` (+1h or an ISO time), `on`
        (an event `fire` names), `next_session`, or `condition` (an expression
        over the context `due` is given, kinds/conditions.py)."""
        from ..kinds.tasks import fields_for
        from ..memory.request import Request

        spec = self.config.of_kind("task", category)
        fields = fields_for(
            text, self.grimoire.now(), due=due, on=on, next_session=next_session, condition=condition, context=context
        )
        self._refuse_pending_twin(text, spec.name)
        # Only a pending twin is a duplicate: a task done or cancelled may well be scheduled again (a weekly report).
        request = Request(text, category=spec.name, fields=fields, tags=list(tags), importance=importance, dedupe=False)
        return self.grimoire.add_many([request])[0]

    def _refuse_pending_twin(self, text: str, category: str) -> None:
        """Refuse scheduling a task of the same text as one still pending in `category`."""
        from ..core.model import normalize_text

        wanted = normalize_text(text)
        for entry in self.list():
            if entry.category == category and normalize_text(entry.content) == wanted:
                raise Duplicate(
                    f"the same task is already pending: {entry.id}",
                    f"nothing to add; to schedule it again, end it first (`mem task done {entry.id}` or `mem task cancel {entry.id}`)",
                    entry.id,
                )

    def list(self, *, every: bool = False) -> builtins.list[Entry]:
        """Pending tasks, due first (with `every`, ended ones not yet archived too)."""
        from ..kinds.tasks import tasks

        self.config.of_kind("task")
        return tasks(self.store, self.grimoire.now(), every=every)

    def due(self, *, context: dict[str, Any] | None = None) -> builtins.list[Entry]:
        """Pending tasks whose time, event or session has come, and, given a
        `context`, the condition tasks whose condition holds against it."""
        from ..kinds.tasks import due

        self.config.of_kind("task")
        return due(self.store, self.grimoire.now(), context)

    def end(self, entry_id: str, status: str = "done") -> Entry:
        """Mark a pending task done or cancelled (an edit in place); it is
        archived once the category's ttl has passed."""
        from ..kinds.tasks import ended, task_entry
        from ..memory.adding import update

        if status not in ("done", "cancelled"):
            raise BadInput(f"bad status {status!r}", "a task ends done or cancelled")
        with self.store.lock():
            entry = task_entry(self.store, entry_id)
            entry.data = ended(entry, status, self.grimoire.now())
            update(self.store, entry_id, entry.data)
        return entry

    def fire(self, event: str) -> builtins.list[Entry]:
        """Make the pending tasks waiting for `event` due now; those tasks."""
        from ..kinds.tasks import check_event, fired, tasks
        from ..memory.adding import update_many

        check_event(event)
        self.config.of_kind("task")
        with self.store.lock():
            waiting = tasks(self.store, self.grimoire.now())
            changes = fired(waiting, event, self.grimoire.now())
            if changes:
                update_many(self.store, changes)
        for entry in waiting:
            entry.data = changes.get(entry.id, entry.data)
        return [entry for entry in waiting if entry.id in changes]
