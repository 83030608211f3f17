"""The commands that keep a grimoire sound, declared once (see declared.py):
init, scan, validate, archive, check, review, the git hooks, the merge driver
and its fixup. The CLI alone offers them (no MCP tool): an agent's session
runs them through git's hooks, not as calls."""

from __future__ import annotations

from .declared import REQUIRED, Operation, Param, command_only

INIT = command_only(
    "init",
    "Create the config, grimoire folders, category files and merge rules (idempotent).",
    (
        Param(
            "preset",
            str,
            "Also add a memory design's categories and settings to the config: sabre, samaritan, protea, pms.",
            "--preset",
            metavar="NAME",
        ),
    ),
    "the files created and kept, the categories and settings added",
)

SCAN = command_only(
    "scan",
    "Check texts against the guard without storing anything: one JSON verdict a line; exit 1 if any was refused.",
    (
        Param("file", str, "The texts, one a line ('-' or nothing: stdin).", metavar="FILE"),
        Param(
            "jsonl",
            bool,
            'Each line is a JSON object whose "text" is one text (it may hold newlines).',
            "--jsonl",
            default=False,
        ),
    ),
    "one JSON verdict a line",
    json=False,
)

VALIDATE = command_only(
    "validate",
    "Check grimoire files: schema, ids, links, categories, floors, secrets.",
    (
        Param("paths", list, "Files or folders (default: the whole grimoire).", metavar="PATH"),
        Param("format", str, "text, json or github.", "--format", default="text", metavar="FORMAT"),
        Param("json", bool, "Print machine-readable JSON (the same as --format json).", "--json", default=False),
        Param(
            "quiet",
            bool,
            "Print problems only: no summary line when all is well (the pre-commit hook).",
            "-q",
            "--quiet",
            default=False,
        ),
    ),
    "the files, entries and problems found",
    json=False,  # its own --json, the same as --format json
)

ARCHIVE = command_only(
    "archive",
    "Move expired and ineffective memories to the archive and commit just that change.",
    (
        Param("ids", list, "Archive these (default: every expired or ineffective entry).", metavar="ID"),
        Param(
            "categories",
            list,
            "Archive every entry of this category not yet archived (repeatable; reason cleared unless given).",
            "-c",
            "--category",
            metavar="CAT",
        ),
        Param(
            "reason",
            str,
            "expired, superseded, ineffective, manual or cleared (with ids or --category).",
            "--reason",
            metavar="REASON",
        ),
        Param(
            "purge",
            bool,
            "Instead, remove archived entries older than archive.retention_days from the archive, in one commit.",
            "--purge",
            default=False,
        ),
        Param("dry_run", bool, "Say what would move; change nothing.", "--dry-run", default=False),
        Param("no_commit", bool, "Move the entries but do not commit.", "--no-commit", default=False),
    ),
    "the archived ids with their reasons, and the commit",
)

CHECK = command_only(
    "check",
    "Session start: archive expired memories, warn about expiring and weak ones.\n\n"
    "Expired memories are archived (lifecycle.auto_archive) in a commit of\n"
    "their own, except on a detached HEAD or while git is in the middle of a\n"
    "bisect, rebase, merge, cherry-pick, revert or am: then they are only\n"
    "reported.",
    (
        Param("strict", bool, "Exit 1 when anything is due.", "--strict", default=False),
        Param("no_archive", bool, "Report expired memories; archive nothing.", "--no-archive", default=False),
        Param(
            "all_scopes",
            bool,
            "Check every scope (the session hooks do); --json: {scope: result}.",
            "--all-scopes",
            default=False,
        ),
        Param(
            "hook", bool, "Run as a git hook: never fail; say only what is new.", "--hook", default=False, hidden=True
        ),
    ),
    "what is due, archived, expiring and to review ({scope: result} with --all-scopes)",
)

REVIEW = command_only(
    "review",
    "List low-tier, ineffective, expiring-soon and near-duplicate memories.",
    (),
    "the memories to review, each with why",
)


def _hooks(action: str, help: str) -> Operation:
    return command_only(f"hooks {action}", help, (), "each hook's state, and notes")


HOOKS_INSTALL = _hooks(
    "install",
    "Install mem's git hooks (session check, pre-commit validate, renumbering after merges) and the merge driver.",
)
HOOKS_UNINSTALL = _hooks("uninstall", "Remove mem's hooks and restore any hook they chained.")
HOOKS_STATUS = _hooks("status", "Show which hooks are installed.")

MERGE_FILE = command_only(
    "merge-file",
    "Git merge driver: merge a grimoire file entry by entry (exit 1 on a conflict).",
    (
        Param("base", str, "%O: the common ancestor's version.", default=REQUIRED, metavar="BASE"),
        Param("ours", str, "%A: our version; the result is written here.", default=REQUIRED, metavar="OURS"),
        Param("theirs", str, "%B: their version.", default=REQUIRED, metavar="THEIRS"),
        Param("path", str, "%P: the file's path in the repository.", default="grimoire file", metavar="PATH"),
    ),
    "",
    json=False,
)

SETTLE = command_only(
    "settle",
    "Settle a memory two clones superseded (a merge conflict on it): the kept\n"
    "successor supersedes it, the other is chained after the kept one.",
    (
        Param(
            "entry_id", str, "The memory with two successors (`mem validate` names it).", default=REQUIRED, metavar="ID"
        ),
        Param("keep", str, "The successor to keep first (default: the one written first).", "--keep", metavar="ID"),
    ),
    "the chain from the memory through its successors, and whether the file was staged",
)

MERGE_FIXUP = command_only(
    "merge-fixup",
    "Run by mem's git hooks: after a merge, rebase or cherry-pick, renumber\n"
    "colliding ids in files the merge driver never saw (git took them whole).",
    (
        Param(
            "hook",
            str,
            "The git hook running it: post-merge, post-rewrite, post-commit or pre-commit.",
            default=REQUIRED,
            metavar="HOOK",
        ),
        Param("args", list, "The hook's own arguments.", metavar="ARG"),
        Param(
            "all_scopes",
            bool,
            "Every scope (the hooks do); another scope's ids read scope:ID.",
            "--all-scopes",
            default=False,
        ),
    ),
    "the ids renumbered, the lifecycles merged, and the commit or staging",
)
