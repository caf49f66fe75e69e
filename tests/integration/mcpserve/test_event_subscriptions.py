"""``clawplane://events`` subscribers hear of events other processes write; nobody else makes it poll.

The control-plane server polls the state database for other processes' events (a supervisor
writes them while ``clawplane mcp serve`` answers a client). That poll is for subscribers: a
server nobody subscribes to must stay asleep, which is most of an idle supervisor's wake-ups.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPDeprecationWarning
from tests.integration.mcpserve.conftest import quickstart_cli

from clawplane.events import EventQueue
from clawplane.mcpserve.folder import local_server
from clawplane.mcpserve.server import EVENT_META_KEY, EVENTS
from clawplane.state import StateDB
from clawplane.workspace import Workspace

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_server_nobody_subscribes_to_does_not_poll_for_events(tmp_path: Path) -> None:
    ws = Workspace.for_folder(quickstart_cli(tmp_path / "quickstart").folder)
    db = StateDB.open(ws.state_dir)
    try:
        server = local_server(ws, db, "tester")
        events = server.queries.oversight.events
        events.poll_interval = 0.01  # a poll would show within a few of these
        looked = 0
        head = events.head

        def counting_head() -> int:
            nonlocal looked
            looked += 1
            return head()

        events.head = counting_head  # type: ignore[method-assign]
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run_updates)
            await anyio.sleep(0.5)  # a window in which a poller would look ~50 times
            assert looked == 0, f"the event queue was read {looked} time(s) with nobody subscribed"
            assert not server.interested()
            tg.cancel_scope.cancel()
    finally:
        db.close()


@pytest.mark.timeout(120)
async def test_an_events_subscriber_hears_of_an_event_another_process_wrote(tmp_path: Path) -> None:
    cli = quickstart_cli(tmp_path / "quickstart")
    heard: list[dict[str, object]] = []
    arrived = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and str(message.params.uri) == EVENTS:
            meta = message.params.meta or {}
            heard.append(dict(meta.get(EVENT_META_KEY) or {}))
            arrived.set()

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "clawplane", "mcp", "serve", str(cli.folder)], env=cli.env
    )
    async with Client(params, mode="legacy", read_timeout_seconds=60, message_handler=on_message) as client:
        with pytest.warns(MCPDeprecationWarning):  # the handshake era's way, which we serve
            await client.subscribe_resource(EVENTS)
        db = StateDB.open(Workspace.for_folder(cli.folder).state_dir)  # this process, not the server's
        try:
            published = EventQueue(db).publish("test.ping", "McpServer/notes", note="from another process")
        finally:
            db.close()
        assert published is not None
        with anyio.fail_after(60):
            await arrived.wait()
    assert heard[0]["cursor"] == published.cursor and heard[0]["type"] == "test.ping", heard
