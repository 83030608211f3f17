"""Auto-capture (docs/agents.md): commit trailers `Decision:`, `Learning:`,
`Error:` become memories through the post-commit hook, as the config's
auto_capture flags allow; the commit always stands."""

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import git, mem

CONFIG = Path(".loa.config.yaml")


def _env():
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # the hook finds this checkout's mem
    return env


def _commit(repo, message, name="work.txt"):
    with open(repo / name, "a") as handle:
        handle.write(message[:20] + "\n")
    git("add", name, cwd=repo)
    done = subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, env=_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr  # the commit stands, whatever capture says
    return git("rev-parse", "HEAD", cwd=repo).strip(), done.stderr


def _entries(category):
    return json.loads(mem("list", "-c", category, "--json").out)


def test_the_post_commit_hook_captures_each_trailer_sourced_to_the_commit(repo):
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init", cwd=repo)
    assert mem("hooks", "install").code == 0
    sha, _ = _commit(
        repo,
        "Move the cache to Redis\n\nLonger body text here.\n\n"
        "Decision: Sessions live in Redis, not in the app servers' memory\n"
        "Learning: The old cache lost sessions on every deploy\n"
        "Signed-off-by: Dev <dev@example.com>\n",
    )
    [decision], [learning] = _entries("decision"), _entries("learning")
    assert decision["content"] == "Sessions live in Redis, not in the app servers' memory"
    assert learning["content"] == "The old cache lost sessions on every deploy"
    for entry in (decision, learning):
        assert entry["source"]["session_id"] == f"commit:{sha}" and entry["source"]["agent"] == "Test Author"
        assert entry["metadata"] == {"commit": sha} and entry["confidence"] == 0.9
    assert _entries("error") == []
    # captured memories are work-tree changes, for the next commit, as `mem add` leaves them
    assert "decisions.yaml" in git("status", "--porcelain", cwd=repo)
    # running it again on the same commit writes nothing: exact duplicates
    again = json.loads(mem("capture", "--commit", sha, "--json").out)
    assert again["written"] == [] and {s["reason"] for s in again["skipped"]} == {"captured before"}


def test_only_the_trailer_block_counts_and_a_plain_commit_costs_nothing(repo):
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init", cwd=repo)
    assert mem("hooks", "install").code == 0
    # "Decision:" in the body's middle is prose, not a trailer (git decides)
    _commit(repo, "Refactor\n\nDecision: this line is in the middle of the body\n\nand the body goes on after it.\n")
    _commit(repo, "A plain commit with no trailers")
    assert _entries("decision") == []


def test_flags_off_capture_nothing_and_each_flag_is_its_own(repo):
    text = CONFIG.read_text()
    CONFIG.write_text(
        text.replace(
            "auto_capture: {decisions: true, errors: true, learnings: true}",
            "auto_capture: {decisions: false, errors: true, learnings: false}",
        )
    )
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init", cwd=repo)
    assert mem("hooks", "install").code == 0
    _, err = _commit(
        repo, "Fix the build\n\nDecision: Pin the compiler\nError: The nightly compiler broke the build on ARM\n"
    )
    assert _entries("decision") == [] and [e["content"] for e in _entries("error")] == [
        "The nightly compiler broke the build on ARM"
    ]
    assert "auto_capture.decisions is off" in err
    CONFIG.write_text(text.replace("auto_capture: {decisions: true,", "auto_capture: {decision: true,"))
    typo = mem("capture", "--dry-run")
    assert typo.code == 3 and "unknown setting 'decision'" in typo.err


def test_a_trailer_with_a_secret_is_refused_and_the_commit_stands(repo):
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init", cwd=repo)
    assert mem("hooks", "install").code == 0
    sha, err = _commit(
        repo,
        "Rotate keys\n\nLearning: the staging token was ghp_abcdefghijklmnopqrstuvwxyz0123456789 all along\n"
        "Decision: Keys are rotated monthly <private>by Ann</private>\n",
    )
    assert git("rev-parse", "HEAD", cwd=repo).strip() == sha
    assert _entries("learning") == [] and "not captured: Learning (trailer 1)" in err
    assert "ghp_" not in err  # a refused trailer is named, never echoed
    assert [e["content"] for e in _entries("decision")] == ["Keys are rotated monthly"]  # <private> text removed


def test_a_commit_mem_made_is_never_captured(repo):
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init", cwd=repo)
    git(
        "commit", "-q", "--allow-empty", "-m", "mem archive: 1 memory\n\nDecision: not a trailer of anybody's", cwd=repo
    )
    result = json.loads(mem("capture", "--json").out)
    assert result["written"] == [] and result["skipped"] == [{"trailer": "*", "reason": "a commit mem made"}]


def test_bad_input_is_one_error_line_but_the_hook_never_fails(repo):
    bad = mem("capture", "--commit", "nope")
    assert bad.code == 2 and bad.err.startswith("error: no commit 'nope'")
    assert mem("capture", "--commit", "nope", "--hook").code == 0
    dry = mem("capture", "--dry-run")
    assert dry.code == 2  # no commit yet in this repo
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init\n\nDecision: Use trunk-based development", cwd=repo)
    dry = json.loads(mem("capture", "--dry-run", "--json").out)
    assert dry["dry_run"] and [e["content"] for e in dry["written"]] == ["Use trunk-based development"]
    assert _entries("decision") == []


def test_a_rebase_or_cherry_pick_replaying_a_captured_commit_captures_nothing(repo):
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init", cwd=repo)
    assert mem("hooks", "install").code == 0
    git("checkout", "-qb", "feature", cwd=repo)
    _commit(repo, "Feature\n\nLearning: Rebases replay commits")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "the captured learning", cwd=repo)
    git("checkout", "-q", "master" if "master" in git("branch", cwd=repo) else "main", cwd=repo)
    _commit(repo, "Elsewhere", name="other.txt")
    git("checkout", "-q", "feature", cwd=repo)
    base = "master" if "master" in git("branch", cwd=repo) else "main"
    done = subprocess.run(["git", "rebase", base], cwd=repo, env=_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert [e["content"] for e in _entries("learning")] == ["Rebases replay commits"]
    assert git("status", "--porcelain", cwd=repo) == ""


def test_trailers_after_a_markdown_rule_and_in_other_encodings_are_read(repo):
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init", cwd=repo)
    git(
        "commit", "-q", "--allow-empty", "-m", "Divider\n\nBody\n\n---\n\nDecision: Use a divider-safe parser", cwd=repo
    )
    assert [e["content"] for e in json.loads(mem("capture", "--dry-run", "--json").out)["written"]] == [
        "Use a divider-safe parser"
    ]
    message = "Latin caf\xe9\n\nDecision: Use the caf\xe9 server\n".encode("latin-1")
    subprocess.run(
        ["git", "-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "--allow-empty", "-F", "-"],
        cwd=repo,
        input=message,
        check=True,
        capture_output=True,
    )
    result = mem("capture", "--dry-run", "--json")
    assert result.code == 0, result.err
    assert [e["content"] for e in json.loads(result.out)["written"]] == ["Use the caf\u00e9 server"]
