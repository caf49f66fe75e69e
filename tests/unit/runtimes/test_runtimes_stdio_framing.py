"""The stdio channel's framing: one JSON-RPC message per line, everything else dropped as noise."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from clawplane.runtimes.proxy.channel import StdioChannel

pytestmark = pytest.mark.anyio


class Pipes:
    """Stands in for a ServerProcess: stdout is fed by the test, stdin is recorded."""

    def __init__(self) -> None:
        self.feed, self._out = anyio.create_memory_object_stream[bytes](100)
        self.written: list[bytes] = []
        self.wrote = anyio.Event()
        self.stdout = self
        self.stdin = self

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self._out.receive()

    async def send(self, data: bytes) -> None:
        self.written.append(data)
        self.wrote.set()


def message(n: int) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": n, "progress": n}}
    ).encode()


async def test_protocol_lines_pass_and_garbage_is_reported() -> None:
    pipes = Pipes()
    noise: list[str] = []
    first, second = message(1), message(2)
    chunks = [
        b"banner: not json\n" + first[:10],
        first[10:] + b"\n\n   \n",
        b'{"hello": 1}\n' + b"x" * 150,
        b"y" * 150 + b"\n" + second + b"\n",
    ]
    for chunk in chunks:
        pipes.feed.send_nowait(chunk)
    pipes.feed.close()
    received: list[Any] = []
    channel = StdioChannel(pipes, pipes, max_message_bytes=100, on_noise=noise.append)  # type: ignore[arg-type]
    with anyio.fail_after(5):
        async for item in channel.messages():
            received.append(item)
    await channel.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert [m["params"]["progressToken"] for m in received] == [1, 2]
    assert noise == [
        "non-protocol output on stdout dropped: banner: not json",
        'non-protocol output on stdout dropped: {"hello": 1}',
        "stdout line longer than 100 bytes dropped",
    ]
    assert pipes.written == [b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n']
