"""`mem merge-file`: the git merge driver for grimoire files.

Git calls it with the base, ours and theirs versions of one file when both
sides changed it (`merge.grimoire.driver = mem merge-file %O %A %B %P`,
set by `mem hooks install`). It merges entry by entry:

- every memory of both sides is kept; ours keeps its text, comments and
  order, theirs' new entries are appended;
- a new id both sides minted for different memories is renumbered on the
  side whose new ids are not yet shared (sides.py: published ids never
  change; theirs in a rebase or cherry-pick), with every reference to it
  (supersedes, superseded_by, related_memories) on that side rewritten. The
  numbering is computed from all grimoire files of the three commits, so
  each file git merges picks the same new ids;
- lifecycle fields are reconciled: a supersede on one side and an
  effectiveness update on the other both survive; effectiveness counts of
  both sides add up from the base (unless both sides hold the very same
  record, last_applied included: that is one change seen twice, as after a
  cherry-pick); an entry one side removed (archived) stays removed;
- a change of substance (content, summary, confidence, ...) to the same entry
  on both sides is a conflict: that entry gets conflict markers, the driver
  exits 1, and `mem validate` names it until it is resolved.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple, cast

from ..core.config import LOCAL_DIR
from ..core.errors import BadInput, Damaged
from ..core.model import format_id, parse_id, score_of
from ..storage import issued_marks
from ..storage.textedit import Raw, rewrite
from ..storage.yamlio import emit_entry, parse_entries
from . import gitops
from .sides import ours_yields
from .trees import commits, ids_in, prior_renames, rebase_tip, save_renames, state_file, tree_ids

# Fields whose changes are lifecycle, not substance: reconciled, never a conflict.
LIFECYCLE = ("superseded_by", "effectiveness")


class MergeResult(NamedTuple):
    text: str
    conflicts: list[str]
    renumbered: dict[str, str]
    side: str = "theirs"  # whose ids `renumbered` renamed (the other side's keep their meaning)


def merge_texts(
    base: str, ours: str, theirs: str, where: str, mapping: dict[str, str] | None = None, ours_yields: bool = False
) -> MergeResult:
    """Merge three versions of one grimoire file; `mapping` renames theirs'
    ids, or ours' when `ours_yields` (see sides.py: published ids never change)."""
    base_items, _ = parse_entries(base, f"{where} (base)") if base.strip() else ([], [])
    our_items, our_spans = parse_entries(ours, f"{where} (ours)") if ours.strip() else ([], [])
    their_items, _ = parse_entries(theirs, f"{where} (theirs)") if theirs.strip() else ([], [])
    mapping = dict(mapping or {})
    written: list[Any] = [item.get("id") if isinstance(item, dict) else None for item in our_items]  # ours' ids
    ours_now = our_items
    if mapping and ours_yields:
        # Every occurrence of a colliding new id in ours names ours' memory: ours never saw theirs' new entries.
        ours_now = [renamed(item, mapping) for item in our_items]
    elif mapping:
        # Base too: in a rebase, an earlier pick may have renamed ids this commit's base still has.
        their_items = [renamed(item, mapping) for item in their_items]
        base_items = [renamed(item, mapping) for item in base_items]
    o = _by_id(base_items)
    a = _by_id(ours_now)
    b = _by_id(their_items)
    as_written = {
        now["id"]: (at, item)
        for now, at, item in zip(ours_now, written, our_items)
        if isinstance(now, dict) and isinstance(now.get("id"), str)
    }
    renamed_side = ours_now if ours_yields else their_items
    renamed_ids = {i.get("id") for i in renamed_side if isinstance(i, dict)}  # once: per mapping item it was quadratic
    renumbered = {k: v for k, v in mapping.items() if v in renamed_ids}
    conflicts: list[str] = []
    changes: dict[str, Any] = {}
    for entry_id, mine in a.items():
        at, original = as_written[entry_id]
        other = b.get(entry_id)
        old = o.get(entry_id)
        if other is None and old is not None:
            changes[at] = None  # theirs removed (archived) it: it stays removed
            continue
        if other is None or other == mine:
            if mine != original:
                changes[at] = mine  # renamed, or a reference renamed
            continue
        merged, conflict = merge_entry(old, mine, other)
        if conflict:
            conflicts.append(entry_id)
            start, stop = our_spans[written.index(at)]
            block = ours.split("\n")[start - 1 : stop]
            changes[at] = Raw(
                ["<<<<<<< ours", *block, "=======", *emit_entry(other).rstrip("\n").split("\n"), ">>>>>>> theirs"]
            )
        elif merged != original:
            changes[at] = merged
    appended = [
        item for item in their_items if isinstance(item, dict) and item.get("id") not in a and item.get("id") not in o
    ]
    return MergeResult(
        rewrite(ours, written, our_spans, {at: item for at, item in as_written.values()}, changes, appended, where),
        conflicts,
        renumbered,
        "ours" if ours_yields else "theirs",
    )


def merge_entry(base: dict | None, ours: dict, theirs: dict) -> tuple[dict, bool]:
    """Field by field three-way merge of one entry: (merged, conflict?)."""
    base = base or {}
    merged: dict[str, Any] = {}
    conflict = False
    for key in list(ours) + [k for k in theirs if k not in ours]:
        o, a, b = base.get(key, _MISSING), ours.get(key, _MISSING), theirs.get(key, _MISSING)
        if key == "effectiveness" and isinstance(a, dict) and isinstance(b, dict):
            value: Any = _effectiveness(o if isinstance(o, dict) else {}, a, b)
        elif a == b or b == o:
            value = a
        elif a == o:
            value = b
        else:  # both changed it differently (for superseded_by: two different successors)
            conflict = True
            value = a
        if value is not _MISSING:
            merged[key] = value
    return merged, conflict


def _effectiveness(base: dict, ours: dict, theirs: dict) -> dict:
    """Both sides' applications since the base, added up."""

    def count(side: dict, name: str) -> int:
        value = side.get(name, 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    applications = count(ours, "applications") + count(theirs, "applications") - count(base, "applications")
    successes = count(ours, "successes") + count(theirs, "successes") - count(base, "successes")
    out = {
        **base,
        **ours,
        **theirs,
        "applications": applications,
        "successes": successes,
        "score": score_of(applications, successes),
    }
    stamps = [s for s in (ours.get("last_applied"), theirs.get("last_applied")) if s]
    if stamps:
        out["last_applied"] = max(str(s) for s in stamps)
    return out


def _by_id(items: list[Any]) -> dict[str, dict]:
    return {item["id"]: item for item in items if isinstance(item, dict) and isinstance(item.get("id"), str)}


def renamed(item: Any, mapping: dict[str, str]) -> Any:
    """An entry with ids renamed by `mapping` (its own and its references)."""
    if not isinstance(item, dict):
        return item
    out = dict(item)
    for key in ("id", "supersedes", "superseded_by"):
        if isinstance(out.get(key), str) and out[key] in mapping:
            out[key] = mapping[out[key]]
    if isinstance(out.get("related_memories"), list):
        out["related_memories"] = [mapping.get(r, r) if isinstance(r, str) else r for r in out["related_memories"]]
    return out


_MISSING: Any = object()


# -- which ids to renumber: from every grimoire file of the three commits -----


def renumbering(
    base_ids: dict[str, str],
    our_ids: dict[str, str],
    their_ids: dict[str, str],
    also_taken: Iterable[str] = (),
    ours_yield: bool | None = None,
) -> dict[str, str]:
    """The yielding side's new ids that the other side also minted for another
    memory -> fresh ids (theirs' unless `ours_yield`).

    Arguments map id -> the entry's text block in each commit. Deterministic:
    every file of one merge computes the same mapping. Given `ours_yield`
    (the driver knows which side yields), a memory both sides added under
    different ids (a commit cherry-picked and renumbered on one branch, then
    the branches merged) takes the other side's id, not a fresh one: it is
    one memory, not two.
    """
    numbers = Numbers(set(base_ids) | set(our_ids) | set(their_ids) | set(also_taken))
    mapping = _same_memories(base_ids, our_ids, their_ids, ours_yield) if ours_yield is not None else {}
    for entry_id in sorted(set(our_ids) & set(their_ids) - set(base_ids)):
        if our_ids[entry_id] == their_ids[entry_id]:
            continue  # the same memory on both sides (a cherry-pick)
        if entry_id not in mapping:
            mapping[entry_id] = numbers.fresh(cast("tuple[str, int]", parse_id(entry_id))[0])
    return mapping


def _same_memories(
    base_ids: dict[str, str], our_ids: dict[str, str], their_ids: dict[str, str], ours_yield: bool
) -> dict[str, str]:
    """The yielding side's id -> the other side's, for each memory both sides
    added (not in base) under different ids: the same entry text but for its
    id line."""
    yielding, keeping = (our_ids, their_ids) if ours_yield else (their_ids, our_ids)
    kept = {_body(block): entry_id for entry_id, block in keeping.items() if entry_id not in base_ids}
    mapping = {}
    for entry_id, block in yielding.items():
        other = kept.get(_body(block)) if entry_id not in base_ids else None
        if other is not None and other != entry_id:
            mapping[entry_id] = other
    return mapping


def _body(block: str) -> str:
    """An entry's text block without its `- id:` line."""
    return block.partition("\n")[2]


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


def global_mapping(
    root: Path, storage: str, base_text: str, ours_text: str, theirs_text: str
) -> tuple[dict[str, str], bool]:
    """The renumbering for this merge, from all grimoire files when git tells
    us the commits, and whether ours is the side it renames.

    In a rebase or a range cherry-pick, renames made for earlier picks are
    kept beside git's own state (and go when git removes it) and applied to
    later picks' base and theirs, whose commits still carry the old ids.
    """
    git_dir = gitops.git_dir(root)
    prior = prior_renames(git_dir, root / storage) if git_dir is not None else {}
    found = commits(root, git_dir) if git_dir is not None else None
    files = (base_text, ours_text, theirs_text)
    # New numbers must also miss ids that later picks of a rebase will bring.
    tip = rebase_tip(git_dir) if git_dir is not None else None
    later = set(tree_ids(root, tip, storage) or {}) if tip is not None else set()
    mapping = mapping_between(root, storage, found, prior, later, files, ours_yield=False)
    picking = (
        git_dir is None or state_file(git_dir, root / storage) is not None or (git_dir / "CHERRY_PICK_HEAD").exists()
    )
    yields = (
        bool(mapping)
        and found is not None
        and git_dir is not None
        and not picking
        and ours_yields(root, git_dir, found[1], found[2])
    )
    if yields:  # the same memories seen from ours' side (the trees are cached)
        mapping = mapping_between(root, storage, found, prior, later, files, ours_yield=True)
    if git_dir is not None and mapping != prior:
        save_renames(git_dir, root / storage, mapping)
    return mapping, yields


def mapping_between(
    root: Path,
    storage: str,
    found: tuple[str, str, str] | None,
    prior: dict[str, str],
    later: Iterable[str] = (),
    files: tuple[str, str, str] | None = None,
    ours_yield: bool | None = None,
) -> dict[str, str]:
    """`prior` renames plus theirs' new ids that collide with ours' between the
    (base, ours, theirs) commits (see `renumbering`, and for `ours_yield`);
    `files` (one file's three texts) stand in when the commits are unknown.
    The driver and `mem merge-fixup` share it, so both pick the same new
    numbers."""
    trees = [tree_ids(root, rev, storage) for rev in found] if found is not None else [None]
    if found is not None and all(tree is not None for tree in trees):
        base_ids, our_ids, their_ids = cast("list[dict[str, str]]", trees)
    elif files is not None:  # unknown commits (a merge run by hand): this file's three versions only
        base_ids, our_ids, their_ids = (ids_in(text) for text in files)
    else:
        return dict(prior)
    rename = lambda ids: {prior.get(k, k): v for k, v in ids.items()}
    # Never a number this clone issued before (storage/issued.py): the yielding side may be ours.
    marks = issued_marks.highest(root / storage / LOCAL_DIR)
    issued_here = {format_id(day, number) for day, number in marks.items()}
    return {
        **prior,
        **renumbering(
            rename(base_ids), our_ids, rename(their_ids), set(later) | set(prior.values()) | issued_here, ours_yield
        ),
    }


def scope_storage(config, path: str) -> str:
    """The storage dir (relative to the root) of the scope a grimoire file is
    in: ids are unique per scope, so collisions are looked for there only."""
    parts = Path(path).parts
    if config.scopes_dir is not None:
        scopes = config.scopes_dir.relative_to(config.root).parts
        if parts[: len(scopes)] == scopes and len(parts) > len(scopes) + 2 and parts[len(scopes) + 1] == "memory":
            return Path(*scopes, parts[len(scopes)], "memory").as_posix()
    return config.storage_dir.relative_to(config.root).as_posix()


def merge_file(
    base_path: str, ours_path: str, theirs_path: str, display: str, config: str | None = None
) -> MergeResult:
    """Merge as a git driver does: the result replaces the ours file. A
    version that cannot be read is bad input (git always passes three
    files: only a call by hand misses one), and nothing is written."""
    from ..core.config import find_root, load_config

    raw = []
    for label, path in (("BASE", base_path), ("OURS", ours_path), ("THEIRS", theirs_path)):
        try:
            raw.append(Path(path).read_bytes())
        except OSError as exc:
            raise BadInput(
                f"merge-file cannot read {label} {path}: {exc.strerror}",
                "git runs it as `mem merge-file %O %A %B %P`; by hand, name three existing files",
            ) from None
    try:
        texts = [data.decode("utf-8") for data in raw]
    except UnicodeDecodeError:
        return _by_lines(base_path, ours_path, theirs_path, f"{display}: not UTF-8 text")
    root = find_root(Path.cwd())
    try:
        storage = scope_storage(load_config(root, config), display)
    except Exception:
        storage = "grimoires"
    mapping, yields = global_mapping(root, storage, *texts)
    try:
        base, ours, theirs = texts
        result = merge_texts(base, ours, theirs, where=display, mapping=mapping, ours_yields=yields)
    except Damaged as exc:
        return _by_lines(base_path, ours_path, theirs_path, f"{display}: {exc.message}")
    tmp = Path(ours_path).with_name(Path(ours_path).name + ".mem-merge")
    tmp.write_text(result.text, encoding="utf-8")
    os.replace(tmp, ours_path)
    return result


def _by_lines(base_path: str, ours_path: str, theirs_path: str, why: str) -> MergeResult:
    """A side that is not a grimoire list (hand-broken, not UTF-8, or already
    holding conflict markers): git's own line merge, conflicts marked as usual."""
    clean = gitops.merge_lines(Path.cwd(), ours_path, base_path, theirs_path)
    return MergeResult(Path(ours_path).read_text(encoding="utf-8", errors="replace"), [] if clean else [why], {})
