"""The namespace dashboard of ``clawplane k8s run --ui-port`` in Debian's Chromium, on the real API server.

The operator runs under the chart's identity with the process kubelet running the server pods
(tests/k8s/real/operator_cluster.py); the control plane is tests/compat/kubernetes's.

Log in, watch a server added to the cluster go Ready without a reload, delete another and
approve its held delete from the Approvals page, and watch it leave the overview live.
Screenshots are saved as in ``test_dashboard_browser``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.browser.test_dashboard_browser import CHROMIUM, WAIT_MS, _nav, page, shots  # noqa: F401  (fixtures)
from tests.compat.kubernetes.conftest import admin, real_cluster  # noqa: F401  (the fixtures)
from tests.k8s.dashboard_run import NS, OBJECTS, TOKEN, WAIT_S, dashboard_options, in_namespace, server
from tests.k8s.operator_run import until, wait_for
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube
from tests.k8s.real.operator_cluster import RealApi, real_operator_cluster

assert CHROMIUM


@pytest.fixture
def board(real_cluster: RealCluster, admin: Kube, tmp_path: Path) -> Iterator[tuple[RealApi, str]]:  # noqa: F811
    with real_operator_cluster(real_cluster, admin, tmp_path, logical=(NS,), start=False) as cluster:
        options, urls = dashboard_options(cluster.namespace, tmp_path)
        cluster.op = cluster.start_operator(dashboard=options)
        url = wait_for("the dashboard to listen", lambda: urls[0] if urls else None, timeout=WAIT_S)
        for obj in OBJECTS:
            cluster.emu.apply_object(in_namespace(obj))
        yield cluster.emu, url


def test_the_namespace_dashboard_live_in_a_browser(board: tuple[RealApi, str], page: object, shots: Path) -> None:  # noqa: F811
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
    expect(page.locator("#source")).to_have_text(f"Namespace {emu.ns(NS)}")
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
