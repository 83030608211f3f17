"""Reading a conversation transcript for `mem consolidate`: Claude Code's
session JSONL, a JSON list (or JSON Lines) of `{role, content}`, or plain
text, into the messages a summarizer reads.

Tool noise is left out: tool calls and results, tool messages, thinking,
images, Claude Code's meta and side-chain lines. What is left is a list of
(role, text), roles normalised to user / assistant / system.

A transcript path that arrives from an agent (a tool call, a hook's JSON) is
read only inside the repository or Claude Code's transcripts of this project
(`agent_transcript`): a prompt-injected model must not have any other file
the process can read summarised into memory, and so into git.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from ..core.config import is_inside
from ..core.errors import BadInput

_ROLES = {
    "user": "user",
    "human": "user",
    "me": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "model": "assistant",
    "system": "system",
    "developer": "system",
}
_NOISE_ROLES = {"tool", "function", "ipython"}
_SPEAKER = re.compile(r"^\s*(user|human|me|assistant|ai|bot|model|system)\s*:\s?(.*)$", re.IGNORECASE)


class Message(NamedTuple):
    role: str
    text: str


class Transcript(NamedTuple):
    """The messages, the session id the transcript names (None if it names
    none), and its format (claude-code, json, jsonl, text)."""

    messages: list[Message]
    session_id: str | None
    format: str

    def fallback_id(self) -> str:
        """A session id for a transcript that names none: the same messages, the same id."""
        digest = hashlib.sha256("\n".join(f"{m.role}\x00{m.text}" for m in self.messages).encode("utf-8")).hexdigest()
        return f"transcript-{digest[:12]}"


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text blocks of a list
    (tool_use, tool_result, thinking and images are noise)."""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        parts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        ]
        parts += [block for block in content if isinstance(block, str)]
        return "\n".join(p.strip() for p in parts if p.strip())
    return ""


def _message(item: Any) -> Message | None:
    """One message from a `{role, content}` object, or a Claude Code line; None when it is noise."""
    if not isinstance(item, dict):
        return None
    if item.get("isMeta") or item.get("isSidechain"):
        return None
    inner = message if isinstance(message := item.get("message"), dict) else item
    role = inner.get("role", item.get("type"))
    if not isinstance(role, str) or role.lower() in _NOISE_ROLES:
        return None
    role = _ROLES.get(role.lower())
    if role is None:
        return None  # Claude Code's summary, file-history and progress lines
    text = _text_of(inner.get("content"))
    return Message(role, text) if text else None


def _from_items(items: list[Any], session: str | None, form: str, where: str) -> Transcript:
    """The messages of parsed items; items none of which looks like a message are bad input."""
    if not any(isinstance(item, dict) and ("role" in item or isinstance(item.get("message"), dict)) for item in items):
        raise BadInput(
            f"{where} holds no messages", "give {role, content} messages, a Claude Code session log, or plain text"
        )
    messages = [m for m in (_message(item) for item in items) if m is not None]
    return Transcript(messages, session, form)


def _session_of(items: list[Any]) -> str | None:
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("sessionId"), str) and item["sessionId"].strip():
            return item["sessionId"].strip()
    return None


def read_transcript(text: str, where: str) -> Transcript:
    """The messages of a transcript's text (`where` names it in errors); an
    empty one, or JSON Lines with a line that is not JSON, is bad input."""
    if not text.strip():
        raise BadInput(
            f"{where} is empty", "give a transcript: Claude Code JSONL, JSON {role, content} messages, or plain text"
        )
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise BadInput(
                f"{where} is not JSON ({exc.args[0]})", "give a JSON list of {role, content} messages"
            ) from None
        return _from_items(data if isinstance(data, list) else [], None, "json", where)
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("messages"), list):
            return _from_items(
                data["messages"],
                data.get("session_id") if isinstance(data.get("session_id"), str) else None,
                "json",
                where,
            )
        items = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except ValueError as exc:
                raise BadInput(
                    f"{where}:{number}: not JSON ({exc.args[0]})", "each line of a JSONL transcript is one JSON object"
                ) from None
        session = _session_of(items)
        form = "claude-code" if session or any("message" in i for i in items if isinstance(i, dict)) else "jsonl"
        return _from_items(items, session, form, where)
    return Transcript(_plain(text), None, "text")


def _plain(text: str) -> list[Message]:
    """`User: …` / `Assistant: …` turns (a line without a speaker continues
    the last message); without any speaker, each paragraph is a message."""
    messages: list[list[str]] = []
    roles: list[str] = []
    for line in text.splitlines():
        speaker = _SPEAKER.match(line)
        if speaker:
            roles.append(_ROLES[speaker.group(1).lower()])
            messages.append([speaker.group(2)])
        elif messages:
            messages[-1].append(line)
    if messages:
        return [
            Message(role, "\n".join(lines).strip()) for role, lines in zip(roles, messages) if "\n".join(lines).strip()
        ]
    return [Message("unknown", " ".join(p.split())) for p in re.split(r"\n\s*\n", text) if p.strip()]


# Claude Code names a project's transcripts folder after its directory, each
# character but an ASCII letter or digit turned into '-'; a name over 200
# characters is cut there and given a hash suffix.
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_LONGEST_FOLDER = 200


def claude_transcripts_folder(project: Path, claude_dir: str | None = None) -> Path:
    """Where Claude Code keeps the transcripts of sessions started in `project`
    (under `claude_dir`, the runtime's $CLAUDE_CONFIG_DIR, else ~/.claude)."""
    config = claude_dir or str(Path.home() / ".claude")
    return Path(config).expanduser() / "projects" / _NOT_ALNUM.sub("-", str(project))


def _in_transcripts(path: Path, project: Path, claude_dir: str | None) -> bool:
    """Whether a resolved `path` lies in the transcripts folder of `project`."""
    folder = claude_transcripts_folder(project, claude_dir)
    projects = folder.parent.resolve()
    if not is_inside(projects, path) or path == projects:
        return False
    name = path.relative_to(projects).parts[0]
    if len(folder.name) > _LONGEST_FOLDER:
        return name.startswith(folder.name[:_LONGEST_FOLDER] + "-")
    return name == folder.name


def agent_transcript(given: str, root: Path, claude_dir: str | None = None) -> Path:
    """The file a transcript path from an agent names, after symlinks, when it
    is inside the repository `root` or Claude Code's transcripts of this
    project (started in `root` or the working directory, under `claude_dir`);
    else bad input."""
    path = Path(given).expanduser()
    resolved = (path if path.is_absolute() else Path.cwd() / path).resolve()
    root = root.resolve()
    if is_inside(root, resolved) or any(
        _in_transcripts(resolved, project, claude_dir) for project in (root, Path.cwd().resolve())
    ):
        return resolved
    raise BadInput(
        f"the transcript path {given!r} is outside the repository and Claude Code's transcripts of this project",
        "give a transcript inside the repository, or its text",
    )
