"""`mem compact` (Protea's compaction): beyond the newest `keep` active
entries of a category (and, with `--keep-total N`, beyond the newest N of
the whole grimoire), the older ones are condensed into one new entry that
lists them in `related_memories`; they are archived with reason
`superseded` and `superseded_by` it, all in one commit of grimoire files.

The condensed text comes from the external summarizer (the prompt
`prompts/compact-v1.md`, the same command as `mem consolidate`), or with
`--no-summary` from the entries' own summaries, so compaction works with no
command at all. Never compacted: categories whose `compaction.categories`
says `all`, local categories (volatile state has its ttl), the kinds whose
entries are one of a kind (tasks, procedures, summaries, chat), and keyed
entries (a key's holder is looked up by its key).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ..core.errors import BadInput, CommandFailed, GitFailed
from ..core.model import MAX_CONTENT, Entry, is_importance
from ..memory.request import Request
from ..storage.catalog.queries import Filter, Order
from ..storage.store import Store
from . import archive_commit
from .archive_commit import Move

PROMPT = "compact-v1.md"
NEVER = ("task", "procedure", "summary", "chat")  # kinds whose entries are each one of a kind
MAX_TAGS = 8


def compactable(store: Store, category: str | None) -> list[str]:
    """The categories `mem compact` looks at (`category`, checked, or all of them)."""
    config = store.config
    names = [config.category(category).name] if category is not None else list(config.categories)
    out = []
    for name in names:
        spec = config.category(name)
        if spec.kind in NEVER or not spec.tracked or config.settings.compaction.keep_of(name) is None:
            if category is not None:
                raise BadInput(
                    f"{name} is never compacted ({'kind ' + spec.kind if spec.kind in NEVER else 'local' if not spec.tracked else 'compaction.categories says all'})",
                    "compact another category",
                )
            continue
        out.append(name)
    return out


def older(store: Store, category: str, keep: int, moment: datetime, spared: set[int] | None = None) -> list[Entry]:
    """The category's active entries past the newest `keep` and not `spared`
    (catalog rows), oldest first, less keyed ones."""
    chosen = Filter(at=moment.timestamp(), categories=[category])
    rowids = [r for r in store.ordered(chosen, Order.NEWEST)[keep:] if r not in (spared or ())]
    loaded = store.load(rowids)
    return [loaded[r] for r in reversed(rowids) if r in loaded and not loaded[r].key]


def older_by_category(
    store: Store, names: Iterable[str], keeps: Mapping[str, int], moment: datetime, keep_total: int | None
) -> dict[str, list[Entry]]:
    """Each category's `older` entries, spared the `newest_overall`: all their rows and loads read one state
    (storage/handed.py)."""
    with store.reading():
        spared = newest_overall(store, moment, keep_total)
        return {name: older(store, name, keeps[name], moment, spared) for name in names}


def newest_overall(store: Store, moment: datetime, total: int | None) -> set[int] | None:
    """The catalog rows of the newest `total` active entries of every tracked
    category (Protea's keep_recent: directives and tasks count, though never
    compacted); None without a total."""
    if total is None:
        return None
    tracked = [name for name, spec in store.config.categories.items() if spec.tracked]
    return set(store.ordered(Filter(at=moment.timestamp(), categories=tracked), Order.NEWEST, total))


def keeps_of(store: Store, names: list[str], keep: int | Mapping[str, int] | None, total: int | None) -> dict[str, int]:
    """How many of each category's newest stay: `keep` (one for all, or per
    category), else its compaction setting; with a `total`, only `keep` or a
    category's own setting (not compaction.keep)."""
    settings = store.config.settings.compaction
    given = dict(keep) if isinstance(keep, Mapping) else {name: keep for name in names if keep is not None}
    if total is None:
        return {name: given.get(name) or settings.keep_of(name) or 0 for name in names}
    own = dict(settings.categories)
    return {name: given.get(name, own.get(name)) or 0 for name in names}


def condensed_text(entries: list[Entry], category: str, command: str | None, timeout: float) -> dict[str, Any]:
    """{content, summary?, importance?} for the entries: the summarizer's, or
    (no command) their summaries joined."""
    if command is None:
        first, last = entries[0].timestamp[:10], entries[-1].timestamp[:10]
        head = f"{len(entries)} {category} memories from {first} to {last}, condensed: "
        body = "; ".join(" ".join(e.summary.split()) for e in entries)
        content = head + body
        if len(content) > MAX_CONTENT:
            content = content[: MAX_CONTENT - 1].rstrip(" ;") + "…"
        return {"content": content, "summary": f"{len(entries)} {category} memories from {first} to {last}, condensed"}
    from ..guard.scan import redact
    from .consolidation import prompt_text
    from .external import argv_of, run_json

    lines = "\n".join(f"- {e.id} ({e.timestamp[:10]}): {redact(' '.join(e.content.split()))[0]}" for e in entries)
    answer = run_json(
        command, f'{prompt_text(PROMPT)}\n<memories category="{category}">\n{lines}\n</memories>\n', timeout, "--with"
    )
    name = argv_of(command, "--with")[0]
    if not isinstance(answer, dict) or not isinstance(answer.get("content"), str) or not answer["content"].strip():
        raise CommandFailed(
            f"{name}'s answer has no content; nothing was written",
            f"see the shape in grimoire_cli/lifecycle/prompts/{PROMPT}",
        )
    importance = answer.get("importance")
    if importance is not None and not is_importance(importance):
        raise CommandFailed(f"{name}'s answer has an importance that is not from 1 to 10; nothing was written")
    summary = answer.get("summary")
    return {
        "content": answer["content"],
        "summary": summary if isinstance(summary, str) and summary.strip() else None,
        "importance": importance,
    }


class Compacted:
    """Per category: the condensed entry and the ids it replaced (or would, on a dry run); the commit."""

    __slots__ = ("commit", "condensed", "dry_run", "notes", "replaced")

    def __init__(self, dry_run: bool):
        self.condensed: dict[str, Entry | None] = {}
        self.replaced: dict[str, list[str]] = {}
        self.commit: str | None = None
        self.dry_run = dry_run
        self.notes: list[str] = []

    def to_dict(self) -> dict[str, Any]:
        return {
            "categories": {
                c: {"condensed": e.to_dict() if e is not None else None, "replaced": self.replaced[c]}
                for c, e in self.condensed.items()
            },
            "commit": self.commit,
            "dry_run": self.dry_run,
            "notes": self.notes,
        }


def _request(entries: list[Entry], category: str, text: dict[str, Any]) -> Request:
    tags = [tag for tag, _ in Counter(t for e in entries for t in e.tags).most_common(MAX_TAGS)]
    return Request(
        text["content"],
        category=category,
        summary=text.get("summary"),
        tags=tags,
        related=[e.id for e in entries],
        importance=text.get("importance") or max(e.importance for e in entries),
        agent="mem compact",
        metadata={"compacted": len(entries), "from": entries[0].timestamp, "to": entries[-1].timestamp},
    )


def compact(
    store: Store,
    moment: datetime,
    *,
    category: str | None,
    keep: int | Mapping[str, int] | None,
    command: str | None,
    timeout: float,
    dry_run: bool,
    summarize: bool = False,
    keep_total: int | None = None,
) -> Compacted:
    """Condense what is past `keep` in each category (see the module); one commit.
    With `keep_total`, the newest that many of the whole grimoire stay too
    (`keeps_of`, `newest_overall`). `summarize` asks for the summarizer `command`, which a dry run never runs."""
    from ..memory.adding import prepare
    from ..memory.local_ids import settle

    names = (  # an unknown category is named before a missing command
        [n for c in keep for n in compactable(store, c)] if isinstance(keep, Mapping) else compactable(store, category)
    )
    result = Compacted(dry_run)
    if summarize and not command and not dry_run:
        raise BadInput(
            "no summarizer command configured",
            "pass --with 'llm -m MODEL', set consolidate.command, or use --no-summary",
        )
    if dry_run:
        command = None  # listing what would be condensed needs no summary (and a summarizer may be slow, or cost money)
    # The summarizer runs before the lock: it may take minutes, and what it condenses is re-checked under the lock.
    keeps = keeps_of(store, names, keep, keep_total)
    texts: dict[str, tuple[list[str], dict[str, Any]]] = {}
    for name, entries in older_by_category(store, names, keeps, moment, keep_total).items():
        if len(entries) >= 2:
            texts[name] = ([e.id for e in entries], condensed_text(entries, name, command, timeout))
    if summarize and dry_run and texts:
        result.notes.append(
            "dry run: no summarizer was run; the condensed text shown is made of the entries' summaries"
        )
    settle(store)
    with store.lock():
        current = older_by_category(store, list(texts), keeps, moment, keep_total)
        for name, (ids, _) in texts.items():
            if [e.id for e in current[name]] != ids:
                raise BadInput(
                    f"the {name} memories changed while they were being condensed; nothing was written",
                    "run mem compact again",
                )
        # One batch: each condensed entry gets its own id.
        made = prepare(store, [_request(current[name], name, text) for name, (_, text) in texts.items()], moment)
        moves, condensed = [], {}
        for new, (name, (ids, _)) in zip(made, texts.items()):
            entries = current[name]
            condensed[name] = (new, entries)
            result.condensed[name], result.replaced[name] = new, ids
            moves.append(
                Move(
                    name,
                    store.category_path(name),
                    store.category_path(name, archived=True),
                    {i: "superseded" for i in ids},
                    new.id,
                    (new.data,),
                    {e.id: e.data for e in entries},
                )
            )
        if dry_run or not moves:
            return result
        planned = archive_commit.plan(store, moves, moment)
        if planned.blocked:
            raise GitFailed(
                f"cannot commit a compaction now: {planned.blocked}; nothing was written", "try again once git is idle"
            )
        archive_commit.land(store, moves, {i: data for move in moves for i, data in move.current.items()}, moment)
        result.notes.extend(planned.notes)
        result.commit = archive_commit.commit(planned, lambda reasons: _message(condensed))
    return result


def _message(condensed: dict[str, tuple[Entry, list[Entry]]]) -> str:
    total = sum(len(entries) for _, entries in condensed.values())
    lines = [f"mem compact: {total} memories condensed into {len(condensed)}", ""]
    lines += [
        f"{new.id} ({name}): replaces {len(entries)}, {entries[0].id} .. {entries[-1].id}"
        for name, (new, entries) in condensed.items()
    ]
    return "\n".join(lines) + "\n"
