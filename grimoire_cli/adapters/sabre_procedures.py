"""SABRE's procedure YAML (the SABRE design's section on procedural memory)
as a grimoire's procedure and back: steps of `{name, description,
condition?, action}`, `learned_from`, `success_rate`. Used by `sabre.py`; a step
and `learned_from` are read as `mem procedure add` reads SABRE's YAML (`kinds.procedures.from_sabre`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.model import Entry


def procedure_of(
    entry: Entry, steps: Iterable[dict[str, Any]], description: str | None, persona: str | None
) -> dict[str, Any]:
    """SABRE's procedure mapping: success_rate from the outcomes recorded
    (None before the first), avg_execution_time as remembered (mem times no run)."""
    effect = entry.data.get("effectiveness") or {}
    runs = effect.get("applications") or 0
    metadata = entry.data.get("metadata") or {}
    return {
        "id": entry.id,
        "name": entry.data.get("name"),
        "description": description,
        "category": next(iter(entry.tags), entry.category),
        "persona": persona,
        "steps": [step_out(step) for step in steps],
        "learned_from": [{"episode": other} for other in entry.data.get("related_memories") or []],
        "success_rate": (effect.get("successes") or 0) / runs if runs else None,
        "avg_execution_time": metadata.get("avg_execution_time"),
    }


def step_out(step: dict[str, Any]) -> dict[str, Any]:
    """A grimoire step as SABRE's {name, description, condition?, action}: description None when it has none."""
    out = {"name": step.get("name"), "description": step.get("description")}
    if "condition" in step:
        out["condition"] = step["condition"]
    out["action"] = step.get("run")
    return out
