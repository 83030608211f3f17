"""The operations over the kinds of memory (docs/agent-personas.md), each
declared once (see declared.py): episodes, procedures, prospective tasks and
events, chat history."""

from __future__ import annotations

from ..core.bounds import MAX_TEXT
from .declared import REQUIRED, Operation, Param
from .memory import ID_HELP, SINCE, TAGS_HELP, UNTIL, stdin_text

STRING_VALUES = {"type": "object", "additionalProperties": {"type": "string"}}  # key -> text


def _context_pairs(help: str) -> Param:
    """The command's `--context K=V` (the tool's `context` is an object)."""
    return Param("context_pairs", list, help, "--context", metavar="K=V", tool=False)


def _category(kind: str, added: bool = False) -> Param:
    """`-c CAT`; `added`: one the config lacks is added on first use (memory_schema.new_categories)."""
    more = "; one the config lacks is added when memory_schema.new_categories says so" if added else ""
    return Param(
        "category", str, f"A category of kind {kind} (default: the first){more}.", "-c", "--category", metavar="CAT"
    )


# -- episodes ------------------------------------------------------------------------

EPISODE = Operation(
    "episode",
    "Record an episode: an event, its context, its outcome and the lesson; prints its id.",
    "Record an episode: an event that happened, its context, how it ended and the lesson (episodic memory). "
    "Returns the written entry.",
    (
        Param(
            "event", str, "What happened, as a slug: deploy-failed, db.migration.", default=REQUIRED, metavar="EVENT"
        ),
        _context_pairs("What the situation was (repeatable)."),
        Param(
            "context_json",
            str,
            "Context as a JSON object (--context pairs win).",
            "--context-json",
            metavar="JSON",
            tool=False,
        ),
        Param("context", object, "What the situation was (any JSON object).", schema={"type": "object"}, cli=False),
        Param("learned", str, "What was learned from it.", "--learned", metavar="TEXT"),
        Param(
            "outcome",
            str,
            "How it ended.",
            "--outcome",
            default="unknown",
            metavar="O",
            cli_help="success, failure or unknown.",
            schema={"enum": ["success", "failure", "unknown"]},
        ),
        _category("episode"),
        Param("tags", list, TAGS_HELP, "-t", "--tag", metavar="TAG", cli_help="Tag (repeatable)."),
    ),
    "the written episode",
    additive=True,
)

EPISODES = Operation(
    "episodes",
    "Episodes like QUERY (BM25 over event, lesson and context, blended with recency), or the newest.",
    "Past episodes like a query (BM25 over event, lesson and context, blended with recency), or the newest; "
    "read them before repeating something that failed before.",
    (
        Param(
            "query", str, "What to look for (default: newest first).", metavar="QUERY", schema={"maxLength": MAX_TEXT}
        ),
        Param("event", str, "Only episodes of this event.", "--event", metavar="EVENT"),
        SINCE,
        UNTIL,
        Param(
            "limit",
            int,
            "At most N episodes (default 10).",
            "-n",
            "--limit",
            default=10,
            metavar="N",
            cli_help="At most N episodes.",
        ),
        Param("category", str, "Only this episode category.", "-c", "--category", metavar="CAT"),
    ),
    "the episodes, best first, each with its `score`",
    read_only=True,
)

# -- procedures ----------------------------------------------------------------------

PROCEDURE_ADD = Operation(
    "procedure_add",
    "Keep a runbook; a new version of a named procedure supersedes the old. Prints its id. Nothing is executed.",
    "Keep a runbook (procedural memory); a new version of a named procedure supersedes the old, the same version "
    "writes nothing. Nothing is ever executed.",
    (
        Param(
            "file",
            str,
            "A YAML or JSON runbook: name, description, params?, steps: [{name, run?, description?, condition?}], "
            "or SABRE's procedure YAML (steps of {action, ...}); '-' reads stdin.",
            default=REQUIRED,
            metavar="FILE|-",
            tool=False,
        ),
        Param(
            "document",
            object,
            "The runbook: {name, description, params?, steps: [{name, run?, description?, condition?}]}, "
            "as an object or its YAML/JSON text.",
            schema={"type": ["object", "string"]},
            cli=False,
            required=True,
        ),
        _category("procedure", added=True),
    ),
    "the procedure's entry, with `written` (false: this version was already kept)",
    command="procedure add",
    idempotent=True,
)

PROCEDURE = Operation(
    "procedure",
    "Print a procedure as a numbered checklist, its {params} filled in. mem executes none of it.",
    "A procedure as a checklist, its {params} filled in; follow it yourself, then report with apply.",
    (
        Param("name", str, "The procedure's name.", default=REQUIRED, metavar="NAME"),
        Param("param", list, "A value for {K} in the steps (repeatable).", "--param", metavar="K=V", tool=False),
        Param("params", object, "Values for the procedure's {params}.", schema=STRING_VALUES, cli=False),
        Param(
            "template",
            bool,
            "As written: the params not given stay {name} (null in params) instead of being refused.",
            "--template",
            default=False,
            cli_help="As written: the {params} not given stay as they are, named on a template: line.",
        ),
    ),
    "the procedure: id, name, description, params, its steps with the params filled in, effectiveness",
    command="procedure show",
    read_only=True,
)

PROCEDURES = Operation(
    "procedures",
    "List the active procedures: name, steps, success rate (from `mem apply`), id.",
    "The active procedures (runbooks), newest first; read one as a checklist with procedure.",
    (Param("category", str, "Only this procedure category.", "-c", "--category", metavar="CAT"),),
    "the procedures, newest first",
    read_only=True,
)

# -- prospective tasks ---------------------------------------------------------------

TASK_SCHEDULE = Operation(
    "task_schedule",
    "Schedule a task with one trigger: --due, --on, --next-session or --condition; prints its id.",
    "Schedule a task for later (prospective memory) with one trigger: due (+30m, +1h, +2d or an ISO time), "
    "on (an event), next_session, or condition (an expression over the context tasks_due is given, "
    "like \"cpu > 80 and env == 'prod'\"). Returns the task.",
    (
        stdin_text("text", "What to do.", "What to do; '-' reads stdin."),
        Param(
            "due",
            str,
            "When: +<n>s, +<n>m, +<n>h or +<n>d from now (+90s, +30m, +1h, +2d), or an ISO time.",
            "--due",
            metavar="WHEN",
        ),
        Param("on", str, "When this event fires.", "--on", metavar="EVENT", cli_help="When `mem event EVENT` fires."),
        Param(
            "next_session",
            bool,
            "At the next session start.",
            "--next-session",
            default=False,
            cli_help="At the next session start (`mem check`).",
        ),
        Param(
            "condition",
            str,
            "When this holds against the context `mem due --context` is given: keys compared with literals "
            "(==, !=, <, <=, >, >=), and, or, not, parentheses; a bare key is true when truthy.",
            "--condition",
            metavar="EXPR",
        ),
        _context_pairs("Context for whoever does it (repeatable)."),
        Param(
            "context",
            object,
            "What the situation was, as key → text (like table: users).",
            schema=STRING_VALUES,
            cli=False,
        ),
        _category("task"),
    ),
    "the task",
    command="task add",
    additive=True,
)

TASKS_PENDING = Operation(
    "tasks_pending",
    "List pending tasks, due ones first.",
    "Pending tasks, due ones first (with all, also done and cancelled ones not yet archived).",
    (Param("all", bool, "Also done and cancelled tasks not yet archived.", "--all", default=False),),
    "the tasks, due ones first",
    command="tasks",
    read_only=True,
)

TASKS_DUE = Operation(
    "tasks_due",
    "List the tasks due now; exit 1 when none is (for scripts).\n\n"
    "A task is due once the time `mem task add --due` gave it has come: +<n>s,\n"
    "+<n>m, +<n>h or +<n>d after it was added (+90s, +30m, +1h, +2d), or an ISO\n"
    "time; a --next-session task at the next session start; a --condition task\n"
    "when the --context given here makes its condition hold.",
    "The tasks due now: past their time, or waiting for the next session; with a context, also the "
    "condition tasks whose condition holds against it.",
    (
        _context_pairs("The situation condition tasks are checked against (repeatable)."),
        Param(
            "context",
            object,
            "The situation condition tasks are checked against (key → value).",
            schema={"type": "object"},
            cli=False,
        ),
    ),
    "the tasks due now",
    command="due",
    read_only=True,
)


def _ending(name: str, command: str, help: str, description: str) -> Operation:
    return Operation(
        name,
        help,
        description,
        (Param("id", str, ID_HELP, default=REQUIRED, metavar="ID", cli_help="A pending task."),),
        "the task, ended",
        command=command,
    )


TASK_DONE = _ending(
    "task_done",
    "task done",
    "Mark a pending task done (archived after the category's ttl).",
    "Mark a pending task done once you did it; it is archived after its category's ttl.",
)
TASK_CANCEL = _ending(
    "task_cancel",
    "task cancel",
    "Cancel a pending task (archived after the category's ttl).",
    "Cancel a pending task that is no longer needed; it is archived after its category's ttl.",
)

EVENT = Operation(
    "event",
    "Fire an event: the pending tasks waiting for it become due now.",
    "Say that an event happened (deploy, data.loaded): the tasks waiting for it become due; returns their ids.",
    (Param("name", str, "The event, e.g. deploy or data.loaded.", default=REQUIRED, metavar="NAME"),),
    "the event and the ids of the tasks now due",
)

# -- chat history --------------------------------------------------------------------

CHAT_ADD = Operation(
    "chat_add",
    "Keep one message; prints its id. Expired messages are pruned by the same write.",
    "Keep one message of the conversation (a local, expiring chat history).",
    (
        Param(
            "role",
            str,
            "Who said it: a lowercase word, like user, assistant or system.",
            default=REQUIRED,
            metavar="ROLE",
        ),
        stdin_text("text", "The message.", "The message; '-' (or nothing, when piped) reads stdin."),
        _category("chat"),
    ),
    "the message's entry",
    command="chat add",
    additive=True,  # the expired messages it drops were already gone from every read
)

CHAT_RECENT = Operation(
    "chat_recent",
    "The last N messages still within their ttl, oldest first.",
    "The conversation's last messages still within their time to live, oldest first.",
    (
        Param(
            "count",
            int,
            "How many (default 5).",
            "-n",
            default=5,
            metavar="N",
            cli_help="How many messages (default 5).",
        ),
        Param("category", str, "Only this chat category.", "-c", "--category", metavar="CAT"),
    ),
    "the messages, oldest first",
    command="chat recent",
    read_only=True,
)
