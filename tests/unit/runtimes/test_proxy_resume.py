"""A client that resumes a request's stream gets every message after its Last-Event-ID.

Under load (CI, two suites side by side) the conformance proxy test lost a progress
notification on resume: the message had been handed to the connection the client had just
left, and a message was stored for resumption only once that connection wrote it. Messages
are now stored as they arrive, and a request's priming event is stored before the request
goes upstream. This drives the session's router and resume directly, in the order that lost it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import anyio
import pytest
from starlette.types import Message as AsgiMessage

from clawplane.runtimes.proxy.eras import legacy, sse
from clawplane.runtimes.proxy.mux import Delivery

pytestmark = pytest.mark.anyio


def _progress(value: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "p1", "progress": value, "total": 100}}  # fmt: skip


async def _deliveries(messages: Iterable[dict[str, Any]]) -> AsyncIterator[Delivery]:
    for message in messages:
        yield Delivery(message, 7)


async def _never() -> AsgiMessage:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")


def _session() -> legacy.LegacySession:
    """A 2025-11-25 session with no upstream: the tests hand its router the server's messages."""
    session = legacy.LegacySession(
        "srv", None, None, on_end=lambda _: None  # type: ignore[arg-type]
    )
    session.protocol_version = "2025-11-25"
    return session


async def test_a_message_handed_to_the_left_connection_is_replayed_on_resume() -> None:
    session = _session()
    key = sse.stream_key(7)
    left = session._streams[key] = sse.Stream()
    sender, _receiver = anyio.create_memory_object_stream[sse.Routed](sse.MAX_EVENTS)
    left.send = sender
    priming = session._store(key, {})  # what the left connection wrote before its client hung up
    # Progress 0 reaches the left connection, which has not written it yet when the client resumes.
    await session._route(_deliveries([_progress(0)]))  # type: ignore[arg-type]
    written: list[AsgiMessage] = []

    async def send(message: AsgiMessage) -> None:
        written.append(message)

    async with anyio.create_task_group() as tg:
        tg.start_soon(functools.partial(session._live, key, after=priming, receive=_never, send=send))
        await anyio.wait_all_tasks_blocked()
        response = {"jsonrpc": "2.0", "id": 7, "result": {"content": []}}
        await session._route(_deliveries([_progress(50), _progress(100), response]))  # type: ignore[arg-type]
    body = b"".join(m.get("body", b"") for m in written if m["type"] == "http.response.body").decode()
    messages = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ") and line[6:]]
    assert [m["params"]["progress"] for m in messages if m.get("method")] == [0, 50, 100]
    assert messages[-1] == response
    ids = [int(line[4:]) for line in body.splitlines() if line.startswith("id: ")]
    assert ids == sorted(ids) and min(ids) > priming


async def test_a_priming_event_comes_before_what_the_server_sends_for_its_request() -> None:
    session = _session()
    written: list[AsgiMessage] = []

    class _Link:
        """Answers the request with a progress notification the moment it is sent upstream."""

        async def send(self, message: dict[str, Any]) -> None:
            await session._route(_deliveries([_progress(0), {"jsonrpc": "2.0", "id": 7, "result": {}}]))  # type: ignore[arg-type]

    async def send(message: AsgiMessage) -> None:
        written.append(message)

    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t"}}
    await session._request(request, _Link(), _never, send)  # type: ignore[arg-type]
    events = [(int(n), m) for n, (k, m) in session._events.items() if k == sse.stream_key(7)]
    assert [m.get("method", "priming" if not m else "result") for _, m in events] == [
        "priming", "notifications/progress", "result"
    ]
    assert [n for n, _ in events] == sorted(n for n, _ in events)
