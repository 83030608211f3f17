"""Fake secrets for the guard's tests, assembled at run time so no test file
holds a real-looking secret (and none is copied from the scanner corpora)."""

from __future__ import annotations

import random

HEX = "0123456789abcdef"
LOWER = "abcdefghijklmnopqrstuvwxyz"
LETTERS = LOWER + LOWER.upper()
ALNUM = LETTERS + "0123456789"
LOWER_ALNUM = LOWER + "0123456789"
UPPER_ALNUM = LOWER.upper() + "0123456789"


def fake(alphabet: str, size: int, seed: int) -> str:
    """`size` characters of `alphabet`, the same for the same seed."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(size))


def fake_uuid(seed: int) -> str:
    """A UUID-shaped fake (8-4-4-4-12 hex digits)."""
    return "-".join(fake(HEX, n, seed + n) for n in (8, 4, 4, 4, 12))
