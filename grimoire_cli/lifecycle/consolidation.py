"""`mem consolidate` (Samaritan's summarize-on-reset, SABRE's end-of-
conversation consolidation): a transcript's last turns go to an external
summarizer with the extraction prompt (`prompts/consolidate-v1.md`); what it
extracts is saved through the normal add path, all of it in one lock with
a `summary` entry listing the ids saved.

Before the prompt leaves mem, `<private>` sections are removed and secrets
redacted. Every extracted item is checked like `mem add`: a secret or a bad
field refuses that item (reported, never written), an exact duplicate of an
active entry is skipped, an item with the key of an active entry supersedes
it. The summarizer's answer must have the documented shape, or nothing is
written (exit 5).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from ..core.errors import BadInput, CommandFailed
from ..core.model import derive_summary, is_importance
from ..memory.request import Request
from ..storage.catalog.queries import Filter
from ..storage.store import Store
from .transcripts import Transcript

PROMPT = "consolidate-v1.md"
SECTIONS = ("facts", "decisions", "episodes", "procedures", "preferences")
# Where each section is saved: a category by name, or the first of a kind; else the fallback.
_TARGETS = {
    "facts": "fact",
    "decisions": "decision",
    "preferences": "preference",
    "episodes": "kind:episode",
    "procedures": "kind:procedure",
}
FALLBACK = "learning"
# A bare list is Samaritan's own extraction answer, [{topic, content, importance}]: its
# memories, which the Samaritan adapter keeps as preferences (its default category).
SAMARITAN_SECTION = "preferences"


def prompt_text(name: str) -> str:
    """A prompt shipped in the package (`grimoire_cli/lifecycle/prompts/`)."""
    return (Path(__file__).parent / "prompts" / name).read_text(encoding="utf-8")


def prompt_for(transcript: Transcript, keep: int) -> tuple[str, int, int]:
    """The extraction prompt for the last `keep` messages; how many messages
    it holds, and how many secrets were redacted from them."""
    from ..guard.scan import redact, strip_private

    lines, redacted = [], 0
    kept = transcript.messages[-keep:]
    for message in kept:
        try:
            text = strip_private(message.text)
        except BadInput:
            continue  # a `<private>` without its end: the whole message stays private
        text, found = redact(text)
        redacted += len(found)
        lines.append(f"{message.role}: {text}")
    return prompt_text(PROMPT) + "\n<transcript>\n" + "\n\n".join(lines) + "\n</transcript>\n", len(kept), redacted


class Item(NamedTuple):
    """One extracted memory: its section, index there, and fields."""

    section: str
    index: int  # type: ignore[assignment]  # the item's place; tuple.index is not used
    data: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.section}[{self.index}]"


def check_output(value: Any, name: str) -> tuple[list[Item], str | None, str | None]:
    """The items, summary and model of the summarizer's answer (an object, or
    Samaritan's list of memories); an answer of another shape is `CommandFailed` (nothing is written)."""

    def wrong(problem: str) -> CommandFailed:
        return CommandFailed(
            f"{name}'s answer {problem}; nothing was written",
            f"see the shape in grimoire_cli/lifecycle/prompts/{PROMPT}",
        )

    if isinstance(value, list):
        value = {SAMARITAN_SECTION: value}
    if not isinstance(value, dict):
        raise wrong(f"is a JSON {type(value).__name__}, not an object")
    items = []
    for section in SECTIONS:
        listed = value.get(section, [])
        if not isinstance(listed, list):
            raise wrong(f"has {section} that is not a list")
        for index, data in enumerate(listed):
            item = Item(section, index, data)
            if not isinstance(data, dict):
                raise wrong(f"has {item.label} that is not an object")
            if is_bare(item):
                if "importance" in data and not is_importance(data["importance"]):
                    raise wrong(f"has {item.label} with an importance not from 1 to 10")
                items.append(item)
                continue
            if not isinstance(data.get("content"), str) or not data["content"].strip():
                raise wrong(f"has {item.label} without content")
            if not is_importance(data.get("importance")):
                raise wrong(f"has {item.label} without an importance from 1 to 10")
            items.append(item)
    summary = value.get("summary")
    if summary is not None and (not isinstance(summary, str) or not summary.strip()):
        raise wrong("has a summary that is not text")
    model = value.get("model") if isinstance(value.get("model"), str) and value["model"].strip() else None
    return items, summary, model


def bare_content(item: Item) -> str | None:
    """The content of an item in SABRE's own shape, which has none (nor,
    maybe, an importance): a fact `{key, value, ttl}` is its value, as `mem
    remember` keeps it; an episode `{event, context, learned}` what was
    learned, else its event; a procedure `{name, steps, category}` its name.
    None for any other item."""
    data = item.data
    if "content" in data:
        return None
    if item.section == "facts" and isinstance(data.get("key"), str) and "value" in data:
        return _value_text(data["value"])
    if item.section == "episodes" and isinstance(data.get("event"), str):
        learned = data.get("learned")
        return learned if isinstance(learned, str) and learned.strip() else data["event"]
    if item.section == "procedures" and isinstance(data.get("name"), str) and isinstance(data.get("steps"), list):
        return str(data["name"])
    return None


def is_bare(item: Item) -> bool:
    return bare_content(item) is not None


def targets(store: Store) -> dict[str, str]:
    """The category each section is saved in; checked before the summarizer runs."""
    config = store.config
    out = {}
    for section, target in _TARGETS.items():
        if target.startswith("kind:"):
            names = config.names_of_kind(target[5:])
            out[section] = names[0] if names else FALLBACK
        else:
            out[section] = target if target in config.categories else FALLBACK
        if out[section] not in config.categories:
            raise BadInput(
                f"no category to save {section} in (neither {target.removeprefix('kind:')} nor {FALLBACK})",
                "add the category under memory_schema.categories",
            )
    return out


def placed(store: Store, moment: datetime, item: Item, category: str) -> tuple[str, Any]:
    """The category and ttl of an item. A keyed fact goes where `mem remember`
    keeps it: the category of the entry holding its key, whose ttl it keeps
    unless it gives one, else the facts category (`semantic`, else `fact`). A
    ttl in seconds (SABRE's) becomes one with a unit; a bad one refuses the item."""
    from ..core.clock import seconds_ttl

    ttl = item.data.get("ttl")
    if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0:
        ttl = seconds_ttl(ttl)
    key = item.data.get("key")
    if item.section != "facts" or not isinstance(key, str):
        return category, ttl
    from ..kinds.facts import DEFAULT_CATEGORIES, holder

    current = holder(store, key, moment)
    if current is not None:
        return current.category, ttl if ttl is not None else current.data.get("ttl")
    return next((name for name in DEFAULT_CATEGORIES if name in store.config.categories), category), ttl


def request_for(item: Item, category: str, kind: str, session_id: str, ttl: Any = None) -> Request:
    """The add request of one item (its topic is a tag; an episode or a
    procedure gets its kind's fields when its category has that kind; a
    `value` is kept typed in metadata, as `mem remember` keeps it)."""
    data = item.data
    tags = list(data.get("tags") or []) if isinstance(data.get("tags"), list) else []
    if isinstance(data.get("topic"), str):
        tags.insert(0, data["topic"])
    bare = bare_content(item)
    content: str = data["content"] if bare is None else bare
    fields, summary = None, None
    if bare is not None and item.section == "facts" and content.strip():  # an empty value: refused by the add
        from ..core.model import fact_summary

        summary = fact_summary(data["key"], content)
    if bare is not None and item.section == "procedures" and isinstance(data.get("category"), str):
        tags.append(data["category"])  # SABRE's category of a procedure: a tag, as a topic is
    if kind == "episode":
        from ..kinds.episodes import OUTCOMES, content_of
        from ..kinds.tasks import check_event

        try:
            event = check_event(data.get("event"))  # type: ignore[arg-type]  # a missing event is refused there
        except BadInput:
            event = "conversation"  # none, or not a slug: the episode is still worth keeping
        outcome = data.get("outcome") if data.get("outcome") in OUTCOMES else "unknown"
        learned = data.get("learned") if isinstance(data.get("learned"), str) and data["learned"].strip() else None
        fields = {"event": event, "outcome": outcome, "learned": learned or content}
        if isinstance(data.get("context"), dict):
            fields["context"] = data["context"]
        if learned is not None and learned != content:
            summary = derive_summary(content)  # the item's own sentence, beside what was learned
        content = content_of(fields)
        if "context" in data and not isinstance(data["context"], dict):
            fields["context"] = data["context"]  # not an object: the schema refuses the item
    elif kind == "procedure":
        from ..kinds.procedures import content_of as procedure_line

        steps = data.get("steps")
        described = data.get("description") if bare is not None else content
        fields = {
            "name": data.get("name"),
            **({"description": described} if described is not None else {}),
            "steps": [_step(s) for s in steps] if isinstance(steps, list) else steps,
        }
        content = (
            procedure_line(fields) if isinstance(fields["name"], str) and isinstance(steps, list) and steps else content
        )
    # An episode extracted again (the same transcript, consolidated twice) is the same episode.
    return Request(
        content,
        category=category,
        importance=data.get("importance"),
        tags=tags,
        key=data.get("key"),
        confidence=data.get("confidence"),
        session_id=session_id,
        fields=fields,
        ttl=ttl,
        summary=summary,
        metadata=_metadata(data),
        dedupe=True if kind == "episode" else None,
    )


def _metadata(data: dict[str, Any]) -> dict[str, Any] | None:
    """A `value` kept typed, as `mem remember` keeps it; a topic as written
    (its tag is a slug: `Hermes project` is hermes-project), as Samaritan's save_memory keeps it."""
    kept = {"value": data["value"]} if "value" in data else {}
    if isinstance(data.get("topic"), str) and data["topic"].strip():
        kept["topic"] = data["topic"]
    return kept or None


def _step(step: Any) -> Any:
    """A step as a procedure keeps it: a text is its name; SABRE's
    `{action, name?, description?, condition?}` runs its action (mem never
    does), named by the action's first line when it has no name."""
    if isinstance(step, str):
        return {"name": step}
    if not isinstance(step, dict) or not isinstance(step.get("action"), str) or "run" in step:
        return step  # the procedure's schema judges it
    named = step.get("name") or (step["action"].strip().splitlines() or [""])[0][:200]
    kept = {key: step[key] for key in ("description", "condition") if key in step}
    return {"name": named, "run": step["action"], **kept}


def _value_text(value: Any) -> str:
    """A bare fact's content: its value, as `mem remember` stores it (JSON from the summarizer always dumps)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class Consolidated:
    """What `mem consolidate` did (or would do, on a dry run)."""

    __slots__ = (
        "dry_run",
        "duplicates",
        "messages",
        "model",
        "redacted",
        "refused",
        "saved",
        "session_id",
        "skipped",
        "summarized_by",
        "summary",
    )

    def __init__(self, session_id: str, messages: int):
        self.session_id, self.messages = session_id, messages
        self.saved: list[Any] = []  # Entry
        self.duplicates: list[tuple[str, str]] = []  # (item label, the id it duplicates)
        self.refused: list[tuple[str, str]] = []  # (item label, why)
        self.summary: Any = None  # the summary Entry, None when none was (or would be) written
        self.model: str | None = None
        self.dry_run = False
        self.skipped: str | None = None  # why nothing was sent to the summarizer
        self.redacted = 0
        self.summarized_by: str | None = (
            None  # the session's summary, when this run found nothing new and wrote nothing
        )

    @property
    def line(self) -> str:
        def n(count: int, word: str) -> str:
            return f"{count} {word}{'' if count == 1 else 's'}"

        memories = f"{len(self.saved)} memor{'y' if len(self.saved) == 1 else 'ies'}"
        line = (
            f"Summarized {n(self.messages, 'message')} → {memories} {'would be saved' if self.dry_run else 'saved'} "
            f"({n(len(self.duplicates), 'duplicate')}, {len(self.refused)} refused)"
        )
        if self.summarized_by is not None:
            line += f"; nothing new since summary {self.summarized_by}, nothing {'would be ' if self.dry_run else ''}written"
        return line

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "messages": self.messages,
            "saved": [e.to_dict() for e in self.saved],
            "duplicates": [{"item": label, "of": of} for label, of in self.duplicates],
            "refused": [{"item": label, "error": why} for label, why in self.refused],
            "summary": self.summary.to_dict() if self.summary is not None else None,
            "model": self.model,
            "dry_run": self.dry_run,
            "skipped": self.skipped,
            "redacted": self.redacted,
            "summarized_by": self.summarized_by,
        }


def consolidate(
    store: Store,
    moment: datetime,
    transcript: Transcript,
    *,
    command: str | None,
    option: str,
    timeout: float,
    session_id: str | None = None,
    dry_run: bool = False,
    into: str | None = None,
) -> Consolidated:
    """Summarize the transcript through `command` and save what it extracts (see the module);
    `into`: the category every note section (facts, decisions, preferences) is saved in."""
    from ..memory.adding import add_many
    from .external import argv_of, run_json

    settings = store.config.settings.consolidate
    summary_category = store.config.of_kind("summary").name  # the error naming the preset, before any work
    where = targets(store)
    if into is not None:
        kind = store.config.category(into).kind
        if kind != "note":
            raise BadInput(f"{into} is a category of kind {kind}", "save into a note category")
        where.update(dict.fromkeys(("facts", "decisions", "preferences"), into))
    if not command:
        raise BadInput(
            "no summarizer command configured", "pass --with 'llm -m MODEL' or set memory_schema.consolidate.command"
        )
    session = session_id or transcript.session_id or transcript.fallback_id()
    if len(transcript.messages) < settings.min_messages:
        result = Consolidated(session, len(transcript.messages))
        result.skipped = f"{len(transcript.messages)} message{'' if len(transcript.messages) == 1 else 's'}, fewer than {settings.min_messages}"
        return result
    prompt, kept, redacted = prompt_for(transcript, settings.max_turns)
    answer = run_json(command, prompt, timeout, option)
    items, summary_text, model = check_output(answer, argv_of(command, option)[0])
    result = Consolidated(session, kept)
    result.redacted, result.model, result.dry_run = redacted, model or model_of(command), dry_run
    items, repeated = last_of_each_key(items)
    result.refused.extend(repeated)
    kinds = {section: store.config.category(category).kind for section, category in where.items()}
    requests = []
    for item in items:
        category, ttl = placed(store, moment, item, where[item.section])
        requests.append(request_for(item, category, kinds[item.section], session, ttl))

    def summary(saved: list) -> list[Request]:
        result.summarized_by = None if saved else _summary_of(store, moment, session)
        if result.summarized_by is not None:
            return []  # the same conversation again, nothing new: its summary stands
        text = (
            summary_text
            or f"A conversation of {kept} messages; {len(saved)} memor{'y' if len(saved) == 1 else 'ies'} saved."
        )
        fields = {
            "session_id": session,
            "message_count": kept,
            "model": result.model,
            "memories": [e.id for e in saved],
        }
        return [Request(text, category=summary_category, session_id=session, fields=fields)]

    written = add_many(store, requests, moment, skip_invalid=True, after=summary, dry_run=dry_run)
    for rejected in written.rejected:
        label = items[rejected.index].label
        if rejected.duplicate_of is not None:
            result.duplicates.append((label, rejected.duplicate_of))
        else:
            result.refused.append((label, rejected.message))
    result.saved = [e for e in written if e.category != summary_category]
    result.summary = next((e for e in written if e.category == summary_category), None)
    return result


def model_of(command: str) -> str:
    """The model a command line names (`-m X`, `--model X`, `--model=X`), else its program's name."""
    from .external import argv_of

    argv = argv_of(command, "--with")
    for position, word in enumerate(argv[:-1]):
        if word in ("-m", "--model"):
            return argv[position + 1][:200]
    named = next((word.split("=", 1)[1] for word in argv if word.startswith("--model=")), None)
    return (named or Path(argv[0]).name)[:200]


def last_of_each_key(items: list[Item]) -> tuple[list[Item], list[tuple[str, str]]]:
    """The items with, for a key given more than once, only its last (what
    the conversation ended with); and (label, why) of those left out."""
    last = {item.data["key"]: item for item in items if isinstance(item.data.get("key"), str)}
    kept, dropped = [], []
    for item in items:
        key = item.data.get("key")
        if isinstance(key, str) and last[key] is not item:
            dropped.append((item.label, f"the key {key} is given again by {last[key].label}, which is kept"))
        else:
            kept.append(item)
    return kept, dropped


def _summary_of(store: Store, moment: datetime, session: str) -> str | None:
    """The id of the newest active summary of this session, if one exists."""
    chosen = Filter(at=moment.timestamp(), categories=store.config.names_of_kind("summary"), name=session)
    ids = store.ids(chosen)
    # MEM-<day>-NNN: of one day, a longer number is later
    return max(ids, key=lambda i: (i[:12], len(i), i)) if ids else None
