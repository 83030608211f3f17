"""What a supersede carries over from the entry it replaces (docs/reference.md,
Superseding): one rule for `mem supersede`, `add --supersedes`, a key or a
procedure's name given again, the MCP tool and the memory tool."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.config import Config
from ..core.errors import Refused
from ..core.model import KIND_FIELDS, Entry, fact_summary
from .request import OPTIONS, Request

if TYPE_CHECKING:
    from ..storage.store import Store

# The kinds whose entries record one thing that happened or was derived
# (their content comes from their fields, or from a command's own run): a
# text alone cannot replace one. What to do instead, per kind.
_NOT_SUPERSEDED = {
    "episode": "an episode records one occurrence: record the new one with `mem episode`",
    "procedure": "give the new steps with `mem procedure add FILE` (the same name supersedes it)",
    "summary": "a summary records one consolidation: run `mem consolidate` again",
    "chat": "a chat message was said as it was: add a new one with `mem chat add`",
    "insight": "insights follow their evidence: `mem learn` supersedes them when it changes",
}


def inherit(request: Request, old: Entry, config: Config) -> Request:
    """`request`, which supersedes `old`, with what it leaves unsaid carried
    over from `old`: key, tags, ttl, importance, confidence, metadata and the
    kind's fields (docs/reference.md, Superseding). What the request gives wins."""
    data = old.data
    category = config.category(request.category or old.category)
    options = {name: getattr(request, name) for name in OPTIONS}
    if request.key is None and data.get("key"):
        options["key"] = data["key"]
    key = options["key"]
    if request.summary is None and key and isinstance(request.content, str) and isinstance(old.content, str):
        if data.get("summary") == fact_summary(
            key, old.content
        ):  # a fact `remember` wrote reads `key = value`: so does its successor
            options["summary"] = fact_summary(key, request.content)
    if not request.tags and data.get("tags"):
        options["tags"] = list(data["tags"])
    # A ttl or confidence the new category would refuse is not carried over: its own default applies.
    if request.ttl is None and isinstance(data.get("ttl"), str) and category.takes_ttl(data["ttl"]):
        options["ttl"] = data["ttl"]
    if request.importance is None and data.get("importance") is not None:
        options["importance"] = data["importance"]
    confidence = data.get("confidence")
    if (
        request.confidence is None
        and isinstance(confidence, (int, float))
        and confidence >= category.confidence_required
    ):
        options["confidence"] = confidence
    if isinstance(data.get("metadata"), dict) and (request.metadata is None or isinstance(request.metadata, dict)):
        from ..guard.instructions import ACCEPT

        # Merged key by key, the call's keys winning; a keyed fact's typed value belongs to the content it was stored
        # with (the new content is the new value, unless the call gives one), and so does a person's acceptance of
        # its instruction-shaped text (guard_instructions.py): a successor is accepted only when the call says so.
        metadata = {
            name: value
            for name, value in data["metadata"].items()
            if not (name == "value" and data.get("key")) and name != ACCEPT
        }
        options["metadata"] = {**metadata, **(request.metadata or {})} or None
    old_kind = config.category(old.category).kind
    if category.kind == old_kind != "note":
        fields = {name: data[name] for name in KIND_FIELDS if name in data}
        if request.fields is None and old_kind in _NOT_SUPERSEDED:
            raise Refused(
                f"{old.id} is {'an' if old_kind[0] in 'aeiou' else 'a'} {old_kind} and is not superseded by a text",
                _NOT_SUPERSEDED[old_kind],
            )
        if old_kind == "task":
            fields["task"] = request.content  # a task's text is its content (unless the call gives it)
        options["fields"] = {**fields, **(request.fields or {})}
    return Request(request.content, **options)


def chain_of(store: Store, entry: Entry) -> list[Entry]:
    """`entry`'s supersede chain, oldest first (`mem show --chain`); a link
    missing from the store, or one seen before, ends it."""
    first = entry
    seen = {first.id}
    while first.supersedes and first.supersedes not in seen:
        older = store.by_id([first.supersedes]).get(first.supersedes)
        if older is None:
            break
        first = older
        seen.add(first.id)
    out = [first]
    while out[-1].superseded_by and out[-1].superseded_by not in {e.id for e in out}:
        newer = store.by_id([out[-1].superseded_by]).get(out[-1].superseded_by)
        if newer is None:
            break
        out.append(newer)
    return out
