"""The operations that learn from executions, each declared once (see
declared.py): observe (task executions) and what the observation log
teaches: tools, recommend, patterns, recall-all, learn, insights, correct."""

from __future__ import annotations

from ..core.bounds import MAX_TEXT
from .declared import REQUIRED, Operation, Param

OBSERVE = Operation(
    "observe",
    "Append execution records to the local observation log (checked, secrets redacted).",
    "Record task executions in the local observation log (checked, secrets redacted): each record {task_id, goal?, "
    "agent?, context?, outcome: success|failure, duration_ms?, steps: [{tool, params?, status: completed|failed, duration_ms?, "
    "error?, retries?}], corrections?: [{field, original?, corrected}]}. "
    "Tool memory, patterns and insights are computed from it.",
    (
        Param(
            "file",
            str,
            "Execution records (or PMS Tasks), JSON Lines; '-' reads stdin.",
            default="-",
            metavar="FILE|-",
            tool=False,
        ),
        Param(
            "claude_hook",
            bool,
            "Read one Claude Code PostToolUse payload on stdin: a one-step record.",
            "--claude-hook",
            default=False,
            tool=False,
        ),
        Param(
            "records",
            object,
            "The execution records.",
            schema={"type": "array", "items": {"type": "object"}, "minItems": 1},
            cli=False,
            required=True,
        ),
        Param(
            "skip_invalid",
            bool,
            "Append the valid records and report the rest, instead of refusing all.",
            "--skip-invalid",
            default=False,
            cli_help="Append the valid records, report the rest.",
        ),
    ),
    "how many records and steps were appended, redacted and rejected",
    additive=True,
)

TOOLS = Operation(
    "tools",
    "Tool memory from the observation log: runs, success rate, durations, retries, per context, common errors.",
    "Tool memory from the observation log: per tool its runs, success rate, durations, common errors with known "
    "solutions, and the parameter values that work best.",
    (
        Param("name", str, "Only this tool.", metavar="NAME"),
        Param("context", str, "Only runs in this context.", "--context", metavar="C"),
    ),
    "each tool's memory",
    read_only=True,
)

RECOMMEND = Operation(
    "recommend",
    "Observed tools for an action, ranked by success rate in a context, with the reason.",
    "Which tools to use for an action, ranked by how often they succeeded (in the context, when given), each "
    "with the reason.",
    (
        Param(
            "action",
            str,
            "What is to be done, in words (e.g. 'create shipment').",
            default=REQUIRED,
            metavar="ACTION",
            schema={"maxLength": MAX_TEXT},
        ),
        Param(
            "context", str, "Rank by success in this context.", "--context", metavar="C", schema={"maxLength": MAX_TEXT}
        ),
        Param(
            "limit",
            int,
            "At most N tools (default 5).",
            "-n",
            "--limit",
            default=5,
            metavar="N",
            cli_help="At most N tools.",
        ),
    ),
    "the tools, best first, each with its reason",
    read_only=True,
)

PATTERNS = Operation(
    "patterns",
    "Patterns of the observed tasks: success rate, reliability, means, usage, first/last seen, evidence.",
    "Recurring patterns in the observation log: query patterns, plans and tool sequences, with usage and reliability.",
    (
        Param(
            "type",
            str,
            "Only this type.",
            "--type",
            metavar="T",
            cli_help="query_pattern, plan_pattern, tool_sequence or error_pattern.",
            schema={"enum": ["query_pattern", "plan_pattern", "tool_sequence", "error_pattern"]},
        ),
        Param(
            "min_usage",
            int,
            "Only patterns of at least N tasks (default 1).",
            "--min-usage",
            default=1,
            metavar="N",
            cli_help="Only patterns of at least N tasks.",
        ),
        Param(
            "context",
            str,
            "Only patterns a task in this context showed (their numbers over all their tasks).",
            "--context",
            metavar="C",
            schema={"maxLength": MAX_TEXT},
        ),
    ),
    "the patterns",
    read_only=True,
)

METRICS = Operation(
    "metrics",
    "Success metrics over time: per day or week, tasks, success, reuse and error rates; the error reduction.",
    "Success metrics over time from the observation log: per day or week the tasks, success rate, reuse rate "
    "(tasks running a plan an earlier task ran) and error rate (failed steps), and how much the error rate fell "
    "from the first period to the last.",
    (
        Param(
            "by",
            str,
            "Count per day or per ISO week (default week).",
            "--by",
            default="week",
            metavar="P",
            cli_help="day or week.",
            schema={"enum": ["day", "week"]},
        ),
    ),
    "the periods, oldest first, and the totals",
    read_only=True,
)

RECALL_ALL = Operation(
    "recall_all",
    "Patterns, tool memory, insights and preferences about a query, in one answer.",
    "Patterns, tool memory, insights and preferences about a query, in one answer.",
    (
        Param(
            "query", str, "What to recall, in words.", default=REQUIRED, metavar="QUERY", schema={"maxLength": MAX_TEXT}
        ),
        Param(
            "type_list",
            str,
            "Some of patterns,tools,insights,preferences (default: all).",
            "--types",
            metavar="T,…",
            tool=False,
        ),
        Param("types", list, "Some of patterns, tools, insights, preferences (default: all).", cli=False),
        Param(
            "context",
            str,
            "In this context: the patterns its tasks showed, tool memory over its runs, the insights that apply there.",
            "--context",
            metavar="C",
            schema={"maxLength": MAX_TEXT},
        ),
    ),
    "patterns, tools, insights and preferences, each a list",
    command="recall-all",
    read_only=True,
)

LEARN = Operation(
    "learn",
    "Turn the observation log's evidence into insights: best practices, warnings, preferences.",
    "Turn the observation log's evidence into insights (best practices, warnings, preferences): new ones are "
    "written for review, changed ones supersede, ones whose evidence fell are archived in a commit.",
    (
        Param("category", str, "The insight category (default: the first).", "-c", "--category", metavar="CAT"),
        Param(
            "dry_run",
            bool,
            "Say what would be written; write nothing.",
            "--dry-run",
            default=False,
            cli_help="Print what would be written; write nothing.",
        ),
    ),
    "the insights written, superseded and archived",
)

INSIGHTS = Operation(
    "insights",
    "The active insights, newest first.",
    "The active insights (best practices, warnings, preferences, rules) learned from executions, newest first.",
    (
        Param(
            "type",
            str,
            "Only this type.",
            "--type",
            metavar="T",
            cli_help="best_practice, warning, preference, rule, optimization or pattern.",
            schema={"enum": ["best_practice", "warning", "preference", "rule", "optimization", "pattern"]},
        ),
        Param("category", str, "Only this insight category.", "-c", "--category", metavar="CAT"),
    ),
    "the insights, newest first",
    read_only=True,
)

CORRECT = Operation(
    "correct",
    "Record one correction by hand; `mem learn` makes a preference of enough consistent ones.",
    "Record that a user corrected a value (field, what it should have been); enough consistent corrections "
    "become a preference.",
    (
        Param("field", str, "What was corrected (e.g. carrier).", default=REQUIRED, metavar="FIELD"),
        Param(
            "value",
            object,
            "What it should have been (any JSON value).",
            default=REQUIRED,
            metavar="VALUE",
            cli_help="What it should have been: JSON when it is JSON (5, true, [1, 2]), else text.",
        ),
        Param(
            "original", object, "What it was.", "--original", metavar="V", cli_help="What it was (read as VALUE is)."
        ),
        Param("context", str, "Where the correction applies.", "--context", metavar="C"),
        Param("task_id", str, "The task it corrects (default: a new id).", "--task-id", metavar="ID"),
    ),
    "the correction recorded and how much of it was redacted",
    additive=True,
)
