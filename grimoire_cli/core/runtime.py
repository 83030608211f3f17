"""What a process runs with: the clock, who writes (session, agent, phase),
how long a write waits for the lock, how many processes parse, the config
and scope asked for, and the test-only crash point.

The CLI and each integration build one `Runtime` from the environment once
(`Runtime.from_environment`: a `MEM_*` variable of a bad form is one
`error:` line, before any work) and hand it to `Grimoire`, which hands it
on through its store; a library caller may build its own. This is the only
module that reads `MEM_*` variables: the rest of the package is given them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple

from .clock import parse_time
from .errors import BadInput
from .settings import BIGGEST, SCOPE_RE


class Variable(NamedTuple):
    """A `MEM_*` variable mem reads: what it sets, and, for one with a form,
    what a good value is (`what`, `example`: the hint) and how it is read."""

    name: str
    sets: str
    what: str | None = None
    example: str | None = None
    read: Callable[[str], Any] | None = None


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value <= BIGGEST:  # NaN fails both
        raise ValueError(text)
    return value


def _processes(text: str) -> int:
    if not re.fullmatch(r"[0-9]+", text) or int(text) < 1:
        raise ValueError(text)
    return int(text)


def _scope(text: str) -> str:
    if not SCOPE_RE.match(text):
        raise ValueError(text)
    return text


def _fault(text: str) -> tuple[str, int]:
    name, _, nth = text.rpartition(":")
    if not name or not re.fullmatch(r"[0-9]+", nth) or int(nth) < 1:
        raise ValueError(text)
    return name, int(nth)


# Every MEM_* variable, in the order docs/reference.md lists them. An empty value is as good as unset.
ENVIRONMENT = (
    Variable("MEM_CONFIG", "the config file, instead of the one found upward (`--config` wins)"),
    Variable(
        "MEM_SCOPE", "the scope to work in (`--scope` wins)", "a scope name (a lowercase slug)", "data-analyst", _scope
    ),
    Variable("MEM_NOW", "the clock (tests, replays)", "an ISO-8601 time", "2026-01-31T12:00:00Z", parse_time),
    Variable("MEM_SESSION_ID", "the session of new entries' `source` (and of `mem due --next-session`)"),
    Variable("MEM_AGENT", "the agent of new entries' `source`"),
    Variable("MEM_PHASE", "the phase of new entries' `source`"),
    Variable(
        "MEM_LOCK_TIMEOUT",
        "seconds a write waits for the grimoire lock (default 30)",
        "a number of seconds",
        "30",
        _seconds,
    ),
    Variable(
        "MEM_PARSE_WORKERS",
        "processes that parse changed files (default: by size and cores; 1: never fork)",
        "a whole number of processes, 1 or more",
        "2",
        _processes,
    ),
    Variable("MEM_SERVE_TOKEN", "the token `mem serve` requires (as `--token`, but kept out of the process list)"),
    Variable("MEM_GIT_INDEX_FILE", "set by mem's pre-commit hook: the index git is committing (not for users)"),
    Variable(
        "MEM_FAULT",
        "tests only: crash at the nth time a write reaches a step (`faults`)",
        "a step and a count",
        "journal.committed:1",
        _fault,
    ),
)
_VARIABLES = {variable.name: variable for variable in ENVIRONMENT}
DEFAULT_LOCK_TIMEOUT = 30.0


def _read(environ: Mapping[str, str], name: str) -> Any:
    """One variable's value (None: unset or empty); a value not of its form is
    bad input naming the variable and the form it wants."""
    variable = _VARIABLES[name]
    text = environ.get(name, "").strip()
    if not text or variable.read is None:
        return text or None
    try:
        return variable.read(text)
    except (ValueError, BadInput):
        raise BadInput(
            f"{name} is not {variable.what}: {text!r}", f"unset it or write it like {name}={variable.example}"
        ) from None


class Runtime:
    """The values a grimoire works with that are not in its config: given
    once, read everywhere through `Grimoire.runtime` (and `Store.runtime`)."""

    __slots__ = (
        "agent",
        "claude_config_dir",
        "config",
        "fault",
        "fixed_now",
        "git_index_file",
        "lock_timeout",
        "parse_workers",
        "phase",
        "scope",
        "session_id",
    )

    def __init__(
        self,
        *,
        now: datetime | None = None,
        session_id: str | None = None,
        agent: str | None = None,
        phase: str | None = None,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        parse_workers: int | None = None,
        config: str | None = None,
        scope: str | None = None,
        git_index_file: str | None = None,
        fault: tuple[str, int] | None = None,
        claude_config_dir: str | None = None,
    ):
        self.fixed_now = now  # None: the system clock
        self.session_id = session_id  # None: one made up per process (request.py)
        self.agent = agent
        self.phase = phase
        self.lock_timeout = lock_timeout
        self.parse_workers = parse_workers  # None: by size and cores (storage/parallel.py)
        self.config = config  # the config file asked for (the CLI's --config wins over it)
        self.scope = scope  # the scope asked for (--scope wins)
        self.git_index_file = git_index_file  # the index a commit in progress uses (mem's pre-commit hook)
        self.fault = fault  # (step, n): crash there (core/faults.py; tests only)
        self.claude_config_dir = claude_config_dir  # where Claude Code keeps its transcripts

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Runtime:
        """The runtime `mem` runs with: every `MEM_*` variable, checked."""
        env = os.environ if environ is None else environ
        timeout = _read(env, "MEM_LOCK_TIMEOUT")
        return cls(
            now=_read(env, "MEM_NOW"),
            session_id=_read(env, "MEM_SESSION_ID"),
            agent=_read(env, "MEM_AGENT"),
            phase=_read(env, "MEM_PHASE"),
            lock_timeout=DEFAULT_LOCK_TIMEOUT if timeout is None else timeout,
            parse_workers=_read(env, "MEM_PARSE_WORKERS"),
            config=_read(env, "MEM_CONFIG"),
            scope=_read(env, "MEM_SCOPE"),
            git_index_file=_read(env, "MEM_GIT_INDEX_FILE"),
            fault=_read(env, "MEM_FAULT"),
            claude_config_dir=env.get("CLAUDE_CONFIG_DIR") or None,
        )

    def now(self) -> datetime:
        """The clock: the fixed moment (MEM_NOW) when given, else the system's, to the second (UTC)."""
        return self.fixed_now if self.fixed_now is not None else datetime.now(UTC).replace(microsecond=0)

    def but(self, **changes: Any) -> Runtime:
        """The same runtime with some values changed (`but(session_id=...)`)."""
        fields: dict[str, Any] = {name: getattr(self, name) for name in self.__slots__}
        fields["now"] = fields.pop("fixed_now")
        fields.update(changes)
        return Runtime(**fields)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__ if getattr(self, name))
        return f"Runtime({shown})"
