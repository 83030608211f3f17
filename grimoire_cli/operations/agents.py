"""The commands through which agents and their tools reach the grimoire by
themselves, declared once (see declared.py): capture (commit trailers), mcp
(the MCP server), agent (Claude Code's hooks) and serve (the web view). The
CLI alone offers them: they start or wire up the other surfaces."""

from __future__ import annotations

from .declared import REQUIRED, Operation, Param, command_only

CAPTURE = command_only(
    "capture",
    "Decision:, Learning: and Error: trailers of a commit message as memories (auto_capture flags).",
    (
        Param("commit", str, "The commit whose trailers to capture.", "--commit", default="HEAD", metavar="REV"),
        Param("dry_run", bool, "Print what would be captured; write nothing.", "--dry-run", default=False),
        Param(
            "hook", bool, "Run as the post-commit hook: never fail the commit.", "--hook", default=False, hidden=True
        ),
    ),
    "the memories captured and the trailers skipped, with why",
)

MCP = command_only(
    "mcp",
    "Serve this grimoire to an agent over MCP on stdin/stdout (needs the extra grimoire-cli[mcp]).",
    (),
    "",
    json=False,
)


def _agent_files(action: str, help: str) -> Operation:
    """`mem agent install|uninstall|status AGENT [--local]`."""
    return command_only(
        f"agent {action}",
        help,
        (
            Param("agent", str, "The agent: claude (Claude Code).", default=REQUIRED, metavar="AGENT"),
            Param(
                "local",
                bool,
                "This clone only: .claude/settings.local.json (git-ignored), no MCP server in the shared .mcp.json.",
                "--local",
                default=False,
            ),
        ),
        "the settings files changed or kept, each item's state, warnings and notes",
    )


AGENT_INSTALL = _agent_files(
    "install", "Merge mem's hooks into .claude/settings.json and its MCP server into .mcp.json; nothing else changes."
)
AGENT_UNINSTALL = _agent_files("uninstall", "Remove exactly what `mem agent install` adds, and nothing else.")
AGENT_STATUS = _agent_files("status", "Which of mem's hooks and server are in the agent's settings.")

AGENT_HOOK = command_only(
    "agent hook",
    "Run as a Claude Code hook: read its JSON on stdin. Never fails the session: a problem is one line on stderr.",
    (
        Param(
            "event",
            str,
            "session-start, pre-compact, session-end or post-tool-use.",
            default=REQUIRED,
            metavar="EVENT",
        ),
    ),
    "",
    json=False,
)

SERVE = command_only(
    "serve",
    "Serve a web view of this grimoire: overview, search, entries, archive, review, tiers, learning "
    "(needs grimoire-cli[web]).",
    (
        Param(
            "host",
            str,
            "The address to listen on (loopback only unless --token).",
            "--host",
            default="127.0.0.1",
            metavar="ADDR",
        ),
        Param("port", int, "The port to listen on (0: a free one).", "--port", default=8377, metavar="N"),
        Param(
            "write",
            bool,
            "Allow changes: record an outcome, archive, supersede, mark a task done (CSRF-checked).",
            "--write",
            default=False,
        ),
        Param(
            "token",
            str,
            "Require this token (bearer header or the login form); needed off loopback; with it, MCP over HTTP at /mcp.",
            "--token",
            metavar="T",
            envvar="MEM_SERVE_TOKEN",
        ),
    ),
    "",
    json=False,
)
