"""The dashboard in a real browser: Debian's Chromium driven by Playwright, against ``clawplane run``.

Chromium comes from ``apt-get install chromium`` (``.ci/run`` installs it); Playwright's own
browser download cannot work offline, so ``executable_path`` points at the system one.
Screenshots of each page are saved as artefacts: under ``$CLAWPLANE_SCREENSHOTS`` when set,
else under the test's directory.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
def shots(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """Where this test saves its screenshots."""
    root = os.environ.get("CLAWPLANE_SCREENSHOTS")
    folder = Path(root) / request.node.name if root else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _log_in(page: object, board: Dashboard) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto(board.base + "/ui")
    page.get_by_label("Folder token").fill(board.token())
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(page.locator("#live")).to_have_text("live", timeout=WAIT_MS)


def _nav(page: object, name: str) -> None:
    """Follow the header's link to page ``name``."""
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    page.get_by_role("navigation", name="pages").get_by_role("link", name=name, exact=True).click()


@pytest.fixture
def page(tmp_path: Path) -> Iterator[object]:
    with playwright_sync.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser.new_page()
        finally:
            browser.close()


def test_log_in_and_watch_a_server_arrive_live(dashboard: Dashboard, page: object, shots: Path) -> None:  # noqa: F811
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto(dashboard.base + "/ui")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.get_by_label("Folder token").fill("clawplane_wrong")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("not valid")
    expect(page.locator("table")).to_have_count(0)  # nothing of the folder for a wrong token
    page.screenshot(path=str(shots / "login-refused.png"), full_page=True)

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


def test_break_the_folder_and_fix_it_live(dashboard: Dashboard, page: object, shots: Path) -> None:  # noqa: F811
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    _log_in(page, dashboard)
    page.evaluate("window.__notReloaded = true")
    folder = dashboard.loop.folder
    broken = folder / "noisy.yaml"
    good = broken.read_text()
    broken.write_text(good.replace("kind: McpServer", "kind: McpServer\nspec_typo: 1", 1))
    state = page.locator("#folder-state")
    expect(state).to_contain_text("The folder is invalid", timeout=WAIT_MS)
    expect(state).to_contain_text(re.compile(r"noisy\.yaml:\d+"))
    assert page.evaluate("window.__notReloaded === true")
    page.screenshot(path=str(shots / "overview-invalid.png"), full_page=True)
    _nav(page, "Plan")
    expect(page.locator("#plan-state")).to_contain_text("does not validate")
    expect(page.locator("#plan-state")).to_contain_text(re.compile(r"noisy\.yaml:\d+"))
    page.screenshot(path=str(shots / "plan-invalid.png"), full_page=True)

    _nav(page, "Overview")
    page.evaluate("window.__notReloaded = true")
    broken.write_text(good)
    expect(state).to_have_text("The folder is valid.", timeout=WAIT_MS)
    assert page.evaluate("window.__notReloaded === true")
    expect(page.locator('[data-phase-of="McpServer/noisy"]')).to_have_text("Ready")


def test_approve_one_held_delete_and_reject_another(dashboard: Dashboard, page: object, shots: Path) -> None:  # noqa: F811
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    _log_in(page, dashboard)
    folder = dashboard.loop.folder
    (folder / "doomed-one.yaml").unlink()
    _nav(page, "Plan")
    expect(page.locator('#plan-changes [data-key="McpServer/doomed-one"]')).to_contain_text("delete", timeout=WAIT_MS)
    expect(page.locator("#plan-held")).to_contain_text("server-deletes")
    page.screenshot(path=str(shots / "plan.png"), full_page=True)

    _nav(page, "Approvals")
    held = page.locator("section.approval", has_text="McpServer/doomed-one")
    expect(held).to_be_visible(timeout=WAIT_MS)
    page.screenshot(path=str(shots / "approvals-pending.png"), full_page=True)
    # Answered with the keyboard alone: the reason field, then Tab to Approve, then Enter.
    held.get_by_label("Reason").fill("retired")
    held.get_by_label("Reason").press("Tab")
    expect(held.get_by_role("button", name="Approve")).to_be_focused()
    page.keyboard.press("Enter")
    # Answered (its reason "retired"), then applied: the queue then records that it was carried out.
    expect(page.locator("#answered")).to_contain_text("McpServer/doomed-one", timeout=WAIT_MS)

    _nav(page, "Overview")
    page.evaluate("window.__notReloaded = true")
    expect(page.locator('[data-key="McpServer/doomed-two"]')).to_be_visible()
    # The approved delete is carried out, and the page follows without a reload.
    expect(page.locator('[data-key="McpServer/doomed-one"]')).to_have_count(0, timeout=WAIT_MS)
    assert page.evaluate("window.__notReloaded === true")

    (folder / "doomed-two.yaml").unlink()
    _nav(page, "Approvals")
    other = page.locator("section.approval", has_text="McpServer/doomed-two")
    expect(other).to_be_visible(timeout=WAIT_MS)
    other.get_by_label("Reason").fill("still needed")
    other.get_by_role("button", name="Reject").click()
    answered = page.locator("#answered")
    expect(answered).to_contain_text("still needed", timeout=WAIT_MS)
    expect(answered).to_contain_text("rejected")
    page.screenshot(path=str(shots / "approvals-answered.png"), full_page=True)
    _nav(page, "Overview")
    expect(page.locator('[data-key="McpServer/doomed-two"]')).to_be_visible()

    _nav(page, "Audit")
    expect(page.locator("#answers")).to_contain_text("still needed")
    expect(page.locator("#answers")).to_contain_text("the approved actions were applied")
    expect(page.locator("#applies")).to_contain_text("success")
    page.screenshot(path=str(shots / "audit.png"), full_page=True)
    page.goto(dashboard.base + "/ui/servers/notes")
    expect(page.locator("#events")).to_contain_text("ready")
    page.screenshot(path=str(shots / "server-events.png"), full_page=True)


class _Attacker(BaseHTTPRequestHandler):
    """A page on another loopback origin whose form posts to the dashboard when it loads."""

    target = ""

    def do_GET(self) -> None:
        body = (
            "<!doctype html><title>elsewhere</title>"
            f'<form id="f" method="post" action="{self.target}/ui/logout">'
            '<input name="csrf" value="guessed"></form>'
            '<script>document.getElementById("f").submit()</script>'
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def attacker(dashboard: Dashboard) -> Iterator[str]:  # noqa: F811
    """The base URL of a page served from another loopback origin."""
    handler = type("Attacker", (_Attacker,), {"target": dashboard.base})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_form_posted_from_a_foreign_origin_is_refused(
    dashboard: Dashboard, page: object, attacker: str, shots: Path  # noqa: F811
) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    _log_in(page, dashboard)
    # Another port of 127.0.0.1 is the same site, so the SameSite cookie goes along: the
    # Origin check is what refuses the post.
    with page.expect_response(lambda r: r.url.endswith("/ui/logout")) as posted:
        page.goto(attacker + "/")
    assert posted.value.status == 403
    assert posted.value.request.headers.get("origin") == attacker
    expect(page.locator("main")).to_contain_text("cross-site form posts are refused")
    page.screenshot(path=str(shots / "foreign-origin-refused.png"), full_page=True)
    # The session survived the attempt.
    page.goto(dashboard.base + "/ui")
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    # The same through the browser's request API with a foreign Origin (and the session cookie).
    foreign = page.request.post(
        dashboard.base + "/ui/logout", form={"csrf": "x"}, headers={"Origin": "http://evil.example"}
    )
    assert foreign.status == 403
    page.goto(dashboard.base + "/ui")
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()


def test_a_held_tool_call_is_answered_in_the_browser(dashboard: Dashboard, page: object, shots: Path) -> None:  # noqa: F811
    import anyio
    from playwright.sync_api import Page, expect
    from tests.fixtures.servers.helpers import authed
    from tests.integration.ui.test_tool_approvals_page import GATED

    assert isinstance(page, Page)
    (dashboard.loop.folder / "gated.yaml").write_text(GATED)
    _log_in(page, dashboard)
    expect(page.locator('[data-phase-of="McpServer/gated"]')).to_have_text("Ready", timeout=WAIT_MS)
    results: list[str] = []

    async def call() -> None:
        async with authed(f"{dashboard.base}/mcp/gated", token=dashboard.token("openclaw")) as mcp:
            result = await mcp.call_tool("write_note", {"title": "plan", "api_token": CANARY})
            results.append("\n".join(getattr(c, "text", "") for c in result.content))

    caller = threading.Thread(target=anyio.run, args=(call,), daemon=True)
    caller.start()
    _nav(page, "Approvals")
    held = page.locator("section.approval", has_text="write_note")
    expect(held.locator(".tool-arguments")).to_contain_text('"api_token": "<redacted>"', timeout=WAIT_MS)
    expect(held.locator(".tool-call")).to_contain_text("gated")
    assert CANARY not in page.content()
    page.screenshot(path=str(shots / "approvals-tool-call.png"), full_page=True)
    held.get_by_label("Reason").fill("fine")
    held.get_by_role("button", name="Approve").click()
    caller.join(timeout=WAIT_MS / 1000)
    assert results == ["wrote plan"]
