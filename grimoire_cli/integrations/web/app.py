"""The web view's routes (Starlette): every page as HTML and its data at
`<page>.json`, the writes `--write` allows, and the guard in front of them
(a token when one is set, security headers on every response).

The library is synchronous and its catalog connection belongs to the thread
that made it (sqlite's rule), so every read and write runs in one worker
thread, one at a time, on a grimoire `Opener` keeps fresh between requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import secrets
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...core.errors import FOUND_PROBLEMS, GrimoireError
from ..calls import Opener
from . import charts, pages
from .mcp_http import PATH as MCP_PATH
from .mcp_http import mcp_route

if TYPE_CHECKING:
    from ...api import Grimoire

HERE = Path(__file__).parent
# Only the server's own files: no inline script or style, no other origin, no framing.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]
COOKIE = "mem_session"
THEMES = ("auto", "light", "dark")
# Browsers on this machine name it so; any other Host is a page rebinding a name of its own to 127.0.0.1.
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
OPEN_PATHS = ("/login", "/static/")  # reachable without the token


class Settings:
    """What a request's handling depends on beyond the grimoire."""

    def __init__(self, write: bool, token: str | None):
        self.write = write
        self.token = token
        self.csrf = secrets.token_urlsafe(32)  # forms carry it; another site's page cannot read it
        self.session = _session_of(token) if token else None


def _session_of(token: str) -> str:
    """The login cookie's value: derived from the token, so the cookie never holds it."""
    return hmac.new(token.encode(), b"mem serve session", hashlib.sha256).hexdigest()


def _same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


class Guard:
    """Every response gets the security headers; with a token, a request
    without it (bearer header or login cookie) gets 401 (the login form)."""

    def __init__(self, app: ASGIApp, settings: Settings):
        self.app, self.settings = app, settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        if self.settings.token and not self._let_in(Request(scope)):
            await _refused(Request(scope), self.settings)(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)

    def _let_in(self, request: Request) -> bool:
        settings = self.settings
        if request.url.path.startswith(OPEN_PATHS) or request.url.path == "/favicon.ico":
            return True
        bearer = request.headers.get("authorization", "")
        if bearer.lower().startswith("bearer ") and settings.token and _same(bearer[7:].strip(), settings.token):
            return True
        # An agent sends the bearer token; the login cookie is for the pages only.
        return (
            request.url.path != MCP_PATH
            and bool(settings.session)
            and _same(request.cookies.get(COOKIE), settings.session or "")
        )


def _refused(request: Request, settings: Settings) -> Response:
    if request.url.path.endswith(".json") or "text/html" not in request.headers.get("accept", ""):
        return JSONResponse(
            {"error": "a token is needed: send Authorization: Bearer TOKEN"},
            401,
            headers={"www-authenticate": "Bearer"},
        )
    return RedirectResponse("/login", 303)


def build_app(
    grimoire_of: Callable[[], Grimoire], *, write: bool = False, token: str | None = None, loopback: bool = True
) -> Starlette:
    """The web view of the grimoire `grimoire_of` opens. Read-only unless
    `write`; with a `token`, every page needs it; on `loopback`, only
    requests naming this machine as their Host are answered."""
    settings = Settings(write, token)
    opener = Opener(grimoire_of)
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grimoire-web")
    templates = Environment(
        loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True), auto_reload=False
    )
    templates.filters["pretty"] = charts.pretty

    async def in_worker(work: Callable[[], Any]) -> Any:
        return await asyncio.wrap_future(worker.submit(work))

    async def run(work: Callable[[Grimoire], Any]) -> Any:
        return await in_worker(lambda: work(opener()))

    def html(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        theme = request.cookies.get("theme")
        page = templates.get_template(template).render(
            path=request.url.path,
            write=settings.write,
            csrf=settings.csrf,
            theme=theme if theme in THEMES else "auto",
            **values,
        )
        return HTMLResponse(page, status)

    def page(
        name: str,
        data_of: Callable[[Grimoire, Request], Any],
        drawn_of: Callable[[Grimoire, Request], Any] | None = None,
    ) -> list[Route]:
        """The page `name` at its URL and its data at the same URL plus `.json`;
        `drawn_of`: the part of the data the HTML draws, when that is less."""
        url = "/" if name == "overview" else f"/{name}"
        shown_of = drawn_of or data_of

        async def as_json(request: Request) -> Response:
            return JSONResponse(await run(lambda g: data_of(g, request)))

        async def as_html(request: Request) -> Response:
            data = await run(lambda g: shown_of(g, request))
            return html(request, f"{name}.html", data=data, charts=charts.of(name, data), params=request.query_params)

        return [Route(f"/{name}.json", as_json), Route(url, as_html)]

    async def entry_json(request: Request) -> Response:
        entry_id = request.path_params["entry_id"]
        return JSONResponse(await run(lambda g: pages.entry(g, entry_id)))

    async def entry_html(request: Request) -> Response:
        entry_id = request.path_params["entry_id"]
        data = await run(lambda g: pages.entry(g, entry_id))
        kinds = await run(lambda g: {name: spec.kind for name, spec in g.config.categories.items()})
        return html(
            request, "entry.html", data=data, charts=charts.of("entry", data), kind=kinds.get(data["entry"]["category"])
        )

    async def write_entry(request: Request) -> Response:
        if not settings.write:
            return _problem(
                request, 403, "this view is read-only", "start it with `mem serve --write` to change memories"
            )
        form = {key: str(value) for key, value in (await request.form()).items()}
        if not _same(form.get("csrf"), settings.csrf):
            return _problem(
                request, 403, "the form's CSRF token is missing or stale", "reload the page and submit again"
            )
        entry_id, action = request.path_params["entry_id"], request.path_params["action"]
        written = await run(lambda g: pages.write(g, action, entry_id, form))
        shown = written.get("id") if action == "supersede" else entry_id
        return RedirectResponse(f"/entry/{pages.checked_id(str(shown))}", 303)

    async def login(request: Request) -> Response:
        if request.method == "GET" or not settings.token:
            return html(request, "login.html", needed=bool(settings.token))
        form = await request.form()
        if not _same(str(form.get("token", "")), settings.token):
            return html(request, "login.html", 401, needed=True, failed=True)
        response = RedirectResponse("/", 303)
        response.set_cookie(COOKIE, settings.session or "", httponly=True, samesite="strict")
        return response

    async def theme(request: Request) -> Response:
        chosen = request.path_params["name"]
        back = request.query_params.get("back", "/")
        # Only a path of this site: `//host` or `http:` would send the browser elsewhere.
        back = back if back.startswith("/") and not back.startswith("//") and "\\" not in back else "/"
        response = RedirectResponse(back, 303)
        response.set_cookie("theme", chosen if chosen in THEMES else "auto", samesite="strict", httponly=True)
        return response

    async def failed(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, GrimoireError)
        status = 404 if exc.exit_code == FOUND_PROBLEMS else 400 if exc.exit_code == 2 else 500
        return _problem(request, status, str(exc), None)

    def _problem(request: Request, status: int, message: str, hint: str | None) -> Response:
        said = f"{message} (hint: {hint})" if hint else message
        if request.url.path.endswith(".json") or "text/html" not in request.headers.get("accept", ""):
            return JSONResponse({"error": said}, status)
        return html(request, "error.html", status, message=said)

    routes = [
        *page("overview", lambda g, r: pages.overview(g)),
        *page("search", lambda g, r: pages.search(g, r.query_params.get("q", ""), _filters(r), explain=_explain(r))),
        *page("archive", lambda g, r: pages.archive(g), lambda g, r: pages.archive_page(g, r.query_params.get("page"))),
        *page("review", lambda g, r: pages.review(g), lambda g, r: pages.review_page(g, r.query_params.get("page"))),
        *page("tiers", lambda g, r: pages.tiers(g)),
        *page("learning", lambda g, r: pages.learning(g)),
        Route("/entry/{entry_id}.json", entry_json),
        Route("/entry/{entry_id}", entry_html),
        Route("/entry/{entry_id}/{action}", write_entry, methods=["POST"]),
        Route("/login", login, methods=["GET", "POST"]),
        Route("/theme/{name}", theme),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    mcp, mcp_lifespan = mcp_route(opener, in_worker, token=token, write=write)
    routes.append(mcp)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        # The worker's thread ends with the server: a process that built an app and stopped it is left with
        # none (one with threads never forks the parallel parser's workers; tests build many apps in one).
        try:
            async with mcp_lifespan(app) if mcp_lifespan else contextlib.nullcontext():
                yield
        finally:
            worker.shutdown(wait=True)

    middleware = [Middleware(Guard, settings=settings)]
    if loopback:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=LOOPBACK_HOSTS))
    return Starlette(
        routes=routes, middleware=middleware, exception_handlers={GrimoireError: failed}, lifespan=lifespan
    )


def _filters(request: Request) -> dict[str, Any]:
    """The search form's filters as `query`'s options (an empty field: no filter)."""
    params = request.query_params
    return {
        "categories": [c for c in params.getlist("category") if c],
        "tags": [t for t in params.getlist("tag") if t],
        "tier": params.get("tier") or None,
        "since": params.get("since") or None,
        "until": params.get("until") or None,
        "scope": params.get("scope") or None,
    }


def _explain(request: Request) -> bool:
    return request.query_params.get("explain") in ("1", "on", "true")
