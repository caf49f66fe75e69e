"""The namespace dashboard of ``clawplane k8s run --ui-port`` in Debian's Chromium, against the emulator.

Log in, watch a server added to the cluster go Ready without a reload, delete another and
approve its held delete from the Approvals page, and watch it leave the overview live.
Screenshots are saved as in ``test_dashboard_browser``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.browser.test_dashboard_browser import CHROMIUM, WAIT_MS, _nav, page, shots  # noqa: F401  (fixtures)
from tests.integration.k8s.conftest import emulator  # noqa: F401  (the fixture)
from tests.k8s.dashboard_run import NS, OBJECTS, TOKEN, dashboard_operator, in_namespace, server
from tests.k8s.emulator import EmulatorThread
from tests.k8s.operator_run import until

assert CHROMIUM


@pytest.fixture
def board(emulator: EmulatorThread, tmp_path: Path) -> Iterator[tuple[EmulatorThread, str]]:  # noqa: F811
    with dashboard_operator(emulator, tmp_path) as url:
        for obj in OBJECTS:
            emulator.apply_object(in_namespace(obj))
        yield emulator, url


def test_the_namespace_dashboard_live_in_a_browser(board: tuple[EmulatorThread, str], page: object, shots: Path) -> None:  # noqa: F811
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    emu, url = board
    page.goto(url)
    page.get_by_label("Folder token").fill("not-the-token-of-this-dashboard")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("not valid")
    page.get_by_label("Folder token").fill(TOKEN)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(page.locator("#source")).to_have_text(f"Namespace {NS}")
    expect(page.locator("#live")).to_have_text("live", timeout=WAIT_MS)
    for name in ("notes", "other"):
        expect(page.locator(f'[data-phase-of="McpServer/{name}"]')).to_have_text("Ready", timeout=WAIT_MS)

    page.evaluate("window.__notReloaded = true")
    emu.apply_object(in_namespace(server("late")))
    expect(page.locator('[data-phase-of="McpServer/late"]')).to_have_text("Ready", timeout=WAIT_MS)
    assert page.evaluate("window.__notReloaded === true")
    page.screenshot(path=str(shots / "k8s-overview.png"), full_page=True)

    emu.delete_object("mcpservers", NS, "other")
    _nav(page, "Approvals")
    held = page.locator("section.approval", has_text="McpServer/other")
    expect(held).to_be_visible(timeout=WAIT_MS)
    page.screenshot(path=str(shots / "k8s-approvals.png"), full_page=True)
    _nav(page, "Plan")
    expect(page.locator("#plan-held")).to_contain_text("server-deletes")
    page.screenshot(path=str(shots / "k8s-plan.png"), full_page=True)

    _nav(page, "Approvals")
    page.locator("section.approval", has_text="McpServer/other").get_by_label("Reason").fill("retired")
    page.locator("section.approval", has_text="McpServer/other").get_by_role("button", name="Approve").click()
    expect(page.locator("#answered")).to_contain_text("McpServer/other", timeout=WAIT_MS)
    _nav(page, "Overview")
    page.evaluate("window.__notReloaded = true")
    expect(page.locator('[data-key="McpServer/other"]')).to_have_count(0, timeout=WAIT_MS)
    assert page.evaluate("window.__notReloaded === true")
    until(emu, "mcp-other's Deployment to go", lambda: emu.get("deployments", NS, "mcp-other") is None)
    _nav(page, "Audit")
    expect(page.locator("#answers")).to_contain_text("ui:dashboard")
    page.screenshot(path=str(shots / "k8s-audit.png"), full_page=True)
