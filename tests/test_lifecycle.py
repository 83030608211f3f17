import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import examples, git, mem
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.git  # archive commits, git hooks, pre-commit

MEMORY = Path("grimoires/loa/memory")
LATER = {"MEM_NOW": "2027-01-01T10:00:00Z"}  # 40 days after NOW


def commit_all(repo, message="base"):
    git("add", "-A", cwd=repo)
    git("commit", "-qm", message, cwd=repo)


def test_apply_updates_effectiveness_in_place(repo):
    entry = mem("add", "-c", "learning", "Run the migrations before the seed step").out.strip()
    commit_all(repo)
    for outcome in ("--success", "--success", "--failure"):
        assert mem("apply", entry, outcome).code == 0
    shown = json.loads(mem("show", entry, "--json").out)
    assert shown["effectiveness"]["applications"] == 3
    assert shown["effectiveness"]["successes"] == 2
    assert shown["effectiveness"]["score"] == 67
    assert shown["effectiveness"]["last_applied"] == "2026-11-22T10:00:00Z"
    diff = git("diff", "--unified=0", cwd=repo)
    assert [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")] == []
    assert mem("apply", entry).code == 2
    assert mem("apply", "MEM-20200101-001", "--success").code == 1
    assert mem("validate").code == 0


def test_tiers_and_review(repo):
    weak = mem("add", "-c", "learning", "Clearing the cache fixes flaky tests").out.strip()
    bad = mem("add", "-c", "learning", "Rebooting the runner fixes the build").out.strip()
    soon = mem("add", "-c", "error", "The nightly job crashed on a full disk", "--ttl", "3d").out.strip()
    for _ in range(3):
        mem("apply", bad, "--failure")
    for outcome in ("--success", "--failure", "--failure"):
        mem("apply", weak, outcome)
    ids = {e["id"] for e in json.loads(mem("review", "--json").out)}
    assert {weak, bad, soon} <= ids
    text = mem("review").out
    assert "ineffective" in text and "low effectiveness" in text and "expiring soon" in text
    # The next archive moves the ineffective one.
    result = json.loads(mem("archive", "--no-commit", "--json").out)
    assert result["archived"] == [bad] and result["commit"] is None


def test_review_suggests_for_near_duplicates_what_works_for_their_kind(repo):
    for preset in ("sabre", "samaritan"):
        assert mem("init", "--preset", preset).code == 0
    ids = {}
    for n, tail in enumerate(("cache", "caches")):
        ids["episode", n] = mem(
            "episode", "deploy", "--learned", f"The friday deploy broke checkout because of the {tail}"
        ).out.strip()
        ids["fact", n] = mem(
            "add", "-c", "fact", f"The staging database runs postgres sixteen on the {tail} host"
        ).out.strip()
    summaries = "\n".join(
        json.dumps(
            {
                "category": "summary",
                "content": f"A chat about the deploy of the checkout service on {day}",
                "session_id": f"s{n}",
                "message_count": 4,
                "memories": [],
            }
        )
        for n, day in enumerate(("friday", "fridays"))
    )
    assert mem("import", "-", input=summaries + "\n").code == 0
    text = mem("review").out
    fixes = {
        line.split(", ", 1)[1].split(")", 1)[0]: line.split(": ", 1)[1] for line in text.splitlines() if " ~ " in line
    }
    assert fixes == {
        "fact": "supersede one: `mem supersede ID TEXT`",
        "episode": "if it happened once, archive one: `mem archive ID --reason manual`",
        "summary": "archive one: `mem archive ID --reason manual`",
    }
    assert f"  {ids['episode', 0]} ~ {ids['episode', 1]} (" in text and "(supersede one)" not in text
    by_id = {item["id"]: item["review"]["near_duplicates"] for item in json.loads(mem("review", "--json").out)}
    assert by_id[ids["episode", 1]] == [
        {"id": ids["episode", 0], "score": by_id[ids["episode", 1]][0]["score"], "fix": fixes["episode"]}
    ]
    # What is suggested works; what was suggested before does not, for an episode.
    assert mem("supersede", ids["episode", 0], "The friday deploy broke checkout").code == 2
    assert mem("supersede", ids["fact", 0], "The staging database runs postgres sixteen").code == 0
    summary = next(i for i, near in by_id.items() if near and near[0]["fix"] == fixes["summary"])
    archived = json.loads(mem("archive", ids["episode", 1], summary, "--reason", "manual", "--no-commit", "--json").out)
    assert sorted(archived["archived"]) == sorted([ids["episode", 1], summary])
    assert " ~ " not in mem("review").out


def test_archive_commits_only_grimoire_files(repo):
    commit_all(repo)
    expired = mem("add", "-c", "error", "Build failed: missing libssl").out.strip()
    kept = mem("add", "-c", "fact", "The build needs libssl-dev").out.strip()
    commit_all(repo, "memories")
    (repo / "staged.txt").write_text("staged work\n")
    git("add", "staged.txt", cwd=repo)
    (repo / "unstaged.txt").write_text("untracked work\n")
    facts = MEMORY / "facts.yaml"
    facts.write_text(facts.read_text() + "# a local unstaged note\n")
    result = mem("archive", "--json", env=LATER)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["archived"] == [expired] and data["commit"]
    files = git("show", "--name-only", "--format=%B", "HEAD", cwd=repo)
    assert expired in files
    assert sorted(line for line in files.splitlines() if line.startswith("grimoires")) == [
        "grimoires/loa/memory/archive/errors.yaml",
        "grimoires/loa/memory/errors.yaml",
    ]
    status = git("status", "--porcelain", cwd=repo)
    assert "A  staged.txt" in status and " M grimoires/loa/memory/facts.yaml" in status
    archived = json.loads(mem("show", expired, "--json").out)
    assert archived["archived"] is True and archived["archive_reason"] == "expired"
    assert archived["archived_at"] == "2027-01-01T10:00:00Z"
    assert kept in mem("list", env=LATER).out
    assert mem("validate", env=LATER).code == 0


def test_archive_dry_run_and_explicit_ids(repo):
    commit_all(repo)
    a = mem("add", "-c", "error", "Flaky test in the upload suite").out.strip()
    old = mem("add", "-c", "fact", "Uploads go to bucket one").out.strip()
    new = mem("supersede", old, "Uploads go to bucket two").out.strip()
    before = {p: p.read_bytes() for p in MEMORY.rglob("*.yaml")}
    dry = json.loads(mem("archive", "--dry-run", "--json", env=LATER).out)
    assert dry["archived"] == [a] and dry["commit"] is None
    assert {p: p.read_bytes() for p in MEMORY.rglob("*.yaml")} == before
    # Superseded entries move only when asked, and the chain still resolves.
    assert old not in json.loads(mem("archive", "--dry-run", "--json").out)["archived"]
    result = json.loads(mem("archive", old, "--reason", "superseded", "--json").out)
    assert result["archived"] == [old]
    chain = json.loads(mem("show", new, "--chain", "--json").out)
    assert [e["id"] for e in chain] == [old, new]
    assert mem("validate").code == 0
    assert mem("archive", "--reason", "manual").code == 2
    assert mem("archive", "MEM-20200101-001").code == 1


def test_archive_outside_git(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mem("init")
    entry = mem("add", "-c", "error", "Timeout talking to the cache").out.strip()
    result = mem("archive", "--json", env=LATER)
    assert result.code == 0
    # Everything the text says is in the JSON too: the reason, and the note.
    assert json.loads(result.out) == {
        "archived": [entry],
        "commit": None,
        "reasons": {entry: "expired"},
        "dry_run": False,
        "notes": ["not a git repository: archived without a commit"],
    }
    assert "without a commit" in result.err


def test_archive_commit_failure_exit_4_files_consistent(repo):
    commit_all(repo)
    entry = mem("add", "-c", "error", "Disk full on the runner").out.strip()
    commit_all(repo, "mem")
    # A commit that git refuses: an index lock held by someone else.
    lock = repo / ".git/index.lock"
    lock.write_text("")
    result = mem("archive", env=LATER)
    lock.unlink()
    assert result.code == 4 and result.err.startswith("error:") and entry in result.err
    assert mem("validate", env=LATER).code == 0
    assert json.loads(mem("show", entry, "--json").out)["archived"] is True


def test_check_quiet_when_nothing_due(repo):
    mem("add", "-c", "fact", "Nothing expires here")
    result = mem("check")
    assert result.code == 0 and result.out == "" and result.err == ""
    assert json.loads(mem("check", "--json").out) == {
        "expired": [],
        "expiring": [],
        "review": [],
        "archived": [],
        "due": [],
        "tasks": [],
        "commit": None,
        "notes": [],
        "renamed": {},
    }


def test_check_archives_and_reports(repo):
    commit_all(repo)
    gone = mem("add", "-c", "error", "Out of memory in the indexer").out.strip()
    soon = mem("add", "-c", "learning", "Pin numpy below 2 for now", "--ttl", "45d").out.strip()
    commit_all(repo, "mem")
    result = mem("check", "--json", env=LATER)
    data = json.loads(result.out)
    assert data["expired"] == [gone] and data["archived"] == [gone] and data["expiring"] == [soon]
    assert data["due"] == [soon]
    assert "mem archive" in git("log", "-1", "--format=%s", cwd=repo)
    assert mem("check", "--strict", env=LATER).code == 1


def test_check_without_auto_archive(repo):
    config = repo / ".loa.config.yaml"
    config.write_text(config.read_text().replace("auto_archive: true", "auto_archive: false"))
    gone = mem("add", "-c", "error", "Segfault in the parser").out.strip()
    data = json.loads(mem("check", "--json", env=LATER).out)
    assert data["expired"] == [gone] and data["archived"] == [] and data["due"] == [gone]


# --- hooks --------------------------------------------------------------------


def mem_env(extra=None):
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env.update(extra or {})
    return env


def test_acceptance_checkout_hook_archives_expired_in_own_commit(repo):
    commit_all(repo, "init")
    error = mem("add", "-c", "error", "The release build failed on a missing key").out.strip()
    fact = mem("add", "-c", "fact", "Releases are cut from main").out.strip()
    commit_all(repo, "day 1 memories")
    assert mem("hooks", "install").code == 0
    (repo / "work.txt").write_text("my staged work\n")
    git("add", "work.txt", cwd=repo)
    subprocess.run(
        ["git", "checkout", "-q", "-b", "feature"], cwd=repo, env=mem_env(LATER), check=True, capture_output=True
    )
    log = git("log", "-1", "--format=%s%n%b", "--name-only", cwd=repo)
    assert log.startswith("mem archive: 1 memory") and error in log
    assert "work.txt" not in log
    assert "A  work.txt" in git("status", "--porcelain", cwd=repo)
    assert json.loads(mem("show", error, "--json").out)["archive_reason"] == "expired"
    assert fact in mem("list").out


def test_installing_the_hooks_again_says_already_installed(repo):
    first = mem("hooks", "install")
    assert first.code == 0 and set(first.out.splitlines()) >= {"pre-commit: installed", "merge driver: installed"}
    hook = repo / ".git/hooks/pre-commit"
    written = (hook.read_bytes(), hook.stat().st_mtime_ns)
    again = mem("hooks", "install")
    assert again.code == 0 and "installed" not in again.out.replace("already installed", "")
    assert again.out.count("already installed") == 6 and (hook.read_bytes(), hook.stat().st_mtime_ns) == written
    hook.write_text(hook.read_text().replace("validate --quiet", "validate"))  # changed by hand: written again
    assert "pre-commit: updated" in mem("hooks", "install").out and "validate --quiet" in hook.read_text()
    assert set(json.loads(mem("hooks", "install", "--json").out)["hooks"].values()) == {"already installed"}


def test_hooks_chain_existing_and_uninstall_restores(repo):
    hook = repo / ".git/hooks/post-checkout"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text('#!/bin/sh\necho legacy-ran >> "$(git rev-parse --show-toplevel)/legacy.log"\n')
    hook.chmod(0o755)
    original = hook.read_bytes()
    assert mem("hooks", "install").code == 0
    assert mem("hooks", "install").code == 0  # idempotent: the legacy hook is not overwritten
    assert (repo / ".git/hooks/post-checkout.pre-mem").read_bytes() == original
    commit_all(repo)
    subprocess.run(["git", "checkout", "-q", "-b", "x"], cwd=repo, env=mem_env(), check=True)
    assert (repo / "legacy.log").read_text() == "legacy-ran\n"
    status = mem("hooks", "status", "--json")
    assert json.loads(status.out)["hooks"]["post-checkout"].startswith("installed (chains")
    assert mem("hooks", "uninstall").code == 0
    assert hook.read_bytes() == original
    assert not (repo / ".git/hooks/pre-commit").exists()


def test_hooks_refuse_core_hookspath(repo):
    git("config", "core.hooksPath", ".githooks", cwd=repo)
    result = mem("hooks", "install")
    assert result.code == 2 and "core.hooksPath" in result.err


def test_precommit_hook_blocks_invalid_grimoire(repo):
    assert mem("hooks", "install").code == 0
    commit_all(repo)
    facts = repo / MEMORY / "facts.yaml"
    facts.write_text(
        facts.read_text() + "- id: MEM-20261122-001\n  category: fact\n  content: token ghp_" + "a1B2" * 9 + "\n"
    )
    git("add", "-A", cwd=repo)
    blocked = subprocess.run(["git", "commit", "-qm", "bad"], cwd=repo, env=mem_env(), capture_output=True, text=True)
    assert blocked.returncode != 0 and "secret" in blocked.stdout + blocked.stderr
    facts.write_text(facts.read_text().split("- id:")[0])
    mem("add", "-c", "fact", "A good fact")
    git("add", "-A", cwd=repo)
    ok = subprocess.run(["git", "commit", "-qm", "good"], cwd=repo, env=mem_env(), capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr


def test_session_hook_respects_config_and_never_blocks(repo):
    config = repo / ".loa.config.yaml"
    config.write_text(config.read_text().replace("check_on_session_start: true", "check_on_session_start: false"))
    mem("add", "-c", "error", "A crash we saw once")
    commit_all(repo)
    mem("hooks", "install")
    before = git("rev-parse", "HEAD", cwd=repo)
    subprocess.run(["git", "checkout", "-q", "-b", "y"], cwd=repo, env=mem_env(LATER), check=True)
    assert git("rev-parse", "HEAD", cwd=repo) == before
    # A broken grimoire does not block a checkout either.
    (repo / MEMORY / "facts.yaml").write_text("- [broken\n")
    done = subprocess.run(
        ["git", "checkout", "-q", "-b", "z"], cwd=repo, env=mem_env(LATER), capture_output=True, text=True
    )
    assert done.returncode == 0


def test_pre_commit_framework_hook(repo, tmp_path):
    """The published .pre-commit-hooks.yaml, run by the real pre-commit tool."""
    hooks_repo = Path(__file__).resolve().parent.parent
    config = repo / ".pre-commit-config.yaml"
    config.write_text(
        "repos:\n- repo: local\n  hooks:\n"
        + "".join("  " + line + "\n" for line in _local_hook(hooks_repo).splitlines())
    )
    mem("add", "-c", "fact", "pre-commit runs mem validate")
    git("add", "-A", cwd=repo)
    env = mem_env({"PRE_COMMIT_HOME": str(tmp_path / "pc-home")})
    run = lambda: subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo, env=env, capture_output=True, text=True
    )
    good = run()
    assert good.returncode == 0, good.stdout + good.stderr
    facts = repo / MEMORY / "facts.yaml"
    facts.write_text(facts.read_text().replace("category: fact", "category: decision"))
    git("add", "-A", cwd=repo)
    bad = run()
    assert bad.returncode == 1 and "category-file" in bad.stdout


def _local_hook(hooks_repo: Path) -> str:
    """The hook entry of .pre-commit-hooks.yaml, as a `repo: local` hook (no network)."""
    from ruamel.yaml import YAML

    hooks = YAML(typ="safe").load((hooks_repo / ".pre-commit-hooks.yaml").read_text())
    hook = dict(hooks[0])
    assert hook["id"] == "mem-validate" and hook["entry"].startswith("mem validate")
    hook["language"] = "system"
    return "- " + "\n  ".join(f"{k}: {json.dumps(v)}" for k, v in hook.items())


def test_inherited_git_variables_do_not_leak(repo, tmp_path):
    """Run from inside some other repo's hook, mem still commits to its own repo."""
    commit_all(repo)
    entry = mem("add", "-c", "error", "Leaky environment broke a commit").out.strip()
    commit_all(repo, "mem")
    other = tmp_path / "other"
    other.mkdir()
    git("init", "-q", cwd=other)
    leaky = mem_env(
        {
            **LATER,
            "GIT_DIR": str(other / ".git"),
            "GIT_INDEX_FILE": str(other / ".git/index"),
            "GIT_WORK_TREE": str(other),
        }
    )
    result = subprocess.run(
        [str(Path(sys.executable).parent / "mem"), "archive", "--json"],
        cwd=repo,
        env=leaky,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert entry in git("log", "-1", "--format=%B", cwd=repo)
    assert (
        subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=other, capture_output=True).returncode != 0
    )


FLOW = """[{id: MEM-20261122-001, category: fact, summary: one, content: first fact here, confidence: 0.9, ttl: permanent,
   source: {session_id: s, timestamp: '2026-11-22T09:00:00Z'}},
 {id: MEM-20261122-002, category: fact, summary: two, content: second fact here, confidence: 0.9, ttl: permanent,
   source: {session_id: s, timestamp: '2026-11-22T09:00:00Z'}}]
"""
INDENTED = """# kept as a list indented under nothing
  - id: MEM-20261122-001
    category: fact
    summary: one
    content: first fact here
    confidence: 0.9
    ttl: permanent
    source: {session_id: s, timestamp: '2026-11-22T09:00:00Z'}
"""


@pytest.mark.parametrize("layout", [FLOW, INDENTED], ids=["flow", "indented"])
def test_writes_refuse_a_layout_they_cannot_edit_by_lines(repo, layout):
    """A valid file written in flow style or as an indented list is read, but
    an in-place edit or an append is refused whole: the file stays as it was
    (edits spliced by line once turned such a file into broken YAML); validate
    reports it, so that a clean validate means writes work."""
    facts = repo / "grimoires/loa/memory/facts.yaml"
    facts.write_text(layout)
    assert mem("validate").code == 1 and "[layout]" in mem("validate").out
    assert "first fact here" in mem("show", "MEM-20261122-001").out
    for args in (
        ["apply", "MEM-20261122-001", "--success"],
        ["supersede", "MEM-20261122-001", "first fact, revised"],
        ["add", "-c", "fact", "a third fact about the runner"],
        ["archive", "MEM-20261122-001", "--reason", "manual", "--no-commit"],
    ):
        result = mem(*args)
        assert result.code == 3, (args, result.out, result.err)
        assert (
            result.err.startswith("error: ")
            and "block style" in result.err
            and len(result.err.strip().splitlines()) == 1
        )
        assert facts.read_text() == layout


# --- issue 21: hooks never commit mid-operation; archive commits hold only the move


def run_git(repo, *args, env=None):
    return subprocess.run(["git", *args], cwd=repo, env=mem_env(env), capture_output=True, text=True)


def expired_with_hooks(repo, commits=6):
    """An error memory that has expired by LATER, committed, hooks installed,
    then `commits` ordinary commits on top."""
    commit_all(repo, "init")
    entry = mem("add", "-c", "error", "The build broke on the runner").out.strip()
    commit_all(repo, "memory")
    assert mem("hooks", "install").code == 0
    for i in range(commits):
        (repo / f"f{i}").write_text(f"{i}\n")
        git("add", f"f{i}", cwd=repo)
        git("commit", "-qm", f"c{i}", "--no-verify", cwd=repo)
    return entry


def archive_commits(repo):
    return [
        line for line in git("log", "--all", "--format=%s", cwd=repo).splitlines() if line.startswith("mem archive")
    ]


def test_session_hook_never_commits_during_bisect(repo):
    # Issue 21.3: each bisect checkout added an archive commit on the detached
    # HEAD, bisect looped, and `bisect reset` left one on the branch.
    entry = expired_with_hooks(repo)
    tip = git("rev-parse", "HEAD", cwd=repo)
    started = run_git(repo, "bisect", "start", "HEAD", "HEAD~6", env=LATER)
    assert started.returncode == 0, started.stderr
    said = started.stdout + started.stderr
    for verdict in ("good", "bad", "good"):
        step = run_git(repo, "bisect", verdict, env=LATER)
        said += step.stdout + step.stderr
        if "is the first bad commit" in step.stdout:
            break
    assert archive_commits(repo) == []
    assert git("status", "--porcelain", cwd=repo) == ""  # nothing archived in the tree either
    assert (
        "not archiving now: a bisect is in progress" in said
        and f"mem: 1 memory expired: run `mem archive` ({entry})" in said
    )
    assert said.count("1 memory expired") == 1  # said once, not at every step
    assert run_git(repo, "bisect", "reset", env=LATER).returncode == 0
    assert git("rev-parse", "HEAD", cwd=repo) == tip and archive_commits(repo) == []  # no commit left on the branch
    # a branch checkout once the bisect is over archives with a commit, as configured
    assert run_git(repo, "checkout", "-q", "-b", "after", env=LATER).returncode == 0
    assert git("rev-parse", "HEAD~1", cwd=repo) == tip and archive_commits(repo) == ["mem archive: 1 memory"]


@pytest.mark.parametrize("how", ["detached", "file", "rebase"])
def test_session_hook_reports_without_committing(repo, how):
    entry = expired_with_hooks(repo, commits=2)
    errors = (repo / MEMORY / "errors.yaml").read_bytes()
    if how == "detached":
        done = run_git(repo, "checkout", "--detach", "HEAD~1", env=LATER)
    elif how == "file":
        (repo / "f0").write_text("changed\n")
        done = run_git(repo, "checkout", "HEAD", "--", "f0", env=LATER)
    else:
        git("checkout", "-q", "-b", "topic", "HEAD~1", cwd=repo)
        (repo / "t").write_text("t\n")
        git("add", "t", cwd=repo)
        git("commit", "-qm", "topic", "--no-verify", cwd=repo)
        done = run_git(repo, "rebase", "main", env=LATER)
    assert done.returncode == 0, done.stderr
    assert archive_commits(repo) == []
    assert (repo / MEMORY / "errors.yaml").read_bytes() == errors
    if how != "rebase":
        assert f"1 memory expired: run `mem archive` ({entry})" in done.stdout + done.stderr


def test_archive_commit_holds_only_the_move_from_head(repo):
    # Issue 21.4: a plain `git checkout -b` committed, as `mem archive: 1
    # memory`, an uncommitted new memory, a hand comment and an entry with a password.
    commit_all(repo, "init")
    gone = mem("add", "-c", "error", "The nightly build ran out of disk").out.strip()
    kept = mem("add", "-c", "error", "Flaky upload test, retried", "--ttl", "permanent").out.strip()
    commit_all(repo, "memories")
    assert mem("hooks", "install").code == 0
    before = {name: git("show", f"HEAD:{MEMORY}/{name}", cwd=repo) for name in ("errors.yaml", "facts.yaml")}
    new = mem("add", "-c", "fact", "Uncommitted fact about deploys").out.strip()
    errors = repo / MEMORY / "errors.yaml"
    password = (
        "- id: MEM-20261122-050\n  category: error\n  summary: db login failed\n  content: login with DB_PASSWORD=s3cr3tPassw0rd! failed\n"
        "  confidence: 0.9\n  ttl: permanent\n  source: {session_id: s, timestamp: '2026-11-22T09:00:00Z'}\n"
    )
    errors.write_text("# a hand comment\n" + errors.read_text() + password)
    done = run_git(repo, "checkout", "-q", "-b", "other", env=LATER)
    assert done.returncode == 0, done.stderr
    assert archive_commits(repo) == ["mem archive: 1 memory"]
    changed = git("show", "--name-only", "--format=", "HEAD", cwd=repo).split()
    assert changed == [f"{MEMORY}/archive/errors.yaml", f"{MEMORY}/errors.yaml"]
    committed = git("show", f"HEAD:{MEMORY}/errors.yaml", cwd=repo)
    assert gone not in committed and kept in committed
    assert "hand comment" not in committed and "DB_PASSWORD" not in committed
    # exactly HEAD's errors.yaml without the archived entry's lines
    block = before["errors.yaml"][
        before["errors.yaml"].index(f"- id: {gone}") : before["errors.yaml"].index(f"- id: {kept}")
    ]
    assert committed == before["errors.yaml"].replace(block, "")
    assert git("show", f"HEAD:{MEMORY}/facts.yaml", cwd=repo) == before["facts.yaml"]
    assert gone in git("show", f"HEAD:{MEMORY}/archive/errors.yaml", cwd=repo)
    # the work tree keeps every other edit, uncommitted, and the move too
    assert git("status", "--porcelain", cwd=repo).split("\n") == [
        f" M {MEMORY}/errors.yaml",
        f" M {MEMORY}/facts.yaml",
        "",
    ]
    diff = git("diff", "-U0", cwd=repo)
    assert "+# a hand comment" in diff and "DB_PASSWORD" in diff and new in diff and gone not in diff
    text = errors.read_text()
    assert text.startswith("# a hand comment\n") and gone not in text and text.endswith(password)


def test_archive_commits_nothing_validate_rejects(repo):
    commit_all(repo, "init")
    mem("add", "-c", "error", "The nightly build ran out of disk")
    errors = repo / MEMORY / "errors.yaml"
    errors.write_text(errors.read_text().replace("ran out of disk", "ran out of disk, token ghp_" + "a1B2" * 9))
    commit_all(repo, "a secret slipped in (no hook installed)")
    head = git("rev-parse", "HEAD", cwd=repo)
    result = mem("archive", "--json", env=LATER)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["commit"] is None and len(data["archived"]) == 1
    assert any("would not pass `mem validate`" in note and "GitHub token" in note for note in data["notes"])
    assert git("rev-parse", "HEAD", cwd=repo) == head
    assert "ghp_" in (repo / MEMORY / "archive/errors.yaml").read_text()  # archived in the tree, for the user to fix


def test_archive_without_a_commit_when_a_file_has_staged_changes_or_was_never_committed(repo):
    commit_all(repo, "init")
    committed = mem("add", "-c", "error", "The nightly build ran out of disk").out.strip()
    commit_all(repo, "memory")
    fresh = mem("add", "-c", "error", "The upload step timed out").out.strip()
    git("add", str(MEMORY / "errors.yaml"), cwd=repo)
    head = git("rev-parse", "HEAD", cwd=repo)
    staged = json.loads(mem("archive", "--json", env=LATER).out)
    assert staged["commit"] is None and any("has staged changes" in note for note in staged["notes"])
    assert git("rev-parse", "HEAD", cwd=repo) == head and sorted(staged["archived"]) == sorted([committed, fresh])
    # unstaged, the committed one is committed and the never-committed one stays in the tree
    git("reset", "-q", "--hard", cwd=repo)
    git("clean", "-qfd", cwd=repo)
    fresh = mem("add", "-c", "error", "The upload step timed out").out.strip()
    result = json.loads(mem("archive", "--json", env=LATER).out)
    assert result["commit"] and any(fresh in note and "never committed" in note for note in result["notes"])
    assert committed in git("show", "--format=%B", "-s", "HEAD", cwd=repo) and fresh not in git(
        "show", "HEAD", cwd=repo
    )
    assert mem("validate", env=LATER).code == 0


def test_hooks_are_quiet_when_nothing_is_new(repo):
    # Issue 21.9: every checkout repeated `mem: 1 memories to review`, every commit printed the validate summary.
    commit_all(repo, "init")
    weak = mem("add", "-c", "learning", "The cache warms in ten minutes").out.strip()
    for outcome in ("--success", "--failure", "--failure"):
        mem("apply", weak, outcome)
    commit_all(repo, "memory")
    assert mem("hooks", "install").code == 0
    first = run_git(repo, "checkout", "-b", "a")
    assert f"mem: 1 memory to review (`mem review`) ({weak})" in first.stdout + first.stderr
    again = run_git(repo, "checkout", "-b", "b")
    assert "mem:" not in again.stdout + again.stderr
    mem("add", "-c", "fact", "Deploys need the VPN")
    git("add", "-A", cwd=repo)
    done = run_git(repo, "commit", "-qm", "fact")
    assert done.returncode == 0 and done.stdout + done.stderr == ""


def test_archive_commit_and_work_tree_append_in_the_same_order(repo):
    # Ids out of order in a file (normal after a merge renumbered one): the
    # commit and the work tree must end alike, leaving a clean tree.
    commit_all(repo, "init")
    first = mem("add", "-c", "error", "The nightly build ran out of disk").out.strip()
    second = mem("add", "-c", "error", "The upload step timed out").out.strip()
    errors = repo / MEMORY / "errors.yaml"
    text = errors.read_text()
    head, a, b = (
        text[: text.index("- id:")],
        text[text.index(f"- id: {first}") : text.index(f"- id: {second}")],
        text[text.index(f"- id: {second}") :],
    )
    errors.write_text(head + b + a)
    commit_all(repo, "memories, second first")
    result = json.loads(mem("archive", "--json", env=LATER).out)
    assert result["archived"] == [first, second] and result["commit"]
    assert git("status", "--porcelain", cwd=repo) == ""


def test_archive_keeps_a_staged_deletion_and_takes_an_intent_to_add(repo):
    commit_all(repo, "init")
    entry = mem("add", "-c", "error", "The nightly build ran out of disk").out.strip()
    commit_all(repo, "memory")
    errors = str(MEMORY / "errors.yaml")
    git("rm", "-q", "--cached", errors, cwd=repo)
    head = git("rev-parse", "HEAD", cwd=repo)
    result = json.loads(mem("archive", "--json", env=LATER).out)
    assert result["commit"] is None and any(errors in note and "staged changes" in note for note in result["notes"])
    assert git("rev-parse", "HEAD", cwd=repo) == head
    assert f"D  {errors}" in git("status", "--porcelain", cwd=repo)  # the user's `git rm --cached` stands
    git("reset", "-q", "--hard", cwd=repo)
    git("clean", "-qfd", cwd=repo)
    (repo / MEMORY / "archive/errors.yaml").write_text("# archived error memories, kept by `mem`.\n")
    git("add", "-N", str(MEMORY / "archive/errors.yaml"), cwd=repo)  # intent to add: no content staged
    done = json.loads(mem("archive", "--json", env=LATER).out)
    assert done["archived"] == [entry] and done["commit"], done["notes"]
    assert entry in git("show", f"HEAD:{MEMORY}/archive/errors.yaml", cwd=repo)


def test_session_hook_archives_nothing_when_it_cannot_commit(repo):
    commit_all(repo, "init")
    entry = mem("add", "-c", "error", "The nightly build ran out of disk").out.strip()
    commit_all(repo, "memory")
    assert mem("hooks", "install").code == 0
    errors = repo / MEMORY / "errors.yaml"
    errors.write_text(errors.read_text() + "# staged note\n")
    git("add", str(MEMORY / "errors.yaml"), cwd=repo)
    before = {p: p.read_bytes() for p in (repo / MEMORY).rglob("*.yaml")}
    done = run_git(repo, "checkout", "-q", "-b", "other", env=LATER)
    assert done.returncode == 0 and archive_commits(repo) == []
    assert {p: p.read_bytes() for p in (repo / MEMORY).rglob("*.yaml")} == before  # not moved: the tree stays as it was
    said = done.stdout + done.stderr
    assert "not archiving now: grimoires/loa/memory/errors.yaml has staged changes" in said and entry in said


def test_a_bad_entry_that_is_not_archived_does_not_block_the_archive_commit(repo):
    commit_all(repo, "init")
    gone = mem("add", "-c", "error", "The nightly build ran out of disk").out.strip()
    errors = repo / MEMORY / "errors.yaml"  # the same file the archive edits
    errors.write_text(
        errors.read_text()
        + "- id: MEM-20261122-040\n  category: error\n  summary: s\n  content: token ghp_"
        + "a1B2" * 9
        + "\n  confidence: 0.9\n  ttl: permanent\n  source: {session_id: s, timestamp: '2026-11-22T09:00:00Z'}\n"
    )
    commit_all(repo, "a secret slipped in (no hook installed)")
    result = json.loads(mem("archive", "--json", env=LATER).out)
    assert result["archived"] == [gone] and result["commit"], result["notes"]


def _conflict(repo, operation):
    """Leave git stopped in the middle of `operation` on a conflict in `f`."""
    (repo / "f").write_text("base\n")
    commit_all(repo, "f")
    git("checkout", "-q", "-b", "side", cwd=repo)
    (repo / "f").write_text("side\n")
    commit_all(repo, "side")
    git("checkout", "-q", "main", cwd=repo)
    (repo / "f").write_text("main\n")
    commit_all(repo, "main")
    if operation == "merge":
        args = ["merge", "side"]
    elif operation == "cherry-pick":
        args = ["cherry-pick", "side"]
    elif operation == "revert":
        (repo / "f").write_text("main again\n")
        commit_all(repo, "main again")
        args = ["revert", "--no-edit", "HEAD~1"]
    else:  # am
        patch = git("format-patch", "-1", "--stdout", "side", cwd=repo)
        (repo / "side.patch").write_text(patch)
        args = ["am", "side.patch"]
    stopped = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=mem_env())
    assert stopped.returncode != 0, stopped.stdout  # stopped on the conflict, as intended


@pytest.mark.parametrize(
    "operation, why",
    [
        ("merge", "a merge is in progress"),
        ("cherry-pick", "a cherry-pick is in progress"),
        ("revert", "a revert is in progress"),
        ("am", "git am is in progress"),
    ],
)
def test_no_archive_commit_while_git_is_mid_operation(repo, operation, why):
    entry = mem("add", "-c", "error", "The nightly build ran out of disk").out.strip()
    commit_all(repo, "init")
    _conflict(repo, operation)
    head = git("rev-parse", "HEAD", cwd=repo)
    checked = json.loads(mem("check", "--json", env=LATER).out)
    assert (
        checked["archived"] == []
        and checked["notes"] == [f"not archiving now: {why}"]
        and checked["expired"] == [entry]
    )
    archived = json.loads(mem("archive", "--json", env=LATER).out)
    assert archived["archived"] == [entry] and archived["commit"] is None
    assert archived["notes"] == [f"archived without a commit: {why}"]
    assert git("rev-parse", "HEAD", cwd=repo) == head


def _near_pairs_by_comparing_all(texts: list[str], threshold: float) -> list[tuple[int, int, float]]:
    """Every pair i < j at or above `threshold`, each i's pairs best first (what review found before
    it compared only texts of a length that could be that alike)."""
    from rapidfuzz import fuzz

    out = []
    for i, text in enumerate(texts):
        hits = [(fuzz.ratio(text, other), j) for j, other in enumerate(texts) if j > i]
        out.extend((i, j, score) for score, j in sorted(hits, key=lambda hit: (-hit[0], hit[1])) if score >= threshold)
    return out


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.lists(st.tuples(st.integers(0, 80), st.booleans(), st.sampled_from("ab z")))),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from([90, 95, 80]),
)
def test_review_finds_the_near_duplicate_pairs_comparing_every_pair_would(variants, threshold):
    """`near_duplicates` compares a text only with the longer ones it could be that alike: the pairs,
    and their order, must be those of comparing every pair."""
    from grimoire_cli.core.model import Entry, normalize_text
    from grimoire_cli.lifecycle.rules import near_duplicates

    bases = ["the deploy waits for the green board", "a", "cache keys expire hourly on the edge", "x" * 60, "", "ab"]
    texts = []
    for base, edits in variants:
        text = bases[base]
        for place, insert, char in edits:
            place %= len(text) + 1
            text = text[:place] + char + text[place:] if insert else text[:place] + text[place + 1 :]
        texts.append(text or "empty")
    entries = [
        Entry({"id": f"MEM-20261122-{n + 1:03d}", "category": "fact", "content": t}) for n, t in enumerate(texts)
    ]
    found = [(int(a.id[-3:]) - 1, int(b.id[-3:]) - 1, score) for a, b, score in near_duplicates(entries, threshold)]
    assert found == _near_pairs_by_comparing_all([normalize_text(t) for t in texts], threshold)
