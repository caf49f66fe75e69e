"""A held tool call on the dashboard: its server, tool and redacted arguments; approved there, it runs.

A real ``clawplane run`` hosts the gated fixture with ``toolApproval``; a real MCP client calls
its ``write_note`` through the hosted endpoint with the consumer token, and the call waits in
the folder's approval queue until the dashboard's answer.
"""

from __future__ import annotations

import html
import sys

import anyio
import httpx
import pytest
from tests.fixtures.servers.helpers import authed, script
from tests.integration.engine.conftest import CANARY
from tests.integration.runloop.conftest import wait_for
from tests.integration.ui.conftest import Dashboard, csrf_of

pytestmark = pytest.mark.anyio
GATED = f"""apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: gated
spec:
  command: {sys.executable}
  args: [{script("gated")}]
  toolApproval:
    tools:
      write_note: prompt
"""
WAIT_S = 60.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _text(result: object) -> str:
    return "\n".join(getattr(c, "text", "") for c in getattr(result, "content", ()))


async def test_a_held_tool_call_is_shown_and_answered_on_the_approvals_page(dashboard: Dashboard) -> None:
    (dashboard.loop.folder / "gated.yaml").write_text(GATED)

    def ready(client: httpx.Client) -> bool:
        return 'data-phase-of="McpServer/gated">Ready<' in client.get("/ui").text

    def pending_call(client: httpx.Client) -> str | None:
        page = client.get("/ui/approvals").text.split("<h2>Answered")[0]
        return page if 'class="facts tool-call"' in page else None

    with dashboard.login() as client:
        await anyio.to_thread.run_sync(lambda: wait_for("gated to be Ready", lambda: ready(client), timeout=WAIT_S))
        box: list[object] = []
        async with authed(f"{dashboard.base}/mcp/gated", token=dashboard.token("openclaw")) as mcp:

            async def call() -> None:
                box.append(await mcp.call_tool("write_note", {"title": "plan", "api_token": CANARY}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                page = await anyio.to_thread.run_sync(
                    lambda: wait_for("the held call on the page", lambda: pending_call(client), timeout=WAIT_S)
                )
                section = html.unescape(page.split('class="facts tool-call"')[1].split("</section>")[0])
                assert 'href="/ui/servers/gated"' in section and "write_note" in section
                assert '"title": "plan"' in section and '"api_token": "<redacted>"' in section
                assert CANARY not in page and not box
                approval = page.split('id="approval-')[1].split('"')[0]
                answer = client.post(
                    f"/ui/approvals/{approval}",
                    data={"csrf": csrf_of(page), "decision": "approve", "reason": "fine"},
                )
                assert answer.status_code == 303
        (result,) = box
        assert _text(result) == "wrote plan"
        answered = client.get("/ui/approvals").text.split("<h2>Answered")[1]
        assert approval in answered and "ui:cli" in answered
