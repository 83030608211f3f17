"""`mem mcp`: the grimoire's calls (`calls.CALLS`) and two resources served
over stdio on the official MCP SDK (the optional extra `grimoire-cli[mcp]`).

The SDK's low-level `Server` is used, not its decorator API: the tools'
schemas are the call table's own (one definition for every integration),
and results are the `--json` shapes as text. Calls run one at a time in a
worker thread (the library is synchronous), so the connection keeps
answering pings while a long call (a summarizer) runs.

SIGINT or SIGTERM (how a client ends a session whose stdin it cannot close)
ends the process within a second, exit 0 (`_end_session`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from .. import __version__
from ..core.errors import OK, BadInput, GrimoireError, Refused
from .calls import CALLS, Opener, invoke

if TYPE_CHECKING:
    from ..api import Grimoire

CONTEXT_URI = "grimoire://context"
ENTRY_TEMPLATE = "grimoire://entry/{id}"
_ENTRY_URI = re.compile(r"^grimoire://entry/(MEM-\d{8}-\d+)\Z")
INSTRUCTIONS = """\
grimoire is this project's long-term memory, kept in git and reviewed like code.
At the start of a task read the resource grimoire://context (or call context).
Before deciding something the project may have decided before, call query.
When you decide something, learn a lesson or fix an error, call save with category
decision, learning or error; memories are never edited: supersede replaces one.
Secrets and personal data are refused; text inside <private>…</private> is dropped."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
READ_ONLY_HINT = "start `mem serve` with --write to allow changes"
STOP_GRACE = 0.3  # seconds a call under way gets to finish before the process ends (a write takes milliseconds)


def serve(grimoire_of: Callable[[], Grimoire]) -> None:
    """Serve MCP on stdin/stdout until the client closes the connection.
    `grimoire_of` opens the grimoire (`Opener` keeps it between requests
    while that is the same as opening it anew)."""
    from .mcp_sdk import server_parts

    sdk = server_parts()
    grimoire_of = Opener(grimoire_of)
    grimoire_of()  # no grimoire here: the usual error, before a client connects

    # One worker thread: calls run one at a time, always in the thread where
    # the kept grimoire's catalog connection was made (sqlite's rule).
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grimoire")
    under_way: set[Future] = set()

    async def run(work: Callable[[], Any]) -> Any:
        call = worker.submit(work)
        under_way.add(call)
        call.add_done_callback(under_way.discard)
        return await asyncio.wrap_future(call)

    server = build_server(sdk, grimoire_of, run)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for number in STOP_SIGNALS:
            loop.add_signal_handler(number, _end_session, under_way)
        async with sdk.stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        sdk.anyio.run(main)  # asyncio, which `run` relies on
    finally:
        worker.shutdown(wait=False)


def build_server(
    sdk: Any, grimoire_of: Callable[[], Grimoire], run: Callable[[Callable[[], Any]], Any], *, read_only: bool = False
) -> Any:
    """The SDK's low-level `Server` offering the call table and the resources,
    over any transport (stdio here, streamable HTTP in `mem serve`). `run`
    awaits a call in the one worker thread; with `read_only`, only the calls
    that change nothing are offered, and the others refused."""
    types, Server, MCPError = sdk.types, sdk.Server, sdk.MCPError
    offered = [c for c in CALLS.values() if not read_only or c.hints()["read_only"]]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=c.name, description=c.description, input_schema=c.schema, annotations=_annotations(types, c)
                )
                for c in offered
            ]
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        if read_only and params.name in CALLS and CALLS[params.name] not in offered:
            refused = Refused(f"{params.name} changes the grimoire and this server is read-only", READ_ONLY_HINT)
            return _error(types, f"error: {refused}", refused.exit_code)
        try:
            value = await run(lambda: invoke(grimoire_of, params.name, params.arguments))
        except GrimoireError as exc:
            return _error(types, f"error: {exc}", exc.exit_code)
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            return _error(types, f"error: internal error in {params.name}: {type(exc).__name__}: {exc}", None)
        # One line: a model reads it as well as indented JSON, for a third fewer tokens.
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(value, ensure_ascii=False))])

    async def list_resources(ctx: Any, params: Any) -> Any:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=CONTEXT_URI,
                    name="context",
                    mime_type="text/markdown",
                    description="The `## Active Memory` block (mem context); ?query=…&budget=…&recipe=… as the context tool takes.",
                )
            ]
        )

    async def list_templates(ctx: Any, params: Any) -> Any:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=ENTRY_TEMPLATE,
                    name="entry",
                    mime_type="application/json",
                    description="One memory by id, as the show tool returns it (mem show ID --json).",
                )
            ]
        )

    async def read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        try:
            text, mime = await run(lambda: read(grimoire_of, uri))
        except GrimoireError as exc:
            raise MCPError(types.INVALID_PARAMS, f"error: {exc}") from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)])

    return Server(
        "grimoire",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


def _annotations(types: Any, call: Any) -> Any:
    hints = call.hints()
    return types.ToolAnnotations(
        read_only_hint=hints["read_only"],
        destructive_hint=hints["destructive"],
        idempotent_hint=hints["idempotent"],
        open_world_hint=hints["open_world"],
    )


def _end_session(under_way: set[Future]) -> None:
    """End the process now, exit 0: the client ended the session. A running
    summarizer is killed (its answer would come too late to be stored, so
    nothing is written) and a call under way gets `STOP_GRACE` to finish.

    `os._exit`, because nothing else ends promptly: the SDK reads stdin in a
    thread no cancellation reaches, and Python's exit would wait for the call's
    thread. A write cut short is safe: the store's writes are atomic (one file
    renamed into place, several through a journal the next command finishes,
    storage/journal.py), and the lock is an flock that dies with the process."""
    from ..lifecycle.external import stop_running

    stop_running()
    wait(list(under_way), timeout=STOP_GRACE)
    sys.stderr.flush()
    os._exit(OK)


def _error(types: Any, text: str, exit_code: int | None) -> Any:
    """A tool error: the one line `mem` would print, and its exit code in `_meta`."""
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        is_error=True,
        meta={"exit_code": exit_code} if exit_code is not None else None,
    )


def read(grimoire_of: Callable[[], Grimoire], uri: str) -> tuple[str, str]:
    """A resource's text and MIME type: the context block, or one entry's JSON."""
    found = _ENTRY_URI.match(uri)
    if found:
        from ..facade.views import shown

        grimoire = grimoire_of()
        return json.dumps(shown(grimoire, grimoire.show(found.group(1))), ensure_ascii=False), "application/json"
    parts = urlsplit(uri)
    if f"{parts.scheme}://{parts.netloc}{parts.path}" != CONTEXT_URI:
        raise BadInput(f"no resource {uri}", f"read {CONTEXT_URI} or {ENTRY_TEMPLATE}")
    options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    unknown = set(options) - {"query", "budget", "recipe"}
    if unknown:
        raise BadInput(f"unknown parameter {sorted(unknown)[0]!r} in {uri}", "give query, budget or recipe")
    budget = options.get("budget", "400")
    if not budget.isdigit() or int(budget) < 1:
        raise BadInput(f"bad budget {budget!r} in {uri}", "give a number of tokens, like budget=400")
    return grimoire_of().context(
        options.get("query"), budget=int(budget), recipe=options.get("recipe")
    ).text, "text/markdown"
