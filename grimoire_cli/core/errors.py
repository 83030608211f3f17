"""Typed domain errors and the exit codes they map to.

The exit codes are a published contract (docs/reference.md, Exit codes);
no other module spells one as a number.
"""

from __future__ import annotations

OK = 0
FOUND_PROBLEMS = (
    1  # validate found problems, check --strict found something due, an unknown id or key, a search that found nothing
)
BAD_INPUT = 2  # bad input or usage, refused content
DAMAGED = 3  # a damaged grimoire or config; also a grimoire locked too long (docs/design.md, Choices worth knowing)
GIT_FAILED = 4
EXTERNAL_FAILED = 5  # the external command (a summarizer) failed, timed out or printed no valid JSON
INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT


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


class ImportRefused(BadInput):
    """Lines of an import that cannot be imported, so none was: `rejected`
    holds every (line number, problem); the message the first few."""

    SHOWN = 5

    def __init__(self, rejected: list[tuple[int, str]]):
        shown = "; ".join(f"line {n}: {m}" for n, m in rejected[: self.SHOWN])
        more = f" (and {len(rejected) - self.SHOWN} more)" if len(rejected) > self.SHOWN else ""
        count = f"{len(rejected)} invalid line{'' if len(rejected) == 1 else 's'}"
        # A line naming an entry the import lacks: the export left the archive out.
        linked = any("does not exist" in m or "to supersede" in m for _, m in rejected)
        way = "an import needs the entries its lines link to, as `mem export --archived` gives them; " if linked else ""
        super().__init__(
            f"{count}, nothing imported: {shown}{more}",
            f"{way}fix those lines, or use --skip-invalid to import the rest",
        )
        self.rejected = rejected


class NotFound(GrimoireError):
    """An id or key that does not exist (or is not active)."""

    exit_code = FOUND_PROBLEMS


def no_memory(entry_id: str, hint: str = "list ids with `mem list`") -> NotFound:
    """The one wording for an id that names no memory."""
    return NotFound(f"no memory with id {entry_id}", hint)


class Refused(BadInput):
    """Content that must never be stored (secret, PII, duplicate)."""


class Duplicate(Refused):
    """An exact duplicate of the active entry `of`."""

    def __init__(self, message: str, hint: str | None = None, of: str = ""):
        super().__init__(message, hint)
        self.of = of


class CommandFailed(GrimoireError):
    """An external command mem ran (a summarizer) failed, timed out or
    printed output that is not what it must be; nothing was written."""

    exit_code = EXTERNAL_FAILED


class Damaged(GrimoireError):
    """A grimoire or config file that cannot be read or written as it is.

    `path` and `line` say where (`line` None when the problem has no line,
    as for a config value of the wrong type), `kind` what (the rule name
    `mem validate` reports: yaml, encoding, too-large, unreadable, ...).
    """

    exit_code = DAMAGED

    def __init__(self, path: str, line: int | None, problem: str, hint: str | None = None, kind: str = "damaged"):
        super().__init__(f"{path}:{line}: {problem}" if line is not None else f"{path}: {problem}", hint)
        self.path = path
        self.line = line
        self.problem = problem
        self.kind = kind

    def __reduce__(self) -> tuple[type[Damaged], tuple[str, int | None, str, str | None, str]]:
        # Rebuilt from its fields (pickling across validate's worker processes, copy).
        return type(self), (self.path, self.line, self.problem, self.hint, self.kind)


class GitFailed(GrimoireError):
    """A git operation failed; the files were left consistent."""

    exit_code = GIT_FAILED


class LockTimeout(GrimoireError):
    """Another process held the grimoire lock for too long; nothing was written.

    Exit 3 (as for a grimoire that cannot be written as it is), not 2: the
    caller's input was fine, and the same command can simply be retried.
    """

    exit_code = DAMAGED
