"""`mem merge-fixup`: the renumbering git leaves to mem's hooks.

Git calls the merge driver only for files both sides changed. A file only
theirs changed is taken whole, with their ids as they were: a new entry that
collides with one of ours, or a reference (supersedes, superseded_by,
related_memories) to an entry the driver renumbered in another file. Mem's
hooks call this once git is done with the files:

- pre-commit, while a merge or cherry-pick stopped by a conflict is being
  concluded: the fix is staged into that very commit;
- post-merge after a merge git committed itself, post-commit after a
  cherry-pick, post-rewrite after a rebase: the fix is a commit of its own.
  (Git ignores index changes a pre-merge-commit hook makes, so the merge
  commit itself cannot carry it.)

The rule: an entry or a reference that the keeping side already had (ours'
commit the operation started from; theirs' in a merge where ours yields,
see sides.py) stays; any other occurrence of a renumbered id came from the
yielding side and takes the new id. The renumbering is the driver's own
(`merge.mapping_between` over the same commits, or the renames a rebase
kept), plus fresh numbers for collisions no driver saw.

Archiving moves an entry to another file, which the driver, merging file by
file, cannot follow either: when one side archived an entry the other side
superseded or applied, the archived copy is given the other side's
superseded_by and effectiveness here.
"""

from __future__ import annotations

import os
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..core.errors import BadInput
from ..core.model import parse_id
from ..storage.yamlio import ANY_ID_LINE
from . import gitops
from .echoes import Counts, counts_added, echoes, raised
from .flattened import origins
from .flattened import strays as flattened_strays
from .merge import LIFECYCLE, mapping_between, merge_entry, merged_lifecycle, renamed
from .numbering import Numbers, identity, memory_of
from .sides import ours_yields
from .trees import Tree, ids_in, prior_renames, rebase_tip, renames_here, tree_ids

if TYPE_CHECKING:
    from ..storage.store import Store

REFERENCES = ("supersedes", "superseded_by")
HOOKS = ("post-merge", "post-rewrite", "post-commit", "pre-commit")


@dataclass
class FixupResult:
    operation: str | None = None  # merge, cherry-pick or rebase; None: nothing to fix after this hook
    renumbered: dict[str, str] = field(default_factory=dict)
    side: str = "theirs"  # whose ids `renumbered` renamed: ours when theirs were published first (sides.py)
    lifecycle: list[str] = field(default_factory=list)  # archived entries given the other side's lifecycle change
    files: list[str] = field(default_factory=list)
    commit: str | None = None
    staged: bool = False
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "renumbered": self.renumbered,
            "side": self.side,
            "lifecycle": self.lifecycle,
            "files": self.files,
            "commit": self.commit,
            "staged": self.staged,
            "notes": self.notes,
        }


@dataclass
class _Plan:
    operation: str
    start: str  # the commit ours was at: what it holds stays as it is
    found: tuple[str, str, str] | None  # (base, ours, theirs) to compute the driver's renumbering
    picks: bool  # a rebase or cherry-pick: earlier picks' renames are in git's state (trees.prior_renames)
    stage: bool  # stage into the commit being made, rather than commit
    versions: tuple[str, str, str] | None = None  # (base, ours, theirs) of archived entries' lifecycle; default: found
    keeper: str | None = None  # the commit whose ids stay (sides.py); default: start
    only_if_repeated: bool = False  # fix only an id used twice (a merge made elsewhere)
    replayed: tuple[str, ...] = ()  # a rebase's commits that were replayed, in order (merges it flattened are not)


def _head_file(git_dir: Path, name: str) -> str | None:
    try:
        heads = (git_dir / name).read_text().split()
    except OSError:
        return None
    return heads[0] if len(heads) == 1 else None  # an octopus merge: left alone


def _rebasing(git_dir: Path) -> bool:
    return (git_dir / "rebase-merge").is_dir() or (git_dir / "rebase-apply").is_dir()


def _keeper(root: Path, git_dir: Path, ours: str, theirs: str, base: str | None) -> str:
    """The side of a merge whose ids stay: the driver's choice, made again from the same refs."""
    return theirs if ours_yields(root, git_dir, ours, theirs, base) else ours


def plan(root: Path, git_dir: Path, hook: str, args: list[str], stdin: str) -> _Plan | None:
    """What the operation that fired `hook` was, or None when there is nothing to fix."""
    if hook == "post-merge":
        if args[:1] == ["1"]:
            return None  # --squash: nothing is committed yet; pre-commit sees no merge either
        parents = gitops.run(["rev-parse", "HEAD^@"], root, check=False).stdout.split()
        if len(parents) != 2:
            return None  # fast-forward (nothing merged) or octopus
        base = gitops.merge_base(root, parents[0], parents[1])
        # A fast-forward to someone else's merge: their hooks fixed it, unless it was made where none run (a server
        # merging a pull request) and left an id used twice. (Its sides may rank otherwise from this clone's refs.)
        elsewhere = gitops.commit_of(root, "ORIG_HEAD") not in (None, parents[0])
        return _Plan(
            "merge",
            parents[0],
            (base, parents[0], parents[1]) if base else None,
            False,
            stage=False,
            keeper=_keeper(root, git_dir, parents[0], parents[1], base),
            only_if_repeated=elsewhere,
        )
    if hook == "post-rewrite":
        pairs = [line.split() for line in stdin.splitlines() if len(line.split()) >= 2]
        if args[:1] != ["rebase"] or not pairs:
            return None  # commit --amend rewrites nothing of theirs
        # The commit replayed onto. A first commit dropped as already upstream is listed as rewritten to that
        # commit itself, so its parent would be one too far back; the merge backend names it while the hook runs.
        start = _head_file(git_dir, "rebase-merge/onto") or gitops.commit_of(root, f"{pairs[0][1]}^")
        if start is None:
            return None
        # The branch as it was before the rebase. A rebase that flattens a merge replays its two lines one after
        # the other: the last commit replayed may be the end of either, and lack the other's changes.
        tip = rebase_tip(git_dir) or pairs[-1][0]
        base = gitops.merge_base(root, start, tip)
        return _Plan(
            "rebase",
            start,
            None,
            True,
            stage=False,
            versions=(base, start, tip) if base else None,
            replayed=tuple(pair[0] for pair in pairs),
        )
    if hook in ("pre-commit", "post-commit"):
        head = gitops.commit_of(root, "HEAD")
        if head is None:
            return None
        merging = _head_file(git_dir, "MERGE_HEAD")
        if hook == "pre-commit" and merging:
            base = gitops.merge_base(root, head, merging)
            return _Plan(
                "merge",
                head,
                (base, head, merging) if base else None,
                False,
                stage=True,
                keeper=_keeper(root, git_dir, head, merging, base),
            )
        picked = _head_file(git_dir, "CHERRY_PICK_HEAD")
        if picked and not _rebasing(git_dir):  # a rebase's picks are fixed once, after it
            ours = head if hook == "pre-commit" else gitops.commit_of(root, "HEAD^")
            base = gitops.commit_of(root, f"{picked}^")
            if ours is None:
                return None
            return _Plan("cherry-pick", ours, (base, ours, picked) if base else None, True, stage=hook == "pre-commit")
    return None


def fixup(stores: list[tuple[str | None, Store]], hook: str, args: list[str], stdin: str = "") -> FixupResult:
    """Run for `hook`: rename what the driver could not reach in each
    (label, store) scope, then stage or commit it all at once. Ids of a
    scope with a label are reported as `label:ID`."""
    if hook not in HOOKS:
        raise BadInput(
            f"unknown hook {hook!r}",
            f"use one of {', '.join(HOOKS)} (mem's hooks call this; `mem hooks install` sets them up)",
        )
    config = stores[0][1].config
    root = gitops.work_tree(config.root)
    git_dir = gitops.git_dir(config.root) if root is not None else None
    if root is None or git_dir is None:
        return FixupResult()
    # Once: a commit made for one scope would hide the operation from the next
    found = plan(root, git_dir, hook, args, stdin)
    if found is None:
        return FixupResult()
    result = FixupResult(found.operation, side="ours" if found.keeper not in (None, found.start) else "theirs")
    # The commit being concluded may use its own index (`git commit -a`).
    given = stores[0][1].runtime.git_index_file
    index = {"GIT_INDEX_FILE": given} if given else None
    writes: list[tuple[Store, Path, dict[str, dict | None]]] = []
    with ExitStack() as locks:  # every scope's lock, taken in scope order, until all is written
        for label, store in stores:
            fixed = FixupResult(found.operation)
            changes = _scope_changes(store, root, git_dir, found, fixed, locks)
            name = (lambda entry_id, label=label: f"{label}:{entry_id}") if label else (lambda entry_id: entry_id)
            result.renumbered.update((name(old), name(new)) for old, new in fixed.renumbered.items())
            result.lifecycle.extend(name(entry_id) for entry_id in fixed.lifecycle)
            result.notes.extend(fixed.notes)
            writes.extend((store, store.config.root / rel, by_id) for rel, by_id in changes.items())
        paths = [path for _, path, _ in writes]
        if found.stage and paths:
            dirty = gitops.run(["diff", "--name-only", "--", *[str(p) for p in paths]], root, env=index).stdout.split()
            if dirty:
                result.notes.append(
                    f"not renumbered: {', '.join(dirty)} has unstaged changes; stage them and commit again"
                )
                result.renumbered, result.lifecycle = {}, []
                return result
        for store, path, by_id in writes:
            store.write(path, by_id)
    result.files = sorted(stores[0][1].config.relative(path) for path in paths)
    if not paths:
        return result
    if found.stage:
        gitops.run(["add", "--", *[str(p) for p in paths]], root, env=index)
        result.staged = True
    else:
        lines = [f"{old} -> {new}" for old, new in sorted(result.renumbered.items())]
        lines += [f"{entry_id}: lifecycle from both sides" for entry_id in result.lifecycle]
        what = "renumber memory ids that collided" if result.renumbered else "merge archived memories' lifecycle"
        result.commit = gitops.commit_over_head(
            root, paths, f"mem: {what} in the {found.operation}\n\n" + "\n".join(lines) + "\n"
        )
    return result


def _scope_changes(
    store: Store, root: Path, git_dir: Path, found: _Plan, result: FixupResult, locks: ExitStack
) -> dict[str, dict[str, dict | None]]:
    """file -> {id: new data} in one scope (its lock taken into `locks` when there is work)."""
    config = store.config
    if found.only_if_repeated and not _repeated_ids(store):
        return {}  # a merge made elsewhere: its hooks fixed it, unless it left an id used twice
    storage = os.path.relpath(config.storage_dir, root)
    # The driver's own mapping, its same-memory pairs included, so the references renamed here name what it named.
    records = prior_renames(git_dir, config.storage_dir) if found.picks else []
    mapping = mapping_between(root, storage, found.found, records, ours_yield=found.keeper not in (None, found.start))
    versions = found.versions or found.found
    archive = os.path.relpath(config.archive_dir, root)
    moved = versions is not None and any(
        gitops.run(["diff", "--name-only", versions[0], side, "--", archive], root, check=False).stdout.strip()
        for side in versions[1:]
    )
    if not mapping and not moved and not _repeated_ids(store):
        return {}  # the usual case: no collision, nothing archived, no catalog work after every merge
    locks.enter_context(store.lock())
    strays: dict[str, str] = {}
    written: dict[str, dict[str, str]] = {}
    if found.operation == "rebase":
        taken = origins(root, storage, found.replayed)
        meant = {
            commit: renames_here(records, memory_of, tree_ids(root, commit, storage)) for commit in set(taken.values())
        }
        written = {os.path.relpath(root / path, config.root): meant[commit] for path, commit in taken.items()}
        if found.versions is not None:
            strays = flattened_strays(root, storage, records, *found.versions, found.replayed)
    return _changes(
        store,
        root,
        storage,
        found.keeper or found.start,
        mapping,
        result,
        versions if moved else None,
        ours_yield=found.keeper not in (None, found.start),
        merged=_merged_by_driver(config, root, found, storage),
        ambiguous=_ambiguous(records),
        strays=strays,
        written=written,
        meant=_renamed_for(records) if found.operation == "rebase" else None,
    )


def _renamed_for(records: list) -> dict[str, set[str]]:
    """Old id -> the memories (`numbering.memory_of`) a rebase's picks renamed it for."""
    out: dict[str, set[str]] = {}
    for old, key, _ in records:
        out.setdefault(old, set()).add(key)
    return out


def _still_meant(
    mapping: dict[str, str], meant: dict[str, set[str]], path: Path, held: dict[Path, dict[str, str]]
) -> dict[str, str]:
    """The renames that hold in a file the rebase merged (a pick's driver, or `mem settle` by hand): its ids are
    the rebase's own by then, so an old id an entry of this very file holds for another memory than the pick
    renamed it for names that entry (upstream's), not the renamed one."""
    if path not in held:
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        held[path] = {entry_id: memory_of(block) for entry_id, block in ids_in(text).items()}
    here = held[path]
    return {old: new for old, new in mapping.items() if old not in here or old not in meant or here[old] in meant[old]}


def _ambiguous(records: list) -> dict[str, set[str]]:
    """Old ids a rebase renamed to several new ones (a flattened merge's two lines gave one id to two memories)."""
    news: dict[str, set[str]] = {}
    for old, _, new in records:
        news.setdefault(old, set()).add(new)
    return {old: found for old, found in news.items() if len(found) > 1}


def _merged_by_driver(config, root: Path, found: _Plan, storage: str) -> set[str]:
    """The grimoire files (relative to the grimoire's root) this clone's merge driver merged in the
    operation: those both sides changed (in a rebase, upstream and the replayed commits). Their ids and references are already the driver's; renaming
    them again by the same mapping would move a reference twice where the mapping chains (a memory both
    sides hold under each other's ids). A merge made elsewhere (a server's) ran no driver here."""
    versions = found.found or found.versions  # a rebase: upstream's side and the replayed commits'
    if versions is None or found.only_if_repeated or gitops.config_get(root, "merge.grimoire.driver") is None:
        return set()
    base, ours, theirs = versions
    changed = [
        set(gitops.run(["diff", "--name-only", base, side, "--", storage], root, check=False).stdout.split())
        for side in (ours, theirs)
    ]
    return {os.path.relpath(root / name, config.root) for name in changed[0] & changed[1]}


def _repeated_ids(store) -> bool:
    """Whether any id line occurs twice across the tracked grimoire files (a text scan, no YAML)."""
    seen: set[str] = set()
    local = store.local_paths()
    for file in store.files():
        if file.rel in local:
            continue  # a local entry's clash is local_ids' to settle
        try:
            text = file.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for match in ANY_ID_LINE.finditer(text):
            if match.group(1) in seen:
                return True
            seen.add(match.group(1))
    return False


def _lifecycle(
    entries: list,
    trees: tuple[Tree, Tree, Tree],
    mapping: dict[str, str],
    result: FixupResult,
    ours_yield: bool = False,
    folder: Path = Path("."),
    echoed: Counts | None = None,
) -> dict[tuple[str, str], dict]:
    """(file, id) -> lifecycle fields for archived entries that lost the other side's change.

    Archiving moves an entry to another file. When one side archived it and
    the other superseded or applied it, git (or the driver, file by file)
    keeps the archived copy as the archiving side wrote it; the other side's
    superseded_by and effectiveness are merged into it here, as the driver
    merges them for an entry that stayed in one file.
    """
    out: dict[tuple[str, str], dict] = {}
    blocks: dict[str, dict[str, str]] = {}  # file -> id -> text block, of the files read
    for entry in entries:
        if not entry.archived_file:
            continue
        if entry.file not in blocks:
            blocks[entry.file] = ids_in((folder / entry.file).read_text(encoding="utf-8", errors="replace"))
        # The same memory on each side, under the id each gave it: one side may have renumbered it since the
        # base (a pull that made it yield), or the merge renumbered the other side's copy.
        wanted = identity(blocks[entry.file].get(entry.id, ""))
        old, mine, other = (tree.copy_of(entry.id, wanted, identity) for tree in trees)
        if mine is None or other is None:
            continue
        # Both sides hold it and base does not (each got it by a pick of one commit): as added, it had no lifecycle.
        if ours_yield:
            mine = renamed(mine, mapping)
        else:
            other = renamed(other, mapping)
        a, b = _lifecycle_of(mine), _lifecycle_of(other)
        # The same record on both sides is one change, not two; the copy here may still lack it (a replayed
        # archive commit, written before this branch met the apply, replaced an entry that had it).
        before = _lifecycle_of(old) if old is not None else {}
        if echoed:  # applies both sides hold through a copied commit count once, as in the driver
            before = raised(before, mine, echoed) or before
        merged, conflict = (a, False) if a == b else merge_entry(before, a, b)
        if conflict:
            result.notes.append(
                f"{entry.id}: both sides changed its lifecycle differently; check superseded_by and effectiveness by hand"
            )
            continue
        fields = {k: v for k, v in merged.items() if entry.data.get(k) != v}
        if fields:
            out[(entry.file, entry.id)] = fields
    return out


def _folded(by_id: dict[str, list], result: FixupResult) -> dict[str, tuple[Any, Any]]:
    """id -> (archived copy, active copy) of a memory one side archived and the
    other kept active under the same id, where git took a file whole and no
    driver met the two (a memory picked onto main, then merged with the branch
    that archived it). One memory: the archived copy stays, with both sides'
    effectiveness and superseded_by, and the active one goes."""
    out = {}
    for entry_id, group in by_id.items():
        if len(group) != 2 or {bool(e.archived) for e in group} != {True, False}:
            continue
        archived, active = sorted(group, key=lambda e: not e.archived)
        if archived.file == active.file or (archived.category, archived.content) != (active.category, active.content):
            continue
        if archived.data.get("source") != active.data.get("source"):
            continue
        archived.data = {**archived.data, **merged_lifecycle(archived.data, active.data)}
        out[entry_id] = (archived, active)
        result.lifecycle.append(entry_id)
    return out


def _refers(data: dict, names: dict[str, str]) -> bool:
    """Whether an entry names an id that `names` renames (only then is its version at the start read)."""
    related = data.get("related_memories")
    return any(isinstance(data.get(key), str) and data[key] in names for key in REFERENCES) or (
        isinstance(related, list) and any(isinstance(r, str) and r in names for r in related)
    )


def _lifecycle_of(item: dict) -> dict:
    return {k: item[k] for k in LIFECYCLE if k in item}


def _changes(
    store,
    root: Path,
    storage: str,
    keeper: str,
    mapping: dict[str, str],
    result: FixupResult,
    versions: tuple[str, str, str] | None = None,
    ours_yield: bool = False,
    merged: set[str] | None = None,
    ambiguous: dict[str, set[str]] | None = None,
    strays: dict[str, str] | None = None,
    written: dict[str, dict[str, str]] | None = None,
    meant: dict[str, set[str]] | None = None,
) -> dict[str, dict[str, dict | None]]:
    """file -> {current id: new data, or None to remove it} for every entry that needs a rename or a
    lifecycle field. A supersede link to an id the rebase renamed to several (`ambiguous`) takes the one
    whose entry links back. What the `keeper` commit holds (ours' start, or theirs
    when ours yields) keeps its id; any other occurrence of a renumbered id
    came from the yielding side."""
    local = store.local_paths()  # never merged, never committed: local_ids settles their clashes
    entries = [entry for entry in store.entries(include_archive=True, skip_damaged=True) if entry.file not in local]
    start_tree = Tree(root, keeper, storage)
    blocks = start_tree.blocks
    at_start = start_tree.get

    by_id: dict[str, list] = {}
    for entry in entries:
        by_id.setdefault(entry.id, []).append(entry)
    held: dict[Path, dict[str, str]] = {}  # file -> id -> the memory it holds (`_still_meant`), as read
    driver = mapping
    mapping = {**mapping, **(strays or {})}  # a stray is no rename the driver made: it applies in every file
    colliding = set(mapping) | {k for k, group in by_id.items() if len(group) > 1}
    start_tree.load(sorted(colliding))  # each is compared with its version at the start

    def ours(entry) -> bool:
        if entry.id not in colliding:
            return entry.id in blocks  # no parse: at 10k entries one per entry was most of a rebase pull's fixup
        old = at_start(entry.id)
        return old is not None and old.get("content") == entry.content

    # Collisions no driver saw (no file both sides changed): fresh numbers.
    # A damaged file's ids are taken too: its author will restore it (see Store.ids_in_damaged).
    numbers = Numbers(set(by_id) | set(blocks) | set(mapping) | set(mapping.values()) | store.ids_in_damaged())
    # A driver that could not name the commits (a pick of a commit no ref holds) numbered its file alone:
    # a number the commits give may be the one it gave another memory.
    for old_id, new_id in sorted(mapping.items()):
        if new_id in by_id and parse_id(old_id) and any(not ours(e) for e in by_id.get(old_id, [])):
            mapping[old_id] = numbers.fresh(cast("tuple[str, int]", parse_id(old_id))[0])
    folded = _folded(by_id, result)
    for entry_id, group in sorted(by_id.items()):
        if len(group) < 2 or entry_id in mapping or entry_id in folded or not parse_id(entry_id):
            continue
        theirs = [e for e in group if not ours(e)]
        if len(theirs) != 1 or len(group) != 2:
            result.notes.append(
                f"{entry_id} is used by {len(group)} entries and none or several are new; rename by hand, then `mem validate`"
            )
            continue
        mapping[entry_id] = numbers.fresh(cast("tuple[str, int]", parse_id(entry_id))[0])

    carried: dict[tuple[str, str], dict] = {}
    if versions is not None:
        trees = (
            Tree(root, versions[0], storage),
            start_tree if versions[1] == keeper else Tree(root, versions[1], storage),
            Tree(root, versions[2], storage),
        )
        echoed = counts_added(root, storage, echoes(root, *versions))
        carried = _lifecycle(entries, trees, mapping, result, ours_yield, store.config.root, echoed)
        result.lifecycle = sorted({entry_id for _, entry_id in carried} | set(result.lifecycle))

    # In the files the driver merged, only the numbers given here (collisions it could not see) are new.
    local = {old_id: new_id for old_id, new_id in mapping.items() if driver.get(old_id) != new_id}
    out: dict[str, dict[str, dict | None]] = {}
    # An id two entries of one file hold: a change is written by id, so it would give both one entry's data
    # (the other memory lost). Such entries are left as they are, for the hand the note asks for.
    held_twice = {place for place, count in Counter((entry.file, entry.id) for entry in entries).items() if count > 1}
    for entry_id, (archived, active) in folded.items():
        out.setdefault(archived.file, {})[entry_id] = archived.data
        out.setdefault(active.file, {})[entry_id] = None
    for entry in entries:
        if entry.id in folded:
            continue  # written above
        mine = ours(entry)
        data = {**entry.data, **carried.get((entry.file, entry.id), {})}
        if entry.file in (merged or ()):
            names = local
        elif written and entry.file in written:  # a file git took whole from a replayed commit: ids as it meant them
            names = {**written[entry.file], **local}
        elif meant is not None:  # a rebase's file merged at a pick, or settled by hand (`mem settle`) on the way
            names = _still_meant(mapping, meant, store.config.root / entry.file, held)
        else:
            names = mapping
        old = at_start(entry.id) if mine and _refers(data, names) else None
        twice = (entry.file, entry.id) in held_twice
        if not mine and entry.id in names:
            data["id"] = names[entry.id]
            if not twice:
                result.renumbered[entry.id] = data["id"]
        for key in REFERENCES:
            value = data.get(key)
            if isinstance(value, str) and value in names and not (old is not None and old.get(key) == value):
                data[key] = names[value]
            elif isinstance(value, str) and ambiguous and value in ambiguous:
                back = "superseded_by" if key == "supersedes" else "supersedes"
                linked = [
                    candidate
                    for candidate in sorted(ambiguous[value] | {value})
                    if any(e.data.get(back) in (entry.id, data["id"]) for e in by_id.get(candidate, []))
                ]
                if len(linked) == 1:
                    data[key] = linked[0]
        related = data.get("related_memories")
        if isinstance(related, list):
            kept = set(old.get("related_memories") or []) if old is not None else set()
            data["related_memories"] = [
                names[r] if isinstance(r, str) and r in names and r not in kept else r for r in related
            ]
        if data != entry.data:
            if twice:
                note = f"{entry.file}: {entry.id} appears twice in one file; rename by hand, then `mem validate`"
                if note not in result.notes:
                    result.notes.append(note)
                continue
            out.setdefault(entry.file, {})[entry.id] = data
    return out
