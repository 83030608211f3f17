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
from ..core.model import format_id, score_of
from ..storage import issued_marks
from ..storage.textedit import Raw, rewrite
from ..storage.yamlio import emit_entry, parse_entries
from . import gitops, mapping_cache
from .chains import keyed_successors
from .echoes import Counts, count_of, counts_added, echoes, raised
from .numbering import memory_of, renames_since, renumbering
from .sides import ours_yields
from .trees import (
    Rename,
    commits,
    ids_in,
    picked,
    prior_renames,
    rebase_tip,
    renames_here,
    save_renames,
    state_file,
    tree_ids,
)

# Fields whose changes are lifecycle, not substance: reconciled, never a conflict.
LIFECYCLE = ("superseded_by", "effectiveness")


class MergeResult(NamedTuple):
    text: str
    conflicts: list[str]
    renumbered: dict[str, str]
    side: str = "theirs"  # whose ids `renumbered` renamed (the other side's keep their meaning)


def merge_texts(
    base: str,
    ours: str,
    theirs: str,
    where: str,
    mapping: dict[str, str] | None = None,
    ours_yields: bool = False,
    same: dict[str, tuple[str, str]] | None = None,
    moved: tuple[dict[str, str], dict[str, str]] = ({}, {}),
    echoed: Counts | None = None,
) -> MergeResult:
    """Merge three versions of one grimoire file; `mapping` renames theirs'
    ids, or ours' when `ours_yields` (see sides.py: published ids never change).
    `same`: memories both sides added (a cherry-pick) -> (ours', theirs' text
    block, in any file), as if base held them as added.
    `moved`: (ours', theirs') renumberings since base (`renames_since`), each
    applied to the other side and to base, where the old id still names it.
    `echoed`: applies both sides hold a copy of (`echoes.counts_added`), counted once."""
    base_items, _ = parse_entries(base, f"{where} (base)") if base.strip() else ([], [])
    our_items, our_spans = parse_entries(ours, f"{where} (ours)") if ours.strip() else ([], [])
    their_items, their_spans = parse_entries(theirs, f"{where} (theirs)") if theirs.strip() else ([], [])
    # Only theirs' entries are carried over, one by one: an item that is no entry would be lost. Git's line merge keeps it.
    stray = next((n for n, item in enumerate(their_items) if not isinstance(item, dict)), None)
    if stray is not None:
        raise Damaged(f"{where} (theirs)", their_spans[stray][0], "holds an item that is not an entry", kind="entry")
    mapping = dict(mapping or {})
    # A moved memory ends under its new id as this merge renames it in turn, when its side is the yielding one.
    ours_moved = {old: mapping.get(new, new) if ours_yields else new for old, new in moved[0].items()}
    theirs_moved = {old: new if ours_yields else mapping.get(new, new) for old, new in moved[1].items()}
    written: list[Any] = [item.get("id") if isinstance(item, dict) else None for item in our_items]  # ours' ids
    if ours_yields:
        # Every occurrence of a colliding new id in ours names ours' memory: ours never saw theirs' new entries.
        ours_map, theirs_map, base_map = {**mapping, **theirs_moved}, ours_moved, {**ours_moved, **theirs_moved}
    else:
        # Base too: in a rebase, an earlier pick may have renamed ids this commit's base still has.
        ours_map, theirs_map, base_map = (
            theirs_moved,
            {**mapping, **ours_moved},
            {**mapping, **ours_moved, **theirs_moved},
        )
    ours_now = [renamed(item, ours_map) for item in our_items] if ours_map else our_items
    their_items = [renamed(item, theirs_map) for item in their_items] if theirs_map else their_items
    base_items = [renamed(item, base_map) for item in base_items] if base_map else base_items
    o = _by_id(base_items)
    a = _by_id(ours_now)
    b = _by_id(their_items)
    chained = keyed_successors(o, a, b)  # one key remembered on both sides: chained by time (chains.py)
    if chained:
        a.update((i, {**a[i], **chained[i]}) for i in chained if i in a)
        b.update((i, {**b[i], **chained[i]}) for i in chained if i in b)
        their_items = [b.get(str(item.get("id")), item) if isinstance(item, dict) else item for item in their_items]
    # A memory both sides added that one side archived since sits in this file on one side only. As for any
    # entry, the archiving side wins: where the other side still holds it active, base takes it as added (so it
    # stays removed), and the archived copy keeps both sides' lifecycle.
    same = same or {}
    elsewhere = _held_elsewhere(same, o, a, b)
    o.update((entry_id, _as_added(here)) for entry_id, here, _ in elsewhere if not here.get("archived"))
    kept_archived = {}
    for entry_id, here, other_side in elsewhere:
        if not here.get("archived"):
            continue
        other = _other_copy(same[entry_id][other_side], (ours_map, theirs_map)[other_side], where)
        if other is None:
            continue
        fields = {k: v for k, v in merged_lifecycle(here, other).items() if here.get(k) != v}
        if fields:
            kept_archived[entry_id] = fields
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
        merged, conflict = merge_entry(raised(old, mine, echoed) if echoed else old, mine, other)
        if conflict:
            conflicts.append(entry_id)
            start, stop = our_spans[written.index(at)]
            # Ours as renamed here (a yielding side's successor under its new id), else as written.
            block = (
                ours.split("\n")[start - 1 : stop] if mine == original else emit_entry(mine).rstrip("\n").split("\n")
            )
            changes[at] = Raw(
                ["<<<<<<< ours", *block, "=======", *emit_entry(other).rstrip("\n").split("\n"), ">>>>>>> theirs"]
            )
        elif merged != original:
            changes[at] = merged
    for entry_id, fields in kept_archived.items():
        if entry_id in a:
            changes[as_written[entry_id][0]] = {**a[entry_id], **fields}
    appended = [
        # an item without an id (written by hand) is kept as it is
        {**item, **(kept_archived.get(item["id"], {}) if "id" in item else {})}
        for item in their_items
        if isinstance(item, dict) and item.get("id") not in a and item.get("id") not in o
    ]
    return MergeResult(
        rewrite(ours, written, our_spans, {at: item for at, item in as_written.values()}, changes, appended, where),
        conflicts,
        renumbered,
        "ours" if ours_yields else "theirs",
    )


def _held_elsewhere(
    same: dict[str, tuple[str, str]], o: dict[str, dict], a: dict[str, dict], b: dict[str, dict]
) -> list[tuple[str, dict, int]]:
    """(id, the copy in this file, 0 or 1 for the side holding the other copy
    in another file) of each memory both sides added (`same`) that base lacks
    here and one side only holds here."""
    out = []
    for entry_id in same:
        if entry_id in o or (entry_id in a) == (entry_id in b):
            continue  # base has it, or both sides hold it here (or neither): nothing moved
        out.append((entry_id, a[entry_id], 1) if entry_id in a else (entry_id, b[entry_id], 0))
    return out


def _other_copy(block: str, mapping: dict[str, str], where: str) -> dict | None:
    """The other side's copy (its text block), in this merge's ids."""
    items, _ = parse_entries(block + "\n", where)
    return renamed(items[0], mapping) if items and isinstance(items[0], dict) else None


def _as_added(entry: dict) -> dict:
    """An entry without its lifecycle fields: as it was added."""
    return {k: v for k, v in entry.items() if k not in LIFECYCLE}


def merged_lifecycle(kept: dict, other: dict) -> dict:
    """The lifecycle fields of `kept` with `other`'s merged in, for two copies
    of one memory that share no base: the entry as added stands in for it."""
    merged, _ = merge_entry(_as_added(kept), kept, other)
    return {k: merged[k] for k in LIFECYCLE if k in merged}


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
    applications = count_of(ours, "applications") + count_of(theirs, "applications") - count_of(base, "applications")
    successes = count_of(ours, "successes") + count_of(theirs, "successes") - count_of(base, "successes")
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


class Renames(NamedTuple):
    """What a merge does to ids, from all grimoire files of its commits."""

    mapping: dict[str, str]  # the yielding side's ids -> new ones (`renumbering`)
    yields: bool  # ours is the yielding side
    same: dict[str, tuple[str, str]]  # memories both sides added (`_same_memories`): id -> ours', theirs' block
    moved: tuple[dict[str, str], dict[str, str]]  # ours' and theirs' renumberings since base (`renames_since`)
    echoed: Counts  # applies both sides hold a copy of (echoes.py)


def global_mapping(
    root: Path, storage: str, base_text: str, ours_text: str, theirs_text: str, path: str | None = None
) -> Renames:
    """The renumbering for this merge, from all grimoire files when git tells
    us the commits (one file's three versions when it does not).

    In a rebase or a range cherry-pick, renames made for earlier picks are
    kept beside git's own state (and go when git removes it) and applied to
    later picks' base and theirs, whose commits still carry the old ids.
    """
    git_dir = gitops.git_dir(root)
    records = prior_renames(git_dir, root / storage) if git_dir is not None else []
    found = commits(root, git_dir) if git_dir is not None else None
    # No state names the commits of a single cherry-pick while it merges: its change to this file does.
    single_pick = found is None and git_dir is not None and path is not None
    if single_pick:
        found = picked(root, cast(str, path), base_text, theirs_text)
    files = (base_text, ours_text, theirs_text)
    # New numbers must also miss ids that later picks of a rebase will bring.
    tip = rebase_tip(git_dir) if git_dir is not None else None
    key = _cache_key(root, git_dir, storage, found, records, tip) if not single_pick else None
    kept = mapping_cache.load(cast(Path, git_dir), key) if key is not None else None
    if kept is not None:  # another file of this merge worked it out (each runs in a process of its own)
        return Renames(**mapping_cache.restored(kept))
    later = set(tree_ids(root, tip, storage) or {}) if tip is not None else set()
    sides = _side_ids(root, storage, found, files)
    prior = _prior(records, sides)
    mapping = _mapping(root, storage, sides, prior, records, later, ours_yield=False)
    picking = (
        git_dir is None
        or single_pick
        or state_file(git_dir, root / storage) is not None
        or (git_dir / "CHERRY_PICK_HEAD").exists()
    )
    yields = (
        bool(mapping)
        and found is not None
        and git_dir is not None
        and not picking
        and ours_yields(root, git_dir, found[1], found[2], found[0])
    )
    if yields:  # the same memories seen from ours' side (the trees are cached)
        mapping = _mapping(root, storage, sides, prior, records, later, ours_yield=True)
    base_ids, our_ids, their_ids = sides or ({}, {}, {})
    # Renames are saved only while picking, where a new rename's old id is one of theirs, or a kept rename's target
    # minted past every id of the pick's sides: base holds that only where the branch gave it to another memory
    # and removed it, so base would name that one.
    made = [(old, memory_of(their_ids.get(old) or ""), new) for old, new in mapping.items()]
    if git_dir is not None and any(prior.get(old) != new for old, _, new in made):
        save_renames(
            git_dir, root / storage, records + [rename for rename in made if prior.get(rename[0]) != rename[2]]
        )
    # A target the keeping side already holds is a memory both added (`_same_memories`); fresh numbers are held by none.
    yielding, keeping = (our_ids, their_ids) if yields else (their_ids, our_ids)
    same = {
        new: ((yielding[old], keeping[new]) if yields else (keeping[new], yielding[old]))
        for old, new in mapping.items()
        if new in keeping and old in yielding and prior.get(old) != new
    }
    echoed = counts_added(root, storage, echoes(root, *found)) if found is not None else {}
    renames = Renames(
        mapping, yields, same, (renames_since(base_ids, our_ids), renames_since(base_ids, their_ids)), echoed
    )
    if key is not None:
        mapping_cache.save(cast(Path, git_dir), key, renames._asdict())
    return renames


def _cache_key(root, git_dir, storage, found, records, tip) -> str | None:
    """What the merge's mapping depends on, when it comes from the commits alone (not one file's versions)."""
    if git_dir is None or found is None or any(tree_ids(root, rev, storage) is None for rev in found):
        return None
    refs = gitops.output(["for-each-ref", "--format=%(refname) %(objectname)", "refs/remotes"], root)
    fetched = (git_dir / "FETCH_HEAD").read_text(errors="replace") if (git_dir / "FETCH_HEAD").exists() else ""
    marks = issued_marks.highest(root / storage / LOCAL_DIR)
    return mapping_cache.key_of(storage, list(found), records, tip, refs, fetched, sorted(marks.items()))


# id -> text block in base, ours and theirs (`_side_ids`).
Sides = tuple[dict[str, str], dict[str, str], dict[str, str]]


def mapping_between(
    root: Path,
    storage: str,
    found: tuple[str, str, str] | None,
    records: list[Rename],
    later: Iterable[str] = (),
    files: tuple[str, str, str] | None = None,
    ours_yield: bool | None = None,
) -> dict[str, str]:
    """Earlier picks' renames (`records`, those that hold here: `renames_here`)
    plus theirs' new ids that collide with ours' between the
    (base, ours, theirs) commits (see `renumbering`, and for `ours_yield`);
    `files` (one file's three texts) stand in when the commits are unknown.
    The driver and `mem merge-fixup` share it, so both pick the same new
    numbers."""
    sides = _side_ids(root, storage, found, files)
    return _mapping(root, storage, sides, _prior(records, sides), records, later, ours_yield)


def _prior(records: list[Rename], sides: Sides | None) -> dict[str, str]:
    """The earlier picks' renames that hold between these sides (theirs' memory first, then base's)."""
    if sides is None:
        return renames_here(records, memory_of)
    base_ids, _, their_ids = sides
    return renames_here(records, memory_of, their_ids, base_ids)


def _mapping(
    root: Path,
    storage: str,
    sides: Sides | None,
    prior: dict[str, str],
    records: list[Rename],
    later: Iterable[str],
    ours_yield: bool | None,
) -> dict[str, str]:
    """`mapping_between`, given the sides' ids and the renames that hold (`_prior`)."""
    if sides is None:
        return prior  # the caller's own dict: neither changes it
    base_ids, our_ids, their_ids = sides
    # A memory an earlier pick renamed onto an id that a later commit of the branch gave another memory of its
    # own (the ids chain: -020 -> -022 while the branch added -022): both would be -022 once renamed, and one lost.
    # The renamed one is the memory upstream holds; the branch's own yields, as a collision does.
    targets = set(prior.values())
    clashing = {k: v for k, v in their_ids.items() if k in targets and k not in prior}
    rename = lambda ids: {prior.get(k, k): v for k, v in ids.items() if k not in clashing}
    # Never a number this clone issued before (storage/issued.py): the yielding side may be ours.
    marks = issued_marks.highest(root / storage / LOCAL_DIR)
    issued_here = {format_id(day, number) for day, number in marks.items()}
    return {
        **prior,
        **renumbering(
            rename(base_ids),
            our_ids,
            rename(their_ids),
            set(later) | {new for _, _, new in records} | issued_here,
            ours_yield,
            clashing,
        ),
    }


def _side_ids(
    root: Path, storage: str, found: tuple[str, str, str] | None, files: tuple[str, str, str] | None
) -> Sides | None:
    """id -> text block in base, ours and theirs: every grimoire file of the
    commits when they are known (and readable), else `files` (one file's three
    versions: a merge run by hand), else None."""
    trees = [tree_ids(root, rev, storage) for rev in found] if found is not None else [None]
    if found is not None and trees[0] is not None and trees[1] is not None and trees[2] is not None:
        return trees[0], trees[1], trees[2]
    if files is not None:
        return ids_in(files[0]), ids_in(files[1]), ids_in(files[2])
    return None


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
    from ..core.config import CONFIG_NAME, find_root, load_config

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
    if Path(display).name == CONFIG_NAME:
        from .config_merge import merge_config

        text, conflicts = merge_config(base_path, ours_path, theirs_path, display, texts)
        return MergeResult(text, conflicts, {})
    root = find_root(Path.cwd())
    try:
        storage = scope_storage(load_config(root, config), display)
    except Exception:
        storage = "grimoires"
    renames = global_mapping(root, storage, texts[0], texts[1], texts[2], path=display)
    try:
        base, ours, theirs = texts
        result = merge_texts(
            base,
            ours,
            theirs,
            where=display,
            mapping=renames.mapping,
            ours_yields=renames.yields,
            same=renames.same,
            moved=renames.moved,
            echoed=renames.echoed,
        )
    except Damaged as exc:
        return _by_lines(base_path, ours_path, theirs_path, exc.message)  # it names the file and the side
    tmp = Path(ours_path).with_name(Path(ours_path).name + ".mem-merge")
    tmp.write_text(result.text, encoding="utf-8")
    os.replace(tmp, ours_path)
    return result


def _by_lines(base_path: str, ours_path: str, theirs_path: str, why: str) -> MergeResult:
    """A side that is not a grimoire list (hand-broken, not UTF-8, or already
    holding conflict markers): git's own line merge, conflicts marked as usual."""
    clean = gitops.merge_lines(Path.cwd(), ours_path, base_path, theirs_path)
    return MergeResult(Path(ours_path).read_text(encoding="utf-8", errors="replace"), [] if clean else [why], {})
