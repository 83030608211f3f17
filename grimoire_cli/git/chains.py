"""Two values remembered for one key on two sides of a merge: chained by time.

`mem remember` supersedes a key's current entry. When two clones remember one
key from the same value, each side's new entry supersedes the same old one,
and the old entry's `superseded_by` names two successors: for any other
memory a conflict a person settles (docs/teams.md), since the merge cannot
know which revision the team means. For a key it can: the latest value
written is the one `recall` gives. So the old entry is superseded by the
earlier of the two, and that one by the later: a chain in the order they
were written (by their source timestamps, then ids), each link with both
ends, whatever side each came from.
"""

from __future__ import annotations


def keyed_successors(old: dict[str, dict], ours: dict[str, dict], theirs: dict[str, dict]) -> dict[str, dict]:
    """id -> the link fields the chain sets (on both sides' copy of the old entry, and on the two successors), for
    each keyed entry of base that both sides superseded, each by a new entry of the same key in this file."""
    out: dict[str, dict] = {}
    for entry_id, was in old.items():
        key = was.get("key")
        mine, other = ours.get(entry_id), theirs.get(entry_id)
        if not key or mine is None or other is None:
            continue
        first_id, second_id = mine.get("superseded_by"), other.get("superseded_by")
        if first_id == second_id or was.get("superseded_by") in (first_id, second_id):
            continue  # one side's supersede, or none: the field merge takes it
        successors = [s for s in (ours.get(str(first_id)), theirs.get(str(second_id))) if s is not None]
        if len(successors) != 2 or not all(_new_revision(s, entry_id, key, old) for s in successors):
            continue
        first, second = sorted(successors, key=written_order)
        out[entry_id] = {"superseded_by": first["id"]}
        out[first["id"]] = {"superseded_by": second["id"]}
        out[second["id"]] = {"supersedes": first["id"]}
    return out


def _new_revision(entry: dict, old_id: str, key: str, old: dict[str, dict]) -> bool:
    return (
        entry.get("key") == key
        and entry.get("supersedes") == old_id
        and "superseded_by" not in entry
        and entry.get("id") not in old
    )


def written_order(entry: dict) -> tuple[str, str]:
    source = entry.get("source")
    return (str(source.get("timestamp", "")) if isinstance(source, dict) else "", str(entry.get("id")))
