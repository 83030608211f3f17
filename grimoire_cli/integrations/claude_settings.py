"""`mem agent install|uninstall|status claude`: grimoire's hooks merged into
Claude Code's project settings (`.claude/settings.json`) and its MCP server
into `.mcp.json`, touching nothing else in either file. `local`: the hooks
go into `.claude/settings.local.json` instead, Claude Code's settings of one
clone, git-ignored (a line in `.gitignore` when nothing ignores it yet), and
`.mcp.json`, shared, is left alone.

What mem adds is recognised by its command as the shell reads it (the
program named `mem`, by name or path, then `agent hook WORD`; the server
`grimoire` running `mem mcp`), so `uninstall` removes exactly that, whoever
installed it, and an install run twice adds nothing the second time. A path
is shell-quoted; a hook an older install wrote unquoted, which the shell
cannot run when the path has a space, is still recognised (status `broken`)
and rewritten by the next install. A file mem empties is removed, as one
install created it; a `"hooks": {}` the user had before the install is kept
(remembered in the git directory, the one place of this clone mem may write
that is neither shared nor a cache). Files are written whole through a
temporary file and `os.replace`: an interrupted install leaves the old file.
A file mem creates gets the mode `open` would give it (0666 less the umask);
one that exists keeps its mode.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import BadInput, Damaged

SETTINGS = Path(".claude/settings.json")
SETTINGS_LOCAL = Path(".claude/settings.local.json")
MCP = Path(".mcp.json")
SERVER = "grimoire"
# Claude Code event → (the hook's word, its matcher, its timeout in seconds).
HOOKS = {
    "SessionStart": ("session-start", None, 30),
    "PreCompact": ("pre-compact", None, 10),
    "SessionEnd": ("session-end", None, 10),
    "PostToolUse": ("post-tool-use", "*", 10),
    # Claude Code sends a tool call that failed here, never to PostToolUse; the same
    # hook reads the event's name from the payload and records the call as a failure.
    "PostToolUseFailure": ("post-tool-use", "*", 10),
}
WORDS = ("session-start", "pre-compact", "session-end", "post-tool-use")  # claude_hooks.EVENTS, without importing it
# What an install before the quoting wrote: a path with whitespace, unquoted.
_UNQUOTED = re.compile(r"^(/.*\s.*/mem) agent hook (\S+)\Z")
# Where the git directory remembers the settings files that had `"hooks": {}` before an install.
EMPTY_HOOKS_RECORD = "grimoire-claude-empty-hooks"
# The server's env: what it saves is Claude Code's (source.agent), as docs/agents.md's `.mcp.json` example has it.
SERVER_ENV = {"MEM_AGENT": "claude"}


@dataclass
class AgentResult:
    """What install, uninstall or status found and did, per file."""

    action: str
    root: Path
    changed: list[str] = field(default_factory=list)  # "event: command" or "mcp: grimoire", as added or removed
    kept: list[str] = field(default_factory=list)  # already there (install), or not there (uninstall)
    notes: list[str] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)  # status: item → installed | missing | different
    warnings: list[str] = field(default_factory=list)
    settings: str = str(SETTINGS)  # the settings file it worked on

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "changed": self.changed,
            "kept": self.kept,
            "notes": self.notes,
            "status": self.status,
            "warnings": self.warnings,
            "settings": self.settings,
        }


def mem_command() -> str:
    """How the hooks call mem: `mem` when the `mem` on PATH is this one (the
    settings file is shared in git, where a path of one machine means
    nothing), else this one's absolute path."""
    here = Path(sys.argv[0]).resolve() if sys.argv and Path(sys.argv[0]).name == "mem" else None
    found = shutil.which("mem")
    if here is None or (found is not None and Path(found).resolve() == here):
        return "mem"
    return str(here)


def hook_command(mem: str, word: str) -> str:
    """The hook's shell command: a path with a space or a quote stays one word."""
    return f"{shlex.quote(mem)} agent hook {word}"


def install(root: Path, local: bool = False) -> AgentResult:
    where = SETTINGS_LOCAL if local else SETTINGS
    result = AgentResult("install", root, settings=str(where))
    mem = mem_command()
    if mem != "mem" and local:
        result.notes.append(f"mem is not on PATH: the hooks call {mem}")
    elif mem != "mem":  # a path of this machine, in files every clone shares
        result.warnings.append(
            f"mem is not on PATH: the shared {SETTINGS} and {MCP} call {mem}, which other clones lack "
            "(hint: put mem on PATH and install again, or keep it to this clone: "
            "`mem agent uninstall claude && mem agent install claude --local`)"
        )
    settings = _load(root / where)
    had_empty_hooks = settings.get("hooks") == {}
    hooks = _hooks(settings, root / where)
    replaced = _remove_ours(hooks, runnable=False)
    if replaced:
        result.notes.append(
            f"replaced {len(replaced)} hooks an older install wrote with the path unquoted (the shell could not run them)"
        )
    for event, (word, matcher, timeout) in HOOKS.items():
        command = hook_command(mem, word)
        label = f"{event}: {command}"
        groups = hooks.setdefault(event, [])
        if any(ours == (word, True) for ours in map(_ours, _commands(groups))):
            result.kept.append(label)
            continue
        group: dict[str, Any] = {"matcher": matcher} if matcher is not None else {}
        group["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
        groups.append(group)
        result.changed.append(label)
    hooks_added = bool(result.changed)
    if local:
        if hooks_added:
            _write(root / where, settings)
            _remember_empty_hooks(root / where, had_empty_hooks)
            _ignore(root, where, result)
        result.notes.append(
            f"{MCP} is shared: the MCP server is not added (for this clone only: "
            f"`claude mcp add --scope local {SERVER} -e MEM_AGENT=claude -- {shlex.quote(mem)} mcp`)"
        )
        return result
    servers = _servers(mcp := _load(root / MCP), root / MCP)
    if SERVER not in servers:
        servers[SERVER] = {"command": mem, "args": ["mcp"], "env": dict(SERVER_ENV)}
        result.changed.append(f"mcp: {SERVER}")
    elif _is_ours(servers[SERVER]) and _add_server_env(servers[SERVER]):
        result.changed.append(f"mcp: {SERVER} env MEM_AGENT")
    elif _is_ours(servers[SERVER]):
        result.kept.append(f"mcp: {SERVER}")
    else:
        result.notes.append(f"{MCP} has a server named {SERVER} that does not run `mem mcp`: left as it is")
    if result.changed:
        _write(root / SETTINGS, settings)
        if hooks_added:
            _remember_empty_hooks(root / SETTINGS, had_empty_hooks)
        _write(root / MCP, mcp)
    return result


def uninstall(root: Path, local: bool = False) -> AgentResult:
    result = AgentResult("uninstall", root, settings=str(SETTINGS_LOCAL if local else SETTINGS))
    path = root / result.settings
    if path.exists():
        settings = _load(path)
        hooks = _hooks(settings, path)
        result.changed.extend(_remove_ours(hooks))
        if result.changed:
            users_empty_hooks = _forget_empty_hooks(path)
            if not hooks and not users_empty_hooks:  # the install added "hooks"; a `{}` the user had stays theirs
                del settings["hooks"]
            _write(path, settings)
    mcp_path = root / MCP
    if mcp_path.exists() and not local:  # `--local` never adds the server
        mcp = _load(mcp_path)
        servers = _servers(mcp, mcp_path)
        if SERVER in servers and _is_ours(servers[SERVER]):
            del servers[SERVER]
            if not servers:
                del mcp["mcpServers"]
            _write(mcp_path, mcp)
            result.changed.append(f"mcp: {SERVER}")
    if not result.changed:
        result.notes.append("nothing of mem's was installed")
    return result


def status(root: Path, local: bool = False) -> AgentResult:
    """Per event: installed, missing, or broken (mem's hook, written unquoted by an
    older install: the shell cannot run it; `install` rewrites it)."""
    where = SETTINGS_LOCAL if local else SETTINGS
    result = AgentResult("status", root, settings=str(where))
    settings = _load(root / where) if (root / where).exists() else {}
    hooks = _hooks(settings, root / where)
    for event, (word, _, _) in HOOKS.items():
        runnable = {
            ours[1] for ours in map(_ours, _commands(hooks.get(event, []))) if ours is not None and ours[0] == word
        }
        result.status[event] = "installed" if True in runnable else "broken" if runnable else "missing"
    if local:
        return result
    mcp = _load(root / MCP) if (root / MCP).exists() else {}
    server = _servers(mcp, root / MCP).get(SERVER)
    result.status[f"mcp: {SERVER}"] = "missing" if server is None else "installed" if _is_ours(server) else "different"
    return result


def _ours(command: str) -> tuple[str, bool] | None:
    """(the hook's word, whether the shell can run it) when `command` is a hook mem
    installs, else None. Read as the shell reads it: exactly the program named
    `mem` (its name or a path, quoted or not), `agent`, `hook`, one of mem's words;
    anything more (`&& …`, an assignment before it) is the user's own command."""
    unquoted = _UNQUOTED.match(command)
    # The shell's first word missing is what made the old hook fail (exit 127); one that
    # exists (`/usr/bin/env X=1 /a/mem …`) is a command the user wrote, and stays theirs.
    if unquoted and unquoted.group(2) in WORDS and not os.path.exists(command.split()[0]):
        return unquoted.group(2), False
    try:
        words = shlex.split(command)
    except ValueError:  # an unbalanced quote: not a command mem writes
        return None
    if len(words) == 4 and Path(words[0]).name == "mem" and words[1:3] == ["agent", "hook"] and words[3] in WORDS:
        return words[3], True
    return None


def _remove_ours(hooks: dict[str, Any], runnable: bool | None = None) -> list[str]:
    """Remove mem's hooks (only those the shell can or cannot run, when
    `runnable` says which), and a group or event only mem's emptied; their labels."""
    removed = []
    for event in list(hooks):
        for group in list(hooks[event]):
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                continue
            ours = [
                h
                for h in inner
                if isinstance(h, dict)
                and isinstance(h.get("command"), str)
                and (found := _ours(h["command"])) is not None
                and runnable in (None, found[1])
            ]
            for hook in ours:
                inner.remove(hook)
                removed.append(f"{event}: {hook['command']}")
            if ours and not inner:
                hooks[event].remove(group)
                if not hooks[event]:
                    del hooks[event]
    return removed


def _add_server_env(server: dict[str, Any]) -> bool:
    """Give a server an older install wrote the MEM_AGENT it lacks (other env values stay); whether it changed."""
    env = server.setdefault("env", {})
    if not isinstance(env, dict) or "MEM_AGENT" in env:
        return False
    env.update(SERVER_ENV)
    return True


def _empty_hooks_record(settings: Path) -> Path | None:
    """The record in the git directory of this clone (and work tree); None outside git. Called once the folder exists."""
    from ..git import gitops

    git_dir = gitops.git_dir(settings.parent)
    return git_dir / EMPTY_HOOKS_RECORD if git_dir is not None else None


def _recorded(record: Path) -> set[str]:
    try:
        return set(record.read_text(encoding="utf-8").splitlines())
    except OSError:
        return set()


def _remember_empty_hooks(settings: Path, had_empty_hooks: bool) -> None:
    """Record (or forget) that `settings` had `"hooks": {}` before this install,
    so uninstall gives it back; outside git nothing is kept and uninstall drops it."""
    record = _empty_hooks_record(settings)
    if record is None:
        return
    listed, key = _recorded(record), os.path.abspath(settings)
    wanted = listed | {key} if had_empty_hooks else listed - {key}
    if wanted == listed:
        return
    if wanted:
        record.write_text("".join(f"{line}\n" for line in sorted(wanted)), encoding="utf-8")
    else:
        record.unlink(missing_ok=True)


def _forget_empty_hooks(settings: Path) -> bool:
    """Whether `settings` had `"hooks": {}` before mem's install; the record of it is dropped."""
    record = _empty_hooks_record(settings)
    had = record is not None and os.path.abspath(settings) in _recorded(record)
    if had:
        _remember_empty_hooks(settings, False)
    return had


def _ignore(root: Path, path: Path, result: AgentResult) -> None:
    """Have git ignore `path` (one clone's settings), as Claude Code does when it
    creates the file: a line in the repository's `.gitignore` when nothing ignores it yet."""
    from ..git import gitops

    if gitops.work_tree(root) is None or gitops.ignored(root, path.as_posix()):
        return
    ignore = root / ".gitignore"
    current = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    ignore.write_text(
        current + ("" if not current or current.endswith("\n") else "\n") + f"{path.as_posix()}\n", encoding="utf-8"
    )
    result.notes.append(f"added {path.as_posix()} to .gitignore")


def _commands(groups: list[Any]) -> list[str]:
    """The commands of an event's hook groups, whatever else a group holds."""
    return [
        h["command"]
        for g in groups
        if isinstance(g, dict) and isinstance(g.get("hooks"), list)
        for h in g["hooks"]
        if isinstance(h, dict) and isinstance(h.get("command"), str)
    ]


def _is_ours(server: Any) -> bool:
    return (
        isinstance(server, dict)
        and isinstance(server.get("command"), str)
        and Path(server["command"]).name == "mem"
        and server.get("args") == ["mcp"]
    )


def _load(path: Path) -> dict[str, Any]:
    """The JSON object in `path` ({} when there is none); a file that is not one is refused with its line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise Damaged(
            str(path),
            None,
            f"cannot read: {getattr(exc, 'strerror', None) or exc}",
            "fix or remove the file",
            "settings",
        ) from None
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Damaged(
            str(path),
            exc.lineno,
            f"not JSON ({exc.msg})",
            "fix the file; mem changes nothing until it is JSON",
            "settings",
        ) from None
    if not isinstance(value, dict):
        raise Damaged(
            str(path), 1, "not a JSON object", "fix the file; mem changes nothing until it is an object", "settings"
        )
    return value


def _hooks(settings: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise Damaged(
            str(path), None, '"hooks" is not an object of lists, as Claude Code reads it', "fix the file", "settings"
        )
    return hooks


def _servers(mcp: dict[str, Any], path: Path) -> dict[str, Any]:
    servers = mcp.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise Damaged(str(path), None, '"mcpServers" is not an object', "fix the file", "settings")
    return servers


def _write(path: Path, value: dict[str, Any]) -> None:
    """The file with `value` (2-space JSON), or no file when nothing is left in it."""
    if path.is_symlink():
        path = path.resolve()  # the file the link names is the settings; the link stays
    if not value:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.parent / f".{path.name}.{secrets.token_hex(6)}"
    # Mode 0666 through the umask, as `open` makes a file (mkstemp's 0600 would
    # hide a shared settings file from the user's group); an existing file's mode is kept below.
    handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o777)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def check_agent(name: str) -> None:
    if name != "claude":
        raise BadInput(f"unknown agent {name!r}", "the agent mem knows is claude (Claude Code)")
