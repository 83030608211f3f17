"""Crash injection, for the tests that prove every write all or nothing.

A write calls `reached(step)` at each named step of its protocol (a temp
file written, the journal's commit point, each rename, the journal about to
go, a git commit made but HEAD not yet moved). Armed with (step, n) (the
runtime's `MEM_FAULT=<step>:<n>`, core/runtime.py), the nth time this
process reaches that step, it ends there with `os._exit`: no `finally`, no
`except`, no flush, as a power cut or a SIGKILL would end it. What the next
`mem` command then finds is what such a crash leaves.

Unarmed (always, outside tests), a step costs one comparison.
"""

from __future__ import annotations

import os

# The exit status of an injected crash: no exit code of mem (0-5) nor a signal's.
CRASHED = 86

_wanted: tuple[str, int] | None = None  # (step, n), or None when no fault is asked for
_count = 0


def arm(fault: tuple[str, int] | None) -> None:
    """Crash at the nth time a write reaches `step` (None: never). Arming the
    same fault again (every grimoire a process opens) keeps its count."""
    global _wanted, _count
    if fault != _wanted:
        _wanted, _count = fault, 0


def reached(step: str) -> None:
    """A write has reached `step`: end the process if this is the asked occurrence."""
    global _count
    if _wanted is None or step != _wanted[0]:
        return
    _count += 1
    if _count == _wanted[1]:
        os._exit(CRASHED)
