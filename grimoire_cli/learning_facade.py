"""The facade's methods for learning from executions (README: Learning from
executions; the Persistent Memory System's API): `Grimoire` inherits them,
as it does the kinds' (`kinds/facade.py`). The work is done by the module
each one names.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from .observations import Observed
    from .tools import ToolMemory
    from .storage.store import Store


class LearningFacade:
    """Mixed into `Grimoire`: it provides `store`."""

    store: "Store"

    def observe(self, records: "Iterable[dict[str, Any] | str]", *, skip_invalid: bool = False) -> "Observed":
        """Append execution records (mappings, or JSON Lines text) to the
        local observation log, checked and redacted; all or nothing unless `skip_invalid`."""
        from .observations import observe

        from .errors import BadInput

        def line(record: "dict[str, Any] | str") -> str:
            try:
                return record if isinstance(record, str) else json.dumps(record, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise BadInput(f"a record is not JSON: {exc}", "give records of JSON values (text, numbers, lists, mappings)") from None

        return observe(self.store, [line(record) for record in records], skip_invalid=skip_invalid)

    def tools(self, name: str | None = None, *, context: str | None = None) -> "list[ToolMemory]":
        """Tool memory from the observation log: per tool its runs, success
        rate, durations (mean, p50, p95), retries, success per context and
        its most common errors by shape; only `name`, only runs in `context`."""
        from .tools import tool_memory

        return tool_memory(self.store, name, context)
