"""All git access: the git binary through subprocess (faster per commit than
GitPython's pure-Python index, and no GitPython import on every command).

Inherited `GIT_*` variables are dropped so that `mem` run from inside a git
hook acts on the repository it is pointed at, not the hook's.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from ..core.errors import GitFailed
from ..core.faults import reached

# Variables git sets for hooks that would redirect our own git calls.
_LEAKY = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_PREFIX",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
)


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _LEAKY}


def run(
    args: list[str], cwd: Path, check: bool = True, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run git with inherited `GIT_*` variables dropped; GitFailed (unless `check` is off) when it fails."""
    try:
        result = subprocess.run(
            ["git", *args], cwd=cwd, env={**clean_env(), **(env or {})}, capture_output=True, text=True, input=input
        )
    except FileNotFoundError:
        raise GitFailed("git is not installed or not on PATH", "install git, or use --no-commit") from None
    if check and result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise GitFailed(
            f"git {args[0]} failed: {detail[-1] if detail else 'exit ' + str(result.returncode)}",
            "the grimoire files are intact; commit them yourself or retry",
        )
    return result


def output(args: list[str], cwd: Path, input: str | None = None) -> str | None:
    """stdout of a git command, or None when it fails (the caller falls back)."""
    done = run(args, cwd, check=False, input=input)
    return done.stdout if done.returncode == 0 else None


def commit_of(root: Path, rev: str) -> str | None:
    """The full sha of the commit `rev` names, or None."""
    sha = (output(["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], root) or "").strip()
    return sha or None


def merge_base(root: Path, a: str, b: str) -> str | None:
    """The best common ancestor of two commits, or None."""
    found = (output(["merge-base", a, b], root) or "").split()
    return found[0] if found else None


def is_ancestor(root: Path, commit: str, tip: str) -> bool:
    """Whether `commit` is `tip` or one of its ancestors."""
    return run(["merge-base", "--is-ancestor", commit, tip], root, check=False).returncode == 0


def ignored(root: Path, rel: str) -> bool:
    """Whether git ignores the path `rel` of the work tree at `root`."""
    return run(["check-ignore", "-q", rel], root, check=False).returncode == 0


def work_tree(path: Path) -> Path | None:
    """The work-tree root containing `path`, or None outside a repository."""
    result = run(["rev-parse", "--show-toplevel"], path, check=False)
    if result.returncode != 0:
        return None
    return Path(result.stdout.strip()).resolve()


def git_dir(path: Path) -> Path | None:
    """The absolute git directory of the repository holding `path`, or None."""
    result = run(["rev-parse", "--absolute-git-dir"], path, check=False)
    return Path(result.stdout.strip()) if result.returncode == 0 else None


# Files git keeps while an operation is under way, and what to call it.
_UNDER_WAY = (
    ("BISECT_LOG", "a bisect is in progress"),
    ("rebase-apply/applying", "git am is in progress"),
    ("rebase-merge", "a rebase is in progress"),
    ("rebase-apply", "a rebase is in progress"),
    ("MERGE_HEAD", "a merge is in progress"),
    ("CHERRY_PICK_HEAD", "a cherry-pick is in progress"),
    ("REVERT_HEAD", "a revert is in progress"),
    ("sequencer", "a cherry-pick or revert is in progress"),
)


def busy(root: Path) -> str | None:
    """Why a commit of mem's own must not be made now, or None: git is in
    the middle of an operation (its commits are its own), or HEAD is
    detached (a commit there is lost on the next checkout, and a bisect's
    checkouts would each get one)."""
    folder = git_dir(root)
    if folder is None:
        return None
    for name, why in _UNDER_WAY:
        if (folder / name).exists():
            return why
    if run(["symbolic-ref", "-q", "HEAD"], root, check=False).returncode != 0:
        return "HEAD is detached"
    return None


def blobs_at(root: Path, rev: str | None, rels: list[str]) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob sha) of these paths in commit `rev` (None: the
    index); paths it lacks are left out."""
    args = ["ls-tree", "-z", rev, "--", *rels] if rev else ["ls-files", "-z", "-s", "--", *rels]
    out = {}
    for record in run(args, root).stdout.split("\0"):
        if record:
            info, path = record.split("\t", 1)
            fields = info.split()
            out[path] = (fields[0], fields[2] if rev else fields[1])
    return out


def staged(root: Path, head: str, rels: list[str]) -> list[str]:
    """Those of `rels` whose index entry differs from commit `head`'s: added,
    changed or deleted in the index (an intent-to-add entry, `git add -N`,
    holds no content yet and does not count: git's own diff leaves it out)."""
    return [p for p in run(["diff", "--cached", "--name-only", "-z", head, "--", *rels], root).stdout.split("\0") if p]


def read_blob(root: Path, blob: str) -> bytes:
    """The content of one blob."""
    done = subprocess.run(["git", "cat-file", "blob", blob], cwd=root, capture_output=True, env=clean_env())
    if done.returncode != 0:
        raise GitFailed(
            f"git cat-file failed for {blob}", "the grimoire files are intact; commit them yourself or retry"
        )
    return done.stdout


def commit_contents(root: Path, head: str, files: dict[str, bytes], message: str) -> str | None:
    """Commit `files` (path -> content) on top of `head` through plumbing,
    whatever the work tree holds: HEAD's tree with just these blobs replaced.
    The real index takes the new blobs too (the caller has checked that none
    of these paths has staged changes). Returns the new sha, or None if
    nothing changed."""
    old = blobs_at(root, head, list(files))
    lines = []
    for path, data in files.items():
        done = subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=root, input=data, capture_output=True, env=clean_env()
        )
        if done.returncode != 0:
            raise GitFailed("git hash-object failed", "the grimoire files are intact; commit them yourself or retry")
        lines.append(f"{old.get(path, ('100644', ''))[0]} {done.stdout.decode().strip()}\t{path}\n")
    entries = "".join(lines)
    return _commit_tree(
        root,
        head,
        ["update-index", "--add", "--index-info"],
        entries,
        message,
        lambda: run(["update-index", "--add", "--index-info"], root, input=entries),
    )


def commit_over_head(root: Path, paths: list[Path], message: str) -> str | None:
    """Commit exactly `paths` from the work tree on top of HEAD, through plumbing.

    For hooks that run while git is still inside a merge, cherry-pick or
    rebase (MERGE_HEAD or CHERRY_PICK_HEAD still present): there `git commit`
    refuses a partial commit or would conclude git's own operation. The real
    index takes just these paths. Returns the new sha, or None if the paths
    had no change.
    """
    rel = [os.path.relpath(p, root) for p in paths]
    head = run(["rev-parse", "--verify", "HEAD"], root).stdout.strip()
    return _commit_tree(root, head, ["add", "--", *rel], None, message, lambda: run(["add", "--", *rel], root))


def _commit_tree(root: Path, head: str, stage: list[str], stage_input: str | None, message: str, then) -> str | None:
    """The one way mem commits: HEAD's tree read into a scratch index, `git
    <stage>` run on it, the tree written and committed on `head`, `then()`
    bringing the real index along, then HEAD moved (only if it is still
    `head`). None when the tree did not change. The index goes first: a
    crash between the two leaves the change staged, as `git add` would, where
    the other order left a HEAD that the next `git commit` would revert."""
    with tempfile.TemporaryDirectory(prefix="mem-index-", dir=git_dir(root)) as scratch:
        env = {"GIT_INDEX_FILE": os.path.join(scratch, "index")}
        run(["read-tree", head], root, env=env)
        run(stage, root, input=stage_input, env=env)
        tree = run(["write-tree"], root, env=env).stdout.strip()
    if tree == run(["rev-parse", f"{head}^{{tree}}"], root).stdout.strip():
        return None
    new = run(["commit-tree", tree, "-p", head], root, input=message).stdout.strip()
    reached("git.committed")
    then()
    reached("git.staged")
    # Fails, changing nothing but the staged paths, if HEAD moved since `head` was read.
    run(["update-ref", "-m", "commit: " + message.splitlines()[0], "HEAD", new, head], root)
    return new


def config_get(root: Path, key: str) -> str | None:
    result = run(["config", "--get", key], root, check=False)
    return result.stdout.strip() if result.returncode == 0 else None


def config_set(root: Path, key: str, value: str) -> None:
    run(["config", "--local", key, value], root)


def cat_blobs(root: Path, blobs: list[str]) -> bytes:
    """`git cat-file --batch` output for these objects (bytes: blobs need not be text)."""
    done = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=root,
        input=("\n".join(blobs) + "\n").encode(),
        capture_output=True,
        env=clean_env(),
    )
    return done.stdout


def merge_lines(cwd: Path, ours: str, base: str, theirs: str) -> bool:
    """git's own line merge of three files into `ours` (conflicts marked as
    usual); True when it merged cleanly."""
    return (
        run(["merge-file", "-L", "ours", "-L", "base", "-L", "theirs", ours, base, theirs], cwd, check=False).returncode
        == 0
    )


# Fields of a `git log` line, separated by a character no name or subject holds.
_LOG_FORMAT = "%H%x1f%an%x1f%aI%x1f%s"


def history(root: Path, rels: list[str], limit: int = 20) -> list[dict[str, str]]:
    """The latest commits touching `rels` (paths relative to `root`), newest
    first: commit, author, date, subject. None yet, or no git: an empty list."""
    found = output(["log", f"-n{limit}", f"--format={_LOG_FORMAT}", "--", *rels], root)
    rows = []
    for line in (found or "").splitlines():
        commit, author, date, subject = [*line.split("\x1f", 3), "", "", ""][:4]
        rows.append({"commit": commit, "author": author, "date": date, "subject": subject})
    return rows
