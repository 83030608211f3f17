"""Crash injection, for the tests that prove every write all or nothing.

A write calls `reached(step)` at each named step of its protocol (a temp
file written, the journal's commit point, each rename, the journal about to
go, a git commit made but HEAD not yet moved). With `MEM_FAULT=<step>:<n>`
the nth time this process reaches that step, it ends there with `os._exit`:
no `finally`, no `except`, no flush, as a power cut or a SIGKILL would end
it. What the next `mem` command then finds is what such a crash leaves.

Unset (always, outside tests), a step costs one comparison: the variable is
read the first time a step is reached, never again.
"""

from __future__ import annotations

import os
from typing import cast

# The exit status of an injected crash: no exit code of mem (0-5) nor a signal's.
CRASHED = 86

_UNREAD = object()
_wanted: object = _UNREAD  # (step, n), or None when no fault is asked for
_count = 0


def reached(step: str) -> None:
    """A write has reached `step`: end the process if this is the asked occurrence."""
    global _wanted, _count
    if _wanted is None:
        return
    if _wanted is _UNREAD:
        from .settings import environment

        _wanted = environment("MEM_FAULT")
        if _wanted is None:
            return
    name, nth = cast("tuple[str, int]", _wanted)
    if step != name:
        return
    _count += 1
    if _count == nth:
        os._exit(CRASHED)
