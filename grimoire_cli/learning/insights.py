"""`mem learn` (the Persistent Memory System's learn step): evidence from
the observation log, as the catalog derives it, turned into tracked
`insight` entries (docs/learning.md).

The rules (`learning` settings):
- a pattern of `min_usage` (5) tasks or more whose success rate is above
  `min_success` (0.9) is a `best_practice`, with that rate as confidence;
- an error in more than `error_share` (10%) of a tool's runs is a
  `warning`, naming the known solutions (active `error` entries tagged with
  the tool): confidence 0.8 with one, else 0.5;
- `min_corrections` (3) or more corrections of one field in one context, all
  to the same value, are a `preference`; one correction to another value
  contradicts them, and no preference is written.

Each insight has a stable `rule_id` (the rule and what it is about,
hashed), and is the one active entry of it. An insight is written only when
its text or confidence differs from the active one's: the same evidence
writes nothing, and percentages are whole so that one more run rarely
moves them. Changed numbers supersede the old insight; an insight whose
evidence fell below its rule is archived as `ineffective` (that move is
committed, as `mem archive`'s is). The log is local and the insights are
shared: an insight about something this log does not mention at all (a
pattern it never saw, a tool it never ran) is evidence of nothing and
stays. An insight someone archived by hand (reason `manual`) is a veto:
its rule is not written again. Insights written by hand (`add_insight`)
have rule ids of their own and are left alone.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from ..memory.request import Request
from ..storage.catalog.queries import Filter, Order
from ..storage.store import Store
from .execution_log import ARROW, derived
from .patterns import Pattern
from .tools import evidence_of, known_solutions

if TYPE_CHECKING:
    from ..core.model import Entry
    from ..core.settings import Learning
    from ..storage.catalog.learned import CorrectionRow, PatternRow

_LEARNED = re.compile(r"^(bp|warn|pref)-[0-9a-f]{12}\Z")  # the rule ids `mem learn` makes, and owns
VALIDATOR = "mem learn"
# kinds.schema.json's insight_type: `mem learn` writes the first three, the rest are written by hand
TYPES = ("best_practice", "warning", "preference", "rule", "optimization", "pattern")


def is_learned(rule: str) -> bool:
    return bool(_LEARNED.match(rule))


class Insight(NamedTuple):
    """An insight the evidence calls for."""

    rule_id: str
    insight_type: str
    applies_to: str
    content: str
    summary: str
    confidence: float
    evidence: list[str]
    tags: list[str]


def rule_id(prefix: str, *parts: str) -> str:
    return prefix + hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:12]


def _percent(share: float) -> str:
    return f"{round(100 * share)}%"


def _best_practices(rows: list[PatternRow], rules: Learning) -> list[Insight]:
    # A plan of one tool is that tool's success rate, which tool memory gives (and a hook's one-step records would make one of every tool).
    good = [
        p
        for p in map(Pattern, rows)
        if p.success_rate > rules.min_success
        and p.evidence
        and not (p.type == "plan_pattern" and ARROW not in p.pattern)
        and p.type != "error_pattern"  # an error's failures are warnings (tool memory), never a practice to reuse
    ]
    # A two-tool plan is also its one tool sequence: said once, as the plan.
    plans = {p.pattern for p in good if p.type == "plan_pattern"}
    out = []
    for pattern in good:
        if pattern.type == "tool_sequence" and pattern.pattern in plans:
            continue
        rate = _percent(pattern.success_rate)
        text = {
            "query_pattern": f"Tasks like {pattern.pattern} succeed {rate} of the time: reuse how they were done.",
            "plan_pattern": f"The plan {pattern.pattern} succeeds {rate} of the time: prefer it.",
            "tool_sequence": f"Running {pattern.pattern} in that order succeeds {rate} of the time.",
        }[pattern.type]
        out.append(
            Insight(
                rule_id("bp-", pattern.type, pattern.pattern),
                "best_practice",
                f"{pattern.type}: {pattern.pattern}"[:500],
                text,
                f"best practice: {pattern.pattern} ({rate})"[:200],
                round(pattern.success_rate, 2),
                pattern.evidence,
                ["best-practice"],
            )
        )
    return out


def _warnings(store: Store, catalog: Any, rules: Learning) -> list[Insight]:
    from ..core.model import tool_tag

    runs = {row[0]: row[1] for row in catalog.tool_rows(None, None)}
    found = [
        (row.tool, row.error, row.count, row.evidence)
        for row in catalog.error_rows()
        if runs.get(row.tool) and row.count / runs[row.tool] > rules.error_share
    ]
    solutions = known_solutions(store, sorted({tool for tool, *_ in found}))
    out = []
    for tool, error, count, evidence in found:
        rate = _percent(count / runs[tool])
        known = solutions.get(tool, [])
        advice = (
            "Known solution: " + "; ".join(f"{s['id']}: {s['summary']}" for s in known[:3])
            if known
            else "No known solution yet: record one as an error memory tagged with the tool."
        )
        try:
            tags = ["warning", tool_tag(tool)]
        except Exception:
            tags = ["warning"]
        out.append(
            Insight(
                rule_id("warn-", tool, error),
                "warning",
                tool[:500],
                f'{tool} fails with "{error}" in {rate} of its runs. {advice}',
                f"warning: {tool} fails with {error}"[:200],
                0.8 if known else 0.5,
                evidence_of(evidence),
                tags,
            )
        )
    return out


def _preferences(rows: list[CorrectionRow], rules: Learning) -> list[Insight]:
    by_field: dict[tuple[str, str], list[CorrectionRow]] = {}
    for row in rows:
        by_field.setdefault((row.context, row.field), []).append(row)
    out = []
    for (context, field), values in by_field.items():
        if len(values) != 1:
            continue  # corrected to different values: the user has no settled preference
        _, _, corrected, n, original, evidence = values[0]
        if n < rules.min_corrections:
            continue
        where = f"In {context}" if context else "In any context"
        value, before = json.loads(corrected), json.loads(original)
        text = (
            f"{where}, {field} should be {json.dumps(value, ensure_ascii=False)}"
            + (f", not {json.dumps(before, ensure_ascii=False)}" if before is not None else "")
            + ": the user corrected it consistently."
        )
        out.append(
            Insight(
                rule_id("pref-", context, field),
                "preference",
                f"{context or '*'}: {field}"[:500],
                text,
                f"preference: {field} = {json.dumps(value, ensure_ascii=False)}"[:200],
                round(min(0.95, 1 - 1 / (n + 1)), 2),
                evidence_of(evidence),
                ["preference"],
            )
        )
    return out


class Evidence(NamedTuple):
    """The insights the log calls for now, by rule id; and what the log has
    evidence about at all: the rule ids of its patterns and of its
    (context, field) corrections, and its tools. An insight about something
    the log does not mention (another clone's log, a log rotated away) is
    left as it is: no evidence is not evidence against it."""

    wanted: dict[str, Insight]
    subjects: set[str]
    tools: set[str]

    def covers(self, entry: Entry) -> bool:
        rule = str(entry.data.get("rule_id", ""))
        if rule.startswith("warn-"):
            applies_to = entry.data.get("applies_to")  # a mapping only in one written by hand
            return isinstance(applies_to, str) and applies_to in self.tools
        return rule in self.subjects


def applies_in(applies_to: Any, context: str | None) -> bool:
    """Whether an insight applies in `context`: one whose applies_to lists
    contexts, only in those; any other (a text: what mem learn writes), everywhere."""
    if context is None or not isinstance(applies_to, dict) or not applies_to.get("contexts"):
        return True
    return context in applies_to["contexts"]


def applies_text(applies_to: Any) -> str:
    """What an insight applies to, as one line: its text, or its agents,
    contexts and conditions (the structured form written by hand)."""
    if not isinstance(applies_to, dict):
        return str(applies_to or "")
    parts = [
        f"{name} {', '.join(map(str, applies_to[name]))}" for name in ("agents", "contexts") if applies_to.get(name)
    ]
    conditions = applies_to.get("conditions") or {}
    if conditions:
        parts.append("when " + ", ".join(f"{key}={value}" for key, value in conditions.items()))
    return "; ".join(parts) or "all"


def evidence_now(store: Store) -> Evidence:
    """What the log says now (see Evidence)."""
    rules = store.config.settings.learning

    def read(catalog: Any) -> Evidence:
        patterns, corrections = catalog.pattern_rows(None, 1), catalog.correction_rows()
        found = (
            _best_practices([p for p in patterns if p.usage >= rules.min_usage], rules)
            + _warnings(store, catalog, rules)
            + _preferences(corrections, rules)
        )
        subjects = {rule_id("bp-", p.type, p.pattern) for p in patterns} | {
            rule_id("pref-", c.context, c.field) for c in corrections
        }
        return Evidence(
            {insight.rule_id: insight for insight in found}, subjects, {row[0] for row in catalog.tool_rows(None, None)}
        )

    return derived(store, read)


def active_insights(store: Store, moment: datetime, category: str | None = None) -> list[Entry]:
    """The active insight entries (of `category`, else of every insight category), newest first."""
    names = [category] if category is not None else store.config.names_of_kind("insight")
    chosen = Filter(at=moment.timestamp(), categories=names)
    return list(store.reads.listed(chosen, Order.NEWEST).values())


class Learned:
    """What one `learn` wrote (or would, on a dry run): new insights, those
    that superseded an older one (old id -> new), those archived, how many
    stood unchanged."""

    __slots__ = ("added", "archived", "commit", "dry_run", "notes", "superseded", "unchanged")

    def __init__(self, dry_run: bool):
        self.added: list[Any] = []
        self.superseded: dict[str, str] = {}
        self.archived: list[str] = []
        self.unchanged = 0
        self.dry_run = dry_run
        self.commit: str | None = None
        self.notes: list[str] = []

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": [e.to_dict() for e in self.added],
            "superseded": self.superseded,
            "archived": self.archived,
            "unchanged": self.unchanged,
            "dry_run": self.dry_run,
            "commit": self.commit,
            "notes": self.notes,
        }


def rejected_rules(store: Store, moment: datetime, category: str) -> dict[str, str]:
    """Rule id -> the entry id of the learned insights someone archived by
    hand (reason `manual`): a veto, which `mem learn` respects."""
    chosen = Filter(at=moment.timestamp(), states=("archived",), categories=[category])
    loaded = store.reads.listed(chosen, Order.NEWEST, include_archive=True)
    return {
        str(e.data.get("rule_id")): e.id
        for e in loaded.values()
        if e.data.get("archive_reason") == "manual" and is_learned(str(e.data.get("rule_id", "")))
    }


def _same(entry: Entry, insight: Insight) -> bool:
    data = entry.data
    return (
        data.get("content") == insight.content
        and data.get("confidence") == insight.confidence
        and data.get("insight_type") == insight.insight_type
        and data.get("applies_to") == insight.applies_to
    )


def learn(store: Store, moment: datetime, *, category: str | None = None, dry_run: bool = False) -> Learned:
    """Bring the learned insights in line with the evidence (see the module)."""
    from ..lifecycle.archiving import archive
    from ..memory.adding import add_many

    spec = store.config.of_kind("insight", category)
    result = Learned(dry_run)
    evidence = evidence_now(store)
    wanted = evidence.wanted
    current = {
        e.data.get("rule_id"): e
        for e in active_insights(store, moment, spec.name)
        if is_learned(str(e.data.get("rule_id", "")))
    }
    vetoed = rejected_rules(store, moment, spec.name)
    requests, replaced = [], []
    for rid in sorted(wanted):
        insight = wanted[rid]
        old = current.get(rid)
        if old is not None and _same(old, insight):
            result.unchanged += 1
            continue
        if rid in vetoed and old is None:
            result.notes.append(f"not written: {insight.summary} (its insight was archived by hand; {vetoed[rid]})")
            continue
        requests.append(
            Request(
                insight.content,
                category=spec.name,
                summary=insight.summary,
                confidence=insight.confidence,
                tags=insight.tags,
                agent=VALIDATOR,
                fields={
                    "insight_type": insight.insight_type,
                    "applies_to": insight.applies_to,
                    "evidence": insight.evidence,
                    "validated": True,
                    "validated_by": VALIDATOR,
                    "rule_id": rid,
                },
            )
        )
        replaced.append(old.id if old is not None else None)
    retired = sorted(e.id for rid, e in current.items() if rid not in wanted and evidence.covers(e))
    added = add_many(store, requests, moment, dry_run=dry_run) if requests else []
    for entry, old_id in zip(added, replaced):
        result.added.append(entry)
        if old_id is not None:
            result.superseded[old_id] = entry.id
    result.archived = retired
    if retired and not dry_run:
        moved = archive(store, ids=retired, reason="ineffective")
        result.commit, result.notes = moved.commit, moved.notes
    return result
