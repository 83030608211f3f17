"""The merge driver (git/merge.py) in a grimoire of several scopes, in
process: which scope's files a merged file's new ids are counted in
(`scope_storage`), and a real git merge of a second scope's file, its driver
called as git calls it. Ids are unique per scope: counted over every scope, a
collision would take a number past the other scopes' ids. What `make mutation`
runs for merge.py, beside test_merge_pinned.py."""

from __future__ import annotations

import subprocess
from contextlib import chdir
from pathlib import Path

import pytest
from conftest import git
from test_merge_pinned import HEAD, commit_all, entry, run_driver
from test_trees_pinned import STORAGE, commit, new_repo

from grimoire_cli.core.config import LOCAL_DIR, load_config
from grimoire_cli.git.merge import _cache_key, scope_storage

CODER = Path("grimoires/coder/memory")


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
    coder.write_text(HEAD + entry("001", "the first coder fact"))
    commit_all(repo, "start")
    git("checkout", "-q", "-b", "side", cwd=repo)
    coder.write_text(HEAD + entry("001", "the first coder fact") + entry("002", "the coder fact of the side"))
    commit_all(repo, "side")
    git("checkout", "-q", "-", cwd=repo)
    coder.write_text(HEAD + entry("001", "the first coder fact") + entry("002", "the coder fact of main"))
    commit_all(repo, "main")
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
