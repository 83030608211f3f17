"""MCP over HTTP at `/mcp` of `mem serve`: the same server `mem mcp` runs on
stdio (`mcp_server.build_server`: the call table's tools, the resources), on
the SDK's streamable HTTP transport, so agents on other machines reach a
team's grimoire. Only with a token (a bearer token: `app.Guard` checks it)
and read-only unless `--write`, as the pages are.

Stateless, with JSON answers: each POST is one request and its answer, no
session to keep between them, which suits a call table whose calls each
open the grimoire anew.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...core.errors import BadInput
from ..mcp_sdk import INSTALL_HINT

if TYPE_CHECKING:
    from ...api import Grimoire

PATH = "/mcp"
Lifespan = Callable[[Any], contextlib.AbstractAsyncContextManager[None]]


def mcp_route(
    grimoire_of: Callable[[], Grimoire],
    run: Callable[[Callable[[], Any]], Any],
    *,
    token: str | None,
    write: bool,
) -> tuple[Route, Lifespan | None]:
    """The `/mcp` route and the lifespan its transport needs (None: no
    transport; the route then says why: no token, or no MCP SDK)."""
    if not token:
        return _refusal(
            BadInput(
                "MCP over HTTP needs a token",
                "start mem serve with --token T; agents send it as Authorization: Bearer T",
            ),
            404,
        ), None
    try:
        import mcp.server  # noqa: F401 - the SDK in full: its HTTP transport needs what the stdio server skips
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
    except ImportError:
        return _refusal(BadInput("MCP over HTTP needs the MCP SDK", INSTALL_HINT), 501), None
    from ..mcp_sdk import server_parts
    from ..mcp_server import build_server

    server = build_server(server_parts(), grimoire_of, run, read_only=not write)
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Route(PATH, endpoint=StreamableHTTPASGIApp(manager), methods=["GET", "POST", "DELETE"]), lifespan


def _refusal(error: BadInput, status: int) -> Route:
    async def refuse(request: Request) -> Response:
        return JSONResponse({"error": str(error)}, status)

    return Route(PATH, refuse, methods=["GET", "POST", "DELETE"])
