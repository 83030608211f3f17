"""The operations over the kinds of memory (docs/agent-personas.md), each
declared once (see declared.py): episodes, procedures, prospective tasks and
events, chat history. Those whose command and tool take their values in
different shapes (`--context K=V` and an object, a file and a document) are
not declared here yet."""

from __future__ import annotations

from ..core.bounds import MAX_TEXT
from .declared import REQUIRED, Operation, Param
from .memory import ID_HELP, SINCE, UNTIL, stdin_text

# -- episodes ------------------------------------------------------------------------

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

PROCEDURES = Operation(
    "procedures",
    "List the active procedures: name, steps, success rate (from `mem apply`), id.",
    "The active procedures (runbooks), newest first; read one as a checklist with procedure.",
    (Param("category", str, "Only this procedure category.", "-c", "--category", metavar="CAT"),),
    "the procedures, newest first",
    read_only=True,
)

# -- prospective tasks ---------------------------------------------------------------

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
    "List the tasks due now; exit 1 when none is (for scripts).",
    "The tasks due now: past their time, or waiting for the next session.",
    (),
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
        Param("category", str, "A category of kind chat (default: the first).", "-c", "--category", metavar="CAT"),
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
