"""Upstream plumbing: a mux over a server process, and SDK client streams over a link.

The supervisor's own client session (tool catalog, health, ``list_changed``) talks to
the server through a low-priority link of the primary process's mux, so the same
process can also serve 2026-07-28 clients of the hosted endpoint.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable

import anyio
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter
from pydantic import ValidationError

from clawplane.runtimes.process import ServerProcess
from clawplane.runtimes.proxy.channel import StdioChannel
from clawplane.runtimes.proxy.mux import Link, Mux

__all__ = ["link_transport", "open_mux"]

logger = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def open_mux(
    process: ServerProcess,
    *,
    name: str,
    max_message_bytes: int,
    on_noise: Callable[[str], None],
    describe_end: Callable[[], str],
    share_initialize: bool = False,
) -> AsyncIterator[Mux]:
    """A mux over ``process``'s pipes, routing until the process's output ends or the context exits."""
    channel = StdioChannel(
        process.stdin, process.stdout, max_message_bytes=max_message_bytes, on_noise=on_noise
    )
    mux = Mux(channel, name=name, share_initialize=share_initialize, describe_end=describe_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(mux.run)
        try:
            yield mux
        finally:
            tg.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def link_transport(link: Link) -> AsyncIterator[TransportStreams]:
    """Read/write streams for an SDK ``ClientSession`` over ``link``; the read side ends with the link."""
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def inbound() -> None:
        async with read_writer:
            async for delivery in link:
                try:
                    message = jsonrpc_message_adapter.validate_python(delivery.message, by_name=False)
                except ValidationError:
                    logger.debug("%s: dropping a malformed message: %.200s", link.label, delivery.message)
                    continue
                try:
                    await read_writer.send(SessionMessage(message))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def outbound() -> None:
        async with write_reader:
            async for session_message in write_reader:
                await link.send(
                    session_message.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
                )

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(inbound)
            tg.start_soon(outbound)
            try:
                yield read_stream, write_stream
            finally:
                tg.cancel_scope.cancel()
                for stream in (read_stream, write_stream):
                    stream.close()
    finally:
        with anyio.CancelScope(shield=True):
            await link.aclose()
