"""`validate` over the scopes its files belong to: each file is checked in
its own scope's grimoire (its ids, its links), as the pre-commit hook needs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..memory.validate import Report
    from ..storage.store import Store


def validate_scoped(store: Store, paths: Iterable[str] | None, store_of: Callable[[str], Store]) -> Report:
    """Every rule over `paths` (default: the whole grimoire of `store`); the
    files of scope `name` in `store_of(name)`'s grimoire."""
    from ..memory.validate import Report, expand, validate
    from ..retrieval.scopes import by_scope

    if not paths:
        # A commit a crashed writer left half done is finished first (validate reads files directly).
        store.recover_if_needed()
        return validate(store, None)
    reports = []
    for name, files in by_scope(store.config, expand(paths)).items():
        scoped = store if name is None else store_of(name)
        scoped.recover_if_needed()
        reports.append(validate(scoped, [str(path) for path in files]))
    return reports[0] if len(reports) == 1 else Report.combined(reports)
