"""Commands over memories: add, supersede, show, list, get, apply, query,
context, import, export, stats."""

from __future__ import annotations

import json as jsonlib
import sys

import typer

from ..core.errors import FOUND_PROBLEMS, BadInput, ImportRefused
from ..operations import memory as operations
from . import render
from .app import declared, found, given, open_grimoire, read_file, read_text


def _report_written(entry, json: bool) -> None:
    for note in entry.notes:
        (render.warn if entry.near_duplicate and note.startswith("near duplicate") else render.note)(note)
    if json:
        render.print_json(entry.written_dict())
    else:
        render.out(entry.id)


@declared(operations.SAVE)
def add(
    content,
    category,
    summary,
    confidence,
    tags,
    ttl,
    supersedes,
    key,
    importance,
    related,
    file,
    lines,
    session_id,
    agent,
    phase,
    accept_instructions,
    meta,
    json,
):
    from ..guard.instructions import ACCEPT

    metadata = {ACCEPT: True, **_meta(meta)} if accept_instructions else _meta(meta)
    entry = open_grimoire().add(
        read_text(content),
        category,
        **given(
            summary=summary,
            confidence=confidence,
            tags=tags or None,
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
            metadata=metadata or None,
        ),
    )
    _report_written(entry, json)


def _meta(values: list[str] | None) -> dict:
    """`--meta K=V` values as metadata (the facade's parsing: it is imported only when one is given)."""
    if not values:
        return {}
    from ..facade.narrowing import meta_pairs

    return meta_pairs(values)


@declared(operations.SUPERSEDE)
def supersede(id, content, summary, confidence, tags, ttl, importance, json):
    entry = open_grimoire().supersede(
        id,
        read_text(content),
        **given(summary=summary, confidence=confidence, tags=tags or None, ttl=ttl, importance=importance),
    )
    _report_written(entry, json)


@declared(operations.SHOW)
def show(id, chain, json):
    grimoire = open_grimoire()
    result = grimoire.show(id, chain=chain)
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


@declared(operations.LIST)
def list_(categories, tags, archived, expired, superseded, recent, since, until, tier, source, meta, json):
    grimoire = open_grimoire()
    entries = grimoire.list(
        categories=categories,
        tags=tags,
        archived=archived,
        expired=expired,
        superseded=superseded,
        recent=recent,
        since=since,
        until=until,
        tier=tier,
        source=source,
        meta=_meta(meta),
    )
    moment = grimoire.now()
    if json:
        render.print_json([e.view(moment) for e in entries])
    else:
        for entry in entries:
            render.out(render.entry_line(entry, moment))
    found(entries)


@declared(operations.GET)
def get(key, json):
    grimoire = open_grimoire()
    entry = grimoire.get(key)
    if json:
        render.print_json(entry.view(grimoire.now()))
    else:
        sys.stdout.write(entry.content if entry.content.endswith("\n") else entry.content + "\n")


@declared(operations.APPLY)
def apply(id, success, failure, json):
    if success == failure:
        raise BadInput("give exactly one of --success or --failure")
    grimoire = open_grimoire()
    entry = grimoire.apply(id, success)
    if json:
        render.print_json(entry.view(grimoire.now()))
    else:
        eff = entry.data["effectiveness"]
        render.out(
            f"{entry.id}: {eff['successes']}/{eff['applications']} successes, score {eff['score']}, tier {entry.tier}"
        )


QUERY_FORMATS = ("text", "json", "oracle")


@declared(operations.QUERY)
def query(
    text,
    categories,
    tags,
    min_confidence,
    limit,
    explain,
    include_expired,
    include_superseded,
    archived,
    scope,
    all_scopes,
    since,
    until,
    tier,
    semantic,
    source,
    meta,
    format,
    json,
):
    if format not in QUERY_FORMATS:
        raise BadInput(f"unknown format {format!r}", f"use one of: {', '.join(QUERY_FORMATS)}")
    grimoire = open_grimoire()
    options = dict(
        limit=limit,
        categories=categories,
        tags=tags,
        min_confidence=min_confidence,
        include_expired=include_expired,
        include_superseded=include_superseded,
        archived=archived,
        since=since,
        until=until,
        tier=tier,
        semantic=semantic,
        source=source,
        meta=_meta(meta),
    )
    if format == "oracle":
        _oracle(grimoire, text, options, scope or all_scopes)
        return
    if scope or all_scopes:
        if scope and all_scopes:
            raise BadInput("--scope and --all-scopes ask for two sets of scopes", "give one of them")
        hits = grimoire.query_scopes(
            text, [s.strip() for s in scope.split(",") if s.strip()] if scope else None, **options
        )
    else:
        hits = grimoire.query(text, **options)
    moment = grimoire.now()
    for line in hits.notes:
        render.warn(line)
    if not hits:
        render.note(
            _nothing_found(text, hits.filtered_out, min_confidence, grimoire.config.retrieval["min_confidence"])
        )
    if json or format == "json":
        render.print_json([hit.to_dict(explain, moment) for hit in hits])
    else:
        for hit in hits:
            where = f"{hit.scope}:" if hit.scope is not None else ""
            render.out(f"{hit.score:6.3f}  {where}{render.entry_line(hit.entry, moment)}")
            if explain:
                render.out("        " + "  ".join(_part(k, v) for k, v in hit.parts.items()))
    found(hits)


def _oracle(grimoire, text: str, options: dict, scoped: bool) -> None:
    """`--format oracle`: this grimoire's learnings for Loa's oracle, one JSON object a line."""
    from ..adapters import loa  # here: a plain query imports only its own modules (tests/test_query.py)

    if scoped or options["categories"] not in (None, [], loa.ORACLE_CATEGORIES):
        raise BadInput("--format oracle searches this scope's learnings only", "drop -c, --scope and --all-scopes")
    hits = loa.oracle_hits(grimoire, text, **{k: v for k, v in options.items() if k != "categories"})
    if not hits:
        render.note(f"no learnings match {text!r}")
    for hit in hits:
        render.out(jsonlib.dumps(loa.oracle_record(hit), ensure_ascii=False))
    found(hits)


def _part(name: str, value: float) -> str:
    """A score part as --explain shows it: a rank (the hybrid ranking's) as a whole number."""
    return f"{name}={value}" if isinstance(value, int) else f"{name}={value:.3f}"


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
    "metadata": ("with other metadata", " (--source/--meta)"),
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


@declared(operations.CONTEXT)
def context(query, budget, recipe, semantic, json):
    grimoire = open_grimoire()
    result = grimoire.context(query, budget=budget, recipe=recipe, semantic=semantic)
    for line in result.notes:
        render.warn(line)
    if not result.text:  # nothing matched (not: nothing fitted the budget; the block says that)
        render.note(
            _nothing_found(query, result.filtered_out, None, grimoire.config.retrieval["min_confidence"], options=False)
            if query and query.strip()
            else f"no {result.what}"
        )
    if json:
        render.print_json(result.to_dict())
    else:
        sys.stdout.write(result.text)


@declared(operations.IMPORT)
def import_(file, skip_invalid, redact, json):
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


@declared(operations.EXPORT)
def export(archived):
    for entry in open_grimoire().export(archived=archived):
        sys.stdout.write(jsonlib.dumps(entry.to_dict(), ensure_ascii=False) + "\n")


@declared(operations.STATS)
def stats(json):
    result = open_grimoire().stats()
    if json:
        render.print_json(result.to_dict())
        return
    render.out("\n".join(result.lines()))


@declared(operations.SCOPES)
def scopes(json):
    found = open_grimoire().scopes()
    if json:
        render.print_json([scope.to_dict() for scope in found])
        return
    for scope in found:
        render.out(
            f"{'*' if scope.current else ' '} {scope.name:<20} {scope.active:>6} active {scope.entries:>7} in all  {scope.path}"
        )
