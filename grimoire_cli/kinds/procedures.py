"""Procedural memory (SABRE): runbooks kept in a category of kind
`procedure`, written as a YAML (or JSON) document a person can edit:

    name: deploy-service             # a slug; one active procedure per name
    description: Ship one service to production
    params: [service, version]       # optional; else every {slug} in a step
    steps:
      - name: Run the tests
        run: make test
      - name: Build the image
        run: docker build -t {service}:{version} .
        condition: the tests passed

A new document with a name already held supersedes the old version (the
history stays); the same document again writes nothing. `show` renders a
numbered checklist with the params substituted, in the description too
(`--template`: as written, the params left to fill marked). **mem never executes a
step**: a runbook from git is data, not code. Whoever follows it reports
how it went with `mem apply ID --success|--failure`, which is the
procedure's success rate.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from ..core.errors import BadInput, Damaged
from ..core.model import Entry

FIELDS = ("name", "description", "params", "steps", "tags")
STEP_FIELDS = ("name", "description", "run", "condition")
SABRE_FIELDS = ("category", "persona", "learned_from", "success_rate", "avg_execution_time")
_PARAM = re.compile(r"\{([a-z0-9][a-z0-9_-]{0,79})\}")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}\Z")
_CONTENT_STEPS = 600  # characters of step names in the content line


def parse(text: str, where: str) -> dict[str, Any]:
    """A procedure document (YAML or JSON), its shape checked; the kind's
    schema checks the rest when it is added."""
    from ..storage.yamlio import parse_document

    try:
        data, _ = parse_document(text, where)
    except Damaged as exc:
        raise BadInput(f"{where}:{exc.line}: {exc.problem}", "fix the procedure file (YAML or JSON)") from None
    example = "a mapping with name and steps: a list of {name, run?, description?, condition?}"
    if not isinstance(data, dict):
        raise BadInput(
            f"{where}: a procedure is {example}, not {type(data).__name__ if data is not None else 'empty'}",
            "see `mem procedure add --help`",
        )
    unknown = sorted(str(k) for k in data if k not in FIELDS)
    if unknown:
        raise BadInput(
            f"{where}: unknown field {', '.join(unknown)} in a procedure", f"a procedure has {', '.join(FIELDS)}"
        )
    if not isinstance(data.get("name"), str) or not _SLUG.match(data["name"]):
        raise BadInput(
            f"{where}: a procedure needs a name that is a lowercase slug, like deploy-service",
            "add name: deploy-service",
        )
    if "description" in data and (not isinstance(data["description"], str) or not data["description"].strip()):
        raise BadInput(
            f"{where}: description is not text", "give one line saying what the procedure is for, or leave it out"
        )
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise BadInput(f"{where}: tags is not a list of words", "write tags: [deploy, api]")
    if not isinstance(data.get("params", []), list):
        raise BadInput(f"{where}: params is not a list of names", "write params: [service, version], or leave it out")
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        raise BadInput(f"{where}: steps is not a list of steps", f"give {example}")
    for number, step in enumerate(steps, 1):
        if isinstance(step, str):
            steps[number - 1] = step = {"name": step}  # a bare line is a step's name
        if not isinstance(step, dict) or not isinstance(step.get("name"), str) or not step["name"].strip():
            raise BadInput(f"{where}: step {number} is not a step with a name", f"give {example}")
        extra = sorted(str(k) for k in step if k not in STEP_FIELDS)
        if extra:
            raise BadInput(
                f"{where}: step {number} has unknown field {', '.join(extra)}", f"a step has {', '.join(STEP_FIELDS)}"
            )
        for field in STEP_FIELDS:
            if field in step and not isinstance(step[field], str):
                raise BadInput(f"{where}: step {number}'s {field} is not text", "quote it")
    return data


def from_sabre(document: Any, where: str, scope: str | None) -> tuple[Any, dict[str, Any]]:
    """SABRE's procedure YAML (its `procedural/{name}.yaml`: steps of {action,
    name?, description?, condition?}, beside a procedure's fields its category,
    persona, learned_from, success_rate, avg_execution_time) as a procedure
    document, and what goes beside it: `category` (SABRE's default `general`
    is the default one), `related` (the episodes it was learned from) and
    `metadata` (avg_execution_time, as given). `success_rate` is not kept: it
    is the outcomes recorded (`mem apply`). Any other document comes back as given."""
    data = document
    if isinstance(document, str):
        from ..storage.yamlio import parse_document

        try:
            data, _ = parse_document(document, where)
        except Damaged:
            return document, {}  # reported by `parse`, with its line
    if not _is_sabres(data):
        return document, {}
    persona = data.get("persona")
    if persona is not None and scope is not None and persona != scope:
        raise BadInput(
            f"{where}: the procedure is for the persona {persona}, and this is the scope {scope}",
            f"add it in the persona's: `mem --scope {persona} procedure add {where}`",
        )
    converted = {k: v for k, v in data.items() if k in FIELDS}
    if isinstance(data.get("steps"), list):
        converted["steps"] = [sabre_step(step, number) for number, step in enumerate(data["steps"], 1)]
    beside: dict[str, Any] = {"related": episodes_of(data.get("learned_from"))}
    if data.get("category") not in (None, "general"):
        beside["category"] = data["category"]
    if data.get("avg_execution_time") is not None:
        beside["metadata"] = {"avg_execution_time": data["avg_execution_time"]}
    return converted, beside


def _is_sabres(data: Any) -> bool:
    """A SABRE procedure: one of its own fields, or a step with an action."""
    if not isinstance(data, dict):
        return False
    steps = data.get("steps")
    steps = steps if isinstance(steps, list) else []
    return any(k in data for k in SABRE_FIELDS) or any(isinstance(s, dict) and "action" in s for s in steps)


def sabre_step(step: Any, number: int) -> dict[str, str]:
    """A SABRE step ({action, name?, description?, condition?}) as a procedure's
    step ({name, run, ...}): its action is what it runs (mem never does), and
    names it by its first line when it has no name."""
    if not isinstance(step, dict) or not isinstance(step.get("action", step.get("name")), str):
        raise BadInput(f"step {number} is not a step", 'give {"action": "..."} (with name, description, condition)')
    out = {"name": step.get("name") or step["action"].strip().splitlines()[0][:200]}
    if "action" in step:
        out["run"] = step["action"]
    out.update({field: step[field] for field in ("description", "condition") if field in step})
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


def fields_of(document: dict[str, Any]) -> dict[str, Any]:
    """The entry fields of a parsed procedure (its tags go to the entry's tags)."""
    fields: dict[str, Any] = {k: document[k] for k in ("name", "description", "params", "steps") if k in document}
    if "params" not in fields and uses(fields["steps"], fields.get("description")):
        fields["params"] = uses(fields["steps"], fields.get("description"))
    return fields


def uses(steps: list[dict[str, Any]], description: str | None = None) -> list[str]:
    """The `{param}` names the description and the steps use, in order of first use."""
    found: dict[str, None] = {}
    texts = [description or ""] + [step.get(field, "") for step in steps for field in STEP_FIELDS]
    for text in texts:
        for match in _PARAM.finditer(text):
            found.setdefault(match[1], None)
    return list(found)


def content_of(fields: dict[str, Any]) -> str:
    """The procedure as a line: `name: description. Steps: 1. ...; 2. ...`."""
    head = (
        f"{fields['name']}: {' '.join(fields['description'].split())}" if fields.get("description") else fields["name"]
    )
    steps = "; ".join(f"{n}. {' '.join(step['name'].split())}" for n, step in enumerate(fields["steps"], 1))
    if len(steps) > _CONTENT_STEPS:
        steps = steps[:_CONTENT_STEPS] + "…"
    return f"{head.rstrip('.')}. Steps: {steps}"


def identity(name: str) -> str:
    """What makes a procedure one: its name (adding supersedes by it, validate
    refuses two active); no dotted key holds a colon, so it never meets one."""
    return f"procedure:{name}"


def same(entry: Entry, fields: dict[str, Any], tags: list[str]) -> bool:
    """Whether an active version already says exactly this."""
    mine = {k: entry.data.get(k) for k in ("name", "description", "params", "steps") if k in entry.data}
    return json.dumps(mine, sort_keys=True) == json.dumps(fields, sort_keys=True) and sorted(entry.tags) == sorted(tags)


class Checklist(NamedTuple):
    """A procedure ready to follow: its entry, its description and steps with
    the params substituted (`recall_procedure`, `mem procedure show`); a
    template's params left to fill are None in `params`."""

    entry: Entry
    steps: list[dict[str, str]]
    params: dict[str, str | None]
    description: str | None = None

    @property
    def unfilled(self) -> list[str]:
        return [name for name, value in self.params.items() if value is None]

    def to_dict(self) -> dict[str, Any]:
        data = self.entry.data
        return {
            "id": self.entry.id,
            "name": data.get("name"),
            "description": self.description,
            "params": self.params,
            "steps": self.steps,
            "effectiveness": data.get("effectiveness"),
        }

    def lines(self) -> list[str]:
        """The numbered checklist as text (mem executes none of it)."""
        data = self.entry.data
        effect = data.get("effectiveness") or {}
        rate = f", {effect['successes']}/{effect['applications']} succeeded" if effect.get("applications") else ""
        out = [f"{data.get('name')} ({self.entry.id}{rate})"]
        if self.description:
            out.append(self.description)
        if self.unfilled:
            out.append(
                "template: fill "
                + ", ".join("{" + name + "}" for name in self.unfilled)
                + " with "
                + " ".join(f"--param {name}=VALUE" for name in self.unfilled)
            )
        for number, step in enumerate(self.steps, 1):
            out.append(f"{number}. [ ] {step['name']}")
            if step.get("condition"):
                out.append(f"   only if: {step['condition']}")
            if step.get("description"):
                out.extend(f"   {line}" for line in step["description"].splitlines())
            if step.get("run"):
                out.append(f"   run: {step['run']}")
        return out


def checklist(entry: Entry, params: dict[str, str], template: bool = False) -> Checklist:
    """The description and steps with `{param}` replaced; BadInput naming
    every missing param (and any the procedure does not take). A `template`
    fills the params given and leaves the others as written, `{name}`."""
    steps, description = entry.data.get("steps") or [], entry.data.get("description")
    declared = list(entry.data.get("params") or uses(steps, description))
    unknown = sorted(set(params) - set(declared))
    if unknown:
        takes = ", ".join(declared) or "no params"
        raise BadInput(
            f"{entry.data.get('name')} does not take {', '.join(unknown)} (it takes {takes})",
            "drop those --param options",
        )
    needed = [name for name in uses(steps, description) if name in declared]
    missing = [name for name in needed if name not in params]
    if missing and not template:
        raise BadInput(
            f"missing param{'s' if len(missing) > 1 else ''} {', '.join('{' + m + '}' for m in missing)} for {entry.data.get('name')}",
            "give " + " ".join(f"--param {m}=VALUE" for m in missing) + ", or see it as written with --template",
        )

    def fill(text: str) -> str:
        return _PARAM.sub(lambda m: params[m[1]] if m[1] in params else m[0], text)

    filled = [{field: fill(step[field]) for field in STEP_FIELDS if field in step} for step in steps]
    shown = {name: params.get(name) for name in declared if name in params or name in missing}
    return Checklist(entry, filled, shown, fill(description) if isinstance(description, str) else None)


class Saved(NamedTuple):
    """What adding a procedure did: the active version, and whether it was
    written (False: that version was already active)."""

    entry: Entry
    written: bool

    def to_dict(self, moment: Any) -> dict[str, Any]:
        return {**self.entry.view(moment), "written": self.written}
