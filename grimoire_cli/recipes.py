"""Context recipes (Protea's tiered retrieval): `mem context --recipe NAME`
fills the sections of `context.recipes.NAME` in order, each with up to its
`limit` entries of its category, under a heading, within the budget.

A section's `order` is `recent` (newest first), `importance` (effective
importance, then newest) or `score` (with a query, the query's ranking;
without one, `mem context`'s). With a query, a section holds only the
entries that match it. A recipe shows exactly its sections: due tasks
appear only where a section asks for their category. What the sections
left out (past a limit, or past the budget) is counted in the footer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .context import HEADER, SHORTEST_LINE, Context, check_budget, injected, lines_for, loaded, safe, tokens
from .errors import BadInput
from .search import expression, ranked
from .settings import Section
from .storage.catalog.queries import Filter, Order
from .storage.store import Store

_ORDERS = {"recent": Order.NEWEST, "importance": Order.IMPORTANCE, "score": Order.PRIORITY}


def sections_of(store: Store, name: str) -> tuple[Section, ...]:
    """The recipe's sections, each naming a category this grimoire has."""
    context = store.config.settings.context
    sections = context.named(name)
    if sections is None:
        known = ", ".join(n for n, _ in context.recipes) or "none configured"
        raise BadInput(f"unknown recipe {name!r} (recipes: {known})", "define it under memory_schema.context.recipes, or `mem init --preset protea`")
    for section in sections:
        if section.category not in store.config.categories:
            raise BadInput(f"recipe {name!r} names the unknown category {section.category!r}",
                           f"add the category, or fix context.recipes.{name} (categories: {', '.join(store.config.categories)})")
    return sections


def _pick(store: Store, section: Section, base: Filter, text: str | None) -> tuple[list[int], int]:
    """Rowids of a section's entries in its order (at most its limit), and how many it could hold."""
    chosen = base.but(categories=[section.category])
    if text:
        if section.order == "score":
            threshold, floors = store.config.confidence_filter(None)
            found = ranked(store, text, chosen.but(min_confidence=threshold, floors=floors),
                           recency_weight=float(store.config.retrieval["recency_weight"]), limit=section.limit, include_archive=False)
            return [scored.rowid for scored in found], found.total
        match = expression(store, text)
        if match is None:
            return [], 0
        chosen = chosen.but(match=match)
    order = _ORDERS[section.order]
    rowids = store.ask(lambda catalog, paths: catalog.ordered(paths, chosen, order, section.limit), include_archive=False)
    total = len(rowids) if len(rowids) < section.limit else store.ask(lambda catalog, paths: catalog.count(paths, chosen), include_archive=False)
    return rowids, total


def build_recipe(store: Store, text: str | None, budget: int, moment: datetime, name: str) -> "RecipeContext":
    """The block of a recipe's sections for `text` (None: no query)."""
    check_budget(budget)
    sections = sections_of(store, name)
    text = text if text and text.strip() else None
    base = injected(store, moment)
    picked = [(section, *_pick(store, section, base, text)) for section in sections]
    total = sum(count for _, _, count in picked)
    lines = [HEADER]
    used = tokens(HEADER) + 1
    footer = tokens(footer_of({s.heading: count for s, _, count in picked})) + 1  # the longest it could be
    included: list[str] = []
    shown: list[dict[str, Any]] = []
    for section, rowids, count in picked:
        heading = f"### {section.heading}"
        kept: list[str] = []
        for entry in loaded(store, iter(rowids)):
            room = budget - used - footer - (0 if kept else tokens(heading) + 1)
            if room < SHORTEST_LINE:
                break
            line = next((c for c in lines_for(entry, moment) if tokens(c) + 1 <= room), None)
            if line is None or not safe(entry):
                continue
            if not kept:
                lines.append(heading)
                used += tokens(heading) + 1
            lines.append(line)
            used += tokens(line) + 1
            kept.append(entry.id)
        included.extend(kept)
        shown.append({"heading": section.heading, "category": section.category, "order": section.order, "limit": section.limit,
                      "included": kept, "left_out": count - len(kept)})
    if not total:
        return RecipeContext("", [], 0, 0, budget, name, shown)
    left = {s["heading"]: s["left_out"] for s in shown if s["left_out"]}
    lines.append(footer_of(left))
    block = "\n".join(lines) + "\n"
    return RecipeContext(block, included, total - len(included), tokens(block), budget, name, shown)


def footer_of(left: dict[str, int]) -> str:
    """What the sections left out, per heading."""
    if not any(left.values()):
        return "_all memories of the recipe shown_"
    parts = ", ".join(f"{count} {heading}" for heading, count in left.items() if count)
    return f"_left out: {parts} (`mem query` finds them)_"


class RecipeContext(Context):
    """A recipe's block: `Context` plus the recipe's name and, per section,
    what it included and left out."""

    __slots__ = ("recipe", "sections")

    def __init__(self, text: str, included: list[str], left_out: int, tokens: int, budget: int, recipe: str, sections: list[dict[str, Any]]):
        super().__init__(text, included, left_out, tokens, budget)
        self.recipe = recipe
        self.sections = sections

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "recipe": self.recipe, "sections": self.sections}
