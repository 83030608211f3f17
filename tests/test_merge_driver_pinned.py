"""What the merge driver (git/merge.py `merge_file`, `global_mapping`)
reads from git and the config before it merges, in process: which scope's
files a merged file's new ids are counted in (`scope_storage`, the config it
is given, one it cannot read), which side yields in a cherry-pick, and the
key its mapping is kept under for the other files of the merge. Real git
merges, the driver called as git calls it. What `make mutation` runs for
merge.py, beside test_merge_pinned.py."""

from __future__ import annotations

import json
import subprocess
from contextlib import chdir
from pathlib import Path
from typing import cast

import pytest
from conftest import git
from test_merge_pinned import (
    FACTS,
    HEAD,
    REDIS,
    commit_all,
    driven,
    entry,
    main_pushed_then_feature,
    run_driver,
    stages_of,
    tracked_start,
    write,
)
from test_trees_pinned import STORAGE, commit, new_repo

from grimoire_cli.core.config import LOCAL_DIR, load_config
from grimoire_cli.core.errors import BadInput
from grimoire_cli.git.merge import (
    Renames,
    _cache_key,
    _side_ids,
    global_mapping,
    mapping_between,
    memory_of,
    merge_file,
    scope_storage,
)
from grimoire_cli.git.trees import ids_in, state_file

CODER = Path("grimoires/coder/memory")


def diverge(repo: Path, path: Path, kept: str, side: str, main: str) -> None:
    """`path` holds `kept` at the start (committed with whatever else is written); then the branch `side` and main
    each append their own entry to it, committed, and merging side stops on the file."""
    path.write_text(kept)
    commit_all(repo, "start")
    git("checkout", "-q", "-b", "side", cwd=repo)
    path.write_text(kept + side)
    commit_all(repo, "side")
    git("checkout", "-q", "-", cwd=repo)
    path.write_text(kept + main)
    commit_all(repo, "main")


def configured(root: Path, storage_dir: str):
    (root / ".loa.config.yaml").write_text(f"memory_schema:\n  storage_dir: {storage_dir}\n")
    return load_config(root)


@pytest.mark.parametrize(
    ("path", "storage"),
    [
        ("grimoires/loa/memory/facts.yaml", "grimoires/loa/memory"),
        ("grimoires/coder/memory/facts.yaml", "grimoires/coder/memory"),
        ("grimoires/coder/memory/archive/2026-11.yaml", "grimoires/coder/memory"),
        # Not a file under a scope's memory folder: the configured storage.
        ("grimoires/coder/memory", "grimoires/loa/memory"),
        ("grimoires/coder/notes/facts.yaml", "grimoires/loa/memory"),
        ("grimoires/memory/facts.yaml", "grimoires/loa/memory"),
        ("other/coder/memory/facts.yaml", "grimoires/loa/memory"),
        ("facts.yaml", "grimoires/loa/memory"),
    ],
)
def test_a_files_scope_is_the_memory_folder_of_the_scope_it_is_under(tmp_path, path, storage):
    assert scope_storage(configured(tmp_path, "grimoires/loa/memory"), path) == storage


def test_scopes_under_a_deeper_folder_and_a_storage_that_allows_none(tmp_path):
    deep = configured(tmp_path, "team/grimoires/main/memory")
    assert scope_storage(deep, "team/grimoires/ops/memory/facts.yaml") == "team/grimoires/ops/memory"
    assert scope_storage(deep, "team/other/ops/memory/facts.yaml") == "team/grimoires/main/memory"
    assert scope_storage(deep, "grimoires/ops/memory/facts.yaml") == "team/grimoires/main/memory"
    # A storage not laid out as <folder>/<scope>/memory has no scopes: every file counts in it.
    flat = configured(tmp_path, "notes")
    assert flat.scopes_dir is None
    assert scope_storage(flat, "notes/facts.yaml") == "notes"
    assert scope_storage(flat, "x/coder/memory/facts.yaml") == "notes"


def test_a_second_scopes_collision_is_renumbered_past_that_scopes_ids_only(repo, tmp_path):
    """The default scope holds ids up to -005; the coder scope's own up to -002: the coder file's collision
    takes -003 (counted over every scope it would be -006)."""
    (repo / CODER).mkdir(parents=True)
    loa = repo / "grimoires/loa/memory/facts.yaml"
    loa.write_text(HEAD + "".join(entry(f"00{n}", f"default scope fact {n}") for n in range(1, 6)))
    coder = repo / CODER / "facts.yaml"
    kept = HEAD + entry("001", "the first coder fact")
    diverge(repo, coder, kept, entry("002", "the coder fact of the side"), entry("002", "the coder fact of main"))
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1

    result = run_driver(repo, tmp_path, (CODER / "facts.yaml").as_posix())
    assert (result.conflicts, result.renumbered, result.side) == (
        [],
        {"MEM-20261122-002": "MEM-20261122-003"},
        "theirs",
    )
    assert coder.read_text() == HEAD + entry("001", "the first coder fact") + entry(
        "002", "the coder fact of main"
    ) + entry("003", "the coder fact of the side")


# -- the key a merge's mapping is kept under ---------------------------------------------------------------


def test_a_kept_mapping_is_keyed_by_everything_it_depends_on(tmp_path):
    """Each file of a merge runs the driver in a process of its own and reads the mapping the first worked
    out, while the key holds: the commits, the scope, earlier picks' renames, the rebase's tip, the remote
    refs and FETCH_HEAD (whose side yields) and the ids this clone issued (never numbered again)."""
    repo = new_repo(tmp_path / "repo")
    base = commit(repo, {f"{STORAGE}/facts.yaml": HEAD + entry("001", "redis")})
    ours = commit(repo, {f"{STORAGE}/facts.yaml": HEAD + entry("001", "redis") + entry("002", "ours")})
    theirs = commit(repo, {f"{STORAGE}/facts.yaml": HEAD + entry("001", "redis") + entry("002", "theirs")})
    git_dir, found = repo / ".git", (base, ours, theirs)

    def key(**changed):
        asked = {"root": repo, "git_dir": git_dir, "storage": STORAGE, "found": found, "records": [], "tip": None}
        return _cache_key(**{**asked, **changed})

    with chdir(tmp_path):  # outside the repository: git runs where it is told
        first = key()
        assert first is not None and key() == first
        keys = {
            first,
            key(storage="grimoires"),
            key(found=(base, theirs, ours)),
            key(records=[("MEM-20261122-002", "a memory", "MEM-20261122-003")]),
            key(tip=ours),
        }
        git("update-ref", "refs/remotes/origin/main", base, cwd=repo)
        keys.add(key())
        git("update-ref", "refs/heads/elsewhere", theirs, cwd=repo)  # not a remote ref: the same key
        assert key() in keys
        (git_dir / "FETCH_HEAD").write_text(f"{theirs}\t\tbranch 'main' of origin\n")
        keys.add(key())
        # A branch name is bytes to git: one that is not UTF-8 is read, not fatal.
        (git_dir / "FETCH_HEAD").write_bytes(f"{theirs}\t\tbranch 'caf".encode() + b"\xe9' of origin\n")
        keys.add(key())
        (repo / STORAGE / LOCAL_DIR).mkdir()
        (repo / STORAGE / LOCAL_DIR / "issued-ids.json").write_text('{"20261122": 4}')
        keys.add(key())
        assert len(keys) == 9
        # No key where the mapping does not come from the commits alone: no git, no commits, a tree git cannot list.
        assert key(git_dir=None) is None
        assert key(found=None) is None
        assert key(found=(base, ours, "0" * 40)) is None
        assert key(found=("0" * 40, ours, theirs)) is None


def test_the_config_the_driver_is_given_names_the_scopes(repo, tmp_path):
    """`mem --config FILE merge-file`: the scopes are that config's (team/<scope>/memory), not the default's,
    under which the file is in no scope and its collision goes unseen."""
    (repo / "team.yaml").write_text("memory_schema:\n  storage_dir: team/main/memory\n")
    ops = repo / "team/ops/memory/facts.yaml"
    ops.parent.mkdir(parents=True)
    kept = HEAD + entry("001", "the first ops fact")
    diverge(repo, ops, kept, entry("002", "the ops fact of the side"), entry("002", "the ops fact of main"))
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    where = "team/ops/memory/facts.yaml"
    result, text = driven(tmp_path, *stages_of(repo, where), where=where, config=str(repo / "team.yaml"))
    assert (result.conflicts, result.renumbered) == ([], {"MEM-20261122-002": "MEM-20261122-003"})
    assert text == HEAD + entry("001", "the first ops fact") + entry("002", "the ops fact of main") + entry(
        "003", "the ops fact of the side"
    )


def test_a_config_that_cannot_be_read_leaves_the_driver_counting_ids_over_every_grimoire(repo, tmp_path):
    (repo / CODER).mkdir(parents=True)
    (repo / CODER / "facts.yaml").write_text(HEAD + entry("004", "the coder scope's own"))
    facts = repo / "grimoires/loa/memory/facts.yaml"
    diverge(repo, facts, HEAD + entry("001", "redis"), entry("002", "the side's"), entry("002", "main's"))
    (repo / ".loa.config.yaml").write_text("memory_schema: {storage_dir: [unclosed\n")  # broken by hand
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True).returncode == 1
    result = run_driver(repo, tmp_path, "grimoires/loa/memory/facts.yaml")
    # Its scope unknown, the merge counts every grimoire file: past the coder scope's -004, not only -002.
    assert (result.conflicts, result.renumbered) == ([], {"MEM-20261122-002": "MEM-20261122-005"})


# -- which side yields in a cherry-pick ---------------------------------------------------------------------


def test_a_picked_commit_yields_its_ids_though_it_is_pushed_and_ours_is_not(repo, tmp_path):
    """Merged, the branch not yet pushed would yield (test_merge_pinned); picked, the pick yields: its ids
    are new here, whether git says it is a pick (CHERRY_PICK_HEAD, once it stops) or the driver finds the
    picked commit from the file's versions (while git runs it, before git writes CHERRY_PICK_HEAD)."""
    tracked_start(repo, tmp_path)
    pushed = main_pushed_then_feature(repo)
    write(repo, "facts.yaml", HEAD + REDIS + entry("002", "the fact of the feature"))
    commit_all(repo, "the fact of the feature")
    assert subprocess.run(["git", "cherry-pick", pushed], cwd=repo, capture_output=True).returncode == 1
    merged = HEAD + REDIS + entry("002", "the fact of the feature") + entry("003", "the fact of main")

    stages = stages_of(repo, FACTS)
    head = repo / ".git" / "CHERRY_PICK_HEAD"
    written = head.read_text()
    head.unlink()  # as while git runs the driver
    with chdir(repo / "grimoires"):
        result, text = driven(tmp_path, *stages)
    assert (result.renumbered, result.side, text) == ({"MEM-20261122-002": "MEM-20261122-003"}, "theirs", merged)
    head.write_text(written)
    result = run_driver(repo, tmp_path, FACTS)
    assert (result.renumbered, result.side) == ({"MEM-20261122-002": "MEM-20261122-003"}, "theirs")
    assert (repo / FACTS).read_text() == merged


# -- the whole merge's renames, asked from outside the repository ---------------------------------------------


def test_outside_git_the_files_three_versions_are_numbered_alone(tmp_path):
    folder = tmp_path / "no repository"
    folder.mkdir()
    base, ours, theirs = HEAD + REDIS, HEAD + REDIS + entry("002", "ours"), HEAD + REDIS + entry("002", "theirs")
    with chdir(tmp_path):
        renames = global_mapping(folder, STORAGE, base, ours, theirs, path=FACTS)
    assert renames == Renames({"MEM-20261122-002": "MEM-20261122-003"}, False, {}, ({}, {}), {})


def test_a_merge_whose_ours_is_not_pushed_renames_ours_asked_from_anywhere(repo, tmp_path):
    tracked_start(repo, tmp_path)
    main_pushed_then_feature(repo)
    write(repo, "facts.yaml", HEAD + REDIS + entry("002", "the fact of the feature"))
    commit_all(repo, "the fact of the feature")
    assert subprocess.run(["git", "merge", "-q", "origin/main"], cwd=repo, capture_output=True).returncode == 1
    stages = stages_of(repo, FACTS)
    with chdir(tmp_path):
        renames = global_mapping(repo, STORAGE, *stages, path=FACTS)
    assert renames == Renames({"MEM-20261122-002": "MEM-20261122-003"}, True, {}, ({}, {}), {})


def test_the_sides_ids_come_from_the_three_trees_only_when_git_can_list_each(tmp_path):
    repo = new_repo(tmp_path / "repo")
    one = commit(repo, {f"{STORAGE}/facts.yaml": HEAD + entry("001", "redis")})
    two = commit(repo, {f"{STORAGE}/archive/facts.yaml": HEAD + entry("005", "archived")})
    files = (HEAD + entry("001", "redis"), HEAD + entry("002", "ours"), HEAD + entry("003", "theirs"))
    from_files = tuple(ids_in(text) for text in files)
    missing = "0" * 40
    with chdir(tmp_path):
        assert _side_ids(repo, STORAGE, (one, two, two), files) == (
            ids_in(files[0]),
            ids_in(HEAD + entry("001", "redis") + entry("005", "archived")),
            ids_in(HEAD + entry("001", "redis") + entry("005", "archived")),
        )
        for found in ((missing, two, two), (one, missing, two), (one, two, missing), None):
            assert _side_ids(repo, STORAGE, found, files) == from_files, found
        assert _side_ids(repo, STORAGE, (one, missing, two), None) is None
        assert _side_ids(repo, STORAGE, None, None) is None


def test_a_rename_kept_for_each_of_two_memories_is_read_by_the_memory_the_sides_hold(tmp_path):
    """A rebase that flattens a merge kept, in git's state, two renames of 002: one line's memory to 010, the
    other's to 012. A later pick whose sides hold 002 as the other line's memory merges with 002 as 012, as
    `mem merge-fixup` reads it (`mapping_between`): the renames alone cannot say which."""
    repo = new_repo(tmp_path / "repo")
    commit(repo, {f"{STORAGE}/facts.yaml": HEAD + REDIS})
    (repo / ".git" / "rebase-merge").mkdir()
    one, other = entry("002", "one line's memory"), entry("002", "the other line's memory")
    key = lambda text: memory_of(ids_in(text)["MEM-20261122-002"])  # as the rename was saved: of its block
    records = [["MEM-20261122-002", key(one), "MEM-20261122-010"], ["MEM-20261122-002", key(other), "MEM-20261122-012"]]
    cast(Path, state_file(repo / ".git", repo / STORAGE)).write_text(json.dumps(records))
    base, theirs = HEAD + REDIS + other, HEAD + REDIS + other + entry("003", "a fact of the pick")
    ours = HEAD + REDIS + entry("012", "the other line's memory")
    with chdir(tmp_path):
        renames = global_mapping(repo, STORAGE, base, ours, theirs, path=FACTS)
        fixup = mapping_between(repo, STORAGE, None, [tuple(r) for r in records], files=(base, ours, theirs))
    assert renames.mapping == fixup == {"MEM-20261122-002": "MEM-20261122-012"}


@pytest.mark.parametrize("missing", ["BASE", "OURS", "THEIRS"])
def test_a_version_that_cannot_be_read_is_named_with_how_git_runs_the_driver(repo, tmp_path, missing):
    present = tmp_path / "present"
    present.write_text(HEAD + REDIS)
    paths = {name: str(tmp_path / "gone" if name == missing else present) for name in ("BASE", "OURS", "THEIRS")}
    with pytest.raises(BadInput) as raised:
        merge_file(paths["BASE"], paths["OURS"], paths["THEIRS"], FACTS)
    assert raised.value.message == f"merge-file cannot read {missing} {tmp_path / 'gone'}: No such file or directory"
    assert raised.value.hint == "git runs it as `mem merge-file %O %A %B %P`; by hand, name three existing files"
    assert present.read_text() == HEAD + REDIS


CONFIG_BASE = "memory_schema:\n  categories:\n    fact: {storage_file: facts.yaml}\n"


@pytest.mark.parametrize("where", [".loa.config.yaml", "sub/.loa.config.yaml"])
def test_the_config_goes_to_its_own_merge_and_renumbers_nothing(tmp_path, where):
    """The config is united by key (git/config_merge.py), wherever git names it from."""
    ours = CONFIG_BASE + "    research: {storage_file: research.yaml}\n"
    theirs = CONFIG_BASE + "    runbook: {storage_file: runbook.yaml}\n"
    with chdir(tmp_path):
        result, merged = driven(tmp_path, CONFIG_BASE, ours, theirs, where=where)
    assert merged == result.text == ours + "    runbook: {storage_file: runbook.yaml}\n"
    assert (result.conflicts, result.renumbered) == ([], {})
    changed = CONFIG_BASE.replace("facts.yaml", "notes.yaml")
    with chdir(tmp_path):
        result, merged = driven(
            tmp_path, CONFIG_BASE, changed, CONFIG_BASE.replace("facts.yaml", "known.yaml"), where=where
        )
    assert result.conflicts and "<<<<<<<" in merged and result.text == merged
