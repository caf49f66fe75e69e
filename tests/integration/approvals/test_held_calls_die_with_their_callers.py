"""A tool call held for an approval dies with its caller (issue 35, finding 4).

A folder under a real supervisor (``clawplane apply``) hosts the recording fixture, which
writes every call of its own tools to a file the moment it receives it; ``delete_thing`` is
held (``toolApproval: prompt``, 5 minutes, so an expiry cannot be mistaken for a
cancellation). A real HTTP client (httpx, raw JSON-RPC: no SDK that would send
``notifications/cancelled`` for us) makes the call, sees the first progress notification
(the approval request exists), and then goes away without a word: it closes its connection,
or ends its session with ``DELETE``. The request must become ``cancelled`` with the cause,
``clawplane approvals approve`` must answer that the caller is gone, and the server must never
see the call: a later marker call is the only one it recorded.

Covered: the hosted endpoint in the handshake era (connection closed; session deleted), in the
2026-07-28 era (the SSE response closed), and the per-agent endpoint (connection closed).
"""

from __future__ import annotations

import contextlib
import html
import json
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types.version import LATEST_MODERN_VERSION
from tests.fixtures.servers.helpers import script
from tests.integration.engine.conftest import Cli, processes_under

from clawplane.approvals import Approval, ApprovalQueue, Status
from clawplane.events import EventQueue
from clawplane.state import StateDB

pytestmark = pytest.mark.anyio

HANDSHAKE = "2025-06-18"
DISCONNECTED = "the caller's HTTP request disconnected before an answer"
NOTICE_S = 60.0
"""How long the supervisor may take to notice a caller went away (at once; this is a hang guard)."""

FOLDER = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: rec}}
spec:
  command: {python}
  args: [{recording}, --calls, {calls}]
  toolApproval: {{tools: {{delete_thing: prompt}}, timeoutMs: 300000}}
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {{name: writer}}
spec:
  mcpServers: [rec]
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Rig:
    folder: Path
    cli: Cli
    calls: Path
    base: str

    def token(self, consumer: str) -> str:
        return self.cli("token", "show", str(self.folder), consumer).stdout.strip()

    def recorded(self) -> list[str]:
        return self.calls.read_text().splitlines() if self.calls.exists() else []

    def approval(self, approval_id: str) -> Approval:
        db = StateDB.open(self.folder / ".clawplane", create=False)
        try:
            found = ApprovalQueue(db).get(approval_id)
        finally:
            db.close()
        assert found is not None, approval_id
        return found

    def events(self, approval_id: str) -> list[dict[str, Any]]:
        db = StateDB.open(self.folder / ".clawplane", create=False)
        try:
            page = EventQueue(db).page(0, limit=1000)
        finally:
            db.close()
        return [e.to_dict() for e in page.events if e.subject == approval_id]

    def dashboard_row(self, approval_id: str) -> str:
        """The request's row among the answered ones on the dashboard's Approvals page."""
        with httpx.Client(base_url=self.base, headers={"Origin": self.base}, timeout=30) as client:
            login = client.post("/ui/login", data={"token": self.token("cli")})
            assert login.status_code == 303, login.text
            answered = client.get("/ui/approvals").text.split("<h2>Answered")[1]
        return answered.split(f"<code>{approval_id}</code>")[1].split("</tr>")[0]

    async def settled(self, approval_id: str) -> Approval:
        """The request once it is no longer pending (bounded: on e089d0e it stays pending)."""
        with anyio.move_on_after(NOTICE_S):
            while self.approval(approval_id).pending:
                await anyio.sleep(0.1)
        return self.approval(approval_id)


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    folder = tmp_path_factory.mktemp("heldcalls") / "folder"
    folder.mkdir()
    calls = folder.parent / "calls.txt"
    (folder / "resources.yaml").write_text(FOLDER.format(
        python=json.dumps(sys.executable), recording=json.dumps(script("recording")), calls=json.dumps(str(calls)),
    ))  # fmt: skip
    cli = Cli(folder)
    try:
        done = cli("apply", str(folder), "--yes")
        assert done.returncode == 0, done.stdout + done.stderr
        base = str(json.loads((folder / ".clawplane" / "supervisor.pid").read_text())["endpoint"])
        yield Rig(folder, cli, calls, base)
    finally:
        cli("down", str(folder))
        for proc in processes_under(folder):
            proc.kill()


def _headers(token: str, **extra: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream",
            "content-type": "application/json", **extra}  # fmt: skip


class Session:
    """One handshake-era session, spoken as raw JSON-RPC over HTTP."""

    def __init__(self, http: httpx.AsyncClient, url: str, token: str) -> None:
        self.http, self.url, self.token = http, url, token
        self.id = ""

    def headers(self) -> dict[str, str]:
        extra = {"mcp-session-id": self.id, "mcp-protocol-version": HANDSHAKE} if self.id else {}
        return _headers(self.token, **extra)

    async def open(self) -> None:
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "leaver", "version": "1"}}}
        async with self.http.stream("POST", self.url, json=body, headers=self.headers()) as response:
            assert response.status_code == 200, await response.aread()
            self.id = response.headers["mcp-session-id"]
            assert [m async for m in _messages(response) if m.get("id") == 0]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.http.post(self.url, json=note, headers=self.headers())).status_code == 202

    async def call(self, tool: str, arguments: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
        body = _call(tool, arguments, request_id)
        async with self.http.stream("POST", self.url, json=body, headers=self.headers()) as response:
            async for message in _messages(response):
                if message.get("id") == request_id:
                    return message
        raise AssertionError(f"no answer to {tool}")

    async def delete(self) -> int:
        return (await self.http.delete(self.url, headers=self.headers())).status_code


def _call(tool: str, arguments: dict[str, Any], request_id: int, **meta: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments, "_meta": {"progressToken": f"p{request_id}", **meta}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def _messages(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    if response.headers.get("content-type", "").startswith("application/json"):
        yield json.loads(await response.aread())
        return
    async for line in response.aiter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


async def _held(messages: AsyncIterator[dict[str, Any]]) -> str:
    """Read the call's stream up to its first progress notification: the id of the request it waits for."""
    with anyio.fail_after(NOTICE_S):
        async for message in messages:
            assert message.get("method") == "notifications/progress", message
            text = str(message["params"]["message"])
            return text.split("waiting for approval ", 1)[1].split()[0]
    raise AssertionError("the call's stream ended before it was held")


async def _abandon(url: str, token: str, body: dict[str, Any], headers: dict[str, str]) -> str:
    """Make the call on a connection of its own, see it held, and close that connection: the approval id."""
    # Leaving both with the body unread closes the TCP connection.
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(30, read=NOTICE_S)) as http,
        http.stream("POST", url, json=body, headers=headers) as response,
    ):
        assert response.status_code == 200, await response.aread()
        return await _held(_messages(response))


@contextlib.asynccontextmanager
async def _client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(30, read=NOTICE_S)) as http:
        yield http


async def _nothing_reached_the_server(rig: Rig, url: str, token: str, marker: str) -> None:
    """A later call through a new session is the first the server records (stdio keeps the order)."""
    async with _client() as http:
        session = Session(http, url, token)
        await session.open()
        answer = await session.call("lookup", {"key": marker})
        assert answer["result"]["content"][0]["text"] == f"value of {marker}", answer
        await session.delete()
    assert rig.recorded()[-1:] == [f"lookup {marker}"]
    assert not [line for line in rig.recorded() if line.startswith("delete_thing")], rig.recorded()


def _approving_says_the_caller_is_gone(rig: Rig, approval_id: str) -> str:
    answer = rig.cli("approvals", "approve", str(rig.folder), approval_id)
    said = answer.stdout + answer.stderr
    assert answer.returncode != 0, said
    assert "the caller is gone" in said and "nothing was forwarded" in said, said
    assert "call the tool again" in said, said
    return said


async def test_a_held_call_dies_with_its_caller(rig: Rig) -> None:
    url, token = f"{rig.base}/mcp/rec", rig.token("openclaw")
    async with _client() as http:
        session = Session(http, url, token)
        await session.open()
        approval_id = await _abandon(url, token, _call("delete_thing", {"name": "prod"}, 1), session.headers())
        withdrawn = await rig.settled(approval_id)
        assert withdrawn.status is Status.CANCELLED, (
            f"approval {approval_id} is still {withdrawn.status.value} after its caller closed its connection"
        )
        assert withdrawn.reason == DISCONNECTED, withdrawn.reason
        said = _approving_says_the_caller_is_gone(rig, approval_id)
        assert withdrawn.reason in said
        # The session itself lives on and still answers.
        answer = await session.call("lookup", {"key": "same-session"}, 2)
        assert answer["result"]["content"][0]["text"] == "value of same-session"
        await session.delete()
    await _nothing_reached_the_server(rig, url, token, "after-disconnect")

    shown = rig.cli("approvals", "show", str(rig.folder), approval_id)
    assert "status: cancelled (tool)" in shown.stdout and withdrawn.reason in shown.stdout, shown.stdout
    listed = rig.cli.json("approvals", "list", str(rig.folder), "--all", "--json")
    assert [a["status"] for a in listed if a["id"] == approval_id] == ["cancelled"]
    resolved = [e for e in rig.events(approval_id) if e["type"] == "approval_resolved"]
    assert [e["data"]["status"] for e in resolved] == ["cancelled"], resolved
    still = rig.approval(approval_id)
    assert still.status is Status.CANCELLED and still.resolved_at == withdrawn.resolved_at
    row = rig.dashboard_row(approval_id)
    assert "<td>cancelled</td>" in row and DISCONNECTED in html.unescape(row), row


async def test_a_held_call_dies_with_its_session(rig: Rig) -> None:
    url, token = f"{rig.base}/mcp/rec", rig.token("openclaw")
    async with _client() as http, anyio.create_task_group() as tg:
        session = Session(http, url, token)
        await session.open()
        found: list[str] = []
        held = anyio.Event()

        async def wait_in_the_call() -> None:
            body = _call("delete_thing", {"name": "staging"}, 1)
            async with http.stream("POST", url, json=body, headers=session.headers()) as response:
                messages = _messages(response)
                found.append(await _held(messages))
                held.set()
                async for _ in messages:  # the stream ends when the session does
                    pass

        tg.start_soon(wait_in_the_call)
        with anyio.fail_after(NOTICE_S):
            await held.wait()
        assert await session.delete() == 200
    (approval_id,) = found
    withdrawn = await rig.settled(approval_id)
    assert withdrawn.status is Status.CANCELLED, withdrawn
    assert withdrawn.reason.startswith("the caller went away (session "), withdrawn.reason
    _approving_says_the_caller_is_gone(rig, approval_id)
    await _nothing_reached_the_server(rig, url, token, "after-delete")


async def test_a_held_call_dies_with_its_2026_request(rig: Rig) -> None:
    url, token = f"{rig.base}/mcp/rec", rig.token("openclaw")
    meta = {PROTOCOL_VERSION_META_KEY: LATEST_MODERN_VERSION, CLIENT_CAPABILITIES_META_KEY: {}}
    body = _call("delete_thing", {"name": "modern"}, 7, **meta)
    headers = _headers(token, **{"mcp-protocol-version": LATEST_MODERN_VERSION, "mcp-method": "tools/call",
                                 "mcp-name": "delete_thing"})  # fmt: skip
    approval_id = await _abandon(url, token, body, headers)
    withdrawn = await rig.settled(approval_id)
    assert withdrawn.status is Status.CANCELLED, withdrawn
    assert withdrawn.reason == "the caller went away (request 7 ended before an answer)", withdrawn.reason
    _approving_says_the_caller_is_gone(rig, approval_id)
    await _nothing_reached_the_server(rig, url, token, "after-modern")


async def test_a_held_call_dies_with_its_caller_on_the_agent_endpoint(rig: Rig) -> None:
    url, token = f"{rig.base}/mcp/agents/writer", rig.token("agent:writer")
    async with _client() as http:
        session = Session(http, url, token)
        await session.open()
        listed = await session.call("rec__calls", {}, 1)  # the agent's session opens its backend
        assert "result" in listed, listed
        approval_id = await _abandon(url, token, _call("rec__delete_thing", {"name": "agent"}, 2), session.headers())
        withdrawn = await rig.settled(approval_id)
        assert withdrawn.status is Status.CANCELLED, (
            f"approval {approval_id} is still {withdrawn.status.value} after its caller closed its connection"
        )
        assert withdrawn.subject["endpoint"] == "/mcp/agents/writer" and withdrawn.reason == DISCONNECTED
        _approving_says_the_caller_is_gone(rig, approval_id)
        await session.delete()
    await _nothing_reached_the_server(rig, f"{rig.base}/mcp/rec", rig.token("openclaw"), "after-agent")
