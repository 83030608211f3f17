"""The data each page of `mem serve` shows, read through the `Grimoire`
facade. A page's JSON URL returns exactly this: its members are the shapes
`mem … --json` prints (an entry as `mem show --json`, hits as `mem query
--json`, the review as `mem review --json`), so the two never disagree.

Writes (`--write`) are the facade's own methods, as the CLI calls them:
the same checks, guard and lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.errors import BadInput
from ...core.model import ID_RE
from ...git import gitops

if TYPE_CHECKING:
    from ...api import Grimoire

EXPIRING_DAYS = 7  # the overview's "expires soon"
CHANGES = 10  # latest commits the overview lists
DECAY_DAYS = 60  # how far the tiers page draws importance decay
DECAY_IMPORTANCES = (10, 8, 5)
# Entries the archive and review pages draw at a time: once `mem check` has
# archived what expired, a 10k grimoire's archive holds thousands, and
# drawing them all took a tenth of a second a request (their JSON URLs keep them all).
PAGE = 100
NEAR_SHOWN = 5  # near duplicates the review page names per entry: generated text had hundreds


def checked_id(entry_id: str) -> str:
    """An entry id from a URL: only the id's own form, so no URL names a path."""
    if not ID_RE.match(entry_id):
        raise BadInput(f"{entry_id!r} is not a memory id", "ids look like MEM-20261122-001")
    return entry_id


def overview(grimoire: Grimoire) -> dict[str, Any]:
    """Counts per scope, category, state and tier; what expires within a
    week; due tasks; the latest commits of the grimoire files."""
    moment = grimoire.now()
    config = grimoire.config
    expiring = [e.view(moment) for e in grimoire.lifecycle.expiring(EXPIRING_DAYS)]
    due = [e.view(moment) for e in grimoire.tasks.due()] if config.names_of_kind("task") else []
    return {
        "stats": grimoire.stats().to_dict(),
        "scopes": [scope.to_dict() for scope in grimoire.scopes()],
        "expiring": sorted(expiring, key=lambda view: view.get("expires_at") or ""),
        "due": due,
        "changes": gitops.history(config.root, [config.relative(config.storage_dir)], CHANGES),
    }


def search(grimoire: Grimoire, text: str, filters: dict[str, Any], *, explain: bool = False) -> list[dict[str, Any]]:
    """The hits of `mem query TEXT --json` (with `explain`, `--explain`'s
    parts); `filters` are `query`'s options, `scope` ranks across scopes."""
    if not text.strip():
        return []
    options = {name: value for name, value in filters.items() if value not in (None, "", [])}
    scopes = options.pop("scope", None)
    hits = (
        grimoire.query_scopes(text, [s.strip() for s in scopes.split(",") if s.strip()], **options)
        if scopes
        else grimoire.query(text, **options)
    )
    moment = grimoire.now()
    return [hit.to_dict(explain, moment) for hit in hits]


def entry(grimoire: Grimoire, entry_id: str) -> dict[str, Any]:
    """One entry as `mem show --json`, its supersede chain oldest first (`mem
    show --chain --json`), the entries it names as related, and the commits
    that touched its file."""
    from ...facade.views import shown

    found = grimoire.show(checked_id(entry_id))
    assert not isinstance(found, list)
    moment = grimoire.now()
    chain = grimoire.show(entry_id, chain=True)
    assert isinstance(chain, list)
    related = grimoire.show_many([str(i) for i in found.data.get("related_memories") or []])
    config = grimoire.config
    where = [config.relative(config.root / found.file)] if found.file else []
    return {
        "entry": shown(grimoire, found),
        "chain": [e.view(moment) for e in chain],
        "related": [e.view(moment) for e in related],
        "history": gitops.history(config.root, where) if where else [],
    }


def archive(grimoire: Grimoire) -> list[dict[str, Any]]:
    """The archive, newest first, as `mem list --archived --json` (each with its `archive_reason`)."""
    moment = grimoire.now()
    return [e.view(moment) for e in grimoire.list(archived=True)]


def archive_page(grimoire: Grimoire, page: str | None) -> dict[str, Any]:
    """Page `page` (from 1; None: the first) of the archive, newest first:
    its entries as `archive` shows them, how many there are in all and pages."""
    number = _page_number(page)
    entries, total = grimoire.list_page(number, PAGE, archived=True)
    moment = grimoire.now()
    return {
        "entries": [e.view(moment) for e in entries],
        "total": total,
        "page": number,
        "pages": max(1, -(-total // PAGE)),
    }


def _page_number(page: str | None) -> int:
    if page is None or page == "":
        return 1
    if not page.isdigit() or int(page) < 1:
        raise BadInput(f"page {page!r} is not a page number", "pages are numbered from 1")
    return int(page)


def review(grimoire: Grimoire) -> list[dict[str, Any]]:
    """The review queue, as `mem review --json`."""
    return grimoire.review().to_list()


def review_page(grimoire: Grimoire, page: str | None) -> dict[str, Any]:
    """Page `page` (from 1; None: the first) of the review queue, as
    `archive_page` pages the archive: a queue of thousands of near-duplicate
    pairs drew a page of megabytes."""
    number = _page_number(page)
    shown, total = grimoire.lifecycle.review_page((number - 1) * PAGE, number * PAGE)
    for entry in shown:  # the first few of an entry's pairs, and how many more (its JSON has them all)
        near = entry["review"]["near_duplicates"]
        entry["review"]["near_duplicates"], entry["review"]["near_more"] = near[:NEAR_SHOWN], len(near[NEAR_SHOWN:])
    return {
        "entries": shown,
        "total": total,
        "page": number,
        "pages": max(1, -(-total // PAGE)),
    }


def tiers(grimoire: Grimoire) -> dict[str, Any]:
    """The hot / long-term split now (`mem age --dry-run --json`: nothing
    recorded), and how a stored importance decays with age."""
    decay = grimoire.config.settings.decay
    curves = {
        str(importance): [decay.of(importance, day * 86400) for day in range(DECAY_DAYS + 1)]
        for importance in DECAY_IMPORTANCES
    }
    return {
        "age": grimoire.lifecycle.age(dry_run=True).to_dict(),
        "decay": {"every_days": decay.every_days, "floor": decay.floor, "days": DECAY_DAYS, "curves": curves},
    }


def learning(grimoire: Grimoire) -> dict[str, Any]:
    """Per-tool runs, success rate and durations (`mem tools --json`), the
    same per day, the task patterns (`mem patterns --json`) and the insights
    with their evidence (`mem insights --json`)."""
    has_insights = bool(grimoire.config.names_of_kind("insight"))
    return {
        "tools": [memory.to_dict() for memory in grimoire.learning.tools()],
        "days": grimoire.learning.tool_days(),
        "patterns": [pattern.to_dict() for pattern in grimoire.learning.patterns()],
        "insights": [e.to_dict() for e in grimoire.learning.insights()] if has_insights else [],
    }


# -- writes (only with --write) -------------------------------------------------


def write(grimoire: Grimoire, action: str, entry_id: str, form: dict[str, str]) -> dict[str, Any]:
    """One write the entry page offers, through the facade as the CLI makes
    it: `apply` (outcome success or failure), `archive`, `supersede`
    (content), `done` (a task). Returns the written entry as `--json` shows it."""
    checked_id(entry_id)
    moment = grimoire.now()
    if action == "apply":
        outcome = form.get("outcome")
        if outcome not in ("success", "failure"):
            raise BadInput("an outcome is success or failure", "choose one of them")
        return grimoire.apply(entry_id, outcome == "success").view(moment)
    if action == "archive":
        return grimoire.archive([entry_id]).to_dict()
    if action == "supersede":
        return grimoire.supersede(entry_id, form.get("content", "")).written_dict()
    if action == "done":
        return grimoire.tasks.end(entry_id, "done").view(moment)
    raise BadInput(f"unknown action {action!r}", "use apply, archive, supersede or done")
