"""One handshake-era client session: the SDK's streamable-HTTP transport on one side, a mux link on the other.

The SDK's ``StreamableHTTPServerTransport`` does the HTTP part exactly as an SDK server
would (SSE framing, ``Mcp-Session-Id``, the standalone GET stream, DELETE, resumption
from an event store). Messages are forwarded as decoded JSON between it and the link:
nothing is re-modelled, so ``_meta``, error ``data`` and unknown fields pass unchanged.
A message the server relates to a request (``Delivery.related``) goes on that request's
response stream; others go on the standalone stream.

A client cancelling a request gets its stream closed at once (the server will not
answer a cancelled request). When the upstream goes away, its pending requests have
been answered with an error and the session ends: the next request gets 404 and the
client initializes a new session, as the protocol prescribes. JSON-RPC batches are
accepted on sessions that negotiated 2025-03-26, the only revision that has them.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import anyio.abc
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import jsonrpc_message_adapter
from pydantic import ValidationError
from starlette.types import Message as AsgiMessage
from starlette.types import Receive, Scope, Send

from clawplane.runtimes.proxy.eventstore import MemoryEventStore
from clawplane.runtimes.proxy.guard import Principal, reply
from clawplane.runtimes.proxy.mux import Link, Mux
from clawplane.runtimes.proxy.wire import Message, RequestId, is_notification, is_request, is_response

__all__ = ["BATCH_REVISION", "LegacySession", "read_body", "replay_body"]

logger = logging.getLogger(__name__)

BATCH_REVISION = "2025-03-26"
_BATCH_TIMEOUT_S = 300.0


def _dump(message: Any) -> Message:
    dumped: Message = message.model_dump(by_alias=True, mode="json", exclude_unset=True)
    return dumped


def replay_body(body: bytes) -> Receive:
    """A ``receive`` that hands out ``body`` once (it has already been read)."""
    sent = False

    async def receive() -> AsgiMessage:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    return receive


class LegacySession:
    """One client session of one hosted server (see the module docstring)."""

    def __init__(
        self,
        server: str,
        principal: Principal,
        upstream: AbstractAsyncContextManager[Mux],
        *,
        idle_ttl: float | None,
        on_end: Callable[[LegacySession], None],
        tool_allowed: Callable[[str], bool] | None = None,
    ) -> None:
        self.id = uuid.uuid4().hex
        self.server = server
        self.principal = principal
        self.protocol_version: str | None = None
        self._upstream = upstream
        self._on_end = on_end
        self._tool_allowed = tool_allowed
        self.transport = StreamableHTTPServerTransport(
            self.id, event_store=MemoryEventStore(), idle_timeout=idle_ttl
        )
        self._link: Link | None = None
        self._unanswered: dict[tuple[type, RequestId], Callable[[], Awaitable[None]]] = {}
        self._batch: dict[tuple[type, RequestId], list[Message]] = {}
        self._batch_done: dict[tuple[type, RequestId], anyio.Event] = {}

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect upstream and serve the session until it ends (client, idle timeout or server)."""
        started = False
        try:
            async with self._upstream as mux:
                link = self._link = mux.open_link(f"session {self.id[:8]}", tool_allowed=self._tool_allowed)
                try:
                    async with self.transport.connect() as (read_stream, write_stream):
                        task_status.started()
                        started = True
                        idle = self.transport.idle_scope or anyio.CancelScope()
                        with idle:
                            async with anyio.create_task_group() as tg:
                                tg.start_soon(self._client_to_server, read_stream, link, tg.cancel_scope)
                                await self._server_to_client(link, write_stream)
                                tg.cancel_scope.cancel()
                        if idle.cancelled_caught:
                            logger.info(
                                "%s: session %s closed after its idle timeout", self.server, self.id[:8]
                            )
                finally:
                    await link.aclose()
        except Exception:
            if not started:
                raise
            logger.exception("%s: session %s failed", self.server, self.id[:8])
        finally:
            with anyio.CancelScope(shield=True):
                if not self.transport.is_terminated:
                    await self.transport.terminate()
            self._on_end(self)

    async def _client_to_server(self, read_stream: Any, link: Link, scope: anyio.CancelScope) -> None:
        try:
            async for item in read_stream:
                if isinstance(item, Exception):
                    continue
                await self._forward(item, link)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        # The client ended the session (DELETE) or the transport closed.
        scope.cancel()

    async def _forward(self, item: SessionMessage, link: Link) -> None:
        msg = _dump(item.message)
        if is_request(msg) and isinstance(item.metadata, ServerMessageMetadata):
            callback = item.metadata.on_request_unanswered
            if callback is not None:
                self._unanswered[_key(msg["id"])] = callback
        await link.send(msg)
        if is_notification(msg) and msg.get("method") == "notifications/cancelled":
            request_id = (msg.get("params") or {}).get("requestId")
            if isinstance(request_id, int | str):
                callback = self._unanswered.pop(_key(request_id), None)
                if callback is not None:
                    await callback()

    async def _server_to_client(self, link: Link, write_stream: Any) -> None:
        async for delivery in link:
            msg = delivery.message
            if is_response(msg) and isinstance(msg.get("id"), int | str):
                key = _key(msg["id"])
                self._unanswered.pop(key, None)
                if key in self._batch_done:
                    self._batch[key].append(msg)
                    self._batch_done[key].set()
                    continue
                self._note_version(msg)
            try:
                model = jsonrpc_message_adapter.validate_python(msg, by_name=False)
            except ValidationError:
                logger.warning("%s: dropping a message that is not JSON-RPC: %.200s", self.server, msg)
                continue
            metadata = (
                ServerMessageMetadata(related_request_id=delivery.related)
                if delivery.related is not None
                else None
            )
            try:
                await write_stream.send(SessionMessage(model, metadata=metadata))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
        if link.reason:
            logger.info("%s: session %s ended: %s", self.server, self.id[:8], link.reason)

    def _note_version(self, msg: Message) -> None:
        result = msg.get("result")
        if self.protocol_version is None and isinstance(result, dict):
            version = result.get("protocolVersion")
            if isinstance(version, str):
                self.protocol_version = version

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one HTTP request of this session."""
        if scope.get("method") == "POST" and self.protocol_version == BATCH_REVISION:
            body = await read_body(receive)
            if body.lstrip().startswith(b"["):
                await self._handle_batch(body, send)
                return
            receive = replay_body(body)
        await self.transport.handle_request(scope, receive, send)

    async def _handle_batch(self, body: bytes, send: Send) -> None:
        """A 2025-03-26 batch: forward every member, answer with the array of responses."""
        link = self._link
        try:
            batch = json.loads(body)
        except ValueError:
            await reply(
                send, 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            )
            return
        if not isinstance(batch, list) or not batch or not all(isinstance(m, dict) for m in batch):
            await reply(
                send,
                400,
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid batch"}},
            )
            return
        if link is None:
            await reply(
                send,
                404,
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session has ended"}},
            )
            return
        waits: list[tuple[type, RequestId]] = []
        for msg in batch:
            if is_request(msg) and isinstance(msg["id"], int | str):
                if msg.get("method") == "initialize":
                    await reply(
                        send,
                        400,
                        {
                            "jsonrpc": "2.0",
                            "id": msg["id"],
                            "error": {"code": -32600, "message": "initialize must not be part of a batch"},
                        },
                    )
                    return
                key = _key(msg["id"])
                self._batch[key] = []
                self._batch_done[key] = anyio.Event()
                waits.append(key)
        for msg in batch:
            await link.send(msg)
        if not waits:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        responses: list[Message] = []
        with anyio.move_on_after(_BATCH_TIMEOUT_S):
            for key in waits:
                await self._batch_done[key].wait()
        for key in waits:
            self._batch_done.pop(key, None)
            responses.extend(self._batch.pop(key, []))
        await reply(send, 200, responses)


def _key(value: RequestId) -> tuple[type, RequestId]:
    return (type(value), value)


async def read_body(receive: Receive) -> bytes:
    """The whole request body (the listener bounds its size)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)
