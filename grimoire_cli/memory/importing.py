"""`mem import`: JSON Lines of entries, every line checked before anything
is written, every problem told with its line number; archived entries land
in the archive, as `mem export --archived` gives them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput, ImportRefused
from ..storage.store import Store

if TYPE_CHECKING:
    from .request import Request


def import_lines(
    store: Store, lines: Iterable[str], moment: datetime, *, skip_invalid: bool = False, redact: bool = False
) -> ImportResult:
    """Import JSON Lines entries; all or nothing unless `skip_invalid`
    (`Grimoire.import_lines`)."""
    from ..core.schemas import json_value
    from .request import Request

    result = ImportResult()
    requests: list[tuple[int, Request]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json_value(line)
            if not isinstance(item, dict):
                raise BadInput("a line must be a JSON object")
            request = Request.from_mapping(item)
            if redact:
                result.redacted += _redact(request)
            requests.append((number, request))
        except (ValueError, BadInput) as exc:
            result.rejected.append((number, str(exc) if isinstance(exc, BadInput) else f"not JSON: {exc}"))
    # A line refused already: the rest are still checked, so all problems are told at once, and nothing is written.
    from .adding import add_many

    requests = _links_first(requests)
    # Near duplicates are not looked for: an import reports none (exact ones are still refused).
    written = add_many(
        store,
        [r for _, r in requests],
        moment,
        skip_invalid=skip_invalid,
        check_all=not skip_invalid,
        dry_run=bool(result.rejected) and not skip_invalid,
        near=False,
    )
    result.rejected.extend((requests[rejected.index][0], rejected.message) for rejected in written.rejected)
    result.rejected.sort()
    if result.rejected and not skip_invalid:
        raise ImportRefused(result.rejected)
    result.imported = [e.id for e in written]
    return result


class ImportResult:
    """Ids imported, (line number, message) of each line refused, and how
    many secrets `--redact` replaced."""

    __slots__ = ("imported", "redacted", "rejected")

    def __init__(self) -> None:
        self.imported: list[str] = []
        self.rejected: list[tuple[int, str]] = []
        self.redacted = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "rejected": [{"line": n, "error": m} for n, m in self.rejected],
            "redacted": self.redacted,
        }


def _redact(request: Request) -> int:
    """Replace the secrets of a request's texts; how many there were."""
    from ..guard.scan import redact

    count = 0
    for name in ("content", "summary"):
        value = getattr(request, name)
        if isinstance(value, str):
            value, findings = redact(value)
            setattr(request, name, value)
            count += len(findings)
    return count


def _links_first(requests: list[tuple[int, Request]]) -> list[tuple[int, Request]]:
    """The requests in file order, but each after the entries of the file it
    supersedes or names as related: an export is in order of creation, in
    which a skewed clock may put a successor first."""
    index = {request.id: i for i, (_, request) in enumerate(requests) if request.id}

    def needs(i: int) -> list[int]:
        request = requests[i][1]
        return [
            index[other] for other in [request.supersedes, *request.related] if other in index and index[other] != i
        ]

    order: list[int] = []
    seen: set[int] = set()
    for start in range(len(requests)):
        if start in seen:
            continue
        seen.add(start)
        stack = [(start, iter(needs(start)))]
        while stack:  # depth first, without recursion: a chain may be thousands long
            node, rest = stack[-1]
            for other in rest:
                if other not in seen:  # one seen already is placed, or on the stack (a cycle: its link is refused)
                    seen.add(other)
                    stack.append((other, iter(needs(other))))
                    break
            else:
                stack.pop()
                order.append(node)
    return [requests[i] for i in order]
