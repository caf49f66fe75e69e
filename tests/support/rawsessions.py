"""Handshake-era MCP sessions spoken as raw HTTP, the way a careless or hostile client does.

An SDK client always closes what it opens; these helpers open sessions and walk away, hold them
in use with a standalone GET stream, ping them, and send ids no SDK would send.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from typing import Any

import httpx
import psutil

ACCEPT = "application/json, text/event-stream"
INIT_PARAMS = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"},
}
SESSION = "mcp-session-id"


def client(read_timeout: float = 60.0) -> httpx.AsyncClient:
    """An HTTP client with room for many open streams; ``read_timeout`` bounds every answer."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(30.0, read=read_timeout), limits=httpx.Limits(max_connections=256)
    )


def headers(token: str, session: str | None = None) -> dict[str, str]:
    """What an MCP client sends with a POST."""
    out = {"Authorization": f"Bearer {token}", "Accept": ACCEPT, "Content-Type": "application/json"}
    if session is not None:
        out["Mcp-Session-Id"] = session
    return out


async def post(
    http: httpx.AsyncClient, url: str, token: str, body: dict[str, Any] | str, session: str | None = None
) -> httpx.Response:
    """POST one JSON-RPC body (a dict, or raw JSON text for what ``json.dumps`` will not write)."""
    content = body if isinstance(body, str) else json.dumps(body)
    return await http.post(url, content=content, headers=headers(token, session))


def messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a response, whether plain JSON or an SSE stream."""
    if response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        return body if isinstance(body, list) else [body]
    found = []
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            found.append(json.loads(line[5:]))
    return found


async def initialize(http: httpx.AsyncClient, url: str, token: str, request_id: int = 0) -> httpx.Response:
    """POST ``initialize`` without a session (it opens one when admitted)."""
    body = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": INIT_PARAMS}
    return await post(http, url, token, body)


async def open_session(http: httpx.AsyncClient, url: str, token: str) -> str:
    """A hand-shaken session's id (``initialize`` answered, ``notifications/initialized`` sent)."""
    response = await initialize(http, url, token)
    assert response.status_code == 200, response.text
    session = response.headers[SESSION]
    done = await post(http, url, token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert done.status_code == 202, done.text
    return session


async def request(
    http: httpx.AsyncClient, url: str, token: str, session: str, method: str, request_id: int = 1
) -> httpx.Response:
    """One request of a session."""
    return await post(http, url, token, {"jsonrpc": "2.0", "id": request_id, "method": method}, session)


async def hold(
    stack: contextlib.AsyncExitStack, http: httpx.AsyncClient, url: str, token: str, session: str
) -> None:
    """Keep ``session`` in use: open its standalone GET stream until ``stack`` closes."""
    response = await stack.enter_async_context(
        http.stream(
            "GET",
            url,
            headers={"Authorization": f"Bearer {token}", "Accept": ACCEPT, "Mcp-Session-Id": session},
        )
    )
    assert response.status_code == 200, await response.aread()


def error_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC error a response carries (the first message's)."""
    found = messages(response)
    assert found and "error" in found[0], response.text
    error: dict[str, Any] = found[0]["error"]
    return error


def tagged(tag: str) -> list[psutil.Process]:
    """Live processes whose command line carries ``tag``."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        with contextlib.suppress(psutil.Error):
            if proc.info["status"] != psutil.STATUS_ZOMBIE and tag in (proc.info["cmdline"] or []):
                found.append(proc)
    return found


def alive(pids: Iterable[int]) -> list[int]:
    """The pids that still name a running (not zombie) process."""
    out = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
    return out
