"""The operations over tiers, forgetting and consolidation
(docs/tiers-and-consolidation.md), each declared once (see declared.py):
compact (the CLI's alone), age and consolidate (a command and a tool)."""

from __future__ import annotations

from ..core.bounds import MAX_COUNT
from .declared import Operation, Param, command_only

AGE = Operation(
    "age",
    "Show the hot / long-term split and what moved since the last `mem age`; --older-than ages for good.",
    "Age memories (Samaritan's memory_age): with older_than (e.g. 24h), every memory older than that leaves the hot "
    "tier (what context injects) for long-term and stays there (an important one, importance >= tiers.pin_importance, "
    "stays hot); returns the split and the ids this call moved. Without it, shows the split and what moved since the "
    "last age. Tracked files are never written.",
    (
        Param(
            "older_than",
            str,
            "Age for good: nothing older than SPAN (24h, 2d) stays hot by age (recorded in local state).",
            "--older-than",
            metavar="SPAN",
            schema={"maxLength": 40},
        ),
        Param(
            "most",
            int,
            "At most N hot memories: for this run, or with older_than for good (what it moves stays long-term).",
            "--max",
            metavar="N",
            schema={"minimum": 0, "maximum": MAX_COUNT},
        ),
        Param(
            "max_rows",
            int,
            "With older_than, move at most N (Samaritan's max_rows): the least important, then the oldest, "
            "first; the rest stay hot for a later aging.",
            "--max-rows",
            metavar="N",
            schema={"minimum": 0, "maximum": MAX_COUNT},
        ),
        Param(
            "dry_run",
            bool,
            "Show the split (with older_than: what it would move) and record nothing.",
            "--dry-run",
            default=False,
            cli_help="Show the split without recording it, or the aging --older-than would make.",
        ),
    ),
    "the hot and long-term ids, the tier settings, and what moved (with older_than: this run's moves)",
    idempotent=True,
)

CONSOLIDATE = Operation(
    "consolidate",
    "Save what a conversation taught: an external summarizer extracts facts, decisions, episodes, procedures, "
    "preferences.",
    "Save what a conversation taught: the project's configured summarizer (consolidate.command) extracts facts, "
    "decisions, episodes, procedures and preferences; each is checked like save, and a summary entry lists them. Give the "
    "transcript's text or its path (Claude Code JSONL, JSON/JSONL {role, content}, or plain text). Only the configured command "
    "runs: a tool call cannot choose one.",
    (
        Param(
            "file",
            str,
            "Claude Code JSONL, JSON/JSONL {role, content}, or plain text; '-' reads stdin.",
            default="-",
            metavar="TRANSCRIPT|-",
            tool=False,
        ),
        Param("transcript", str, "The conversation's text.", cli=False),
        Param(
            "path",
            str,
            "The transcript file's path (instead of its text): inside the repository, or Claude Code's transcripts of "
            "this project (~/.claude/projects/…).",
            cli=False,
        ),
        Param(
            "with_",
            str,
            "The summarizer: prompt on stdin, JSON on stdout (default: consolidate.command).",
            "--with",
            metavar="CMD",
            tool=False,  # a tool call runs the configured command only
        ),
        Param(
            "session_id",
            str,
            "The session the memories come from (default: the transcript's).",
            "--session-id",
            metavar="ID",
        ),
        Param(
            "dry_run",
            bool,
            "Say what would be saved; write nothing.",
            "--dry-run",
            default=False,
            cli_help="Print what would be saved; write nothing.",
        ),
    ),
    "what was saved, skipped as duplicate and refused, and the summary entry",
    open_world=True,
)

COMPACT = command_only(
    "compact",
    "Condense old memories: past the newest N, one entry replaces them; they are archived, in one commit.",
    (
        Param(
            "category", str, "Only this category (default: every one that may be).", "-c", "--category", metavar="CAT"
        ),
        Param(
            "keep", int, "Keep the newest N active entries of each (default: compaction.keep).", "--keep", metavar="N"
        ),
        Param(
            "keep_total",
            int,
            "Keep the newest N active entries of the whole grimoire (every category counts); per category, then, "
            "only --keep or compaction.categories.",
            "--keep-total",
            metavar="N",
        ),
        Param("with_", str, "The summarizer (default: consolidate.command).", "--with", metavar="CMD"),
        Param(
            "no_summary", bool, "Condense from the entries' own summaries: no command.", "--no-summary", default=False
        ),
        Param("dry_run", bool, "Show what would be condensed; write nothing.", "--dry-run", default=False),
    ),
    "the entries condensed, what replaced them, and the commit",
)
