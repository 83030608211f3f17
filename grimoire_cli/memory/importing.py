"""`mem import`: JSON Lines of entries, every line checked before anything
is written, every problem told with its line number; archived entries land
in the archive, as `mem export --archived` gives them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput, ImportRefused
from ..storage.store import Store

if TYPE_CHECKING:
    from ..core.config import Config
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
    with categories_added(store, new_categories(store.config, [r for _, r in requests])):
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
            raise ImportRefused(result.rejected)  # within: the categories added are taken out again
    result.imported = [e.id for e in written]
    return result


def new_categories(config: Config, requests: list[Request]) -> dict[str, str]:
    """{name: kind} of the well-named categories the requests name that the
    config lacks, when it takes new ones (memory_schema.new_categories, SABRE's
    free-form categories): what `mem export` gave of a category added on
    first use. Kind procedure for an entry with steps (as remember_procedure
    adds one), else a plain category (as remember_fact does)."""
    from ..core.model import CATEGORY_RE

    if config.settings.new_categories is None:
        return {}
    found: dict[str, str] = {}
    for request in requests:
        name = request.category
        if isinstance(name, str) and CATEGORY_RE.match(name) and name not in config.categories:
            steps = "steps" in (request.fields or {})
            found[name] = "procedure" if steps or found.get(name) == "procedure" else "note"
    return found


@contextmanager
def categories_added(store: Store, names: dict[str, str]) -> Iterator[None]:
    """Within: the categories `names` in the config file, as on first use, and in
    the config in use (changed in place: the Grimoire, its store and namespaces
    share it). An import that fails within takes them out again: nothing half-written."""
    if not names:
        yield
        return
    from ..core.config import load_config
    from ..kinds.presets import add_category
    from ..storage import journal

    config, path = store.config, store.config.path
    if path is None:
        raise BadInput("no config file to add the imported categories to", "run `mem init` first")
    before = {slot: getattr(config, slot) for slot in type(config).__slots__}
    with store.lock():  # one writer of the config at a time
        text = path.read_bytes()
        for name, kind in names.items():
            now = load_config(config.root, path, config.scope)  # the files taken, the categories added so far too
            every = [now.base_categories, *now.scope_categories.values()]
            taken = {spec.storage_file for categories in every for spec in categories.values()}
            add_category(path, name, kind, config.settings.new_categories == "tracked", taken)
        written = path.read_bytes()
    _adopt(store, load_config(config.root, path, config.scope))
    try:
        yield
    except BaseException:
        with store.lock():
            if path.read_bytes() == written:  # unless the config changed since
                journal.write_atomic(path, text)
        for slot, value in before.items():
            setattr(config, slot, value)
        store.forget_files()
        raise


def _adopt(store: Store, fresh: Config) -> None:
    """The store's config made `fresh`'s, in place."""
    for slot in type(fresh).__slots__:
        setattr(store.config, slot, getattr(fresh, slot))
    store.forget_files()


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
