"""The audit page's Tool calls in a real browser: a tool named like markup is shown as text, never run.

A client calls the quickstart's hosted ``notes`` server with the ``openclaw`` token, once with a
tool named as an HTML element whose error handler would open a dialog; Chromium then shows the
audit page, where the name must be plain text (no dialog, no element), and the filter form (a
plain GET form, no JavaScript) narrows the table to the calls it names.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import pytest
from tests.browser.test_dashboard_browser import CHROMIUM, WAIT_MS, _log_in, _nav, playwright_sync, shots  # noqa: F401 (the fixture)
from tests.fixtures.servers.helpers import authed
from tests.integration.runloop.conftest import wait_for
from tests.integration.ui.conftest import Dashboard, dashboard  # noqa: F401  (the fixture)

MARKUP_TOOL = "<img src=x onerror=alert(1)>"


@pytest.fixture
def page() -> Iterator[object]:
    with playwright_sync.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser.new_page()
        finally:
            browser.close()


async def _calls(url: str, token: str) -> None:
    async with authed(url, token, mode="auto") as client:
        await client.list_tools()
        await client.call_tool(MARKUP_TOOL, {})
        await client.call_tool("another_unknown_tool", {})


def test_tool_calls_are_shown_as_text_and_filtered(dashboard: Dashboard, page: object, shots: Path) -> None:  # noqa: F811 (fixtures)
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    folder = dashboard.loop.folder
    # Playwright's sync API runs an event loop on this thread: the MCP client gets a thread of its own.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, _calls, f"{dashboard.base}/mcp/notes", dashboard.token("openclaw")).result(
            timeout=120
        )
    wait_for(
        "both calls in the trail",
        lambda: (
            len(dashboard.loop.cli.json("audit", str(folder), "--json", "--server", "notes")) >= 2 or None
        ),
    )
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    _log_in(page, dashboard)
    _nav(page, "Audit")
    calls = page.locator("#calls")
    expect(calls).to_contain_text(MARKUP_TOOL, timeout=WAIT_MS)
    expect(calls).to_contain_text("another_unknown_tool")
    expect(calls.locator("img")).to_have_count(0)
    page.screenshot(path=str(shots / "audit-tool-calls.png"), full_page=True)

    page.get_by_role("textbox", name="Tool", exact=True).fill(MARKUP_TOOL)
    page.get_by_role("button", name="Filter").click()
    expect(calls).not_to_contain_text("another_unknown_tool", timeout=WAIT_MS)
    expect(calls).to_contain_text(MARKUP_TOOL)
    assert "tool=" in page.url
    page.get_by_role("combobox", name="Outcome").select_option("refused")
    page.get_by_role("button", name="Filter").click()
    expect(calls).to_contain_text("No tool calls recorded that match", timeout=WAIT_MS)
    assert dialogs == []
