"""Reading grimoire entries out of git (git/trees.py), in process: real
repositories built with git, and the state git keeps while a merge, rebase or
cherry-pick is under way (written as git writes it). Pinned: the exact
answers of each function, asked from outside the repository (git run where
the working directory is the repository would hide a call that lost the root
it was given). What `make mutation` runs for trees.py."""

from __future__ import annotations

import hashlib
import json
from contextlib import chdir
from pathlib import Path

import pytest
from conftest import git

from grimoire_cli.git.trees import (
    Tree,
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

STORAGE = "grimoires/loa/memory"


def block(number: str, text: str) -> str:
    return f"- id: MEM-20261122-{number}\n  category: fact\n  summary: {text}"


def new_repo(path: Path) -> Path:
    path.mkdir()
    git("init", "-q", "-b", "main", cwd=path)
    git("config", "user.name", "t", cwd=path)
    git("config", "user.email", "t@t", cwd=path)
    return path


def commit(repo: Path, files: dict[str, str | bytes], message: str = "c") -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", message, cwd=repo)
    return git("rev-parse", "HEAD", cwd=repo).strip()


@pytest.fixture
def repo(tmp_path) -> Path:
    made = new_repo(tmp_path / "repo")
    with chdir(tmp_path):  # outside the repository
        yield made


# -- ids in a text, and in a commit's tree ---------------------------------------------------------


def test_each_id_line_starts_a_block_that_runs_to_the_next_and_the_first_of_an_id_is_kept():
    text = f"# facts\n{block('001', 'one')}\n\n{block('002', 'two')}\n{block('001', 'again')}\n  \n"
    assert ids_in(text) == {"MEM-20261122-001": block("001", "one"), "MEM-20261122-002": block("002", "two")}
    assert ids_in("# nothing\n") == {}
    assert ids_in(block("003", "last")) == {"MEM-20261122-003": block("003", "last")}


def test_a_trees_ids_come_from_its_yaml_files_under_the_storage_folder(repo):
    rev = commit(
        repo,
        {
            f"{STORAGE}/facts.yaml": f"{block('001', 'one')}\n{block('002', 'two')}\n",
            f"{STORAGE}/empty.yaml": "",
            f"{STORAGE}/archive/old.yml": f"{block('003', 'three')}\n".encode() + b"  note: \xff\n",
            f"{STORAGE}/zz.yaml": f"{block('001', 'a copy')}\n",  # listed after facts.yaml: the first is kept
            f"{STORAGE}/notes.txt": f"{block('004', 'not a grimoire file')}\n",
            "other/facts.yaml": f"{block('005', 'another folder')}\n",
        },
    )
    assert tree_ids(repo, rev, STORAGE) == {
        "MEM-20261122-001": block("001", "one"),
        "MEM-20261122-002": block("002", "two"),
        "MEM-20261122-003": block("003", "three") + "\n  note: \ufffd",
    }
    assert tree_ids(repo, rev, "other") == {"MEM-20261122-005": block("005", "another folder")}
    assert tree_ids(repo, rev, "nowhere") == {}
    assert tree_ids(repo, "0" * 40, STORAGE) is None  # git cannot list it


def test_a_tree_with_one_file_after_an_empty_one_is_read_whole(repo):
    rev = commit(repo, {f"{STORAGE}/a.yaml": "", f"{STORAGE}/b.yaml": f"{block('007', 'seven')}\n"})
    assert tree_ids(repo, rev, STORAGE) == {"MEM-20261122-007": block("007", "seven")}


# -- the commits of the operation under way ---------------------------------------------------------


@pytest.fixture
def forked(repo):
    """start -> ours (main) and start -> mid -> theirs (branch `theirs`); HEAD on main. A merge's base
    (start) is not theirs' parent (mid), a pick's base."""
    start = commit(repo, {"f.txt": "start\n"})
    git("checkout", "-q", "-b", "theirs", cwd=repo)
    mid = commit(repo, {"g.txt": "mid\n"})
    theirs = commit(repo, {"g.txt": "theirs\n"})
    git("checkout", "-q", "main", cwd=repo)
    ours = commit(repo, {"h.txt": "ours\n"})
    return repo, start, mid, ours, theirs


def test_a_merge_names_theirs_in_its_one_githead_variable(forked, monkeypatch):
    repo, start, _, ours, theirs = forked
    monkeypatch.setenv(f"GITHEAD_{theirs}", "theirs")
    assert commits(repo, repo / ".git") == (start, ours, theirs)
    monkeypatch.setenv("GITHEAD_theirs", "theirs")  # two: neither is taken, and nothing else says
    assert commits(repo, repo / ".git") is None
    monkeypatch.delenv("GITHEAD_theirs")
    monkeypatch.delenv(f"GITHEAD_{theirs}")
    assert commits(repo, repo / ".git") is None
    monkeypatch.setenv("GITHEAD_nosuchbranch", "x")
    assert commits(repo, repo / ".git") is None


def test_a_pick_names_theirs_in_gits_state_and_its_base_is_theirs_parent(forked):
    repo, start, mid, ours, theirs = forked
    git_dir = repo / ".git"
    for name in ("CHERRY_PICK_HEAD", "REBASE_HEAD", "MERGE_HEAD", "REVERT_HEAD"):
        (git_dir / name).write_text(f"{theirs}\n")
        assert commits(repo, git_dir) == (mid, ours, theirs), name
        (git_dir / name).unlink()
    (git_dir / "MERGE_HEAD").write_text(f"{theirs}\n")
    (git_dir / "CHERRY_PICK_HEAD").write_text(f"{start}\n")  # the first named wins
    assert commits(repo, git_dir) is None  # start has no parent: no base
    (git_dir / "CHERRY_PICK_HEAD").unlink()
    (git_dir / "REBASE_HEAD").write_text(f"{theirs}\n")
    assert commits(repo, git_dir) == (mid, ours, theirs)


def test_a_rebase_names_theirs_in_the_last_line_done(forked):
    repo, start, mid, ours, theirs = forked
    git_dir = repo / ".git"
    (git_dir / "rebase-merge").mkdir()
    done = git_dir / "rebase-merge" / "done"
    done.write_text(f"pick {start} a subject\n# a comment\npick {theirs} a subject\n\n")
    (git_dir / "REBASE_HEAD").write_text(f"{start}\n")  # the done file comes first
    assert commits(repo, git_dir) == (mid, ours, theirs)
    done.write_text(f"pick {theirs}\n# pick {start} a comment\n")  # no subject
    assert commits(repo, git_dir) == (mid, ours, theirs)
    done.write_text("break\n")  # no commit on the last line: the state files say
    assert commits(repo, git_dir) is None  # REBASE_HEAD names start, which has no parent
    (git_dir / "REBASE_HEAD").write_text(f"{theirs}\n")
    assert commits(repo, git_dir) == (mid, ours, theirs)


def test_a_merge_base_from_a_githead_variable_over_the_state_files(forked, monkeypatch):
    repo, start, _, _, theirs = forked
    later = commit(repo, {"i.txt": "later\n"})
    monkeypatch.setenv(f"GITHEAD_{theirs}", "theirs")
    (repo / ".git" / "MERGE_HEAD").write_text(f"{later}\n")
    assert commits(repo, repo / ".git") == (start, later, theirs)


# -- a single cherry-pick, found from one file's versions -------------------------------------------


def test_a_single_pick_is_found_from_the_change_it_makes_to_one_file(repo):
    start = commit(repo, {"f.yaml": "one\n"})
    git("checkout", "-q", "-b", "side", cwd=repo)
    added = commit(repo, {"g.yaml": "new\n"})
    changed = commit(repo, {"f.yaml": "two\n"})
    git("checkout", "-q", "main", cwd=repo)
    ours = commit(repo, {"h.yaml": "ours\n"})
    assert picked(repo, "f.yaml", "one\n", "two\n") == (added, ours, changed)
    assert picked(repo, "g.yaml", "", "new\n") == (start, ours, added)  # added by the pick
    assert picked(repo, "f.yaml", "other\n", "two\n") is None  # no commit made that change
    assert picked(repo, "f.yaml", "one\n", "never committed\n") is None
    assert picked(repo, "f.yaml", "", "one\n") is None  # the root commit has no parent to pick from
    git("checkout", "-q", "--orphan", "elsewhere", cwd=repo)
    git("rm", "-q", "-rf", ".", cwd=repo)
    assert picked(repo, "f.yaml", "one\n", "two\n") is None  # no HEAD to merge into
    unrelated = commit(repo, {"f.yaml": "two\n"})  # a root commit, listed first: skipped
    git("checkout", "-q", "main", cwd=repo)
    assert (
        git(
            "log",
            "--all",
            "--format=%H",
            "--find-object=" + git("rev-parse", f"{changed}:f.yaml", cwd=repo).strip(),
            cwd=repo,
        ).split()[0]
        == unrelated
    )
    assert picked(repo, "f.yaml", "one\n", "two\n") == (added, ours, changed)


def test_a_pick_is_looked_for_in_the_last_twenty_commits_that_made_or_dropped_its_blob(repo):
    start = commit(repo, {"f.yaml": "one\n"})
    changed = commit(repo, {"f.yaml": "two\n"})
    for n in range(9):  # 18 more commits that drop or make the blob, from other texts than "one"
        commit(repo, {"f.yaml": f"other {n}\n"})
        commit(repo, {"f.yaml": "two\n"})
    ours = commit(repo, {"f.yaml": "last\n"})  # drops it: `changed` is the 20th, newest first
    assert picked(repo, "f.yaml", "one\n", "two\n") == (start, ours, changed)
    commit(repo, {"f.yaml": "two\n"})  # now the 21st: past the twenty looked at
    assert picked(repo, "f.yaml", "one\n", "two\n") is None


def test_a_pick_is_found_in_a_sha256_repository(tmp_path):
    repo = tmp_path / "sha256"
    repo.mkdir()
    git("init", "-q", "-b", "main", "--object-format=sha256", cwd=repo)
    git("config", "user.name", "t", cwd=repo)
    git("config", "user.email", "t@t", cwd=repo)
    start = commit(repo, {"f.yaml": "one\n"})
    changed = commit(repo, {"f.yaml": "two\n"})
    with chdir(tmp_path):  # outside: git there would hash as sha1
        assert picked(repo, "f.yaml", "one\n", "two\n") == (start, changed, changed)


def test_a_picked_files_blob_is_its_text_unfiltered(repo):
    git("config", "core.autocrlf", "true", cwd=repo)
    start = commit(repo, {"f.yaml": "one\n"})
    git("config", "core.autocrlf", "false", cwd=repo)
    git("checkout", "-q", "-b", "side", cwd=repo)
    changed = commit(repo, {"f.yaml": b"two\r\n"})  # stored with its CR (autocrlf off)
    git("checkout", "-q", "main", cwd=repo)
    git("config", "core.autocrlf", "true", cwd=repo)  # a filter that would strip it
    assert picked(repo, "f.yaml", "one\n", "two\r\n") == (start, start, changed)


# -- renames kept between the picks of one operation ---------------------------------------------------


def test_the_renames_file_is_per_scope_inside_the_operations_state(tmp_path):
    git_dir = tmp_path / "git"
    git_dir.mkdir()
    scope = tmp_path / "scope"
    assert state_file(git_dir, scope) is None
    name = "grimoire-renumbered-" + hashlib.sha1(str(scope.resolve()).encode()).hexdigest()[:12] + ".json"
    for folder in ("sequencer", "rebase-apply", "rebase-merge"):  # the first of these present
        (git_dir / folder).mkdir()
        assert state_file(git_dir, scope) == git_dir / folder / name
    (git_dir / "rebase-merge" / "x").mkdir()
    with chdir(tmp_path):
        assert state_file(git_dir, Path("scope")) == git_dir / "rebase-merge" / name  # from its absolute folder


def test_renames_saved_are_read_back_and_anything_else_reads_as_none(tmp_path):
    git_dir, scope = tmp_path / "git", tmp_path / "scope"
    (git_dir / "sequencer").mkdir(parents=True)
    assert prior_renames(tmp_path / "no operation", scope) == []
    assert prior_renames(git_dir, scope) == []
    renames = [("MEM-1", "key a", "MEM-2"), ("MEM-3", "key b", "MEM-4")]
    save_renames(git_dir, scope, renames)
    assert prior_renames(git_dir, scope) == renames
    assert json.loads(state_file(git_dir, scope).read_text()) == [list(rename) for rename in renames]
    assert prior_renames(git_dir, tmp_path / "another scope") == []
    state = state_file(git_dir, scope)
    for text in ("{not json", '{"a": 1}', "null"):
        state.write_text(text)
        assert prior_renames(git_dir, scope) == [], text
    state.write_text(
        json.dumps([["a", "b", "c"], ["a", "b"], ["a", "b", "c", "d"], ["a", 2, "c"], "abc", ["d", "e", "f"]])
    )
    assert prior_renames(git_dir, scope) == [("a", "b", "c"), ("d", "e", "f")]
    state.unlink()
    state.mkdir()  # unreadable, unwritable
    assert prior_renames(git_dir, scope) == []
    save_renames(git_dir, scope, renames)  # best effort: no error
    assert save_renames(tmp_path / "no operation", scope, renames) is None
    assert not (tmp_path / "no operation").exists()


def test_an_earlier_picks_rename_holds_where_the_commits_hold_its_memory():
    def key(text: str) -> str:
        return text.split("summary: ")[1]

    prior = [
        ("MEM-20261122-001", "one", "MEM-20261122-005"),
        ("MEM-20261122-001", "uno", "MEM-20261122-006"),
        ("MEM-20261122-001", "one", "MEM-20261122-007"),  # the last for a memory wins
        ("MEM-20261122-002", "two", "MEM-20261122-008"),
        ("MEM-20261122-003", "three", "MEM-20261122-009"),
        ("MEM-20261122-003", "tres", "MEM-20261122-010"),
        ("MEM-20261122-004", "four", "MEM-20261122-011"),
        ("MEM-20261122-004", "cuatro", "MEM-20261122-011"),
    ]
    sides = (
        None,
        {"MEM-20261122-001": block("001", "one")},
        {"MEM-20261122-001": block("001", "uno"), "MEM-20261122-002": block("002", "another")},
    )
    assert renames_here(prior, key, *sides) == {
        "MEM-20261122-001": "MEM-20261122-007",  # the first side holding it
        # 002: held, as another memory; 003: a reference only, renamed two ways
        "MEM-20261122-004": "MEM-20261122-011",  # a reference only, one new id
    }
    assert renames_here(prior, key, None, sides[2]) == {
        "MEM-20261122-001": "MEM-20261122-006",
        "MEM-20261122-004": "MEM-20261122-011",
    }
    assert renames_here(prior, key) == {"MEM-20261122-002": "MEM-20261122-008", "MEM-20261122-004": "MEM-20261122-011"}
    assert renames_here([], key, *sides) == {}


def test_a_rebase_started_from_the_tip_in_its_orig_head(tmp_path):
    assert rebase_tip(tmp_path) is None
    (tmp_path / "rebase-apply").mkdir()
    (tmp_path / "rebase-apply" / "orig-head").write_text("apply\n")
    assert rebase_tip(tmp_path) == "apply"
    (tmp_path / "rebase-merge").mkdir()
    (tmp_path / "rebase-merge" / "orig-head").write_text("merge\n")
    assert rebase_tip(tmp_path) == "merge"
    (tmp_path / "rebase-merge" / "orig-head").write_text("\n")
    assert rebase_tip(tmp_path) is None


# -- one commit's entries, parsed when asked for ------------------------------------------------------


def summary(text: str) -> str | None:
    return text.split("summary: ")[1].split("\n")[0] if "summary: " in text else None


def test_a_trees_entries_are_found_by_id_or_by_the_memory_they_hold(repo):
    damaged = "- id: MEM-20261122-009\n  summary: [unclosed"
    rev = commit(
        repo,
        {
            f"{STORAGE}/facts.yaml": f"{block('001', 'one')}\n{block('002', 'two')}\n{damaged}\n"
            "- id: MEM-20261122-010\n  - a list\n",
        },
    )
    tree = Tree(repo, rev, STORAGE)
    assert set(tree.blocks) == {f"MEM-20261122-{n}" for n in ("001", "002", "009", "010")}
    one = {"id": "MEM-20261122-001", "category": "fact", "summary": "one"}
    two = {"id": "MEM-20261122-002", "category": "fact", "summary": "two"}
    assert tree.copy_of("MEM-20261122-001", None, summary) == one
    assert tree.copy_of("MEM-20261122-001", "one", summary) == one
    assert tree.copy_of("MEM-20261122-005", "two", summary) == two  # under the id this commit gave it
    assert tree.copy_of("MEM-20261122-001", "two", summary) == two
    assert tree.copy_of("MEM-20261122-001", "none", summary) is None
    assert tree.copy_of("MEM-20261122-005", None, summary) is None
    assert tree.get("MEM-20261122-009") is None  # damaged
    assert tree.get("MEM-20261122-404") is None
    assert Tree(repo, None, STORAGE).blocks == {}
    assert Tree(repo, "0" * 40, STORAGE).blocks == {}


def test_the_first_memory_of_a_key_is_the_one_found_under_another_id(repo):
    rev = commit(repo, {f"{STORAGE}/facts.yaml": f"{block('001', 'same')}\n{block('002', 'same')}\n"})
    tree = Tree(repo, rev, STORAGE)
    assert tree.copy_of("MEM-20261122-003", "same", summary)["id"] == "MEM-20261122-001"
    assert tree.copy_of("MEM-20261122-002", "same", summary)["id"] == "MEM-20261122-002"  # its own id first
    tree = Tree(repo, rev, STORAGE)
    nameless = tree.copy_of("MEM-20261122-003", "", lambda text: None)  # no key reads as ""
    assert nameless["id"] == "MEM-20261122-001"


def test_entries_loaded_together_are_parsed_in_one_document(repo):
    rev = commit(
        repo, {f"{STORAGE}/facts.yaml": f"{block('001', 'one')}\n{block('002', 'two')}\n{block('003', 'x')}\n"}
    )
    tree = Tree(repo, rev, STORAGE)
    tree.load(["MEM-20261122-001"])  # one alone: parsed when asked for
    assert tree._parsed == {}
    tree.load(["MEM-20261122-001", "MEM-20261122-002", "MEM-20261122-404"])
    assert tree._parsed == {
        "MEM-20261122-001": {"id": "MEM-20261122-001", "category": "fact", "summary": "one"},
        "MEM-20261122-002": {"id": "MEM-20261122-002", "category": "fact", "summary": "two"},
    }
    tree.blocks["MEM-20261122-002"] = "- changed"  # parsed already: not again
    tree.load(["MEM-20261122-002", "MEM-20261122-003"])
    assert tree._parsed["MEM-20261122-002"]["summary"] == "two"
    assert "MEM-20261122-003" not in tree._parsed  # one left to parse: parsed when asked for
    assert tree.get("MEM-20261122-003")["summary"] == "x"


def test_a_damaged_entry_among_those_loaded_leaves_each_to_be_parsed_alone(repo):
    rev = commit(repo, {f"{STORAGE}/facts.yaml": f"{block('001', 'one')}\n- id: MEM-20261122-002\n  summary: [x\n"})
    tree = Tree(repo, rev, STORAGE)
    tree.load(["MEM-20261122-001", "MEM-20261122-002"])
    assert tree._parsed == {}
    assert tree.get("MEM-20261122-001")["summary"] == "one"
    assert tree.get("MEM-20261122-002") is None
    tree = Tree(repo, rev, STORAGE)
    tree.blocks["MEM-20261122-003"] = "- a\n- b"  # two items for one entry: not taken
    tree.load(["MEM-20261122-001", "MEM-20261122-003"])
    assert tree._parsed == {}
    tree.blocks["MEM-20261122-004"] = "- just text"
    tree.load(["MEM-20261122-001", "MEM-20261122-004"])
    assert tree._parsed["MEM-20261122-004"] is None
    assert tree.get("MEM-20261122-003") is None  # a list item that is no mapping
