"""Commands over tiers, forgetting and consolidation
(docs/tiers-and-consolidation.md): age, consolidate, compact, and the chat
history."""

from __future__ import annotations

from ..operations import kinds as operations
from ..operations import lifecycle
from . import render
from .app import chat_command, declared, found, open_grimoire, read_file, read_text


@declared(lifecycle.AGE)
def age(older_than, most, max_rows, dry_run, json):
    grimoire = open_grimoire()
    result = grimoire.lifecycle.age(older_than=older_than, most=most, max_rows=max_rows, dry_run=dry_run)
    if json:
        render.print_json(result.to_dict())
        return
    tiers = result.tiers
    render.out(
        f"{len(result.hot)} hot, {len(result.long)} long-term (hot: younger than {tiers.hot_hours:g}h or importance "
        f">= {tiers.pin_importance}; at most {tiers.hot_max})"
    )
    if older_than is not None:  # an aging for good: what this run moved
        verb = "would move" if result.dry_run else "moved"
        render.out(f"older than {older_than}: {len(result.moved_to_long or [])} {verb} to long-term for good")
    elif result.moved_to_long is None:
        render.out(
            "first `mem age` here: the split is recorded" if result.recorded else "no earlier `mem age` to compare with"
        )
        return
    else:
        render.out(
            f"since {result.since}: {len(result.moved_to_long)} moved to long-term, "
            f"{len(result.moved_to_hot or [])} back to hot"
        )
    if result.moved_to_long:
        moment = grimoire.now()
        for entry in grimoire.show_many(result.moved_to_long):
            render.out("  " + render.entry_line(entry, moment))


@declared(lifecycle.CONSOLIDATE)
def consolidate(file, with_, session_id, dry_run, json):
    grimoire = open_grimoire()
    text = read_file(file, "the transcript")
    result = grimoire.lifecycle.consolidate(
        text, command=with_, session_id=session_id, dry_run=dry_run, where="stdin" if file == "-" else file
    )
    if json:
        render.print_json(result.to_dict())
        return
    if result.skipped:
        render.out(f"not summarized: {result.skipped} (consolidate.min_messages); nothing saved")
        return
    verb = "would save" if result.dry_run else "saved"
    for entry in result.saved:
        render.out(f"{verb} {entry.id} ({entry.category}, importance {entry.importance}): {entry.summary}")
    for label, of in result.duplicates:
        render.note(f"skipped {label}: the same as {of}")
    for label, why in result.refused:
        render.warn(f"refused {label}: {why}")
    if result.redacted:
        render.note(f"{render.count(result.redacted, 'secret', 'secrets')} redacted from the prompt")
    render.out(result.line + (f"; summary {result.summary.id}" if result.summary is not None else ""))


@declared(lifecycle.COMPACT)
def compact(category, keep, keep_total, with_, no_summary, dry_run, json):
    grimoire = open_grimoire()
    result = grimoire.lifecycle.compact(
        category=category, keep=keep, command=with_, summarize=not no_summary, dry_run=dry_run, keep_total=keep_total
    )
    if json:
        render.print_json(result.to_dict())
        return
    if not result.condensed:
        render.out("nothing to compact")
    for name, entry in result.condensed.items():
        count = len(result.replaced[name])
        render.out(
            f"{'would condense' if dry_run else 'condensed'} {render.count(count, f'{name} memory', f'{name} memories')} into {entry.id}: "
            f"{entry.summary}"
        )
    for note in result.notes:
        render.note(note)
    if result.commit:
        render.out(f"committed {result.commit[:12]}")


@declared(operations.CHAT_ADD, chat_command)
def chat_add(role, text, category, json):
    grimoire = open_grimoire()
    entry = grimoire.chat.add(role, read_text(text), category=category)
    if json:
        render.print_json(entry.view(grimoire.now()))
    else:
        render.out(entry.id)


@declared(operations.CHAT_RECENT, chat_command)
def chat_recent(count, category, json):
    grimoire = open_grimoire()
    messages = grimoire.chat.recent(count, category=category)
    if json:
        moment = grimoire.now()
        render.print_json([m.view(moment) for m in messages])
    else:
        for message in messages:
            render.out(f"[{message.data.get('turn')}] {message.data.get('role')}: {message.content}")
    found(messages)
