"""Samaritan's memory API (the Samaritan design's calls) over a `Grimoire`: `memory.py`'s
coroutines and the three memory tools, with Samaritan's names, defaults
and return shapes (docs/adapters.md).

Samaritan's short-term table is the hot tier, its long-term table the long
one (docs/tiers-and-consolidation.md): a memory is one entry whose topic is
kept in its metadata (and as a tag), its source and session beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.bounds import whole
from ..core.errors import BadInput, CommandFailed

if TYPE_CHECKING:
    from ..api import Grimoire
    from ..core.model import Entry

SOURCES = ("session", "user", "directive")
TIERS = {"short": "hot", "long": "long"}
FALLBACK_MODEL = "summarizer-gemini"  # what summarizes when the model asked for fails
_BLOCK_CHARS = 1600  # ~400 tokens: Samaritan's cap on the Active Memory block


class Samaritan:
    """Samaritan's memory calls over one grimoire. Memories go to `category`
    (None: mem infers one from the content). `summarizers` maps a model key
    to the summarizer command `summarize_and_save` runs (default: consolidate.command)."""

    def __init__(
        self, grimoire: Grimoire, *, category: str | None = "preference", summarizers: dict[str, str] | None = None
    ):
        self.grimoire = grimoire
        self.category = category
        self.summarizers = dict(summarizers or {})

    # -- memory.py -----------------------------------------------------------

    async def save_memory(
        self, topic: str, content: str, importance: int = 5, source: str = "session", session_id: str = ""
    ) -> str:
        """One short-term memory; its id."""
        return self._save(topic, content, importance, source, session_id)

    def _save(self, topic: str, content: str, importance: int, source: str, session_id: str) -> str:
        if not isinstance(topic, str) or not topic.strip():
            raise BadInput("a memory needs a topic", 'give a short label, e.g. topic="Hermes project"')
        if source not in SOURCES:
            raise BadInput(f"bad source {source!r}", f"use one of {', '.join(SOURCES)}")
        entry = self.grimoire.add(
            content,
            self.category,
            importance=importance,
            tags=[topic],
            session_id=session_id or None,
            metadata={"topic": topic, "source": source},
        )
        return entry.id

    async def load_short_term(self, limit: int = 20, min_importance: int = 1) -> list[dict[str, Any]]:
        """Short-term (hot) memories of at least `min_importance`, most important first."""
        return self._rows("hot", None, limit, min_importance)

    async def age_to_longterm(self, older_than_hours: int = 48, max_rows: int = 100) -> int:
        """Move memories older than `older_than_hours` to long-term, at most
        `max_rows`; how many this call moved (they stay long-term)."""
        return len(self._age(older_than_hours, max_rows))

    def _age(self, older_than_hours: int, max_rows: int) -> list[str]:
        if isinstance(older_than_hours, bool) or not isinstance(older_than_hours, int) or older_than_hours <= 0:
            raise BadInput(f"bad older_than_hours {older_than_hours!r}", "give a whole number of hours, e.g. 48")
        whole(max_rows, "max_rows")
        # Not `most`: mem's --max caps the hot tier, not the rows one aging moves.
        # Only its own rows: a summary (Samaritan keeps them in a table of their own) or another adapter's entries
        # never age, and are not counted.
        categories = [self.category] if self.category else None
        aged = self.grimoire.lifecycle.age(older_than=f"{older_than_hours}h", max_rows=max_rows, categories=categories)
        return list(aged.moved_to_long or [])  # recorded: the next aging does not move them again

    async def load_context_block(self, limit: int = 15, min_importance: int = 3) -> str:
        """`## Active Memory`: the hot memories by topic, `content (imp=N)`,
        within ~400 tokens; "" when there are none."""
        rows = self._rows("hot", None, limit, min_importance)
        if not rows:
            return ""
        lines, size = ["## Active Memory"], 0
        for topic in dict.fromkeys(row["topic"] for row in rows):
            lines.append(f"### {topic}")
            for row in (r for r in rows if r["topic"] == topic):
                line = f"- {row['content']} (imp={row['importance']})"
                size += len(line)
                if size > _BLOCK_CHARS:
                    return "\n".join(lines)
                lines.append(line)
        return "\n".join(lines)

    async def summarize_and_save(
        self, session_id: str, history: list[dict[str, Any]], model_key: str = "summarizer-anthropic"
    ) -> dict[str, Any]:
        """Summarize the conversation through the model's summarizer command
        and save what it extracts; {messages, saved, summary_id}. When that
        command fails, summarizer-gemini's does instead, if one is given (Samaritan's fallback)."""
        try:
            done = self.grimoire.lifecycle.consolidate(
                history, command=self.summarizers.get(model_key), session_id=session_id, into=self.category
            )
        except CommandFailed:
            if model_key == FALLBACK_MODEL or FALLBACK_MODEL not in self.summarizers:
                raise
            done = self.grimoire.lifecycle.consolidate(
                history, command=self.summarizers[FALLBACK_MODEL], session_id=session_id, into=self.category
            )
        return {
            "messages": done.messages,
            "saved": len(done.saved),
            "summary_id": done.summary.id if done.summary is not None else None,
        }

    # -- tools.py ------------------------------------------------------------

    async def memory_save(self, topic: str, content: str, importance: int = 5, source: str = "session") -> str:
        """The tool's reply: `saved: topic=X (imp=N)`."""
        self._save(topic, content, importance, source, "")
        return f"saved: topic={topic} (imp={importance})"

    async def memory_recall(
        self, topic: str, tier: str = "short", limit: int = 20, *, source: str | None = None
    ) -> list[dict[str, Any]]:
        """Memories of `tier` (short, long) whose topic contains `topic`, most
        important first; `source` (not Samaritan's: mem's) keeps one source's."""
        if tier not in TIERS:
            raise BadInput(f"unknown tier {tier!r}", "use short or long")
        if source is not None and source not in SOURCES:
            raise BadInput(f"bad source {source!r}", f"use one of {', '.join(SOURCES)}")
        return self._rows(TIERS[tier], topic, limit, 1, source)

    async def memory_age(self, older_than_hours: int = 48, max_rows: int = 100) -> str:
        moved = self._age(older_than_hours, max_rows)
        return f"Aged {len(moved)} memories from short-term to long-term (threshold: {older_than_hours}h)."

    # -- rows ------------------------------------------------------------------

    def _rows(
        self, tier: str, topic: str | None, limit: int, min_importance: int, source: str | None = None
    ) -> list[dict[str, Any]]:
        """Samaritan's rows of one tier (importance after decay), of `source`
        when given, most important then newest first."""
        wanted = topic.lower() if topic else None
        categories = [self.category] if self.category else None
        decay, moment = self.grimoire.config.settings.decay, self.grimoire.now().timestamp()
        rows = []
        for entry in self.grimoire.list(categories=categories, tier=tier, source=source):
            row = _row(entry, decay.of(entry.importance, moment - entry.born if entry.born is not None else None))
            if row["importance"] >= min_importance and (wanted is None or wanted in row["topic"].lower()):
                rows.append(row)
        rows.sort(key=lambda row: -row["importance"])  # stable: newest first within an importance
        return rows[:limit]


def _row(entry: Entry, importance: int) -> dict[str, Any]:
    metadata = entry.data.get("metadata") or {}
    source = entry.data.get("source") or {}
    return {
        "id": entry.id,
        "topic": str(metadata.get("topic") or next(iter(entry.tags), "")),
        "content": entry.content,
        "importance": importance,
        "source": metadata.get("source", "session"),
        "session_id": source.get("session_id"),
        "created_at": entry.timestamp,
    }
