"""The `mem` command line: parse arguments, call the library, render.

No business logic lives here. Each command builds its result through
`Grimoire` and renders it either as human text or as `--json`; domain
errors are translated to one `error:` line and their exit code in `run()`.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from ..errors import BadInput, GrimoireError
from . import render

_APP_SETTINGS = dict(
    name="mem",
    help="Long-term memory for a project and its AI agents, in git-tracked YAML.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help and errors: rich formatting costs ~100 ms of imports on
    # every command (measured with -X importtime), a third of a `mem query`.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app = typer.Typer(**_APP_SETTINGS)
hooks_app = typer.Typer(help="Install, remove or inspect mem's git hooks.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(hooks_app, name="hooks")

_state: dict[str, Optional[str]] = {"config": None}

JsonOpt = typer.Option(False, "--json", help="Print machine-readable JSON.")


@app.callback()
def _main(
    config: Optional[str] = typer.Option(None, "--config", metavar="PATH", help="Config file (default: .loa.config.yaml found upward; or MEM_CONFIG)."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    if version:
        from .. import __version__

        render.out(f"mem {__version__}")
        raise typer.Exit(0)
    _state["config"] = config


def _grimoire():
    from ..api import Grimoire

    grimoire = Grimoire.open(".", _state["config"])
    _opened.append(grimoire)
    return grimoire


_opened: list = []  # grimoires this invocation used, for the damaged-file warning


def _warn_skipped() -> None:
    seen = set()
    for grimoire in _opened:
        for damaged in grimoire.store.skipped:
            if damaged.message not in seen:
                seen.add(damaged.message)
                render.warn(f"skipped a damaged file (run `mem validate`): {damaged.message}")
    _opened.clear()


def _read_text(text: Optional[str]) -> str:
    if text is None or text == "-":
        if text is None and sys.stdin.isatty():
            raise BadInput("no text given", "pass the memory as an argument, or '-' to read it from stdin")
        raw = sys.stdin.buffer.read()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BadInput("stdin is not UTF-8 text", "re-encode it as UTF-8") from None
    return text


def _add_options(**kw):
    return {k: v for k, v in kw.items() if v is not None}


@app.command()
def init(json: bool = JsonOpt) -> None:
    """Create the config, grimoire folders, category files and merge rules (idempotent)."""
    from ..api import Grimoire

    result = Grimoire.init(".", _state["config"])
    if json:
        render.print_json(result.to_dict())
        return
    for path in result.created:
        render.out(f"created {path}")
    for path in result.existing:
        render.out(f"kept    {path}")


def _report_written(entry, json: bool) -> None:
    for note in entry.notes:
        (render.warn if note.startswith("near duplicate") else render.note)(note)
    if json:
        render.print_json(render.entry_json(entry))
    else:
        render.out(entry.id)


@app.command()
def add(
    text: Optional[str] = typer.Argument(None, metavar="[TEXT|-]", help="The memory; '-' (or nothing, when piped) reads stdin."),
    category: Optional[str] = typer.Option(None, "-c", "--category", help="Category (inferred from the wording when omitted)."),
    summary: Optional[str] = typer.Option(None, "-s", "--summary", help="One-line summary (derived when omitted)."),
    confidence: Optional[float] = typer.Option(None, "--confidence", help="0.0-1.0; defaults to the category's floor."),
    tag: Optional[List[str]] = typer.Option(None, "-t", "--tag", help="Tag (repeatable)."),
    ttl: Optional[str] = typer.Option(None, "--ttl", help="'permanent' or days like '30d'."),
    supersedes: Optional[str] = typer.Option(None, "--supersedes", metavar="ID", help="Id this memory replaces."),
    key: Optional[str] = typer.Option(None, "--key", help="Dotted key; replaces the active entry with that key."),
    importance: Optional[int] = typer.Option(None, "--importance", help="1-10 (default 5)."),
    related: Optional[List[str]] = typer.Option(None, "--related", metavar="ID", help="Related memory id (repeatable)."),
    file: Optional[str] = typer.Option(None, "--file", metavar="PATH", help="Source file this memory is about."),
    lines: Optional[str] = typer.Option(None, "--lines", metavar="A-B", help="Line range in --file."),
    session_id: Optional[str] = typer.Option(None, "--session-id", help="Session id (default MEM_SESSION_ID)."),
    agent: Optional[str] = typer.Option(None, "--agent", help="Agent name (default MEM_AGENT)."),
    phase: Optional[str] = typer.Option(None, "--phase", help="Phase (default MEM_PHASE)."),
    json: bool = JsonOpt,
) -> None:
    """Remember something; prints the new id."""
    content = _read_text(text)
    entry = _grimoire().add(
        content,
        category,
        **_add_options(
            summary=summary, confidence=confidence, tags=tag or None, ttl=ttl, supersedes=supersedes, key=key,
            importance=importance, related=related or None, file_path=file, lines=lines,
            session_id=session_id, agent=agent, phase=phase,
        ),
    )
    _report_written(entry, json)


@app.command()
def supersede(
    entry_id: str = typer.Argument(..., metavar="ID", help="The memory to replace."),
    text: Optional[str] = typer.Argument(None, metavar="[TEXT|-]", help="The new memory."),
    summary: Optional[str] = typer.Option(None, "-s", "--summary"),
    confidence: Optional[float] = typer.Option(None, "--confidence"),
    tag: Optional[List[str]] = typer.Option(None, "-t", "--tag"),
    ttl: Optional[str] = typer.Option(None, "--ttl"),
    importance: Optional[int] = typer.Option(None, "--importance"),
    json: bool = JsonOpt,
) -> None:
    """Replace a memory with a new one (same category); the old one stays for audit."""
    content = _read_text(text)
    entry = _grimoire().supersede(
        entry_id, content, **_add_options(summary=summary, confidence=confidence, tags=tag or None, ttl=ttl, importance=importance)
    )
    _report_written(entry, json)


@app.command()
def show(
    entry_id: str = typer.Argument(..., metavar="ID"),
    chain: bool = typer.Option(False, "--chain", help="The whole supersede chain, oldest first."),
    json: bool = JsonOpt,
) -> None:
    """Show one memory (archive included)."""
    grimoire = _grimoire()
    result = grimoire.show(entry_id, chain=chain)
    moment = grimoire.now()
    if json:
        render.print_json([render.entry_json(e) for e in result] if chain else render.entry_json(result))
    elif chain:
        render.out("\n".join(render.entry_line(e, moment) for e in result))
    else:
        render.out(render.entry_text(result, moment))


@app.command("list")
def list_(
    category: Optional[List[str]] = typer.Option(None, "-c", "--category"),
    tag: Optional[List[str]] = typer.Option(None, "-t", "--tag"),
    archived: bool = typer.Option(False, "--archived", help="List the archive instead."),
    expired: bool = typer.Option(False, "--expired", help="Include expired entries."),
    superseded: bool = typer.Option(False, "--superseded", help="Include superseded entries."),
    recent: Optional[int] = typer.Option(None, "--recent", metavar="N", help="Only the N newest."),
    json: bool = JsonOpt,
) -> None:
    """List memories, newest first (active only unless asked)."""
    grimoire = _grimoire()
    entries = grimoire.list(category, tag, archived=archived, expired=expired, superseded=superseded, recent=recent)
    if json:
        render.print_json([render.entry_json(e) for e in entries])
        return
    moment = grimoire.now()
    for entry in entries:
        render.out(render.entry_line(entry, moment))


@app.command()
def get(key: str = typer.Argument(...), json: bool = JsonOpt) -> None:
    """Print the content of the active memory with this key (exit 1 when none)."""
    entry = _grimoire().get(key)
    if json:
        render.print_json(render.entry_json(entry))
    else:
        sys.stdout.write(entry.content if entry.content.endswith("\n") else entry.content + "\n")


@app.command()
def apply(
    entry_id: str = typer.Argument(..., metavar="ID"),
    success: bool = typer.Option(False, "--success", help="Applying it helped."),
    failure: bool = typer.Option(False, "--failure", help="Applying it did not help."),
    json: bool = JsonOpt,
) -> None:
    """Record one application of a memory and its outcome."""
    if success == failure:
        raise BadInput("give exactly one of --success or --failure")
    entry = _grimoire().apply(entry_id, success)
    if json:
        render.print_json(render.entry_json(entry))
    else:
        eff = entry.data["effectiveness"]
        render.out(f"{entry.id}: {eff['successes']}/{eff['applications']} successes, score {eff['score']}, tier {entry.tier}")


@app.command()
def validate(
    paths: Optional[List[str]] = typer.Argument(None, metavar="[PATH]...", help="Files or folders (default: the whole grimoire)."),
    format: str = typer.Option("text", "--format", help="text, json or github."),
) -> None:
    """Check grimoire files: schema, ids, links, categories, floors, secrets."""
    if format not in ("text", "json", "github"):
        raise BadInput(f"unknown format {format!r}", "use text, json or github")
    report = _grimoire().validate(paths or None)
    if format == "json":
        render.print_json(report.to_dict())
    elif format == "github":
        for problem in report.problems:
            message = f"[{problem.rule}] {problem.id + ': ' if problem.id else ''}{problem.message}"
            render.out(f"::error file={problem.file},line={problem.line}::{_gh_escape(message)}")
    else:
        for problem in report.problems:
            render.out(str(problem))
        state = "ok" if report.ok else f"{len(report.problems)} problem(s)"
        render.note(f"{len(report.files)} file(s), {report.entries} entries: {state}")
    raise typer.Exit(3 if report.damaged else 0 if report.ok else 1)


@app.command()
def archive(
    ids: Optional[List[str]] = typer.Argument(None, metavar="[ID]...", help="Archive these (default: every expired or ineffective entry)."),
    reason: Optional[str] = typer.Option(None, "--reason", help="expired, superseded, ineffective or manual (with ids)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would move; change nothing."),
    no_commit: bool = typer.Option(False, "--no-commit", help="Move the entries but do not commit."),
    json: bool = JsonOpt,
) -> None:
    """Move expired and ineffective memories to the archive and commit just that change."""
    result = _grimoire().archive(ids or None, reason, dry_run=dry_run, commit=not no_commit)
    for note in result.notes:
        render.note(note)
    if json:
        render.print_json(result.to_dict())
        return
    verb = "would archive" if dry_run else "archived"
    for entry_id in result.archived:
        render.out(f"{verb} {entry_id} ({result.reasons[entry_id]})")
    if not result.archived:
        render.note("nothing to archive")
    if result.commit:
        render.out(f"committed {result.commit[:12]}")


@app.command()
def check(
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when anything is due."),
    hook: bool = typer.Option(False, "--hook", hidden=True, help="Run as a git hook: never fail."),
    json: bool = JsonOpt,
) -> None:
    """Session start: archive expired memories, warn about expiring and weak ones."""
    try:
        grimoire = _grimoire()
        if hook and not grimoire.config.lifecycle["check_on_session_start"]:
            return
        result = grimoire.check()
    except GrimoireError as exc:
        if not hook:
            raise
        render.warn(f"mem check: {exc}")
        return
    if json:
        render.print_json(result.to_dict())
    else:
        for note in result.notes:
            render.note(note)
        if result.archived:
            render.out(f"mem: archived {len(result.archived)} expired memories: {', '.join(result.archived)}" + (f" (commit {result.commit[:12]})" if result.commit else ""))
        if result.expiring:
            render.out(f"mem: {len(result.expiring)} memories expire soon: {', '.join(result.expiring)}")
        if result.review:
            render.out(f"mem: {len(result.review)} memories to review (`mem review`): {', '.join(result.review)}")
        left = result.unarchived
        if left:
            render.out(f"mem: {len(left)} expired memories (`mem archive`): {', '.join(left)}")
    if strict and result.due:
        raise typer.Exit(1)


@app.command()
def review(json: bool = JsonOpt) -> None:
    """List low-tier, ineffective, expiring-soon and near-duplicate memories."""
    grimoire = _grimoire()
    result = grimoire.review()
    if json:
        render.print_json([render.entry_json(e) for e in result.entries()])
        return
    moment = grimoire.now()
    sections = [("ineffective (archived by the next `mem archive`)", result.ineffective), ("low effectiveness", result.low), ("expiring soon", result.expiring)]
    for title, entries in sections:
        if entries:
            render.out(f"{title}:")
            for entry in entries:
                render.out("  " + render.entry_line(entry, moment))
    if result.duplicates:
        render.out("near duplicates (supersede one):")
        for a, b, score in result.duplicates:
            render.out(f"  {a.id} ~ {b.id} ({score:.0f}%)")
    if not (result.entries()):
        render.note("nothing to review")


def _hooks_call(action: str, json: bool) -> None:
    from .. import hooks
    from ..gitops import work_tree

    grimoire = _grimoire()
    root = work_tree(grimoire.config.root)
    if root is None:
        raise BadInput("not a git repository", "run `git init` first")
    if action == "install":
        result = hooks.install(root, grimoire.config.relative(grimoire.config.storage_dir))
    else:
        result = getattr(hooks, action)(root)
    if json:
        render.print_json(result.to_dict())
        return
    for note in result.notes:
        render.note(note)
    for name, state in result.hooks.items():
        render.out(f"{name}: {state}")


@hooks_app.command("install")
def hooks_install(json: bool = JsonOpt) -> None:
    """Install mem's git hooks (session check, pre-commit validate, renumbering after merges) and the merge driver."""
    _hooks_call("install", json)


@hooks_app.command("uninstall")
def hooks_uninstall(json: bool = JsonOpt) -> None:
    """Remove mem's hooks and restore any hook they chained."""
    _hooks_call("uninstall", json)


@hooks_app.command("status")
def hooks_status(json: bool = JsonOpt) -> None:
    """Show which hooks are installed."""
    _hooks_call("status", json)


@app.command("merge-file", hidden=False)
def merge_file(
    base: str = typer.Argument(..., help="%O: the common ancestor's version."),
    ours: str = typer.Argument(..., help="%A: our version; the result is written here."),
    theirs: str = typer.Argument(..., help="%B: their version."),
    path: str = typer.Argument("grimoire file", help="%P: the file's path in the repository."),
) -> None:
    """Git merge driver: merge a grimoire file entry by entry (exit 1 on a conflict)."""
    from ..merge import merge_file as run_merge

    result = run_merge(base, ours, theirs, path)
    for old, new in sorted(result.renumbered.items()):
        render.note(f"{path}: renumbered their {old} to {new} (it collided with ours)")
    for entry_id in result.conflicts:
        render.warn(f"{path}: conflict in {entry_id}: both sides changed it; edit the file, keep one version, then `mem validate`")
    raise typer.Exit(1 if result.conflicts else 0)


@app.command("merge-fixup")
def merge_fixup(
    hook: str = typer.Argument(..., help="The git hook running it: post-merge, post-rewrite, post-commit or pre-commit."),
    args: Optional[List[str]] = typer.Argument(None, help="The hook's own arguments."),
    json: bool = JsonOpt,
) -> None:
    """Run by mem's git hooks: after a merge, rebase or cherry-pick, renumber
    colliding ids in files the merge driver never saw (git took them whole)."""
    import sys

    from ..renumber import fixup

    stdin = sys.stdin.read() if hook == "post-rewrite" and not sys.stdin.isatty() else ""
    result = fixup(_grimoire(), hook, list(args or []), stdin)
    if json:
        render.print_json(result.to_dict())
        return
    for old, new in sorted(result.renumbered.items()):
        render.note(f"mem: renumbered their {old} to {new} after the {result.operation} (it collided with ours)")
    for entry_id in result.lifecycle:
        render.note(f"mem: {entry_id} was archived on one side: it keeps the other side's superseded_by and effectiveness")
    if result.commit:
        render.note(f"mem: committed the renumbering as {result.commit[:12]}")
    elif result.staged:
        render.note("mem: staged the renumbering into this commit")
    for note in result.notes:
        render.warn(note)


@app.command()
def query(
    text: str = typer.Argument(..., help="What to look for."),
    category: Optional[List[str]] = typer.Option(None, "-c", "--category"),
    tag: Optional[List[str]] = typer.Option(None, "-t", "--tag"),
    min_confidence: Optional[float] = typer.Option(None, "--min-confidence", help="Default: retrieval.min_confidence."),
    limit: Optional[int] = typer.Option(None, "-n", "--limit", help="Default: retrieval.max_per_query."),
    explain: bool = typer.Option(False, "--explain", help="Show each score part."),
    include_expired: bool = typer.Option(False, "--include-expired"),
    include_superseded: bool = typer.Option(False, "--include-superseded"),
    archived: bool = typer.Option(False, "--archived", help="Search the archive too."),
    json: bool = JsonOpt,
) -> None:
    """Ranked retrieval: BM25 with stemming and typo tolerance, blended with recency and quality."""
    grimoire = _grimoire()
    hits = grimoire.query(text, limit, category, tag, min_confidence, include_expired, include_superseded, archived)
    if json:
        render.print_json([hit.to_dict(explain) for hit in hits])
        return
    moment = grimoire.now()
    for hit in hits:
        render.out(f"{hit.score:6.3f}  {render.entry_line(hit.entry, moment)}")
        if explain:
            render.out("        " + "  ".join(f"{k}={v:.3f}" for k, v in hit.parts.items()))


@app.command()
def context(
    text: Optional[str] = typer.Argument(None, metavar="[QUERY]", help="Rank by relevance to this (default: by value)."),
    budget: int = typer.Option(400, "--budget", metavar="TOKENS", help="Token budget (estimated as characters / 4)."),
    json: bool = JsonOpt,
) -> None:
    """A `## Active Memory` markdown block for an LLM prompt, best first, within the budget."""
    result = _grimoire().context(text, budget)
    if json:
        render.print_json(result.to_dict())
    else:
        sys.stdout.write(result.text)


@app.command("import")
def import_(
    file: str = typer.Argument(..., metavar="FILE|-", help="JSON Lines, one entry per line."),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Write the valid lines, report the rest."),
    json: bool = JsonOpt,
) -> None:
    """Import entries from JSON Lines (all or nothing unless --skip-invalid)."""
    if file == "-":
        text = _read_text("-")
    else:
        try:
            with open(file, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(f"cannot read {file}: {exc}", "give a readable UTF-8 JSON Lines file") from None
    result = _grimoire().import_lines(text.splitlines(), skip_invalid)
    if json:
        render.print_json(result.to_dict())
    else:
        render.out(f"imported {len(result.imported)} entries")
        for number, message in result.rejected:
            render.warn(f"line {number}: {message}")
    if result.rejected:
        raise typer.Exit(1)


@app.command()
def export(archived: bool = typer.Option(False, "--archived", help="Include the archive.")) -> None:
    """Print every entry as JSON Lines (round-trips through `mem import`)."""
    import json as _json

    for entry in _grimoire().export(archived):
        sys.stdout.write(_json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")


@app.command()
def stats(json: bool = JsonOpt) -> None:
    """Counts per category and state, tiers, oldest and newest, size on disk."""
    result = _grimoire().stats()
    if json:
        render.print_json(result)
        return
    for key, value in result.items():
        render.out(f"{key}: {value}")


def _gh_escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def main(argv: Optional[List[str]] = None) -> int:
    """Run `mem` with `argv`; returns the exit code. Domain errors become one `error:` line."""
    try:
        _app_for(sys.argv[1:] if argv is None else argv)(args=argv, prog_name="mem")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if code in (0, 1):
            _warn_skipped()  # after a failure its own error names the file
        _opened.clear()
        return code
    except GrimoireError as exc:
        _opened.clear()
        sys.stderr.write(f"error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return 130
    _warn_skipped()
    return 0


def _app_for(argv: List[str]) -> typer.Typer:
    """The app with only the command being run: Typer builds (and inspects)
    every registered command on each call, ~10 ms for all of mem's; help,
    errors and unknown names get the full app."""
    name = next((a for a in argv if not a.startswith("-")), None)
    if name is None or any(a in ("-h", "--help") for a in argv) or "--config" in argv or any(a.startswith("--config=") for a in argv):
        return app
    chosen = [info for info in app.registered_commands if (info.name or info.callback.__name__.replace("_", "-")) == name]
    if not chosen:
        return app
    small = typer.Typer(**_APP_SETTINGS)
    small.registered_callback = app.registered_callback
    small.registered_commands = chosen
    return small


def run() -> None:
    """Console entry point."""
    try:
        sys.exit(main())
    except BrokenPipeError:
        # The reader went away (`mem list | head`): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)
