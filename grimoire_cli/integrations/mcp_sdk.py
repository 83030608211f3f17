"""The parts of the MCP SDK that `mem mcp` serves with, imported for a fast
session start.

Importing them is most of the time a client waits for `initialize`. The SDK's
package modules, `mcp` and `mcp.server`, import everything: its client, the
decorator server (MCPServer, ex-FastMCP) and the HTTP stack under both (httpx,
uvicorn, sse-starlette), none of which a stdio server uses. So the modules used
are imported beneath empty stand-ins for those two packages, which skips their
`__init__` and what it pulls in (docs/agents.md). What is left is the
protocol's pydantic models for two protocol versions (`mcp_types`, over half
the time) and what the low-level server module imports at its top, starlette
included: only the SDK could defer those.

If the installed SDK is laid out otherwise, the plain import is used: slower,
never wrong.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType, SimpleNamespace

from ..core.errors import BadInput

INSTALL_HINT = "install the extra: pip install 'grimoire-cli[mcp]'"
SKIPPED_PACKAGES = ("mcp", "mcp.server")  # their __init__ imports the client and the HTTP servers


def server_parts() -> SimpleNamespace:
    """anyio, the protocol's types, the low-level `Server`, `stdio_server` and
    `MCPError`; bad input with the install hint when the SDK is missing."""
    if not any(name in sys.modules for name in SKIPPED_PACKAGES):  # imported in full already (a client in this process)
        try:
            return _imported()
        except (ImportError, AttributeError):
            _forget_sdk()  # an SDK laid out otherwise: no half-imported module may stay
    try:
        import mcp.server  # noqa: F401 - the packages in full, as the SDK means them to be imported

        return _imported()
    except ImportError:
        raise BadInput("mem mcp needs the MCP SDK, which is not installed", INSTALL_HINT) from None


def _imported() -> SimpleNamespace:
    """The parts, each package on their path standing in empty unless imported already."""
    for name in SKIPPED_PACKAGES:
        if name not in sys.modules:
            _stand_in(name)
    import anyio
    import mcp_types
    from mcp.server.lowlevel.server import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    return SimpleNamespace(anyio=anyio, types=mcp_types, Server=Server, stdio_server=stdio_server, MCPError=MCPError)


def _stand_in(name: str) -> ModuleType:
    """An empty package module for `name`: its submodules import, its `__init__` never runs."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"{name} is not a package here")
    module = importlib.util.module_from_spec(spec)  # made, not executed
    sys.modules[name] = module
    if "." in name:
        parent, _, child = name.rpartition(".")
        setattr(sys.modules[parent], child, module)
    return module


def _forget_sdk() -> None:
    for name in [name for name in sys.modules if name == "mcp" or name.startswith("mcp.")]:
        del sys.modules[name]
