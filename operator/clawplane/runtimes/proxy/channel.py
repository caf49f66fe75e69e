"""A stdio server's pipes as a stream of raw JSON-RPC messages.

Stdout is protocol only: a line that is not a JSON-RPC message (a stray ``print``, a
banner, binary junk) is reported through ``on_noise`` and dropped, and a line longer
than ``max_message_bytes`` is discarded whole. Writes from several links are serialized
so two messages never interleave on stdin.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Protocol

import anyio
import anyio.abc

from clawplane.runtimes.proxy.wire import Message, decode_line, encode

__all__ = ["Channel", "ChannelClosedError", "StdioChannel"]

_CHUNK_BYTES = 65536
_NOISE_PREVIEW_CHARS = 200


class ChannelClosedError(Exception):
    """The server's side of the channel is gone (process exited, pipe closed)."""


class Channel(Protocol):
    """Where a multiplexer reads and writes one upstream server's messages."""

    def messages(self) -> AsyncIterator[Message]:
        """Every message the server sends, until its output ends."""
        ...

    @property
    def last_size(self) -> int:
        """The size in bytes of the message ``messages`` yielded last, as the server wrote it."""
        ...

    async def send(self, msg: Message) -> None:
        """Write one message to the server.

        Raises:
            ChannelClosedError: The server no longer reads.
        """
        ...


def _preview(line: bytes) -> str:
    text = line[:_NOISE_PREVIEW_CHARS].decode("utf-8", "replace")
    return text + ("…" if len(line) > _NOISE_PREVIEW_CHARS else "")


class StdioChannel:
    """Newline-delimited JSON-RPC over a process's stdin and stdout."""

    def __init__(
        self,
        stdin: anyio.abc.ByteSendStream,
        stdout: anyio.abc.ByteReceiveStream,
        *,
        max_message_bytes: int,
        on_noise: Callable[[str], None],
    ) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._max = max_message_bytes
        self._on_noise = on_noise
        self._last_size = 0
        # An uncontended acquire must not yield: that put every forwarded message behind whatever
        # else was ready to run (the lock only keeps two messages from interleaving on stdin).
        self._write_lock = anyio.Lock(fast_acquire=True)
        self._closed = False

    async def send(self, msg: Message) -> None:
        """Write one message as one line."""
        data = encode(msg)
        async with self._write_lock:
            if self._closed:
                raise ChannelClosedError("the server's stdin is closed")
            try:
                await self._stdin.send(data)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
                self._closed = True
                raise ChannelClosedError(f"the server stopped reading its stdin ({exc})") from None

    @property
    def last_size(self) -> int:
        """The size in bytes of the line ``messages`` yielded last (its newline not counted)."""
        return self._last_size

    async def messages(self) -> AsyncIterator[Message]:
        """Decoded stdout lines; ends at EOF."""
        pending = bytearray()
        skipping = False  # inside an oversized line, dropping bytes up to its newline
        while True:
            try:
                chunk = await self._stdout.receive(_CHUNK_BYTES)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                return
            start = 0
            # Search only the new chunk, so a long message costs linear time.
            while (newline := chunk.find(b"\n", start)) != -1:
                if not skipping:
                    pending += chunk[start:newline]
                    line = bytes(pending)
                    pending.clear()
                    if line.strip():
                        msg = decode_line(line)
                        if msg is None:
                            self._on_noise(f"non-protocol output on stdout dropped: {_preview(line)}")
                        else:
                            self._last_size = len(line)
                            yield msg
                skipping = False
                start = newline + 1
            if not skipping:
                pending += chunk[start:]
            if len(pending) > self._max:
                self._on_noise(f"stdout line longer than {self._max} bytes dropped")
                pending.clear()
                skipping = True
