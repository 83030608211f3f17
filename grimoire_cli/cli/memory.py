"""Commands over memories: add, supersede, show, list, get, apply, query,
context, import, export, stats."""

from __future__ import annotations

import json as jsonlib
import sys

import typer

from ..core.errors import FOUND_PROBLEMS, BadInput, ImportRefused
from . import render
from .app import JsonOpt, SinceOpt, UntilOpt, command, found, given, open_grimoire, read_file, read_text


def _report_written(entry, json: bool) -> None:
    for note in entry.notes:
        (render.warn if entry.near_duplicate and note.startswith("near duplicate") else render.note)(note)
    if json:
        render.print_json(entry.written_dict())
    else:
        render.out(entry.id)


# The options `add` and `supersede` share (one declaration, one help text).
SummaryOpt = typer.Option(None, "-s", "--summary", metavar="TEXT", help="One-line summary (derived when omitted).")
ConfidenceOpt = typer.Option(None, "--confidence", metavar="F", help="0.0-1.0; defaults to the category's floor.")
TagOpt = typer.Option(None, "-t", "--tag", metavar="TAG", help="Tag (repeatable).")
TtlOpt = typer.Option(
    None, "--ttl", metavar="TTL", help="'permanent', or like '30d', '12h', '10m' (Loa's five categories: days)."
)
ImportanceOpt = typer.Option(None, "--importance", metavar="N", help="1-10 (default 5).")


@command()
def add(
    text: str | None = typer.Argument(
        None, metavar="TEXT|-", help="The memory; '-' (or nothing, when piped) reads stdin."
    ),
    category: str | None = typer.Option(
        None, "-c", "--category", metavar="CAT", help="Category (inferred from the wording when omitted)."
    ),
    summary: str | None = SummaryOpt,
    confidence: float | None = ConfidenceOpt,
    tag: list[str] | None = TagOpt,
    ttl: str | None = TtlOpt,
    supersedes: str | None = typer.Option(None, "--supersedes", metavar="ID", help="Id this memory replaces."),
    key: str | None = typer.Option(
        None, "--key", metavar="KEY", help="Dotted key; replaces the active entry with that key."
    ),
    importance: int | None = ImportanceOpt,
    related: list[str] | None = typer.Option(None, "--related", metavar="ID", help="Related memory id (repeatable)."),
    file: str | None = typer.Option(None, "--file", metavar="PATH", help="Source file this memory is about."),
    lines: str | None = typer.Option(None, "--lines", metavar="A-B", help="Line range in --file."),
    session_id: str | None = typer.Option(
        None, "--session-id", metavar="ID", help="Session id (default MEM_SESSION_ID)."
    ),
    agent: str | None = typer.Option(None, "--agent", metavar="NAME", help="Agent name (default MEM_AGENT)."),
    phase: str | None = typer.Option(None, "--phase", metavar="NAME", help="Phase (default MEM_PHASE)."),
    accept_instructions: bool = typer.Option(
        False,
        "--accept-instructions",
        help="Store instruction-shaped text the guard refuses (a memory about prompt injection, say).",
    ),
    json: bool = JsonOpt,
) -> None:
    """Remember something; prints the new id."""
    from ..guard.instructions import ACCEPT

    content = read_text(text)
    entry = open_grimoire().add(
        content,
        category,
        **given(
            summary=summary,
            confidence=confidence,
            tags=tag or None,
            ttl=ttl,
            supersedes=supersedes,
            key=key,
            importance=importance,
            related=related or None,
            file_path=file,
            lines=lines,
            session_id=session_id,
            agent=agent,
            phase=phase,
            metadata={ACCEPT: True} if accept_instructions else None,
        ),
    )
    _report_written(entry, json)


@command()
def supersede(
    entry_id: str = typer.Argument(..., metavar="ID", help="The memory to replace."),
    text: str | None = typer.Argument(
        None, metavar="TEXT|-", help="The new memory; '-' (or nothing, when piped) reads stdin."
    ),
    summary: str | None = SummaryOpt,
    confidence: float | None = typer.Option(
        None, "--confidence", metavar="F", help="0.0-1.0 (default: the old memory's)."
    ),
    tag: list[str] | None = typer.Option(
        None, "-t", "--tag", metavar="TAG", help="Tag, repeatable (default: the old memory's tags)."
    ),
    ttl: str | None = typer.Option(
        None, "--ttl", metavar="TTL", help="How long it holds, from now (default: the old memory's ttl)."
    ),
    importance: int | None = typer.Option(None, "--importance", metavar="N", help="1-10 (default: the old memory's)."),
    json: bool = JsonOpt,
) -> None:
    """Replace a memory with a new one (same category); the old one stays for audit.
    What an option does not give (key, tags, ttl, importance, confidence, metadata) is the old memory's."""
    content = read_text(text)
    entry = open_grimoire().supersede(
        entry_id,
        content,
        **given(summary=summary, confidence=confidence, tags=tag or None, ttl=ttl, importance=importance),
    )
    _report_written(entry, json)


@command()
def show(
    entry_id: str = typer.Argument(..., metavar="ID", help="The memory's id."),
    chain: bool = typer.Option(False, "--chain", help="The whole supersede chain, oldest first."),
    json: bool = JsonOpt,
) -> None:
    """Show one memory (archive included)."""
    grimoire = open_grimoire()
    result = grimoire.show(entry_id, chain=chain)
    moment = grimoire.now()
    if chain:
        if json:
            render.print_json([e.view(moment) for e in result])
        else:
            render.out("\n".join(render.entry_line(e, moment) for e in result))
        return
    from ..facade.views import shown

    view = shown(grimoire, result)
    if json:
        render.print_json(view)
    else:
        render.out(render.entry_text(result, moment, view, tiers=grimoire.config.settings.tiers.enabled))
        accesses = view["accesses"]
        if accesses["count"]:
            render.out(f"recalled: {render.count(accesses['count'], 'time', 'times')}, last {accesses['last']}")


@command("list")
def list_(
    category: list[str] | None = typer.Option(
        None, "-c", "--category", metavar="CAT", help="Only these categories (repeatable)."
    ),
    tag: list[str] | None = typer.Option(
        None, "-t", "--tag", metavar="TAG", help="Only entries with all these tags (repeatable)."
    ),
    archived: bool = typer.Option(False, "--archived", help="List the archive instead."),
    expired: bool = typer.Option(False, "--expired", help="Include expired entries."),
    superseded: bool = typer.Option(False, "--superseded", help="Include superseded entries."),
    recent: int | None = typer.Option(None, "--recent", metavar="N", help="Only the N newest."),
    since: str | None = SinceOpt,
    until: str | None = UntilOpt,
    json: bool = JsonOpt,
) -> None:
    """List memories, newest first (active only unless asked)."""
    grimoire = open_grimoire()
    entries = grimoire.list(
        categories=category,
        tags=tag,
        archived=archived,
        expired=expired,
        superseded=superseded,
        recent=recent,
        since=since,
        until=until,
    )
    moment = grimoire.now()
    if json:
        render.print_json([e.view(moment) for e in entries])
    else:
        for entry in entries:
            render.out(render.entry_line(entry, moment))
    found(entries)


@command()
def get(
    key: str = typer.Argument(..., metavar="KEY", help="The dotted key (as given to `mem add --key`)."),
    json: bool = JsonOpt,
) -> None:
    """Print the content of the active memory with this key (exit 1 when none)."""
    grimoire = open_grimoire()
    entry = grimoire.get(key)
    if json:
        render.print_json(entry.view(grimoire.now()))
    else:
        sys.stdout.write(entry.content if entry.content.endswith("\n") else entry.content + "\n")


@command()
def apply(
    entry_id: str = typer.Argument(..., metavar="ID", help="The memory that was applied."),
    success: bool = typer.Option(False, "--success", help="Applying it helped."),
    failure: bool = typer.Option(False, "--failure", help="Applying it did not help."),
    json: bool = JsonOpt,
) -> None:
    """Record one application of a memory and its outcome."""
    if success == failure:
        raise BadInput("give exactly one of --success or --failure")
    grimoire = open_grimoire()
    entry = grimoire.apply(entry_id, success)
    if json:
        render.print_json(entry.view(grimoire.now()))
    else:
        eff = entry.data["effectiveness"]
        render.out(
            f"{entry.id}: {eff['successes']}/{eff['applications']} successes, score {eff['score']}, tier {entry.tier}"
        )


@command()
def query(
    text: str = typer.Argument(..., metavar="TEXT", help="What to look for."),
    category: list[str] | None = typer.Option(
        None, "-c", "--category", metavar="CAT", help="Only these categories (repeatable)."
    ),
    tag: list[str] | None = typer.Option(
        None,
        "-t",
        "--tag",
        "--topic",
        metavar="TAG",
        help="Only entries with all these tags (repeatable); a topic is a tag.",
    ),
    min_confidence: float | None = typer.Option(
        None,
        "--min-confidence",
        metavar="F",
        help="Skip memories less sure than this (default: retrieval.min_confidence).",
    ),
    limit: int | None = typer.Option(
        None, "-n", "--limit", metavar="N", help="At most N hits (default: retrieval.max_per_query)."
    ),
    explain: bool = typer.Option(False, "--explain", help="Show each score part."),
    include_expired: bool = typer.Option(False, "--include-expired", help="Also rank expired memories."),
    include_superseded: bool = typer.Option(
        False, "--include-superseded", help="Also rank memories a newer one replaced."
    ),
    archived: bool = typer.Option(False, "--archived", help="Search the archive too."),
    scope: str | None = typer.Option(
        None, "--scope", metavar="A,B", help="Rank across these scopes; each hit says its scope."
    ),
    all_scopes: bool = typer.Option(False, "--all-scopes", help="Rank across every scope."),
    since: str | None = SinceOpt,
    until: str | None = UntilOpt,
    tier: str | None = typer.Option(
        None,
        "--tier",
        metavar="hot|long|all",
        help="Only hot memories (what `mem context` injects) or long-term ones (default: all).",
    ),
    json: bool = JsonOpt,
) -> None:
    """Ranked retrieval: BM25 with stemming and typo tolerance, blended with recency and quality."""
    grimoire = open_grimoire()
    options = dict(
        limit=limit,
        categories=category,
        tags=tag,
        min_confidence=min_confidence,
        include_expired=include_expired,
        include_superseded=include_superseded,
        archived=archived,
        since=since,
        until=until,
        tier=tier,
    )
    if scope or all_scopes:
        if scope and all_scopes:
            raise BadInput("--scope and --all-scopes ask for two sets of scopes", "give one of them")
        hits = grimoire.query_scopes(
            text, [s.strip() for s in scope.split(",") if s.strip()] if scope else None, **options
        )
    else:
        hits = grimoire.query(text, **options)
    moment = grimoire.now()
    if not hits:
        render.note(
            _nothing_found(text, hits.filtered_out, min_confidence, grimoire.config.retrieval["min_confidence"])
        )
    if json:
        render.print_json([hit.to_dict(explain, moment) for hit in hits])
    else:
        for hit in hits:
            where = f"{hit.scope}:" if hit.scope is not None else ""
            render.out(f"{hit.score:6.3f}  {where}{render.entry_line(hit.entry, moment)}")
            if explain:
                render.out("        " + "  ".join(f"{k}={v:.3f}" for k, v in hit.parts.items()))
    found(hits)


# What lifts each filter that can hide a match (see search.Hits).
_LIFTS = {
    "expired": ("expired", " (--include-expired)"),
    "superseded": ("superseded", " (--include-superseded)"),
    "archived": ("archived", " (--archived)"),
    "category": ("in other categories", " (-c)"),
    "tag": ("without the tags", " (-t)"),
    "time": ("created outside the time window", " (--since/--until)"),
    "tier": ("in the other tier", " (--tier all)"),
    "importance": ("below context.min_importance", ""),
    "together": ("by these filters together", ""),
}


def _nothing_found(
    text: str, filtered_out: dict[str, int], given: float | None, default: float, options: bool = True
) -> str:
    """The stderr line for a query that found nothing: what matched but was
    filtered out, by what, and (`options`: `mem query`'s) the option that lifts it."""
    line = f'no memories match "{render.shortened(text)}"'
    reasons = []
    for reason, count in filtered_out.items():
        if reason == "confidence":
            threshold = (
                f"{given:g} (--min-confidence)"
                if given is not None
                else f"{default:g} (retrieval.min_confidence or the category's floor)"
            )
            reasons.append(f"{count} below confidence {threshold}")
        else:
            label, option = _LIFTS[reason]
            reasons.append(f"{count} {label}{option if options else ''}")
    return line + ("; filtered out: " + ", ".join(reasons) if reasons else "")


@command()
def context(
    text: str | None = typer.Argument(None, metavar="QUERY", help="Rank by relevance to this (default: by value)."),
    budget: int = typer.Option(400, "--budget", metavar="TOKENS", help="Token budget (estimated as characters / 4)."),
    recipe: str | None = typer.Option(
        None,
        "--recipe",
        metavar="NAME",
        help="Fill the sections of context.recipes.NAME in order (default: context.recipe, else by value).",
    ),
    json: bool = JsonOpt,
) -> None:
    """A `## Active Memory` markdown block for an LLM prompt, best first, within the budget."""
    grimoire = open_grimoire()
    result = grimoire.context(text, budget=budget, recipe=recipe)
    if not result.text:  # nothing matched (not: nothing fitted the budget; the block says that)
        render.note(
            _nothing_found(text, result.filtered_out, None, grimoire.config.retrieval["min_confidence"], options=False)
            if text and text.strip()
            else f"no {result.what}"
        )
    if json:
        render.print_json(result.to_dict())
    else:
        sys.stdout.write(result.text)


@command("import")
def import_(
    file: str = typer.Argument(..., metavar="FILE|-", help="JSON Lines, one entry per line."),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Write the valid lines, report the rest."),
    redact: bool = typer.Option(
        False, "--redact", help="Replace secrets in content and summary with [redacted: <kind>] instead of refusing."
    ),
    json: bool = JsonOpt,
) -> None:
    """Import entries from JSON Lines (all or nothing unless --skip-invalid)."""
    text = read_file(file, "the JSON Lines file")
    try:
        result = open_grimoire().import_lines(text.splitlines(), skip_invalid=skip_invalid, redact=redact)
    except ImportRefused as exc:
        if len(exc.rejected) > exc.SHOWN:  # the error line names the first few: every one is listed above it
            for number, message in exc.rejected:
                render.warn(f"line {number}: {message}")
        raise
    if json:
        render.print_json(result.to_dict())
    else:
        render.out(
            f"imported {render.count(len(result.imported), 'entry', 'entries')}"
            + (f" ({render.count(result.redacted, 'secret', 'secrets')} redacted)" if result.redacted else "")
        )
        for number, message in result.rejected:
            render.warn(f"line {number}: {message}")
    if result.rejected:
        raise typer.Exit(FOUND_PROBLEMS)


@command()
def export(archived: bool = typer.Option(False, "--archived", help="Include the archive.")) -> None:
    """Print every entry as JSON Lines; with --archived, round-trips through `mem import` into an empty grimoire."""
    for entry in open_grimoire().export(archived=archived):
        sys.stdout.write(jsonlib.dumps(entry.to_dict(), ensure_ascii=False) + "\n")


@command()
def stats(json: bool = JsonOpt) -> None:
    """Counts per category and state, tiers, oldest and newest, size on disk."""
    result = open_grimoire().stats()
    if json:
        render.print_json(result.to_dict())
        return
    render.out("\n".join(result.lines()))


@command()
def scopes(json: bool = JsonOpt) -> None:
    """List the scopes (personas) of this repository with their counts."""
    found = open_grimoire().scopes()
    if json:
        render.print_json([scope.to_dict() for scope in found])
        return
    for scope in found:
        render.out(
            f"{'*' if scope.current else ' '} {scope.name:<20} {scope.active:>6} active {scope.entries:>7} in all  {scope.path}"
        )
