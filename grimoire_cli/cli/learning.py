"""Commands that learn from executions (docs/learning.md): observe, tools, patterns,
metrics, recommend, recall-all, learn, insights, correct."""

from __future__ import annotations

import json as jsonlib

import typer

from ..core.errors import FOUND_PROBLEMS, BadInput
from ..operations import learning as operations
from . import render
from .app import as_hook, declared, found, open_grimoire, read_file, read_text


@declared(operations.OBSERVE)
def observe(file, claude_hook, skip_invalid, json):
    if claude_hook:
        as_hook("mem observe --claude-hook", lambda: _observe_hook(json))
        return
    grimoire = open_grimoire()
    # JSON allows U+2028 and the like inside a string: a line ends at a newline only.
    lines = [line.removesuffix("\r") for line in read_file(file, "the JSON Lines file").split("\n")]
    result = grimoire.learning.observe(lines, skip_invalid=skip_invalid)
    if json:
        render.print_json(result.to_dict())
    else:
        render.out(
            f"observed {render.count(result.records, 'record', 'records')} ({render.count(result.steps, 'step', 'steps')})"
            + (f", {result.redacted} redacted (secrets or personal data)" if result.redacted else "")
        )
        for number, message in result.rejected:
            render.warn(f"line {number}: {message}")
    if result.rejected:
        raise typer.Exit(FOUND_PROBLEMS)


def _observe_hook(json: bool) -> None:
    from ..learning.observations import from_claude_hook

    try:
        payload = jsonlib.loads(read_text("-"))
    except ValueError as exc:
        raise BadInput(
            f"stdin is not JSON ({exc.args[0]})", "pipe in the JSON Claude Code gives a PostToolUse hook"
        ) from None
    record = from_claude_hook(payload)
    if record is None:
        return  # another event: nothing to record
    result = open_grimoire().learning.observe([jsonlib.dumps(record)])
    if json:
        render.print_json(result.to_dict())


@declared(operations.TOOLS)
def tools(name, context, json):
    memories = open_grimoire().learning.tools(name, context=context)
    if not memories:
        render.note(
            "no executions observed yet (see `mem observe`)"
            if name is None and context is None
            else f"no runs of {name or 'any tool'!r} observed"
            + (f" in {context!r}" if context is not None else "")
            + " (see the tools and contexts with `mem tools`)"
        )
    if json:
        render.print_json([memory.to_dict() for memory in memories])
        found(memories)
        return
    for memory in memories:
        timing = (
            f"mean {memory.mean_ms:.0f} ms, p50 {memory.p50_ms:.0f}, p95 {memory.p95_ms:.0f}"
            if memory.mean_ms is not None
            else "no durations"
        )
        render.out(
            f"{memory.tool}: {render.count(memory.executions, 'run', 'runs')}, {100 * memory.success_rate:.1f}% ok, {timing}, "
            f"{memory.mean_retries:.2f} retries"
        )
        for label, per in memory.contexts.items():
            render.out(
                f"  in {label or '(no context)'}: {render.count(per['executions'], 'run', 'runs')}, {100 * per['success_rate']:.1f}% ok"
            )
        for error in memory.errors:
            render.out(
                f"  error x{error['count']} ({100 * error['share']:.0f}% of failures; {', '.join(error['contexts'])}): {error['error']}"
            )
        for insight in memory.parameters:
            best, worst = insight["best"], insight["worst"]
            render.out(
                f"  param {insight['param']}: best {_shown(best['value'])} ({_rate(best)}), worst {_shown(worst['value'])} ({_rate(worst)})"
            )
        for solution in memory.known_solutions:
            render.out(f"  known solution {solution['id']}: {solution['summary']}")
    found(memories)


def _shown(value: object) -> str:
    """A parameter's value as the log held it: text as is, anything else as JSON."""
    return value if isinstance(value, str) else jsonlib.dumps(value, ensure_ascii=False)


def _rate(value: dict) -> str:
    return f"{100 * value['success_rate']:.1f}% ok over {render.count(value['runs'], 'run', 'runs')}"


@declared(operations.PATTERNS)
def patterns(type, min_usage, context, json):
    listed = open_grimoire().learning.patterns(type, min_usage=min_usage, context=context)
    if json:
        render.print_json([p.to_dict() for p in listed])
        found(listed)
        return
    if not listed:
        render.note(
            "no patterns observed yet (see `mem observe`)"
            if min_usage == 1 and type is None and context is None
            else "no pattern matches"
        )
    for p in listed:
        timing = f", mean {p.mean_ms:.0f} ms" if p.mean_ms is not None else ""
        render.out(f"{p.type:<14} {p.pattern}")
        render.out(
            f"  {render.count(p.usage, 'task', 'tasks')}, {100 * p.success_rate:.1f}% ok (reliability {p.reliability:.2f}){timing}, {p.mean_steps:.1f} steps, "
            f"{p.first_seen or '?'} .. {p.last_seen or '?'}"
        )
    found(listed)


@declared(operations.RECOMMEND)
def recommend(action, context, limit, json):
    result = open_grimoire().learning.recommend(action, context=context, limit=limit)
    if json:
        render.print_json(result.to_dict())
        found(result.tools)
        return
    if result.note:
        render.note(result.note)
    for n, r in enumerate(result.tools, 1):
        where = f" in {r.context}" if r.context is not None else ""
        render.out(
            f"{n}. {r.tool}: {100 * r.success_rate:.1f}% ok over {render.count(r.runs, 'run', 'runs')}{where}; {r.reason}"
        )
    found(result.tools)


@declared(operations.METRICS)
def metrics(by, json):
    measured = open_grimoire().learning.metrics(by=by)
    if json:
        render.print_json(measured)
        found(measured["periods"])
        return
    if not measured["periods"]:
        render.note("no tasks with a start time observed yet (see `mem observe`)")
    for period in measured["periods"]:
        render.out(
            f"{period['period']:<10} {render.count(period['tasks'], 'task', 'tasks')}, "
            f"{_percent(period['success_rate'])} ok, {_percent(period['reuse_rate'])} reused a plan, "
            f"{_percent(period['error_rate'])} of {period['steps']} steps failed"
        )
    if measured["error_reduction"] is not None:
        render.out(
            f"error rate {_percent(measured['error_rate_first'])} -> {_percent(measured['error_rate_last'])}: "
            f"{_percent(measured['error_reduction'])} reduction"
        )
    found(measured["periods"])


def _percent(share: float) -> str:
    return f"{100 * share:.1f}%"


@declared(operations.RECALL_ALL)
def recall_all(query, type_list, context, json):
    chosen = [t.strip() for t in type_list.split(",") if t.strip()] if type_list is not None else None
    recalled = open_grimoire().learning.recall_all(query, types=chosen, context=context)
    if json:
        render.print_json(recalled)
    elif not any(recalled.values()):
        render.note(
            f'nothing recalled about "{render.shortened(query)}" (patterns, tools, insights and preferences come from `mem observe` and `mem learn`)'
        )
    else:
        for kind, items in ((kind, items) for kind, items in recalled.items() if items):
            render.out(f"## {kind} ({len(items)})")
            for item in items:
                if kind == "patterns":
                    render.out(
                        f"- {item['type']}: {item['pattern']} ({100 * item['success_rate']:.1f}% ok, {render.count(item['usage'], 'task', 'tasks')})"
                    )
                elif kind == "tools":
                    render.out(
                        f"- {item['tool']}: {render.count(item['executions'], 'run', 'runs')}, {100 * item['success_rate']:.1f}% ok"
                    )
                else:
                    render.out(f"- {item['id']}: {item['summary']}")
    found(any(recalled.values()))


@declared(operations.LEARN)
def learn(category, dry_run, json):
    result = open_grimoire().learning.learn(category=category, dry_run=dry_run)
    if json:
        render.print_json(result.to_dict())
        return
    would = "would " if dry_run else ""
    replaced = {new: old for old, new in result.superseded.items()}
    for entry in result.added:
        how = f"supersedes {replaced[entry.id]}" if entry.id in replaced else "new"
        render.out(
            f"{would}write {entry.id} ({entry.data['insight_type']}, {how}, confidence {entry.confidence:g}): {entry.summary}"
        )
    for entry_id in result.archived:
        render.out(f"{would}archive {entry_id} (ineffective: its evidence fell below the rule)")
    new = len(result.added) - len(result.superseded)
    render.out(
        f"learn: {new} new, {len(result.superseded)} superseded, {len(result.archived)} archived, {result.unchanged} unchanged"
        + (" (dry run: nothing written)" if dry_run else "")
        + (f"; commit {result.commit[:12]}" if result.commit else "")
    )
    for line in result.notes:
        render.note(line)


@declared(operations.INSIGHTS)
def insights(type, category, json):
    grimoire = open_grimoire()
    listed = grimoire.learning.insights(type=type, category=category)
    if json:
        render.print_json([e.to_dict() for e in listed])
    else:
        others = len(grimoire.learning.insights()) if not listed and (type or category) else 0
        if others:  # "yet" would be wrong: the filters left out the ones there are
            which = (f" of type {type}" if type else "") + (f" in {category}" if category else "")
            render.note(
                f"no insights{which}; {others} other{'' if others == 1 else 's'} (`mem insights` lists every one)"
            )
        elif not listed:
            render.note("no insights yet (see `mem learn`)")
        from ..learning.insights import applies_text

        for e in listed:
            render.out(
                f"{e.id}  {e.data.get('insight_type', '?'):<13} {e.confidence:.2f}  {applies_text(e.data.get('applies_to'))}"
            )
            render.out(f"  {e.content}")
    found(listed)


@declared(operations.CORRECT)
def correct(field, value, original, context, task_id, json):
    result = open_grimoire().learning.correct(
        field,
        _value(value),
        original=_value(original) if original is not None else None,
        context=context,
        task_id=task_id,
    )
    if json:
        render.print_json(result.to_dict())
        return
    render.out(
        f"recorded a correction of {field}"
        + (f" in {context}" if context else "")
        + (f", {result.redacted} redacted (secrets or personal data)" if result.redacted else "")
    )


def _value(text: str) -> object:
    """A value given on the command line as an agent's log would hold it: 5 is
    the number, "true" the flag, anything that is not JSON (NaN too) the text itself."""
    from ..core.schemas import json_value

    try:
        return json_value(text)
    except ValueError:
        return text
