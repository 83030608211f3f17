"""Which ids a merge renumbers, and to what: from every grimoire file of the
three commits, so each file git merges picks the same new ids.

A memory is known by its identity (category, content and source, which no
lifecycle change and no renumbering touches), not by its id: two sides that
minted one id for two memories renumber the yielding side's; two ids for one
memory (a pick renumbered on one branch) become one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import cast

from ..core.model import format_id, parse_id


def renumbering(
    base_ids: dict[str, str],
    our_ids: dict[str, str],
    their_ids: dict[str, str],
    also_taken: Iterable[str] = (),
    ours_yield: bool | None = None,
    clashing: dict[str, str] | None = None,
) -> dict[str, str]:
    """The yielding side's new ids that the other side also minted for another
    memory -> fresh ids (theirs' unless `ours_yield`).

    Arguments map id -> the entry's text block in each commit. Deterministic:
    every file of one merge computes the same mapping. Given `ours_yield`
    (the driver knows which side yields), a memory both sides added under
    different ids (a commit cherry-picked and renumbered on one branch, then
    the branches merged) takes the other side's id, not a fresh one: it is
    one memory, not two. `clashing`: theirs' entries left out of `their_ids`
    because an earlier pick's rename took their id (`mapping_between`).
    """
    numbers = Numbers(set(base_ids) | set(our_ids) | set(their_ids) | set(also_taken))
    mapping = _same_memories(base_ids, our_ids, their_ids, ours_yield) if ours_yield is not None else {}
    for entry_id in sorted(set(our_ids) & set(their_ids) - set(base_ids)):
        if our_ids[entry_id] == their_ids[entry_id] or identity(our_ids[entry_id]) == identity(their_ids[entry_id]):
            continue  # the same memory on both sides (a cherry-pick), though one side may have applied it since
        if entry_id not in mapping:
            mapping[entry_id] = numbers.fresh(cast("tuple[str, int]", parse_id(entry_id))[0])
    if clashing:  # theirs' own ids another memory of theirs was renamed to: ours' id if ours holds it, else fresh
        held = {identity(block): entry_id for entry_id, block in our_ids.items()}
        for entry_id, block in sorted(clashing.items()):
            mapping[entry_id] = held.get(identity(block)) or numbers.fresh(
                cast("tuple[str, int]", parse_id(entry_id))[0]
            )
    return mapping


def _same_memories(
    base_ids: dict[str, str], our_ids: dict[str, str], their_ids: dict[str, str], ours_yield: bool
) -> dict[str, str]:
    """The yielding side's id -> the other side's, for each memory both sides
    hold under different ids that base did not hold there: the same category,
    content and source (`identity`). What may differ is what happened to it
    since: its references renamed, applies, a supersede."""
    yielding, keeping = (our_ids, their_ids) if ours_yield else (their_ids, our_ids)
    kept = _arrived(base_ids, keeping)
    mapping = {}
    for key, entry_id in _arrived(base_ids, yielding).items():
        other = kept.get(key)
        if other is not None and other != entry_id:
            mapping[entry_id] = other
    return mapping


def _arrived(base_ids: dict[str, str], side_ids: dict[str, str]) -> dict[str, str]:
    """identity -> id of each memory a side holds where base held none, or another (`_other_memory`)."""
    out = {}
    for entry_id, block in side_ids.items():
        key = identity(block) if _other_memory(entry_id, block, base_ids) else None
        if key is not None:
            out[key] = entry_id
    return out


def _other_memory(entry_id: str, block: str, was: dict[str, str]) -> bool:
    """Whether `entry_id` holds another memory in `block` than in `was` (none there included)."""
    return entry_id not in was or (was[entry_id] != block and identity(was[entry_id]) != identity(block))


def renames_since(base_ids: dict[str, str], side_ids: dict[str, str]) -> dict[str, str]:
    """Ids of base's memories that one side holds under another id -> that id
    (a pull on that side renumbered its unpublished id, while a branch taken
    before kept the old one; or the two histories met the same memory under
    two ids): on that side the old id now names another memory, or none.
    Arguments map id -> text block."""
    stale = [entry_id for entry_id, block in base_ids.items() if _other_memory(entry_id, block, side_ids)]
    if not stale:
        return {}
    held = _arrived(base_ids, side_ids)
    found = {entry_id: held.get(identity(base_ids[entry_id]) or "") for entry_id in stale}
    return {old: new for old, new in found.items() if new is not None}


IDENTITY = ("category", "content", "source")


def identity(block: str) -> str | None:
    """The fields that make an entry the memory it is, from its text block:
    category, content and source (session and time of writing), which no
    lifecycle change and no renumbering touches. None without a content.
    A text scan, not a parse: a merge reads every new entry of both sides."""
    kept: list[str] = []
    keeping = False
    for line in block.split("\n")[1:]:
        if line.startswith("  ") and not line.startswith("   "):  # a field of the entry; deeper lines are its value's
            keeping = line[2:].split(":", 1)[0] in IDENTITY
        if keeping:
            kept.append(line.rstrip())
    return "\n".join(kept) if any(line.startswith("  content:") for line in kept) else None


def memory_of(block: str) -> str:
    """A short key of the memory an entry's text block holds (`identity`), kept in a rebase's renames."""
    return hashlib.sha1((identity(block) or block).encode()).hexdigest()[:16]


class Numbers:
    """Fresh ids past every taken one, per day: what `next_id` gives, then adding it to the taken, without
    rereading them all for each (thousands of same-day collisions in one pull were quadratic: issue 43)."""

    def __init__(self, taken: Iterable[str]):
        self.highest: dict[str, int] = {}
        for value in taken:
            parsed = parse_id(value) if isinstance(value, str) else None
            if parsed and parsed[1] > self.highest.get(parsed[0], 0):
                self.highest[parsed[0]] = parsed[1]

    def fresh(self, day: str) -> str:
        self.highest[day] = self.highest.get(day, 0) + 1
        return format_id(day, self.highest[day])
