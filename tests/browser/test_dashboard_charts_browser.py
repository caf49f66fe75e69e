"""The dashboard's traffic charts in a real browser, after real calls through ``clawplane run``.

Real SDK clients call the quickstart's ``notes`` server through the hosted endpoint
(``/mcp/notes``) and through the ``coder`` agent's endpoint (``/mcp/agents/coder``); Debian's
Chromium, driven by Playwright, reads the Server, Agent and Overview pages. What a chart's
words must say is counted on the client's side: every JSON-RPC request its HTTP client posted
(the handshake aside, which the charts leave out) and every call that came back failed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from tests.browser.test_dashboard_browser import CHROMIUM, playwright_sync  # (and its skip without Chromium)
from tests.integration.ui.conftest import Dashboard, dashboard  # noqa: F401  (the fixture)

WAIT_MS = 30_000
"""Charts are re-read every 5 s; a busy 2-core machine gets 30 s."""
PNG = b"\x89PNG\r\n\x1a\n"


@dataclass
class Sent:
    """What one client did: requests it posted (its handshake, ``initialize`` or ``server/discover``,
    aside: the charts leave it out) and calls that failed."""

    requests: int = 0
    failed: int = 0
    methods: list[str] = field(default_factory=list)


def _call(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> Sent:
    """Make ``calls`` (tool, arguments) with a real SDK client, off the browser's thread."""
    sent = Sent()

    async def count(request: Any) -> None:
        if request.method != "POST":
            return
        body = json.loads(request.content or b"null")
        for msg in body if isinstance(body, list) else [body]:
            if isinstance(msg, dict) and "id" in msg and "method" in msg:
                sent.methods.append(msg["method"])
                sent.requests += msg["method"] not in ("initialize", "server/discover")

    async def run() -> None:
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=30, event_hooks={"request": [count]}
        )
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=30) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            for tool, arguments in calls:
                name = next(n for n in names if n == tool or n.endswith("__" + tool))
                try:
                    result = await client.call_tool(name, arguments)
                    sent.failed += bool(result.is_error)
                except MCPError:
                    sent.failed += 1

    # Playwright's sync API owns this thread's event loop: the client runs on its own.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, run).result()
    return sent


GOOD = [("greet", {"name": f"caller {n}"}) for n in range(4)]
BAD: list[tuple[str, dict[str, Any]]] = [
    ("greet", {})
]  # a missing argument: an isError result, an error on the chart


def _summary(sent: Sent) -> re.Pattern[str]:
    calls, errors = sent.requests, sent.failed
    return re.compile(
        rf"^{calls} call{'' if calls == 1 else 's'}, {errors} error{'' if errors == 1 else 's'} "
        r"(in the last hour|since \d\d:\d\d:\d\d UTC \(the supervisor started then\)); p50 [0-9.]+ ms"
    )


def _png(path: Path) -> None:
    data = path.read_bytes()
    assert len(data) > len(PNG) and data.startswith(PNG), path


@pytest.fixture
def shots(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """Where this test saves its screenshots."""
    root = os.environ.get("CLAWPLANE_SCREENSHOTS")
    folder = Path(root) / request.node.name if root else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def browser() -> Iterator[Any]:
    with playwright_sync.sync_playwright() as p:
        found = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield found
        finally:
            found.close()


def _log_in(page: Any, board: Dashboard) -> None:
    from playwright.sync_api import expect

    page.goto(board.base + "/ui")
    page.get_by_label("Folder token").fill(board.token())
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()


def test_charts_show_real_traffic_and_follow_it_live(dashboard: Dashboard, browser: Any, shots: Path) -> None:  # noqa: F811
    from playwright.sync_api import expect

    page = browser.new_page()
    refused: list[str] = []  # what the pages' strict CSP blocked, as Chromium reports it
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    _log_in(page, dashboard)
    expect(page.locator("#live")).to_have_text("live", timeout=WAIT_MS)

    hosted = _call(f"{dashboard.base}/mcp/notes", dashboard.token("openclaw"), GOOD + BAD)
    assert hosted.failed == 1 and hosted.requests >= 6
    page.goto(dashboard.base + "/ui/servers/notes")
    expect(page.locator("#traffic-summary")).to_have_text(_summary(hosted))
    calls = page.locator("#chart-calls svg")
    expect(calls).to_have_attribute("aria-label", re.compile(r"^notes: calls .* per minute"))
    bars = page.locator("#chart-calls g.bar")
    assert sum(int(b.get_attribute("data-calls") or 0) for b in bars.all()) == hosted.requests
    assert sum(int(b.get_attribute("data-errors") or 0) for b in bars.all()) == 1
    expect(page.locator("#chart-calls rect.errors")).not_to_have_count(0)
    expect(page.locator("#chart-latency path.p50")).to_have_count(1)
    page.screenshot(path=str(shots / "server.png"), full_page=True)
    _png(shots / "server.png")

    # More calls while the page is open: the charts follow without a reload.
    page.evaluate("window.__notReloaded = true")
    more = _call(f"{dashboard.base}/mcp/notes", dashboard.token("openclaw"), GOOD)
    both = Sent(hosted.requests + more.requests, hosted.failed + more.failed)
    expect(page.locator("#traffic-summary")).to_have_text(_summary(both), timeout=WAIT_MS)
    assert page.evaluate("window.__notReloaded === true")
    page.screenshot(path=str(shots / "server-live.png"), full_page=True)
    _png(shots / "server-live.png")

    agent = _call(f"{dashboard.base}/mcp/agents/coder", dashboard.token("agent:coder"), GOOD + BAD)
    assert agent.failed == 1
    page.goto(dashboard.base + "/ui/agents/coder")
    # The agent's endpoint answers server/discover itself (it merges its servers); coder reaches
    # one server (notes), so each of its other requests is carried there exactly once.
    carried = Sent(agent.requests, agent.failed)
    assert carried.requests == len(GOOD + BAD) + 1  # and one tools/list
    expect(page.locator("#traffic-summary")).to_have_text(_summary(carried))
    expect(page.locator("#chart-calls svg")).to_have_attribute("aria-label", re.compile(r"^coder: calls"))
    page.screenshot(path=str(shots / "agent.png"), full_page=True)
    _png(shots / "agent.png")

    page.goto(dashboard.base + "/ui")
    servers = page.locator('#resources tbody tr[data-key^="McpServer/"]')
    expect(servers).not_to_have_count(0)
    for row in servers.all():
        name = (row.get_attribute("data-key") or "").removeprefix("McpServer/")
        spark = row.locator(".spark svg.sparkline")
        expect(spark).to_have_count(1)
        expect(spark).to_have_attribute(
            "aria-label", re.compile(rf"^{re.escape(name)}: \d+ calls? in the last hour$")
        )
    total = hosted.requests + more.requests + carried.requests
    expect(page.locator("#spark-notes .spark-calls")).to_have_text(re.compile(rf"^{total}\s+calls$"))
    page.screenshot(path=str(shots / "overview.png"), full_page=True)
    _png(shots / "overview.png")
    assert refused == []
    print(f"screenshots: {shots}")


def test_charts_read_without_javascript(dashboard: Dashboard, browser: Any, shots: Path) -> None:  # noqa: F811
    from playwright.sync_api import expect

    _call(f"{dashboard.base}/mcp/notes", dashboard.token("openclaw"), GOOD)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    _log_in(page, dashboard)
    expect(page.locator("#live")).to_have_text("static")  # the script never ran
    page.goto(dashboard.base + "/ui/servers/notes")
    expect(page.locator("#chart-calls svg g.bar")).not_to_have_count(0)
    expect(page.locator("#chart-latency svg")).to_have_count(1)
    expect(page.locator("#traffic-summary")).to_contain_text(re.compile(r"^\d+ calls, 0 errors"))
    page.screenshot(path=str(shots / "server-no-js.png"), full_page=True)
    _png(shots / "server-no-js.png")
    context.close()
