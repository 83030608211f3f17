"""The operations over tiers, forgetting and consolidation
(docs/tiers-and-consolidation.md), each declared once (see declared.py):
age and compact (the CLI's alone), consolidate (a command and a tool)."""

from __future__ import annotations

from .declared import Operation, Param, command_only

AGE = command_only(
    "age",
    "Show the hot / long-term split and what moved since the last `mem age` (nothing is written to the grimoire).",
    (
        Param(
            "older_than",
            str,
            "For this run, nothing younger than SPAN (24h, 2d) stays hot by age alone.",
            "--older-than",
            metavar="SPAN",
        ),
        Param("most", int, "For this run, at most N hot memories.", "--max", metavar="N"),
        Param(
            "dry_run", bool, "Show the split without recording it for the next `mem age`.", "--dry-run", default=False
        ),
    ),
    "the hot and long-term ids, the tier settings, and what moved since the last run",
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
        Param("with_", str, "The summarizer (default: consolidate.command).", "--with", metavar="CMD"),
        Param(
            "no_summary", bool, "Condense from the entries' own summaries: no command.", "--no-summary", default=False
        ),
        Param("dry_run", bool, "Show what would be condensed; write nothing.", "--dry-run", default=False),
    ),
    "the entries condensed, what replaced them, and the commit",
)
