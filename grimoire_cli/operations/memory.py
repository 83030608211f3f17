"""The operations over memories and keyed facts, each declared once (see
declared.py): save (`mem add`), supersede, query, context, show, list, get,
apply, stats, remember, recall, facts; and the CLI's own import, export and
scopes."""

from __future__ import annotations

from ..core.bounds import MAX_BUDGET, MAX_PATTERN, MAX_TEXT, MIN_BUDGET
from .declared import REQUIRED, Operation, Param, command_only

# -- what several operations share ---------------------------------------------------

ID_HELP = "A memory id, like MEM-20261123-004."
CATEGORY_HELP = (
    "A category of the grimoire's config (fact, decision, learning, error, preference, or one the project added)."
)
TAGS_HELP = "Tags (all must match when filtering)."
SHARE = {"minimum": 0, "maximum": 1}  # a confidence
CATEGORIES = Param(
    "categories",
    list,
    "Only these categories.",
    "-c",
    "--category",
    metavar="CAT",
    cli_help="Only these categories (repeatable).",
)
SINCE = Param(
    "since", str, "Only those created since: 30d, 48h, 90m back, or an ISO date or time.", "--since", metavar="WHEN"
)
UNTIL = Param(
    "until", str, "Only those created until then (a date alone includes that day).", "--until", metavar="WHEN"
)
TTL_HELP = "How long it holds: 'permanent', or like '30d', '12h', '10m', '30s'"
SEMANTIC = Param(
    "semantic",
    bool,
    "Also rank by meaning: fuse the nearest memories by embedding with the keyword ranking "
    "(the semantic extra; default: retrieval.semantic).",
    "--semantic",
    cli_help="Also rank by meaning (the semantic extra; default: retrieval.semantic).",
)


def stdin_text(name: str, help: str, cli_help: str) -> Param:
    """The text of a memory: required of a tool; on the CLI '-' (or nothing, when piped) reads stdin."""
    return Param(name, str, help, metavar="TEXT|-", cli_help=cli_help, required=True)


# -- memories ------------------------------------------------------------------------

SAVE = Operation(
    "save",
    "Remember something; prints the new id.",
    "Remember one thing as a new memory (mem add). Use for a decision taken, a lesson learned, an error and its fix, "
    "a fact about the project or a user preference. Secrets, personal data, exact duplicates and confidence below the "
    "category's floor are refused. Returns the written entry with its id; `notes` warn of near duplicates.",
    (
        stdin_text(
            "content",
            "The memory, in a sentence or a short paragraph; text inside <private>…</private> is removed before it is stored.",
            "The memory; '-' (or nothing, when piped) reads stdin.",
        ),
        Param(
            "category",
            str,
            CATEGORY_HELP,
            "-c",
            "--category",
            metavar="CAT",
            cli_help="Category (inferred from the wording when omitted).",
        ),
        Param("summary", str, "One-line summary (derived when omitted).", "-s", "--summary", metavar="TEXT"),
        Param(
            "confidence",
            float,
            "0.0-1.0; defaults to the category's floor, and below the floor is refused.",
            "--confidence",
            metavar="F",
            schema=SHARE,
            cli_help="0.0-1.0; defaults to the category's floor.",
        ),
        Param("tags", list, TAGS_HELP, "-t", "--tag", metavar="TAG", cli_help="Tag (repeatable)."),
        Param("ttl", str, f"{TTL_HELP} (Loa's five categories: days).", "--ttl", metavar="TTL"),
        Param("supersedes", str, "Id of the memory this one replaces.", "--supersedes", metavar="ID"),
        Param(
            "key",
            str,
            "Dotted key (db.users.schema); replaces the active memory with that key.",
            "--key",
            metavar="KEY",
        ),
        Param(
            "importance",
            int,
            "1-10 (default 5); decides what stays in the hot tier.",
            "--importance",
            metavar="N",
            schema={"minimum": 1, "maximum": 10},
        ),
        Param(
            "related",
            list,
            "Ids of related memories.",
            "--related",
            metavar="ID",
            cli_help="Related memory id (repeatable).",
        ),
        Param("file", str, "Source file this memory is about.", "--file", metavar="PATH", tool=False),
        Param("lines", str, "Line range in --file.", "--lines", metavar="A-B", tool=False),
        Param("session_id", str, "The session it comes from (default: MEM_SESSION_ID).", "--session-id", metavar="ID"),
        Param("agent", str, "The agent writing it (default: MEM_AGENT).", "--agent", metavar="NAME"),
        Param("phase", str, "The phase of the work (default: MEM_PHASE).", "--phase", metavar="NAME", tool=False),
        Param(
            "accept_instructions",
            bool,
            "Store instruction-shaped text the guard refuses (a memory about prompt injection, say).",
            "--accept-instructions",
            default=False,
            tool=False,
        ),
        Param(
            "meta",
            list,
            "Free metadata K=V (repeatable): generation=12 (a number) or model=fast (text).",
            "--meta",
            metavar="K=V",
            tool=False,
        ),
    ),
    "the written entry, with `notes` (the JSON of `mem add --json`)",
    command="add",
    additive=True,
)

SUPERSEDE = Operation(
    "supersede",
    "Replace a memory with a new one (same category); the old one stays for audit.\n"
    "What an option does not give (key, tags, ttl, importance, confidence, metadata) is the old memory's.",
    "Replace a memory with a corrected one (memories are never edited: the old one stays, linked, for audit). "
    "What is not given (key, tags, ttl, importance, confidence, metadata) is the old memory's. Returns the new entry.",
    (
        Param("id", str, ID_HELP, default=REQUIRED, metavar="ID", cli_help="The memory to replace."),
        stdin_text("content", "The new memory.", "The new memory; '-' (or nothing, when piped) reads stdin."),
        Param("summary", str, "One-line summary (default: from the content).", "-s", "--summary", metavar="TEXT"),
        Param(
            "confidence",
            float,
            "0.0-1.0 (default: the old memory's); below the category's floor is refused.",
            "--confidence",
            metavar="F",
            schema=SHARE,
        ),
        Param(
            "tags",
            list,
            "Tags (default: the old memory's).",
            "-t",
            "--tag",
            metavar="TAG",
            cli_help="Tag, repeatable (default: the old memory's tags).",
        ),
        Param("ttl", str, "How long it holds, from now (default: the old memory's ttl).", "--ttl", metavar="TTL"),
        Param(
            "importance",
            int,
            "1-10 (default: the old memory's).",
            "--importance",
            metavar="N",
            schema={"minimum": 1, "maximum": 10},
        ),
    ),
    "the new entry (the JSON of `mem add --json`)",
)

TIER = Param(
    "tier",
    str,
    "hot (what context injects), long (long-term) or all.",
    "--tier",
    metavar="hot|long|all",
    cli_help="Only hot memories (what `mem context` injects) or long-term ones (default: all).",
    schema={"enum": ["hot", "long", "all"]},
)
FILTER_TAGS_HELP = "Only entries with all these tags (repeatable); a topic is a tag, `herm*` any tag starting herm."
META_FILTER = Param(
    "meta",
    list,
    "Only memories whose metadata holds K=V (repeatable; generation=12 matches a number or a text).",
    "--meta",
    metavar="K=V",
    tool=False,
)
SOURCE = Param(
    "source",
    str,
    "Only memories from this source (their metadata.source: Samaritan's user, session or directive).",
    "--source",
    metavar="S",
    schema={"minLength": 1, "maxLength": 200},
)

QUERY = Operation(
    "query",
    "Ranked retrieval: BM25 with stemming and typo tolerance, blended with recency and quality.",
    "Search the memories: ranked by relevance (BM25 with stemming and typo tolerance) blended with recency and quality. "
    "Call it before deciding something the project may have decided before. Returns hits, best first, each with its score.",
    (
        Param(
            "text",
            str,
            "What to look for, in a few words.",
            default=REQUIRED,
            metavar="TEXT",
            schema={"maxLength": MAX_TEXT},
        ),
        CATEGORIES,
        Param(
            "tags",
            list,
            FILTER_TAGS_HELP,
            "-t",
            "--tag",
            "--topic",
            metavar="TAG",
            cli_help=FILTER_TAGS_HELP,
        ),
        Param(
            "min_confidence",
            float,
            "Skip memories less sure than this (default: retrieval.min_confidence).",
            "--min-confidence",
            metavar="F",
            schema=SHARE,
        ),
        Param(
            "limit",
            int,
            "At most this many hits (default: retrieval.max_per_query).",
            "-n",
            "--limit",
            metavar="N",
            cli_help="At most N hits (default: retrieval.max_per_query).",
        ),
        Param("explain", bool, "Add each score part to every hit.", "--explain", default=False),
        Param("include_expired", bool, "Also rank expired memories.", "--include-expired", default=False),
        Param(
            "include_superseded",
            bool,
            "Also rank memories a newer one replaced.",
            "--include-superseded",
            default=False,
        ),
        Param("archived", bool, "Search the archive too.", "--archived", default=False),
        Param("scope", str, "Rank across these scopes; each hit says its scope.", "--scope", metavar="A,B", tool=False),
        Param("all_scopes", bool, "Rank across every scope.", "--all-scopes", default=False, tool=False),
        SINCE,
        UNTIL,
        TIER,
        SEMANTIC,
        SOURCE,
        META_FILTER,
        Param(
            "format",
            str,
            "text, json, or oracle: the learnings as Loa's oracle reads them, one JSON object a line.",
            "--format",
            default="text",
            metavar="FORMAT",
            tool=False,
        ),
    ),
    "the hits, best first, each an entry with its `score` (and `parts` with explain)",
    read_only=True,
)

CONTEXT = Operation(
    "context",
    "A `## Active Memory` markdown block for an LLM prompt, best first, within the budget.",
    "The project's memory as a markdown block for your prompt (`## Active Memory`), best first within a token "
    "budget; with a query, ranked by relevance to it; with a recipe, that recipe's sections. Read it at the start of a task.",
    (
        Param(
            "query",
            str,
            "Rank by relevance to this (default: by value).",
            metavar="QUERY",
            schema={"maxLength": MAX_TEXT},
        ),
        Param(
            "budget",
            int,
            "Token budget (estimated as characters / 4); default 400.",
            "--budget",
            default=400,
            metavar="TOKENS",
            cli_help="Token budget (estimated as characters / 4).",
            schema={"minimum": MIN_BUDGET, "maximum": MAX_BUDGET},
        ),
        Param(
            "recipe",
            str,
            "A recipe of context.recipes (default: context.recipe, else by value).",
            "--recipe",
            metavar="NAME",
            cli_help="Fill the sections of context.recipes.NAME in order (default: context.recipe, else by value).",
        ),
        SEMANTIC,
    ),
    "the block (`text`), its entries, what was left out (`left_out`)",
    read_only=True,
)

SHOW = Operation(
    "show",
    "Show one memory (archive included).",
    "One memory by id, archived ones included, with its computed tier and how often it was recalled; with chain, "
    "its whole supersede chain oldest first.",
    (
        Param("id", str, ID_HELP, default=REQUIRED, metavar="ID", cli_help="The memory's id."),
        Param("chain", bool, "The whole supersede chain, oldest first.", "--chain", default=False),
    ),
    "the entry with its tier and `accesses`; with chain, the entries oldest first",
    read_only=True,
)

LIST = Operation(
    "list",
    "List memories, newest first (active only unless asked).",
    "Active memories newest first (filters add expired, superseded or archived ones).",
    (
        CATEGORIES,
        Param(
            "tags",
            list,
            FILTER_TAGS_HELP,
            "-t",
            "--tag",
            "--topic",
            metavar="TAG",
            cli_help=FILTER_TAGS_HELP,
        ),
        Param("archived", bool, "List the archive instead.", "--archived", default=False),
        Param("expired", bool, "Include expired entries.", "--expired", default=False),
        Param("superseded", bool, "Include superseded entries.", "--superseded", default=False),
        Param("recent", int, "Only the N newest.", "--recent", metavar="N"),
        SINCE,
        UNTIL,
        TIER,
        SOURCE,
        META_FILTER,
    ),
    "the entries, newest first",
    read_only=True,
)

GET = Operation(
    "get",
    "Print the content of the active memory with this key (exit 1 when none).",
    "The active memory holding a dotted key (as given to save or remember), with its value and provenance.",
    (
        Param(
            "key",
            str,
            "The dotted key.",
            default=REQUIRED,
            metavar="KEY",
            cli_help="The dotted key (as given to `mem add --key`).",
        ),
    ),
    "the entry (text: its content)",
    read_only=True,
)

APPLY = Operation(
    "apply",
    "Record one application of a memory and its outcome.",
    "Report that you applied a memory and whether it helped; memories that keep failing are archived as ineffective.",
    (
        Param("id", str, ID_HELP, default=REQUIRED, metavar="ID", cli_help="The memory that was applied."),
        Param(
            "success",
            bool,
            "Did following the memory work?",
            "--success",
            default=False,
            required=True,
            cli_help="Applying it helped.",
        ),
        Param("failure", bool, "Applying it did not help.", "--failure", default=False, tool=False),
    ),
    "the entry with its updated `effectiveness`",
)

STATS = Operation(
    "stats",
    "Counts per category and state, tiers, oldest and newest, size on disk, cache hits and misses per category.",
    "Counts of memories per category, state and tier; oldest and newest.",
    (),
    "the counts (the JSON of `mem stats --json`)",
    read_only=True,
)

IMPORT = command_only(
    "import",
    "Import entries from JSON Lines (all or nothing unless --skip-invalid).",
    (
        Param("file", str, "JSON Lines, one entry per line.", default=REQUIRED, metavar="FILE|-"),
        Param("skip_invalid", bool, "Write the valid lines, report the rest.", "--skip-invalid", default=False),
        Param(
            "redact",
            bool,
            "Replace secrets in content and summary with [redacted: <kind>] instead of refusing.",
            "--redact",
            default=False,
        ),
    ),
    "the ids imported, the secrets redacted and the lines rejected",
)

EXPORT = command_only(
    "export",
    "Print every entry as JSON Lines; with --archived, round-trips through `mem import` into an empty grimoire.",
    (Param("archived", bool, "Include the archive.", "--archived", default=False),),
    "one entry a line, as `mem import` reads it",
    json=False,
)

SCOPES = command_only(
    "scopes",
    "List the scopes (personas) of this repository with their counts.",
    (),
    "each scope: name, path, active and all entries, whether it is the current one",
)


# -- keyed facts ---------------------------------------------------------------------

REMEMBER = Operation(
    "remember",
    "Keep a value under a key; a new value supersedes the old, the same value writes nothing.",
    "Keep a value under a dotted key (semantic memory); a new value supersedes the old, the same value writes nothing.",
    (
        Param("key", str, "Dotted lowercase key, like db.users.schema.", default=REQUIRED, metavar="KEY"),
        Param(
            "value",
            object,
            "The value: any JSON value (text, number, list, object).",
            default=REQUIRED,
            metavar="VALUE|-",
            cli_help="The value as text; '-' reads a JSON value from stdin.",
        ),
        Param("ttl", str, f"{TTL_HELP}.", "--ttl", metavar="TTL"),
        Param(
            "category",
            str,
            "A category of kind note (default: semantic, else fact); one the config lacks is added when "
            "memory_schema.new_categories says so.",
            "-c",
            "--category",
            metavar="CAT",
        ),
        # Not on the tool: the tool stays idempotent.
        Param(
            "refresh",
            bool,
            "Write the same value again so its ttl counts from now (SABRE's update_fact).",
            "--refresh",
            default=False,
            tool=False,
        ),
    ),
    "the entry kept and whether it changed",
    idempotent=True,
)

RECALL = Operation(
    "recall",
    "Print the value under a key (exit 1 when missing or expired).",
    "The value under a dotted key; an error when it is missing or expired.",
    (Param("key", str, "The key.", default=REQUIRED, metavar="KEY"),),
    "the key, its value and the entry's id",
    read_only=True,
)

FACTS = Operation(
    "facts",
    "List the keys of active facts, with their values.",
    "The keys of active facts (remember) with their values; a glob pattern narrows them.",
    (
        Param(
            "pattern",
            str,
            "Glob over keys, like 'db.*' (default: every key).",
            metavar="PATTERN",
            schema={"maxLength": MAX_PATTERN},
        ),
        CATEGORIES,
    ),
    "each key with its value",
    read_only=True,
)
