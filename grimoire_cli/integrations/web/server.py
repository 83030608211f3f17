"""`mem serve`: what is checked before the web view starts (the extra is
installed, the address is safe to bind) and the server itself (uvicorn).
Nothing here imports the web framework at module level, so the CLI can
call `check_binding` and `require_extra` and give its one-line error.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...core.bounds import whole
from ...core.errors import BadInput

if TYPE_CHECKING:
    from ...api import Grimoire

INSTALL_HINT = "install the extra: pip install 'grimoire-cli[web]'"
DEFAULT_PORT = 8377


def is_loopback(host: str) -> bool:
    """Whether `host` reaches this machine only (localhost, 127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name: it may resolve to anything
        return False


def check_binding(host: str, token: str | None) -> None:
    """Refuse an address other machines can reach unless a token guards it."""
    if not is_loopback(host) and not token:
        raise BadInput(
            f"--host {host} lets other machines read this grimoire",
            "give --token T (clients send it as a bearer token or through the login form), or bind to 127.0.0.1",
        )
    if token is not None and len(token) < 16:
        raise BadInput("the token is shorter than 16 characters", "give a longer one, e.g. from `openssl rand -hex 16`")


def require_extra() -> None:
    """The web extra's packages, or the error saying how to install them."""
    try:
        import jinja2  # noqa: F401
        import python_multipart  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise BadInput(f"mem serve needs the package {exc.name}", INSTALL_HINT) from None


def serve(
    grimoire_of: Callable[[], Grimoire],
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    write: bool = False,
    token: str | None = None,
    bound: Callable[[str], None] = lambda url: None,
) -> None:
    """Serve the web view until interrupted. `grimoire_of` opens the grimoire
    (called once now, so a missing one is the usual error before binding);
    `bound` is told the URL once the port is taken."""
    whole(port, "--port", 0, 65535, hint="0 takes a free port")
    check_binding(host, token)
    require_extra()
    import uvicorn

    from .app import build_app

    grimoire_of()
    app = build_app(grimoire_of, write=write, token=token, loopback=is_loopback(host))
    listening = listen(host, port)
    taken = listening.getsockname()[1]  # the port the system chose for --port 0
    bound(f"http://{f'[{host}]' if ':' in host else host}:{taken}/")
    uvicorn.Server(uvicorn.Config(app, log_level="warning", server_header=False)).run(sockets=[listening])


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port`, bound here so that a port in use is
    one `error:` line (uvicorn would log it and exit 3, a damaged grimoire's code)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        listening = socket.create_server((host.strip("[]"), port), family=family)
    except (OSError, OverflowError) as exc:
        reason = os.strerror(exc.errno) if isinstance(exc, OSError) and exc.errno else str(exc)
        raise BadInput(
            f"cannot listen on {host}:{port}: {reason}", "choose another --port, or stop what uses it"
        ) from None
    # Answers go out at once (no Nagle): asyncio sets TCP_NODELAY only on sockets made with
    # IPPROTO_TCP, which create_server's is not, and an answer written as headers, then body
    # (MCP's JSON) waited for the client's delayed ACK: 40 ms a call. Accepted sockets inherit it.
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return listening
