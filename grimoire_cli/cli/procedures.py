"""Commands over procedural memory (docs/agent-personas.md): `mem procedure add|show`,
`mem procedures`. None of them executes a step."""

from __future__ import annotations

from ..operations import kinds as operations
from . import render
from .app import PARAM_NAME, declared, found, open_grimoire, pairs, procedure_command, read_file


@declared(operations.PROCEDURE_ADD, procedure_command)
def procedure_add(file, category, json):
    text, where = read_file(file, "the runbook"), "<stdin>" if file == "-" else file
    grimoire = open_grimoire()
    saved = grimoire.procedures.add(text, where=where, category=category)
    render.kept(
        saved,
        json,
        grimoire.now(),
        f"unchanged: {saved.entry.data.get('name')} is already this version ({saved.entry.id}); nothing written",
    )


@declared(operations.PROCEDURE, procedure_command)
def procedure_show(name, param, template, json):
    found = open_grimoire().procedures.get(
        name, pairs(param, "--param", PARAM_NAME, "name=value, like service=api"), template=template
    )
    if json:
        render.print_json(found.to_dict())
        return
    for line in found.lines():
        render.out(line)


@declared(operations.PROCEDURES)
def procedures(category, json):
    grimoire = open_grimoire()
    listed = grimoire.procedures.list(category=category)
    if json:
        moment = grimoire.now()
        render.print_json([entry.view(moment) for entry in listed])
    elif not listed:
        render.note("no active procedures (add one with `mem procedure add FILE`)")
    else:
        for entry in listed:
            effect = entry.data.get("effectiveness") or {}
            rate = (
                f"{effect['successes']}/{effect['applications']} ok"
                if effect.get("applications")
                else "not yet applied"
            )
            steps = len(entry.data.get("steps") or [])
            render.out(
                f"{entry.data.get('name')!s:<24} {steps:>2} step{'s' if steps != 1 else ' '}  {rate:<16} {entry.id}  "
                f"{entry.data.get('description') or ''}".rstrip()
            )
    found(listed)
