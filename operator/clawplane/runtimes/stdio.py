"""The stdio transport: newline-delimited JSON-RPC over a server process's stdin and stdout.

Unlike the SDK's ``stdio_client`` it does not own the process (``process.open_process``
does), so the runtime can watch the pid, read stderr and tear the tree down itself. Stdout
is reserved for the protocol: a line that is not a JSON-RPC message (a stray ``print``, a
banner, binary junk) is reported through ``on_noise`` and dropped, never handed to the
session, and a line longer than ``max_message_bytes`` is discarded whole.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable

import anyio
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from clawplane.runtimes.process import ServerProcess

__all__ = ["stdio_transport"]

logger = logging.getLogger(__name__)

_CHUNK_BYTES = 65536
_NOISE_PREVIEW_CHARS = 200


def _preview(line: bytes) -> str:
    text = line[:_NOISE_PREVIEW_CHARS].decode("utf-8", "replace")
    return text + ("…" if len(line) > _NOISE_PREVIEW_CHARS else "")


@contextlib.asynccontextmanager
async def stdio_transport(
    process: ServerProcess,
    *,
    max_message_bytes: int,
    on_noise: Callable[[str], None],
) -> AsyncIterator[TransportStreams]:
    """Streams for a ``ClientSession`` over ``process``'s pipes; the read side ends at stdout EOF."""
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def deliver(line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValidationError:
            on_noise(f"non-protocol output on stdout dropped: {_preview(line)}")
            return
        await read_writer.send(SessionMessage(message))

    async def read_stdout() -> None:
        pending = bytearray()
        skipping = False  # inside an oversized line, dropping bytes up to its newline
        try:
            async with read_writer:
                while True:
                    chunk = await process.stdout.receive(_CHUNK_BYTES)
                    start = 0
                    # Search only the new chunk, so a long message costs linear time.
                    while (newline := chunk.find(b"\n", start)) != -1:
                        if not skipping:
                            pending += chunk[start:newline]
                            line = bytes(pending)
                            pending.clear()
                            await deliver(line)
                        skipping = False
                        start = newline + 1
                    if not skipping:
                        pending += chunk[start:]
                    if len(pending) > max_message_bytes:
                        on_noise(f"stdout line longer than {max_message_bytes} bytes dropped")
                        pending.clear()
                        skipping = True
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass

    async def write_stdin() -> None:
        try:
            async with write_reader:
                async for session_message in write_reader:
                    data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode("utf-8") + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server stopped reading: end the session instead of letting requests hang.
            await read_writer.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdout)
        tg.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            tg.cancel_scope.cancel()
            for stream in (read_stream, write_stream):
                stream.close()
