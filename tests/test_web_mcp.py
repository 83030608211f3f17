"""MCP over HTTP at `mem serve`'s /mcp (issue 39 part 3): the tools of `mem
mcp` on the SDK's streamable HTTP transport, a bearer token required,
read-only unless --write; and a real `mem serve` reached by the SDK's own client."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import mem
from starlette.testclient import TestClient

from grimoire_cli import Grimoire
from grimoire_cli.integrations.calls import CALLS
from grimoire_cli.integrations.web.app import build_app

pytest.importorskip("mcp")

TOKEN = "a-long-enough-test-token"
HEADERS = {
    "authorization": f"Bearer {TOKEN}",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
}


def _rpc(client: TestClient, method: str, params: dict | None = None, headers: dict | None = None):
    message = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params is not None else {})}
    return client.post("/mcp", json=message, headers=HEADERS if headers is None else headers)


def _answer(client: TestClient, name: str, arguments: dict):
    result = _rpc(client, "tools/call", {"name": name, "arguments": arguments}).json()["result"]
    text = result["content"][0]["text"]
    return ("error", text, result["_meta"]["exit_code"]) if result.get("isError") else json.loads(text)


@pytest.fixture
def postgres(repo):
    assert mem("add", "-c", "decision", "--", "use postgres for the storage layer").code == 0
    return repo


def _client(repo, **options) -> TestClient:
    return TestClient(build_app(lambda: Grimoire.open(repo), **options), base_url="http://127.0.0.1")


def test_mcp_over_http_offers_the_read_only_tools_of_mem_mcp(postgres):
    with _client(postgres, token=TOKEN) as client:
        started = _rpc(
            client,
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
        )
        assert started.status_code == 200 and started.json()["result"]["serverInfo"]["name"] == "grimoire"
        listed = {tool["name"] for tool in _rpc(client, "tools/list").json()["result"]["tools"]}
        assert listed == {name for name, call in CALLS.items() if call.hints()["read_only"]}
        assert "query" in listed and "save" not in listed
        assert _answer(client, "query", {"text": "postgres"}) == json.loads(mem("query", "postgres", "--json").out)
        refused = _answer(client, "save", {"content": "we deploy on fridays", "category": "decision"})
        assert refused[0] == "error" and "read-only" in refused[1] and refused[2] == 2
    assert "fridays" not in (postgres / "grimoires/loa/memory/decisions.yaml").read_text()


def test_mcp_over_http_writes_with_write(postgres):
    with _client(postgres, token=TOKEN, write=True) as client:
        saved = _answer(client, "save", {"content": "we deploy on tuesdays", "category": "decision"})
    assert saved["id"] and "tuesdays" in (postgres / "grimoires/loa/memory/decisions.yaml").read_text()


def test_mcp_over_http_needs_the_bearer_token(postgres):
    with _client(postgres, token=TOKEN) as client:
        for headers in ({}, {"authorization": "Bearer wrong-token"}):
            response = _rpc(
                client, "tools/list", headers={**HEADERS, **headers} if headers else {"accept": "application/json"}
            )
            assert response.status_code == 401
        client.post("/login", data={"token": TOKEN})  # the pages' cookie is not an agent's token
        assert _rpc(client, "tools/list", headers={"accept": HEADERS["accept"]}).status_code == 401
    without = _rpc(_client(postgres), "tools/list")  # no token at all: no MCP
    assert without.status_code == 404 and "needs a token" in without.json()["error"]


@pytest.mark.slow
def test_a_real_mem_serve_answers_the_sdk_client(postgres):
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "mem"), "serve", "--port", "0", "--token", TOKEN, "--write"],
        cwd=postgres,
        stderr=subprocess.PIPE,
    )
    try:
        said = server.stderr.readline().decode()
        url = said.split()[1] + "mcp"
        assert said.startswith("serving http://127.0.0.1:") and "(writes on)" in said

        async def talk():
            headers = {"authorization": f"Bearer {TOKEN}"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                streamable_http_client(url, http_client=http) as (
                    read,
                    write,
                    *_,
                ),
            ):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    found = await session.call_tool("query", {"text": "postgres"})
                    saved = await session.call_tool(
                        "save", {"content": "we release on mondays", "category": "decision"}
                    )
                    return json.loads(found.content[0].text), saved.is_error

        found, failed = asyncio.run(talk())
        assert [hit["summary"] for hit in found] == ["use postgres for the storage layer"] and not failed
        assert "mondays" in (postgres / "grimoires/loa/memory/decisions.yaml").read_text()
    finally:
        server.terminate()
        server.communicate(timeout=10)
