"""SABRE's procedure YAML (the SABRE design's section on procedural memory)
as a grimoire's procedure and back: steps of `{name, description,
condition?, action}`, `learned_from`, `success_rate`. Used by `sabre.py`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput

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


def step_in(step: Any, number: int) -> dict[str, str]:
    """A SABRE step ({action, name?, description?, condition?}) as a grimoire step ({name, run, ...})."""
    if not isinstance(step, dict) or not isinstance(step.get("action", step.get("name")), str):
        raise BadInput(f"step {number} is not a step", 'give {"action": "..."} (with name, description, condition)')
    out = {"name": step.get("name") or step["action"].strip().splitlines()[0][:200]}
    if "action" in step:
        out["run"] = step["action"]
    out.update({field: step[field] for field in ("description", "condition") if field in step})
    return out


def step_out(step: dict[str, Any]) -> dict[str, Any]:
    """A grimoire step as SABRE's {name, description, condition?, action}: description None when it has none."""
    out = {"name": step.get("name"), "description": step.get("description")}
    if "condition" in step:
        out["condition"] = step["condition"]
    out["action"] = step.get("run")
    return out


def episodes_of(learned_from: Any) -> list[str]:
    """The episode ids of SABRE's `learned_from` ([{episode: id}] or plain ids)."""
    if learned_from is None:
        return []
    items = learned_from if isinstance(learned_from, list) else [None]
    ids = [item.get("episode") if isinstance(item, dict) else item for item in items]
    if not all(isinstance(i, str) for i in ids):
        raise BadInput(f"cannot read learned_from {learned_from!r}", 'give learned_from=[{"episode": "MEM-..."}]')
    return [str(i) for i in ids]
