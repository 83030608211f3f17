"""Commands that keep a grimoire sound: init, validate, archive, check,
review, the git hooks, the merge driver and its fixup."""

from __future__ import annotations

import json
import sys
from functools import partial

import typer

from ..core.errors import DAMAGED, FOUND_PROBLEMS, OK, BadInput
from ..operations import upkeep as operations
from . import render
from .app import (
    Unscoped,
    as_hook,
    command,
    config_option,
    declared,
    hooks_command,
    open_grimoire,
    runtime,
    scope_option,
)


@declared(operations.INIT)
def init(preset, json):
    from ..api import Grimoire

    result = Grimoire.init(".", config_option(), scope=scope_option(), preset=preset, runtime=runtime())
    if json:
        render.print_json(result.to_dict())
        return
    if result.categories_added:
        render.out(f"added categories to the config: {', '.join(result.categories_added)}")
    if result.settings_added:
        render.out(f"added settings to the config: {', '.join(result.settings_added)}")
    for line in result.notes:
        render.out(line)
    for path in result.created:
        render.out(f"created {path}")
    for path in result.updated:
        render.out(f"updated {path}")
    if result.existing:  # one line: a preset run on an existing grimoire keeps a dozen files
        render.out(f"kept {render.count(len(result.existing), 'existing file', 'existing files')}")
    if not result.git:
        render.note(
            "note: not a git repository: mem will not commit archives or install hooks here (run `git init` to have them)"
        )


@declared(operations.SCAN)
def scan(file, jsonl):
    from ..guard.scanning import scan_input
    from .app import read_file, read_text

    verdicts = scan_input(read_text(None) if file is None else read_file(file, "the input"), jsonl)
    sys.stdout.write("".join(json.dumps(verdict.to_dict(), ensure_ascii=False) + "\n" for verdict in verdicts))
    raise typer.Exit(FOUND_PROBLEMS if any(verdict.refused for verdict in verdicts) else OK)


@declared(operations.VALIDATE)
def validate(paths, format, json, quiet):
    if format not in ("text", "json", "github"):
        raise BadInput(f"unknown format {format!r}", "use text, json or github")
    if json:
        if format not in ("text", "json"):
            raise BadInput(f"--json and --format {format} ask for two formats", "give one of them")
        format = "json"
    report = open_grimoire(must_exist=not paths).validate(paths or None)
    if format == "json":
        render.print_json(report.to_dict())
    elif format == "github":
        for problem in report.problems:
            message = f"[{problem.rule}] {problem.id + ': ' if problem.id else ''}{problem.message}"
            render.out(f"::error file={problem.file},line={problem.line}::{_gh_escape(message)}")
    else:
        for problem in report.problems:
            render.out(str(problem))
        if not (quiet and report.ok):  # the verdict is the result: on stdout, as check-jsonschema prints its own
            state = "ok" if report.ok else render.count(len(report.problems), "problem", "problems")
            render.out(
                f"{render.count(len(report.files), 'file', 'files')}, {render.count(report.entries, 'entry', 'entries')}: {state}"
            )
    raise typer.Exit(DAMAGED if report.damaged else OK if report.ok else FOUND_PROBLEMS)


@declared(operations.ARCHIVE)
def archive(ids, categories, reason, purge, dry_run, no_commit, json):
    if purge and (ids or categories or reason):
        raise BadInput("--purge takes no ids, --category or --reason", "run mem archive --purge alone")
    grimoire = open_grimoire()
    result = (
        grimoire.purge(dry_run=dry_run, commit=not no_commit)
        if purge
        else grimoire.archive(ids or None, categories=categories, reason=reason, dry_run=dry_run, commit=not no_commit)
    )
    for note in result.notes:
        render.note(note)
    if json:
        render.print_json(result.to_dict())
        return
    moved, verb = (result.purged, "purge") if purge else (result.archived, "archive")
    done = f"would {verb}" if dry_run else f"{verb}d"
    for entry_id in moved or []:
        render.out(f"{done} {entry_id} ({result.reasons[entry_id]})")
    if not moved:
        render.note(f"nothing to {verb}")
    if result.commit:
        render.out(f"committed {result.commit[:12]}")


@declared(operations.CHECK)
def check(strict, no_archive, all_scopes, hook, json):

    def checked() -> tuple:
        grimoire = open_grimoire()
        if hook and not grimoire.config.lifecycle["check_on_session_start"]:
            return grimoire, {}
        options = dict(archive=not no_archive, remember=hook)
        return grimoire, grimoire.check_scopes(**options) if all_scopes else {
            grimoire.config.scope: grimoire.check(**options)
        }

    if hook:  # a session hook never fails the checkout or merge
        found: list = []
        as_hook("mem check", lambda: found.append(checked()))
        if not found:
            return
        grimoire, results = found[0]
    else:
        grimoire, results = checked()
    if not results:
        return
    if json:
        render.print_json(
            {name: result.to_dict() for name, result in results.items()}
            if all_scopes
            else next(iter(results.values())).to_dict()
        )
    else:
        for name, result in results.items():
            # Another scope's lines say whose they are.
            new = result.unreported if hook else set(result.due)
            _print_check(result, new, hook, "mem" if name == grimoire.config.scope else f"mem [{name}]")
    if strict and any(result.due for result in results.values()):
        raise typer.Exit(FOUND_PROBLEMS)


def _print_check(result, new: set[str], hook: bool, who: str) -> None:
    for old, new_id in sorted(result.renamed.items()):  # news every time: said by hooks too
        render.note(f"{who}: local {old} is now {new_id}: a tracked entry pulled in has its id")
    for task in result.tasks:
        if task["id"] in new:
            when = "at session start" if task["trigger"] == "session-start" else f"since {task['due_at']}"
            render.out(f"{who}: task due {when}: {task['id']} {task['task']} (done: `mem task done {task['id']}`)")
    for note in result.notes:
        if not hook or new or result.archived or result.off:
            render.note(f"{who}: {note}")
    if result.archived:
        render.out(
            f"{who}: archived {render.count(len(result.archived), 'expired memory', 'expired memories')}: {', '.join(result.archived)}"
            + (f" (commit {result.commit[:12]})" if result.commit else "")
        )
    for ids, one, many in (
        (result.expiring, "memory expires soon", "memories expire soon"),
        (result.review, "memory to review (`mem review`)", "memories to review (`mem review`)"),
        (result.unarchived, "memory expired: run `mem archive`", "memories expired: run `mem archive`"),
    ):
        if ids and new & set(ids):  # a hook repeats nothing it said last time
            render.out(f"{who}: {render.count(len(ids), one, many)} ({', '.join(ids)})")


@declared(operations.REVIEW)
def review(json):
    grimoire = open_grimoire()
    result = grimoire.review()
    if json:
        render.print_json(result.to_list())
        return
    moment = grimoire.now()
    sections = [
        ("ineffective (archived by the next `mem archive`)", result.ineffective),
        ("low effectiveness", result.low),
        ("expiring soon", result.expiring),
    ]
    for title, entries in sections:
        if entries:
            render.out(f"{title}:")
            for entry in entries:
                render.out("  " + render.entry_line(entry, moment))
    if result.duplicates:
        render.out("near duplicates:")
        for pair in result.duplicates:
            render.out(f"  {pair.a.id} ~ {pair.b.id} ({pair.score:.0f}%, {pair.a.category}): {pair.fix}")
    if not (result.entries()):
        render.note("nothing to review")


def _hooks_call(action: str, json: bool) -> None:
    result = open_grimoire().hooks(action)
    if json:
        render.print_json(result.to_dict())
        return
    for note in result.notes:
        render.note(note)
    for name, state in result.hooks.items():
        render.out(f"{name}: {state}")


@declared(operations.HOOKS_INSTALL, hooks_command)
def hooks_install(json):
    _hooks_call("install", json)


@declared(operations.HOOKS_UNINSTALL, hooks_command)
def hooks_uninstall(json):
    _hooks_call("uninstall", json)


@declared(operations.HOOKS_STATUS, hooks_command)
def hooks_status(json):
    _hooks_call("status", json)


@declared(operations.MERGE_FILE, partial(command, cls=Unscoped))
def merge_file(base, ours, theirs, path):
    from ..git.merge import merge_file as run_merge

    result = run_merge(base, ours, theirs, path, config_option() or runtime().config)
    for old, new in sorted(result.renumbered.items()):
        render.note(f"{path}: renumbered {result.side}' {old} to {new} (the other side's {old} keeps its id)")
    for entry_id in result.conflicts:
        render.warn(
            f"{path}: conflict in {entry_id}: both sides changed it; edit the file, keep one version, then `mem validate`"
        )
    raise typer.Exit(FOUND_PROBLEMS if result.conflicts else OK)


@declared(operations.SETTLE)
def settle(entry_id, keep, json):
    result = open_grimoire().settle(entry_id, keep)
    if json:
        render.print_json(result.to_dict())
        return
    render.note(f"settled {result.file}: {' -> '.join(result.chain)} (each superseded by the next)")
    if result.staged:
        render.note("staged it: `git commit` concludes the merge")


@declared(operations.MERGE_FIXUP)
def merge_fixup(hook, args, all_scopes, json):
    stdin = sys.stdin.read() if hook == "post-rewrite" and not sys.stdin.isatty() else ""
    result = open_grimoire().merge_fixup(hook, args or [], stdin, all_scopes=all_scopes)
    if json:
        render.print_json(result.to_dict())
        return
    for old, new in sorted(result.renumbered.items()):
        render.note(
            f"mem: renumbered {result.side}' {old} to {new} after the {result.operation} (the other side's {old} keeps its id)"
        )
    for entry_id in result.lifecycle:
        render.note(
            f"mem: {entry_id} was archived on one side: it keeps the other side's superseded_by and effectiveness"
        )
    if result.commit:
        render.note(f"mem: committed the renumbering as {result.commit[:12]}")
    elif result.staged:
        render.note("mem: staged the renumbering into this commit")
    for note in result.notes:
        render.warn(note)


def _gh_escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
