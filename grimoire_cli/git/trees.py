"""Reading grimoire entries out of git: a commit's tree, and the state git
keeps while a merge, rebase or cherry-pick is under way.

Shared by the merge driver (`merge`) and the hooks' renumbering
(`renumber`). Entries are found by a text scan of their id lines, not a
YAML parse: it runs over every grimoire file of three commits.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ..storage.yamlio import ENTRY_ID_LINE
from . import gitops


def ids_in(text: str) -> dict[str, str]:
    """id -> its entry's text block, by a scan (no YAML parse: it runs on every file of three commits)."""
    out: dict[str, str] = {}
    starts = [m for m in ENTRY_ID_LINE.finditer(text)]
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        out.setdefault(match.group(1), text[match.start() : end].rstrip())
    return out


@functools.lru_cache(maxsize=8)
def tree_ids(root: Path, rev: str, storage: str) -> dict[str, str] | None:
    """id -> entry text of every grimoire file under `storage` in commit `rev`
    (None when git cannot list it). Cached: a commit's tree never changes
    (callers pass shas), and `mem merge-fixup` asks for the same trees twice.
    Callers only read it."""
    listing = gitops.output(["ls-tree", "-r", rev, "--", storage], root)
    if listing is None:
        return None
    blobs = [line.split()[2] for line in listing.splitlines() if line.split("\t")[-1].endswith((".yaml", ".yml"))]
    out: dict[str, str] = {}
    if not blobs:
        return out
    data = gitops.cat_blobs(root, blobs)
    position = 0
    while position < len(data):
        header_end = data.index(b"\n", position)
        size = int(data[position:header_end].split()[2])
        body = data[header_end + 1 : header_end + 1 + size]
        position = header_end + 1 + size + 1
        for entry_id, block in ids_in(body.decode("utf-8", "replace")).items():
            out.setdefault(entry_id, block)
    return out


def commits(root: Path, git_dir: Path) -> tuple[str, str, str] | None:
    """(base, ours, theirs) commits of the merge, rebase or cherry-pick in progress."""
    theirs = None
    named = [key[len("GITHEAD_") :] for key in os.environ if key.startswith("GITHEAD_")]
    if len(named) == 1:
        theirs = named[0]  # git merge / git pull
    done = git_dir / "rebase-merge" / "done"
    if theirs is None and done.exists():
        lines = [line.split() for line in done.read_text().splitlines() if line.strip() and not line.startswith("#")]
        if lines and len(lines[-1]) >= 2:
            theirs = lines[-1][1]
    for name in ("CHERRY_PICK_HEAD", "REBASE_HEAD", "MERGE_HEAD", "REVERT_HEAD"):
        if theirs is None and (git_dir / name).exists():
            theirs = (git_dir / name).read_text().split()[0]
    if theirs is None:
        return None
    theirs_full, ours = gitops.commit_of(root, theirs), gitops.commit_of(root, "HEAD")
    if theirs_full is None or ours is None:
        return None
    # A pick applies theirs' own change: its base is theirs' parent.
    base = gitops.merge_base(root, ours, theirs_full) if named else gitops.commit_of(root, f"{theirs_full}^")
    return (base, ours, theirs_full) if base is not None else None


def picked(root: Path, path: str, base_text: str, theirs_text: str) -> tuple[str, str, str] | None:
    """(base, ours, theirs) commits of a single `git cherry-pick`, found from
    one file's versions: the commit whose change to `path` is base -> theirs.

    Git (2.39) tells a merge driver nothing of a single pick: CHERRY_PICK_HEAD
    is written after the merge, and there is no GITHEAD_ variable or sequencer
    state. Without the commits the renumbering sees this one file, and misses
    an id ours holds in another (an archived memory), which the hook after
    the pick then numbers on its own: two memories under one id."""
    theirs_blob, base_blob = (_blob_of(root, text) for text in (theirs_text, base_text))
    if theirs_blob is None:
        return None
    listing = gitops.output(["log", "--all", "--format=%H %P", f"--find-object={theirs_blob}", "--", path], root)
    for line in (listing or "").splitlines()[:20]:
        commit, *parents = line.split()
        if not parents:
            continue
        before = gitops.output(["rev-parse", "-q", "--verify", f"{parents[0]}:{path}"], root)
        if (before or "").strip() == (base_blob if base_text else ""):
            ours = gitops.commit_of(root, "HEAD")
            return (parents[0], ours, commit) if ours is not None else None
    return None


def _blob_of(root: Path, text: str) -> str | None:
    """The id git gives `text` as a blob (nothing written)."""
    return (gitops.output(["hash-object", "--no-filters", "--stdin"], root, input=text) or "").strip() or None


Rename = tuple[str, str, str]  # (old id, the key of the memory it named, new id)


def prior_renames(git_dir: Path, storage_dir: Path) -> list[Rename]:
    """Renames earlier picks of the rebase or cherry-pick in progress made in
    the scope whose grimoire is `storage_dir`."""
    state = state_file(git_dir, storage_dir)
    try:
        prior = json.loads(state.read_text()) if state is not None and state.exists() else []
    except (OSError, ValueError):
        return []
    if not isinstance(prior, list):
        return []
    return [
        (item[0], item[1], item[2])
        for item in prior
        if isinstance(item, list) and len(item) == 3 and all(isinstance(part, str) for part in item)
    ]


def renames_here(prior: list[Rename], key: Callable[[str], str], *sides: dict[str, str] | None) -> dict[str, str]:
    """The earlier picks' renames that hold in this pick, whose commits' ids
    map to text blocks in `sides`: an old id is renamed where they hold the
    memory it was renamed for. A rebase that flattens a merge replays two
    histories, in which one id may name two memories; where the commits hold
    no entry under it (a reference only), a rename that is not ambiguous."""
    by_old: dict[str, list[Rename]] = {}
    for rename in prior:
        by_old.setdefault(rename[0], []).append(rename)
    out: dict[str, str] = {}
    for old, group in by_old.items():
        block = next((ids[old] for ids in sides if ids is not None and old in ids), None)
        if block is not None:
            wanted = key(block)
            news = [new for _, memory, new in group if memory == wanted]
            if news:
                out[old] = news[-1]
        elif len({new for _, _, new in group}) == 1:
            out[old] = group[0][2]
    return out


def rebase_tip(git_dir: Path) -> str | None:
    """The branch tip a rebase started from (all of its picks' ids are in it)."""
    for name in ("rebase-merge/orig-head", "rebase-apply/orig-head"):
        if (git_dir / name).exists():
            return (git_dir / name).read_text().strip() or None
    return None


def state_file(git_dir: Path, storage_dir: Path) -> Path | None:
    """Where a multi-commit rebase or cherry-pick keeps its renames (inside
    git's own state), one file per scope: ids are unique per scope, so a
    rename in one says nothing of the same id in another. Named from the
    scope's absolute folder, which the driver and the hooks both know."""
    for folder in ("rebase-merge", "rebase-apply", "sequencer"):
        if (git_dir / folder).is_dir():
            scope = hashlib.sha1(str(Path(storage_dir).resolve()).encode()).hexdigest()[:12]
            return git_dir / folder / f"grimoire-renumbered-{scope}.json"
    return None


def save_renames(git_dir: Path, storage_dir: Path, renames: list[Rename]) -> None:
    """Keep the operation's renames in one scope for its later picks (best effort)."""
    state = state_file(git_dir, storage_dir)
    if state is not None:
        try:
            state.write_text(json.dumps([list(rename) for rename in renames]))
        except OSError:
            pass


class Tree:
    """The entries of one commit's grimoire files, by id, parsed only when asked for."""

    def __init__(self, root: Path, rev: str | None, storage: str):
        self.blocks = (tree_ids(root, rev, storage) or {}) if rev else {}
        self._parsed: dict[str, dict | None] = {}
        self._by_key: dict[str, str] | None = None

    def copy_of(self, entry_id: str, wanted: str | None, key: Callable[[str], str | None]) -> dict | None:
        """The entry whose `key` (a memory's identity) is `wanted`: under `entry_id`, or under the id this
        commit gave it (a side renumbered since, or renumbered the other way). Without `wanted`, by id."""
        block = self.blocks.get(entry_id)
        if wanted is None or (block is not None and key(block) == wanted):
            return self.get(entry_id)
        if self._by_key is None:  # built once, on the first memory found under another id
            self._by_key = {}
            for other_id, other in self.blocks.items():
                self._by_key.setdefault(key(other) or "", other_id)
        found = self._by_key.get(wanted)
        return self.get(found) if found else None

    def load(self, entry_ids: Iterable[str]) -> None:
        """Parse these entries in one document (one parse per entry was most of a 10k-entry rebase's fixup);
        when that fails (a damaged entry), each is parsed alone as it is asked for."""
        from ..storage.yamlio import parse_entries

        wanted = [entry_id for entry_id in entry_ids if entry_id in self.blocks and entry_id not in self._parsed]
        if len(wanted) < 2:
            return
        try:
            items, _ = parse_entries("\n".join(self.blocks[entry_id] for entry_id in wanted) + "\n", "merge")
        except Exception:
            return
        if len(items) == len(wanted):
            self._parsed.update(
                (entry_id, item if isinstance(item, dict) else None) for entry_id, item in zip(wanted, items)
            )

    def get(self, entry_id: str) -> dict | None:
        from ..storage.yamlio import parse_entries

        if entry_id not in self._parsed:
            self._parsed[entry_id] = None
            if entry_id in self.blocks:
                try:
                    items, _ = parse_entries(self.blocks[entry_id] + "\n", entry_id)
                    self._parsed[entry_id] = items[0] if items and isinstance(items[0], dict) else None
                except Exception:
                    pass
        return self._parsed[entry_id]
