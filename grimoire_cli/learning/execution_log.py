"""Reading the observation log into the catalog (docs/learning.md): each record
becomes a task with its steps, its patterns and its corrections, summed per key
(`storage/catalog/executions.Batch`) and added in one transaction. The catalog
reads only what the log gained since it last looked, so a warm read costs a few
rows whatever the log's size.

Errors are grouped by their shape: numbers, ids, paths, quoted values and
e-mail addresses are wildcarded, so `timeout after 30s on /srv/a/1.json`
and `timeout after 12s on /srv/b/7.json` are one error,
`timeout after <n>s on <path>`. A goal's query pattern is the Persistent
Memory System's: lower-case words joined by `_`, with any word holding a
digit (a number, an order code), an e-mail address or what the guard
redacted as `*`, so
`Create shipment for facility 12` and `create shipment for facility 7`
are both `create_shipment_for_facility_*`.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections.abc import Callable
from json.encoder import encode_basestring as _json_text
from typing import TYPE_CHECKING, Any, TypeVar

from ..storage.catalog.executions import Batch, Step, Task
from ..storage.store import Store
from .observations import log_path

if TYPE_CHECKING:
    from ..storage.catalog.catalog import Catalog

T = TypeVar("T")

_SHAPES = (
    (re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+"), "<email>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[0-9a-f]{8,}\b", re.I), "<id>"),
    (re.compile(r"(?:\b[A-Za-z]:)?(?:[/\\][\w.@%+-]+){2,}[/\\]?|(?:\./|\.\./)[\w./-]+"), "<path>"),
    # A quote opens after a non-word character: "can't" and "won't" are words, not values.
    (re.compile(r"(?<!\w)'[^']*'|(?<!\w)\"[^\"]*\""), "<value>"),
    (re.compile(r"(?<![A-Za-z_])\d+(\.\d+)?"), "<n>"),
)
_EMAIL = _SHAPES[0][0]
# What the guard left of a secret or an address: a value, as a number is
_REDACTED = re.compile(r"\[redacted: [^\]]*\]")
_HAS_DIGIT = re.compile(r"\S*\d\S*")  # a whitespace-separated token holding a digit: a number, a code
_TOKEN = re.compile(r"\*|[^\W_]+")
_STARS = re.compile(r"\*(?:_\*)+")
MAX_PATTERN = 200
ARROW = " → "
_HEAD = 256  # bytes of the log's start kept as its fingerprint


def normalise_error(text: str) -> str:
    """An error's shape: what varies between two occurrences wildcarded."""
    shape = " ".join(text.split())[:500]
    for pattern, mark in _SHAPES:
        shape = pattern.sub(mark, shape)
    return shape


def query_pattern(goal: str) -> str | None:
    """A goal's query pattern (see the module); None for a goal with no words."""
    text = _HAS_DIGIT.sub(" * ", _EMAIL.sub(" 0 ", _REDACTED.sub(" 0 ", goal.lower())))
    pattern = _STARS.sub("*", "_".join(_TOKEN.findall(text)))[:MAX_PATTERN]
    return pattern if pattern.strip("*_") else None


def plan_of(tools: list[str]) -> list[str]:
    """The tools a task ran, a repeated call (a retry logged as its own step) once."""
    return [tool for i, tool in enumerate(tools) if i == 0 or tools[i - 1] != tool]


def _number(value: Any, most: float) -> float | None:
    return (
        float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= most else None
    )


def _scalar(value: Any) -> str | None:
    """A parameter value worth counting (a short text, a number, a flag) as JSON text."""
    if isinstance(value, str):
        return _json_text(value) if len(value) <= 60 else None
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return repr(value)  # what json.dumps writes for them, without its overhead (this runs for every parameter)
    return None


def _utc(text: Any) -> str | None:
    from ..core.clock import iso, parse_time

    if not isinstance(text, str):
        return None
    if text.endswith("Z") and len(text) == 20:
        return text
    try:
        return iso(parse_time(text))
    except Exception:
        return None


def task_of(record: dict[str, Any]) -> Task:
    """A logged record as the catalog counts it; a line mem did not write may
    hold anything: what cannot be a task raises, and the line is left out."""
    context = str(record.get("context") or "")
    steps = []
    for step in record["steps"]:
        given = step.get("error")
        error = given if isinstance(given, str) and given.strip() else None
        ok = int(step["status"] == "completed")
        retries = step.get("retries")
        retries = retries if isinstance(retries, int) and not isinstance(retries, bool) and 0 <= retries <= 10**6 else 0
        # The error of a failed step: one a completed step mentions did not make it fail.
        shape = normalise_error(error) if error and not ok else None
        params = step.get("params") if isinstance(step.get("params"), dict) else {}
        scalars = tuple(
            (str(name)[:100], text) for name, value in params.items() if (text := _scalar(value)) is not None
        )
        steps.append(
            Step(
                str(step["tool"]),
                ok,
                _number(step.get("duration_ms"), 1e12),
                retries,
                shape,
                error[:300] if shape and error else None,
                scalars,
            )
        )
    patterns: list[tuple[str, str]] = []
    query = query_pattern(record["goal"]) if isinstance(record.get("goal"), str) else None
    if steps:
        if query is not None:
            patterns.append(("query_pattern", query))
        plan = plan_of([step.tool for step in steps])
        patterns.append(("plan_pattern", ARROW.join(plan)[:MAX_PATTERN]))
        patterns.extend(
            ("tool_sequence", f"{a}{ARROW}{b}"[:MAX_PATTERN]) for a, b in dict.fromkeys(itertools.pairwise(plan))
        )
        failed = dict.fromkeys(f"{step.tool}: {step.error}"[:MAX_PATTERN] for step in steps if step.error is not None)
        patterns.extend(("error_pattern", error) for error in failed)
    # One task correcting a field to one value is one piece of evidence, however often its record says so.
    corrected: dict[tuple[str, str], str] = {}
    for c in record.get("corrections") or ():
        if isinstance(c, dict) and "field" in c and "corrected" in c:
            corrected[str(c["field"]), json.dumps(c["corrected"], ensure_ascii=False, sort_keys=True)] = json.dumps(
                c.get("original"), ensure_ascii=False, sort_keys=True
            )
    corrections = tuple((field, original, value) for (field, value), original in corrected.items())
    return Task(
        str(record["task_id"]),
        context,
        int(record.get("outcome") == "success"),
        _number(record.get("duration_ms"), 1e12),
        _utc(record.get("started_at")),
        steps,
        tuple(patterns),
        query if steps else None,
        corrections,
    )


def derived(store: Store, work: Callable[[Catalog], T]) -> T:
    """`work(catalog)` on tables brought up to the log first: every read of what the log says goes through here."""

    def read(catalog: Catalog) -> T:
        sync(store, catalog)
        return work(catalog)

    return store.derived(read)


def sync(store: Store, catalog: Catalog) -> None:
    """Bring the catalog's derived tables up to the log: only the lines it gained."""
    path = log_path(store)
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        if catalog.log_mark()[:2] != (0, 0):
            catalog.add_batch(Batch(), 0, 0, 0)
        return
    ino, offset, head = catalog.log_mark()
    try:
        with open(path, "rb") as handle:
            start = handle.read(_HEAD)
            again = ino != stat.st_ino or stat.st_size < offset or start[: len(head)] != head
            if again:
                offset = 0  # replaced, cut or rewritten: read again from the start
            elif stat.st_size == offset:
                return
            handle.seek(offset)
            data = handle.read(stat.st_size - offset)
    except OSError as exc:
        from ..core.errors import BadInput

        raise BadInput(
            f"cannot read the observation log {path}: {exc.strerror or exc}",
            "make it a readable file, or move it away to start a new log",
        ) from None
    end = data.rfind(b"\n") + 1  # whole lines only: an append may be under way
    batch = Batch()
    for line in data[:end].split(b"\n"):
        if not line.strip():
            continue
        try:
            task = task_of(json.loads(line))
        except Exception:
            continue
        batch.add(task)
    # Read again with no whole line (emptied, or cut to a half line): what was kept goes all the same.
    if end or again:
        catalog.add_batch(batch, stat.st_ino, offset, offset + end, start)
