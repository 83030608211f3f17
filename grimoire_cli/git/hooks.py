"""`mem hooks`: thin git hook scripts that call back into `mem`.

post-checkout and post-merge run `mem check` (session start); pre-commit runs
`mem validate` on the staged grimoire files; post-merge, post-commit (after a
cherry-pick), post-rewrite (after a rebase) and pre-commit (concluding a
merge) run `mem merge-fixup`, which renumbers colliding ids in the files git
merged without calling the driver; post-commit runs `mem capture` when the
message has a `Decision:`, `Learning:` or `Error:` line (auto-capture).

Like pre-commit's installer: an existing hook is moved aside and still runs
first (and comes back on uninstall); install is idempotent; a repository
with `core.hooksPath` is refused with a hint rather than silently ignored;
inherited `GIT_*` variables are dropped before `mem` runs.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput
from . import gitops

if TYPE_CHECKING:
    from ..core.config import Config

MARKER = "# installed by mem (grimoire): do not edit; `mem hooks uninstall` removes it"
HOOKS = ("post-checkout", "post-merge", "pre-commit", "post-commit", "post-rewrite")
DRIVER = "merge driver"
LEGACY_SUFFIX = ".pre-mem"

_TEMPLATE = """#!/bin/sh
{marker}
# Runs: {action}
# The commit being made may use its own index: keep it for `mem merge-fixup`.
MEM_GIT_INDEX_FILE="${{GIT_INDEX_FILE:+$(cd "${{GIT_INDEX_FILE%/*}}" 2>/dev/null && pwd)/${{GIT_INDEX_FILE##*/}}}}"
export MEM_GIT_INDEX_FILE
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX GIT_OBJECT_DIRECTORY GIT_COMMON_DIR
status=0
here="$(dirname "$0")"
{read_stdin}if [ -x "$here/{name}{legacy}" ]; then
    {feed}"$here/{name}{legacy}" "$@" || status=$?
fi
MEM={mem}
if [ ! -x "$MEM" ]; then MEM="$(command -v mem || true)"; fi
if [ -z "$MEM" ]; then
    echo "mem hook: the mem command was not found; run 'mem hooks install' again" >&2
    exit $status
fi
{body}
"""

_SESSION_BODY = """# Session start: never blocks the checkout. A checkout of files (flag 0)
# is not a new session: it only reports, archiving nothing.
if [ "$3" = 0 ]; then
    "$MEM" check --hook --all-scopes --no-archive || true
else
    "$MEM" check --hook --all-scopes || true
fi
exit $status"""

_MERGE_BODY = """# After a merge git committed itself: renumber what the merge driver could not reach.
"$MEM" merge-fixup --all-scopes post-merge "$@" || true
"$MEM" check --hook --all-scopes || true
exit $status"""

_PRECOMMIT_BODY = """[ $status -eq 0 ] || exit $status
gitdir="$(git rev-parse --git-dir)"
if [ -f "$gitdir/MERGE_HEAD" ] || [ -f "$gitdir/CHERRY_PICK_HEAD" ]; then
    # Concluding a merge or cherry-pick: renumbering goes into this commit.
    "$MEM" merge-fixup --all-scopes pre-commit || true
fi
files="$(git diff --cached --name-only --diff-filter=ACMR -- {storage} | grep -E '\\.ya?ml$' || true)"
[ -n "$files" ] || exit 0
echo "$files" | tr '\\n' '\\0' | xargs -0 "$MEM" validate --quiet"""

_POSTCOMMIT_BODY = """# Auto-capture: a message with a Decision:, Learning: or Error: line may hold
# trailers to remember (mem capture reads the auto_capture flags); the commit stands whatever happens.
if git log -1 --format=%B HEAD 2>/dev/null | grep -qiE '^(decision|learning|error) *:'; then
    "$MEM" capture --commit HEAD --hook || true
fi
# Only a cherry-pick can bring in colliding ids; other commits cost nothing.
[ -f "$(git rev-parse --git-dir)/CHERRY_PICK_HEAD" ] || exit $status
"$MEM" merge-fixup --all-scopes post-commit || true
exit $status"""

_REWRITE_BODY = """# After a rebase: renumber what the merge driver could not reach.
printf '%s\\n' "$input" | "$MEM" merge-fixup --all-scopes post-rewrite "$@" || true
exit $status"""

_BODIES = {
    "post-checkout": (_SESSION_BODY, "mem check (session start)"),
    "post-merge": (_MERGE_BODY, "mem merge-fixup, then mem check (session start)"),
    "pre-commit": (
        _PRECOMMIT_BODY,
        "mem merge-fixup when concluding a merge, then mem validate on staged grimoire files",
    ),
    "post-commit": (_POSTCOMMIT_BODY, "mem capture of commit trailers, and mem merge-fixup after a cherry-pick"),
    "post-rewrite": (_REWRITE_BODY, "mem merge-fixup after a rebase"),
}


@dataclass
class HooksResult:
    hooks: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"hooks": self.hooks, "notes": self.notes}


def _hooks_dir(root: Path) -> Path:
    hooks_path = gitops.config_get(root, "core.hooksPath")
    if hooks_path:
        raise BadInput(
            f"core.hooksPath is set to {hooks_path!r}; mem will not install hooks there",
            "unset it (git config --unset core.hooksPath) or call `mem check` and `mem validate` from your own hooks",
        )
    git_dir = gitops.git_dir(root)
    if git_dir is None:
        raise BadInput("not a git repository", "run `git init` first")
    return git_dir / "hooks"


def _mem_executable() -> str:
    candidate = Path(sys.argv[0])
    if candidate.name == "mem" and candidate.exists():
        return str(candidate.resolve())
    found = shutil.which("mem")
    return found or "mem"


def _ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(errors="replace")
    except OSError:
        return False


def run(config: Config, action: str) -> HooksResult:
    """`mem hooks install|uninstall|status` in the clone holding `config`'s grimoire."""
    root = gitops.work_tree(config.root)
    if root is None:
        raise BadInput("not a git repository", "run `git init` first")
    if action == "install":
        # Every scope's grimoire files, when the layout has scopes (a pathspec).
        scopes = config.scopes_dir
        watched = (
            f":(glob){config.relative(scopes)}/*/memory/**"
            if scopes is not None
            else config.relative(config.storage_dir)
        )
        return install(root, watched)
    if action == "uninstall":
        return uninstall(root)
    if action == "status":
        return status(root)
    raise BadInput(f"unknown hooks action {action!r}", "use install, uninstall or status")


def install(root: Path, watched: str) -> HooksResult:
    """Write mem's hooks (chaining any existing one) and configure the merge driver; idempotent."""
    folder = _hooks_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    result = HooksResult()
    for name in HOOKS:
        path = folder / name
        if path.exists() and not _ours(path):
            os.replace(path, folder / (name + LEGACY_SUFFIX))
            result.notes.append(f"kept your existing {name} hook: it runs first")
        body, action = _BODIES[name]
        body = body.replace("{storage}", shlex.quote(watched))
        # post-rewrite reads its list of rewritten commits on stdin: both the chained hook and mem need it.
        piped = name == "post-rewrite"
        script = _TEMPLATE.format(
            marker=MARKER,
            action=action,
            name=name,
            legacy=LEGACY_SUFFIX,
            mem=shlex.quote(_mem_executable()),
            body=body,
            read_stdin='input="$(cat)"\n' if piped else "",
            feed="printf '%s\\n' \"$input\" | " if piped else "",
        )
        executable = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
        if (
            path.exists()
            and path.read_text(errors="replace") == script
            and path.stat().st_mode & executable == executable
        ):
            result.hooks[name] = "already installed"
            continue
        result.hooks[name] = "updated" if path.exists() else "installed"
        path.write_text(script)
        path.chmod(path.stat().st_mode | executable)
    # The merge driver named by `.gitattributes` (`merge=grimoire`): git
    # config is not versioned, so each clone runs `mem hooks install` once.
    name, driver = (
        "grimoire entry-wise merge (mem merge-file)",
        f"{shlex.quote(_mem_executable())} merge-file %O %A %B %P",
    )
    if (
        gitops.config_get(root, "merge.grimoire.name") == name
        and gitops.config_get(root, "merge.grimoire.driver") == driver
    ):
        result.hooks[DRIVER] = "already installed"
        return result
    result.hooks[DRIVER] = "updated" if gitops.config_get(root, "merge.grimoire.driver") else "installed"
    gitops.config_set(root, "merge.grimoire.name", name)
    gitops.config_set(root, "merge.grimoire.driver", driver)
    return result


def _each_hook(root: Path) -> list[tuple[str, Path, Path]]:
    """(name, path, where a chained hook of the user's is kept) of each hook mem installs."""
    folder = _hooks_dir(root)
    return [(name, folder / name, folder / (name + LEGACY_SUFFIX)) for name in HOOKS]


def uninstall(root: Path) -> HooksResult:
    """Remove mem's hooks and merge driver, restoring the hooks they chained."""
    result = HooksResult()
    for name, path, legacy in _each_hook(root):
        if _ours(path):
            path.unlink()
            result.hooks[name] = "removed"
            if legacy.exists():
                os.replace(legacy, path)
                result.notes.append(f"restored your previous {name} hook")
        else:
            result.hooks[name] = "not installed"
    if gitops.config_get(root, "merge.grimoire.driver"):
        gitops.run(["config", "--remove-section", "merge.grimoire"], root, check=False)
        result.hooks[DRIVER] = "removed"
    else:
        result.hooks[DRIVER] = "not installed"
    return result


def status(root: Path) -> HooksResult:
    """Which of mem's hooks and merge driver are installed."""
    result = HooksResult()
    for name, path, legacy in _each_hook(root):
        if _ours(path):
            result.hooks[name] = "installed (chains your previous hook)" if legacy.exists() else "installed"
        elif path.exists():
            result.hooks[name] = "another hook (not mem's)"
        else:
            result.hooks[name] = "not installed"
    driver = gitops.config_get(root, "merge.grimoire.driver")
    result.hooks[DRIVER] = (
        ("installed" if "merge-file" in driver else f"another driver: {driver}") if driver else "not installed"
    )
    return result
