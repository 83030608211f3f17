"""Context recipes (Protea's tiered retrieval): `mem context --recipe NAME`
fills the sections of `context.recipes.NAME` in order, each with up to its
`limit` entries of its category (a section without one: of every category
the block may show), under a `##` heading, within the budget.

A section's `order` is `recent` (newest first), `importance` (effective
importance, then newest) or `score` (with a query, the query's ranking;
without one, `mem context`'s). Sections draw on what `mem context` may
inject (hot entries only with tiers on), but a section may name a chat
category. With a query, a section holds only the entries that match it
(any of its words, typos corrected, as `mem query` finds them), in the
section's order. A recipe shows exactly its sections, and tasks due now:
they lead the first section of their category, whatever the query or the
tiers say, and appear nowhere else; a recipe without their category shows
them first, under "Due now". What the sections left out of their selection
(past a limit, or past the budget) is counted in the footer, once: a section
over every category counts what no section of its own category counts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..core.errors import BadInput
from ..core.settings import Section
from ..storage.catalog.queries import Filter
from ..storage.store import Store
from .context import (
    DATA_NOTE,
    HEADER,
    ORDER_OF,
    SHORTEST_LINE,
    Context,
    check_budget,
    chosen_tasks,
    due_tasks,
    footer_line,
    injected,
    lines_for,
    loaded,
    safe,
    selection,
    tokens,
)
from .search import expression, filtered_out, ranked


def sections_of(store: Store, name: str) -> tuple[Section, ...]:
    """The recipe's sections, each naming a category this grimoire has."""
    context = store.config.settings.context
    sections = context.named(name)
    if sections is None:
        known = ", ".join(n for n, _ in context.recipes) or "none configured"
        raise BadInput(
            f"unknown recipe {name!r} (recipes: {known})",
            "define it under memory_schema.context.recipes, or `mem init --preset protea`",
        )
    for section in sections:
        if section.category is not None and section.category not in store.config.categories:
            raise BadInput(
                f"recipe {name!r} names the unknown category {section.category!r}",
                f"add the category, or fix context.recipes.{name} (categories: {', '.join(store.config.categories)})",
            )
    return sections


def _pick(
    store: Store, section: Section, base: Filter, text: str | None, match: str | None, used: set[int], due: list[int]
) -> tuple[list[int], int]:
    """Rowids of a section's entries in its order (at most its limit; none an
    earlier section took: `used`), and how many entries it could draw from.
    With a query `text` (its FTS5 expression `match`), only entries that match.
    `due` (the category's tasks due now) come first whether or not they are chosen."""
    if section.category is None:  # every category the block may show (never chat: `injected` leaves it out)
        chosen = base
    else:
        chosen = base.but(categories=[section.category], excluded=())
    if text:  # as `mem query` filters, whatever the section's order: its sections of a category count alike
        threshold, floors = store.config.confidence_filter(None)
        chosen = chosen.but(min_confidence=threshold, floors=floors)
    wanted = section.limit + len(used) + len(due)
    if text and not match:  # a query without a word to look for matches nothing
        rowids, total, among = [], 0, set()
    elif text and section.order == "score":
        found = ranked(
            store,
            text,
            chosen,
            recency_weight=float(store.config.retrieval["recency_weight"]),
            limit=wanted,
            include_archive=False,
            query=match,
        )
        rowids, total, among = [scored.rowid for scored in found], found.total, chosen_tasks(store, chosen, text, due)
    else:
        chosen = chosen.but(match=match) if text else chosen
        order = ORDER_OF[section.order]
        rowids, total = store.reads.ordered_counted(chosen, order, wanted)
        among = chosen_tasks(store, chosen, None, due)
    first = [rowid for rowid in due if rowid not in used]
    return (first + [rowid for rowid in rowids if rowid not in used and rowid not in first])[
        : section.limit
    ], total + len(due) - len(among)


def build_recipe(store: Store, text: str | None, budget: int, moment: datetime, name: str) -> RecipeContext:
    """The block of a recipe's sections for `text` (None: no query)."""
    check_budget(budget)
    sections = sections_of(store, name)
    text = text if text and text.strip() else None
    match = expression(store, text) if text else None  # worked out once (typo correction reads the vocabulary)
    base = injected(store, moment)
    due_of: dict[str, list[int]] = {}
    due_ids = set()
    for rowid, entry in due_tasks(store, moment).items():
        due_of.setdefault(entry.category, []).append(rowid)
        due_ids.add(entry.id)
    # What is due now leads every block, as `mem due` lists it: a recipe without the tasks' category gets them first.
    named = {section.category for section in sections}
    leading = tuple(
        Section(category, len(rows), title="Due now") for category, rows in due_of.items() if category not in named
    )
    sections = leading + sections
    # Two sections may draw on one category: an entry shows once, and what a
    # category left out is counted once, at its last section.
    taken: set[int] = set()
    picked = []
    for index, section in enumerate(sections):
        due = due_of.get(section.category, []) if section.category is not None else []
        if index < len(leading):  # exactly the tasks due now: nothing of the category is left out
            rowids, total = list(due), len(due)
        else:
            rowids, total = _pick(store, section, base, text, match, taken, due)
        taken.update(rowids)
        picked.append((section, rowids, total))
    what = selection(store, text is not None, "of the recipe")
    last = {section.category: index for index, section in enumerate(sections)}
    lines = [HEADER, DATA_NOTE]
    used_tokens = tokens(HEADER) + 1 + tokens(DATA_NOTE) + 1
    # The longest
    footer = max(tokens(footer_of({s.heading: total for s, _, total in picked}, what)), tokens(footer_of({}, what))) + 1
    shown: list[dict[str, Any]] = []
    shown_of: dict[str, int] = {}  # entries shown, by category, whichever section showed them
    for section, rowids, _ in picked:
        heading = f"## {section.heading}"  # as Protea's prompts head them: `## Recent Crashes`
        kept: list[str] = []
        for entry in loaded(store, iter(rowids)):
            room = budget - used_tokens - footer - (0 if kept else tokens(heading) + 1)
            if room < SHORTEST_LINE:
                break
            line = next((c for c in lines_for(entry, moment, entry.id in due_ids) if tokens(c) + 1 <= room), None)
            if line is None or not safe(entry):
                continue
            if not kept:
                lines.append(heading)
                used_tokens += tokens(heading) + 1
            lines.append(line)
            used_tokens += tokens(line) + 1
            kept.append(entry.id)
            shown_of[entry.category] = shown_of.get(entry.category, 0) + 1
        shown.append(
            {
                "heading": section.heading,
                "category": section.category,
                "order": section.order,
                "limit": section.limit,
                "included": kept,
                "left_out": 0,  # counted below, once all sections are filled
            }
        )
    _count_left_out(shown, [total for _, _, total in picked], last, shown_of, len(leading))
    included = [entry_id for section in shown for entry_id in section["included"]]
    left_out = sum(section["left_out"] for section in shown)
    if not included and not left_out:
        empty = RecipeContext("", [], 0, 0, budget, name, shown, what)
        if text:
            threshold, floors = store.config.confidence_filter(None)
            within = base.but(min_confidence=threshold, floors=floors)
            if None not in last:  # no section over every category: the recipe's own (a chat one too)
                within = within.but(categories=[s.category for s in sections], excluded=())
            empty.filtered_out = filtered_out(
                store,
                text,
                within,
                recency_weight=float(store.config.retrieval["recency_weight"]),
                include_archive=False,
            )
        return empty
    if not included:
        lines.remove(DATA_NOTE)  # no memory shown: nothing to read as data
    lines.append(footer_of({s["heading"]: s["left_out"] for s in shown}, what))
    block = "\n".join(lines) + "\n"
    # A budget too small for a line per heading: the count alone (it fits any budget `check_budget` allows)
    if tokens(block) > budget:
        block = "\n".join([*lines[:-1], footer_line(left_out, what)]) + "\n"
    return RecipeContext(block, included, left_out, tokens(block), budget, name, shown, what)


def _count_left_out(
    shown: list[dict[str, Any]], totals: list[int], last: dict[str | None, int], shown_of: dict[str, int], leading: int
) -> None:
    """Each section's `left_out`, every entry counted once: a category's, at
    its last section, what of its `total` no section showed (the first
    `leading` sections, "Due now", hold exactly the due tasks: what they did
    not show); the sections over every category (at the last of them), what
    else of theirs no section showed."""
    for category, index in last.items():
        if category is not None:
            seen = len(shown[index]["included"]) if index < leading else shown_of.get(category, 0)
            shown[index]["left_out"] = max(0, totals[index] - seen)
    if None in last:
        index = last[None]
        counted = sum(section["left_out"] for section in shown)
        shown[index]["left_out"] = max(0, totals[index] - sum(shown_of.values()) - counted)


def footer_of(left: dict[str, int], what: str = "memories of the recipe") -> str:
    """What the sections left out of their selection (`what`), per heading."""
    if not any(left.values()):
        return f"_all {what} shown_"
    parts = ", ".join(f"{count} {heading}" for heading, count in left.items() if count)
    return f"_left out: {parts} (`mem query` finds them)_"


class RecipeContext(Context):
    """A recipe's block: `Context` plus the recipe's name and, per section,
    what it included and left out."""

    __slots__ = ("recipe", "sections")

    def __init__(
        self,
        text: str,
        included: list[str],
        left_out: int,
        tokens: int,
        budget: int,
        recipe: str,
        sections: list[dict[str, Any]],
        what: str = "memories of the recipe",
    ):
        super().__init__(text, included, left_out, tokens, budget, what)
        self.recipe = recipe
        self.sections = sections

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "recipe": self.recipe, "sections": self.sections}
