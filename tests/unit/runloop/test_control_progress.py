"""Progress from concurrently applied changes reaches the client whole, however slowly it reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from clawplane.workspace.control import request, serve_control

EVENTS = 40
PAYLOAD = "x" * 65536  # a few of these fill the socket buffer, so sends wait for the reader


def test_concurrent_progress_events_are_sent_one_at_a_time(tmp_path: Path) -> None:
    sock = tmp_path / "control.sock"
    all_waiting = anyio.Event()

    async def handler(message: dict[str, Any], emit: Any) -> dict[str, Any]:
        started = 0

        async def one(index: int) -> None:
            nonlocal started
            started += 1
            if started == EVENTS:
                all_waiting.set()
            await emit({"event": "progress", "index": index, "pad": PAYLOAD})

        async with anyio.create_task_group() as tg:
            for index in range(EVENTS):
                tg.start_soon(one, index)
        return {"ok": True}

    async def main() -> list[dict[str, Any]]:
        async with anyio.create_task_group() as tg:
            await tg.start(serve_control, sock, handler)
            received = []
            replies = request(sock, {"op": "apply"})
            first = await replies.__anext__()  # the server is sending; every task now waits to send
            await all_waiting.wait()
            received.append(first)
            async for event in replies:
                received.append(event)
            tg.cancel_scope.cancel()
        return received

    events = anyio.run(main)
    assert events[-1] == {"ok": True, "final": True}
    assert sorted(e["index"] for e in events[:-1]) == list(range(EVENTS))
    assert all(e["pad"] == PAYLOAD for e in events[:-1])
