"""`g.learning`: learning from executions (docs/learning.md). The work is
done by the module each method names.

The Persistent Memory System's own names for these calls are in `adapters/pms.py`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .host import Namespace

if TYPE_CHECKING:
    from ..core.model import Entry
    from ..learning.insights import Learned
    from ..learning.observations import Observed
    from ..learning.patterns import Pattern
    from ..learning.recommend import Recommended
    from ..learning.tools import ToolMemory

RECALL_TYPES = ("patterns", "tools", "insights", "preferences")


class Learning(Namespace):
    """Learning from the executions of the grimoire it serves."""

    def observe(self, records: Iterable[dict[str, Any] | str], *, skip_invalid: bool = False) -> Observed:
        """Append execution records (mappings, or JSON Lines text) to the
        local observation log, checked and redacted; all or nothing unless `skip_invalid`."""
        from ..core.errors import BadInput
        from ..learning.observations import observe

        def line(record: dict[str, Any] | str) -> str:
            try:
                return record if isinstance(record, str) else json.dumps(record, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise BadInput(
                    f"a record is not JSON: {exc}", "give records of JSON values (text, numbers, lists, mappings)"
                ) from None

        return observe(self.store, [line(record) for record in records], skip_invalid=skip_invalid)

    def tools(self, name: str | None = None, *, context: str | None = None) -> list[ToolMemory]:
        """Tool memory from the observation log: per tool its runs, success
        rate, durations (mean, p50, p95), retries, success per context and
        its most common errors by shape; only `name`, only runs in `context`
        (none there: an empty list)."""
        from ..learning.tools import tool_memory

        return tool_memory(self.store, name, context)

    def tool_days(self) -> dict[str, list[dict[str, Any]]]:
        """Per tool, its runs, success rate and p50 / p95 duration per UTC day
        (the last 90 days with runs), from the observation log."""
        from ..learning.tool_days import tool_days

        return tool_days(self.store)

    def patterns(self, type: str | None = None, *, min_usage: int = 1, context: str | None = None) -> list[Pattern]:
        """Patterns of the observed tasks (query_pattern, plan_pattern,
        tool_sequence, error_pattern) with success rate, reliability, means,
        usage, first and last seen and evidence task ids; most used first.
        With `context`, those a task in that context showed (their numbers
        over all their tasks)."""
        from ..learning.patterns import patterns

        return patterns(self.store, type, min_usage, context)

    def metrics(self, *, by: str = "week") -> dict[str, Any]:
        """Success metrics over time from the observation log: per day or
        week its tasks, success rate, reuse rate (tasks running a plan an
        earlier one ran) and error rate (failed steps); the error reduction
        from the first period to the last (learning/metrics.py)."""
        from ..learning.metrics import success_metrics

        return success_metrics(self.store, by)

    def recommend(self, action: str, *, context: str | None = None, limit: int = 5) -> Recommended:
        """The observed tools for an action, ranked by success rate in
        `context` (else over all contexts, with a note); a note when there is no evidence."""
        from ..learning.recommend import recommend

        return recommend(self.store, action, context, limit)

    def recall_all(
        self, text: str, *, types: Iterable[str] | None = None, limit: int = 5, context: str | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        """Patterns, tool memory, insights and preferences about `text`, in one
        answer (as JSON-able mappings). With `context`: the patterns tasks in
        it showed, tool memory over its runs, and the insights that apply
        there (one whose applies_to lists contexts, only in those)."""
        from ..core.bounds import text as check_text
        from ..core.bounds import whole
        from ..core.errors import BadInput
        from ..learning.insights import applies_in
        from ..learning.recommend import matching_patterns, matching_tools

        check_text(text, "the query")
        whole(limit, "the limit")
        if types is not None and not list(types):
            raise BadInput(
                "no types to recall", f"name some of {', '.join(RECALL_TYPES)}, or leave --types out for all"
            )
        chosen = list(dict.fromkeys(types or RECALL_TYPES))
        unknown = [t for t in chosen if t not in RECALL_TYPES]
        if unknown:
            raise BadInput(f"unknown type {unknown[0]!r} to recall", f"use some of {', '.join(RECALL_TYPES)}")
        out: dict[str, list[dict[str, Any]]] = {}
        if "patterns" in chosen:
            out["patterns"] = [p.to_dict() for p in matching_patterns(self.store, text, limit, context)]
        if "tools" in chosen:
            every = self.tools(context=context)
            names = matching_tools([m.tool for m in every], text)[:limit]
            out["tools"] = [m.to_dict() for m in every if m.tool in names]
        insights = self.config.names_of_kind("insight")
        if "insights" in chosen or "preferences" in chosen:
            hits = (
                [hit.entry for hit in self.grimoire.query(text, categories=insights, limit=4 * limit)]
                if insights
                else []
            )
            hits = [e for e in hits if applies_in(e.data.get("applies_to"), context)]
            if "insights" in chosen:
                out["insights"] = [e.to_dict() for e in hits if e.data.get("insight_type") != "preference"][:limit]
            if "preferences" in chosen:
                said = (
                    [hit.entry for hit in self.grimoire.query(text, categories=["preference"], limit=limit)]
                    if "preference" in self.config.categories
                    else []
                )
                out["preferences"] = [
                    e.to_dict() for e in said + [e for e in hits if e.data.get("insight_type") == "preference"]
                ][:limit]
        return out

    def learn(self, *, category: str | None = None, dry_run: bool = False) -> Learned:
        """Turn the observation log's evidence into insight entries (best
        practices, warnings, preferences); the same evidence writes nothing."""
        from ..learning.insights import learn

        return learn(self.store, self.grimoire.now(), category=category, dry_run=dry_run)

    def insights(self, *, type: str | None = None, category: str | None = None) -> list[Entry]:
        """The active insights (of one insight_type), newest first."""
        from ..core.errors import BadInput
        from ..learning.insights import TYPES, active_insights

        if category is not None:
            self.config.of_kind("insight", category)
        elif not self.config.names_of_kind("insight"):
            self.config.of_kind("insight")  # the error naming the preset
        if type is not None and type not in TYPES:
            raise BadInput(f"unknown insight type {type!r}", f"use one of {', '.join(TYPES)}")
        return [
            e
            for e in active_insights(self.store, self.grimoire.now(), category)
            if type is None or e.data.get("insight_type") == type
        ]

    def add_insight(
        self,
        content: str,
        *,
        insight_type: str = "rule",
        applies_to: str | dict[str, Any],
        rule_id: str | None = None,
        confidence: float | None = None,
        evidence: Iterable[str | dict[str, Any]] = (),
        validated: bool = False,
        validated_by: str | None = None,
        tags: Iterable[str] = (),
        category: str | None = None,
    ) -> Entry:
        """An insight written by hand. Its `rule_id` names it: storing another
        insight under the same rule id supersedes it. Without one, the rule
        id is made from the type, what it applies to and the text, so two
        different insights about one thing stand side by side. The rule ids
        `mem learn` makes (`bp-`, `warn-`, `pref-` and 12 hex digits) are its own.
        `applies_to` is a text or `{agents, contexts, conditions}`; an
        evidence item a task id or `{task_id, description?, timestamp?}`."""
        import hashlib
        import json

        from ..core.errors import BadInput
        from ..learning.insights import is_learned
        from ..memory.request import Request

        spec = self.config.of_kind("insight", category)
        if rule_id is not None and is_learned(rule_id):
            raise BadInput(
                f"rule id {rule_id!r} has the form of the ones mem learn makes",
                "choose another rule id, e.g. manual-<name>",
            )
        # A text as it was always hashed (the same insight keeps its rule id); a mapping in one spelling
        about = applies_to if isinstance(applies_to, str) else json.dumps(applies_to, sort_keys=True, default=str)
        rid = rule_id or "manual-" + hashlib.sha256(f"{insight_type}\x1f{about}\x1f{content}".encode()).hexdigest()[:12]
        fields: dict[str, Any] = {
            "insight_type": insight_type,
            "applies_to": applies_to,
            "evidence": list(evidence),
            "validated": validated,
            "rule_id": rid,
        }
        if validated_by is not None:
            fields["validated_by"] = validated_by
        return self.grimoire.add_many(
            [Request(content, category=spec.name, confidence=confidence, tags=list(tags), fields=fields)]
        )[0]

    def correct(
        self,
        field: str,
        corrected: Any,
        *,
        original: Any = None,
        context: str | None = None,
        task_id: str | None = None,
        agent: str | None = None,
    ) -> Observed:
        """Record one correction by hand: `field` should have been
        `corrected` (not `original`) in `context`; `mem learn` makes a
        preference of enough consistent ones."""
        import uuid

        from ..core.clock import iso
        from ..core.errors import BadInput
        from ..learning.observations import check

        # Checked here, before the schema: its message would name `corrections.0.field`, which no one typed.
        if not isinstance(field, str) or not field.strip():
            raise BadInput("a correction needs the field that was corrected", "name it, e.g. mem correct carrier ups")
        if isinstance(corrected, str) and not corrected.strip():
            raise BadInput(
                f"a correction of {field} needs the value it should have been",
                f"give it, e.g. mem correct {field} VALUE",
            )
        moment = self.grimoire.now()
        correction = {"field": field, "original": original, "corrected": corrected}
        # Each correction is its own piece of evidence: the same one made twice is counted twice.
        task = task_id or f"correction-{moment.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        record: dict[str, Any] = {
            "task_id": task,
            "goal": f"correct {field}",
            "agent": agent or "user",
            "outcome": "success",
            "started_at": iso(moment),
            "steps": [],
            "corrections": [correction],
        }
        if context:
            record["context"] = context
        check(record)  # its own message: a correction by hand has no line number
        return self.observe([record])
