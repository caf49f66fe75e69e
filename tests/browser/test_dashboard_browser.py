"""The dashboard in a real browser: Debian's Chromium driven by Playwright, against ``clawplane run``.

Chromium comes from ``apt-get install chromium`` (``.ci/run`` installs it); Playwright's own
browser download cannot work offline, so ``executable_path`` points at the system one.
Screenshots of each page are saved under the test's directory as artefacts.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.integration.engine.conftest import CANARY
from tests.integration.ui.conftest import Dashboard, dashboard  # noqa: F401  (the fixture)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
playwright_sync = pytest.importorskip("playwright.sync_api")

if not Path(CHROMIUM).exists():
    pytest.skip("Chromium is not installed (apt-get install chromium; .ci/run does it)", allow_module_level=True)

# Page loads and SSE round trips take well under a second here; a busy 2-core machine gets 30 s.
WAIT_MS = 30_000


@pytest.fixture
def page(tmp_path: Path) -> Iterator[object]:
    with playwright_sync.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser.new_page()
        finally:
            browser.close()


def test_log_in_and_watch_a_server_arrive_live(dashboard: Dashboard, page: object, tmp_path: Path) -> None:  # noqa: F811
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    page.goto(dashboard.base + "/ui")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.get_by_label("Folder token").fill("clawplane_wrong")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("not valid")

    page.get_by_label("Folder token").fill(dashboard.token())
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(page.locator('[data-phase-of="McpServer/notes"]')).to_have_text("Ready")
    expect(page.locator("#live")).to_have_text("live", timeout=WAIT_MS)
    page.screenshot(path=str(shots / "overview.png"), full_page=True)

    # A marker in the page's memory: it survives only if the page is never reloaded.
    page.evaluate("window.__notReloaded = true")
    folder = dashboard.loop.folder
    (folder / "late.yaml").write_text((folder / "doomed-one.yaml").read_text().replace("doomed-one", "late"))
    expect(page.locator('[data-phase-of="McpServer/late"]')).to_have_text("Ready", timeout=WAIT_MS)
    assert page.evaluate("window.__notReloaded === true")
    page.screenshot(path=str(shots / "overview-live.png"), full_page=True)

    page.get_by_role("link", name="coder").click()
    excluded = page.locator("#skills-excluded")
    expect(excluded).to_contain_text("release-notes")
    expect(excluded).to_contain_text("agent-filter")
    page.screenshot(path=str(shots / "agent.png"), full_page=True)

    page.goto(dashboard.base + "/ui/servers/noisy")
    expect(page.locator("#stderr")).to_contain_text("starting with token <redacted>", timeout=WAIT_MS)
    assert CANARY not in page.content()
    page.screenshot(path=str(shots / "server.png"), full_page=True)

    # The cookie is out of the page's reach (HttpOnly) and stays on this site (SameSite=Strict).
    assert page.evaluate("document.cookie") == ""
    cookie = next(c for c in page.context.cookies() if c["name"] == "clawplane_ui")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"

    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.goto(dashboard.base + "/ui")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
