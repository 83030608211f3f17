"""Typed domain errors; each carries the exit code DESIGN.md §3 publishes."""

from __future__ import annotations

# Exit codes: a published contract (DESIGN.md §3).
OK = 0
FOUND_PROBLEMS = 1
BAD_INPUT = 2
DAMAGED = 3
GIT_FAILED = 4


class GrimoireError(Exception):
    """Base of every error `mem` reports; `str()` is the one-line message."""

    exit_code = BAD_INPUT

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} (hint: {self.hint})" if self.hint else self.message


class BadInput(GrimoireError):
    """The caller asked for something invalid: fix the arguments."""

    exit_code = BAD_INPUT


class NotFound(GrimoireError):
    """An id or key that does not exist (or is not active)."""

    exit_code = FOUND_PROBLEMS


class Refused(BadInput):
    """Content that must never be stored (secret, PII, duplicate)."""


class Damaged(GrimoireError):
    """A grimoire or config file that cannot be read; names file:line."""

    exit_code = DAMAGED


class GitFailed(GrimoireError):
    """A git operation failed; the files were left consistent."""

    exit_code = GIT_FAILED


class LockTimeout(GrimoireError):
    """Another process held the grimoire lock for too long."""

    exit_code = BAD_INPUT
