"""``clawplane login`` against a real OpenID provider on loopback, through its pages in Chromium.

The provider is panva's oidc-provider (``tests/support/oidc.py``: dynamic registration, PKCE,
resource indicators, introspection, revocation, short-lived access tokens); the MCP server
checks every bearer token by introspection. One folder declares the server with
``auth: oauth`` and goes through the whole life of a login:

1. before any login, ``apply`` leaves it ``LoginRequired`` (not Failed), naming the command;
2. ``clawplane login --no-browser`` prints the authorization URL; Chromium (Debian's, driven
   by Playwright) opens it, signs in and consents on the provider's pages, and the redirect
   reaches the loopback listener: the command reports the server's tools;
3. ``apply`` discovers the tools with the stored token;
4. once the access token has expired (the provider says inactive), the next probe refreshes
   it: the stored token is a new, active one and the server is Ready again; a token the
   server refuses before its time (a 401) is refreshed the same way;
5. ``logout`` revokes: the provider says both tokens are inactive, and the credential is gone;

and no access or refresh token appears in any file under the folder (state directory and
supervisor log included) except sealed, nor in any command's output.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.compat.conftest import require_oracle
from tests.support.oidc import Issuer, oidc_provider, protected_server

from clawplane.state import StateDB
from clawplane.state.oauth import CredentialStore

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
playwright_sync = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip("Chromium is not installed (apt-get install chromium; .ci/run does it)", allow_module_level=True)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

TTL = 5
"""Seconds an access token lives: short, so the test sees one expire and be refreshed."""
WAIT_S = 120.0
ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str | Path, outputs: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", *map(str, args)],
        capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    outputs.append(proc.stdout + proc.stderr)
    return proc


def _server_status(folder: Path, outputs: list[str]) -> dict[str, object]:
    import json

    proc = _cli("status", folder, "--json", outputs=outputs)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found: dict[str, object] = next(r for r in json.loads(proc.stdout)["resources"] if r["name"] == "notes")
    return found


def _document(state: Path) -> dict[str, Any] | None:
    """The stored credential, opened with the folder's key as the supervisor does."""
    db = StateDB.open(state, create=False)
    try:
        found = CredentialStore.open(db, create_key=False).get("notes")
    finally:
        db.close()
    return None if found is None else found.document


def _stored(state: Path) -> tuple[str, str] | None:
    """The stored (access, refresh) tokens."""
    doc = _document(state)
    if doc is None:
        return None
    return doc["tokens"]["access_token"], doc["tokens"]["refresh_token"]


def _write_server(folder: Path, url: str, extra: str = "") -> None:
    (folder / "notes.yaml").write_text(
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: notes\n"
        f"spec:\n  url: {url}\n  transport: streamable-http\n  auth: oauth\n{extra}",
        encoding="utf-8",
    )


def _read_url(proc: subprocess.Popen[bytes]) -> tuple[str, str]:
    """The authorization URL ``clawplane login`` printed, and everything it printed until then."""
    assert proc.stdout is not None
    seen, deadline = b"", time.monotonic() + WAIT_S
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while (match := re.search(rb"(http://127\.0\.0\.1:\d+/auth\?\S+)", seen)) is None:
            left = deadline - time.monotonic()
            assert left > 0 and sel.select(left), f"no authorization URL printed: {seen!r}"
            chunk = os.read(proc.stdout.fileno(), 4096)
            assert chunk, f"login ended before printing a URL: {seen!r}"
            seen += chunk
    return match.group(1).decode(), seen.decode()


def _log_in_with_chromium(url: str) -> str:
    """Sign in and consent on the provider's pages; the text of the loopback page it ends on."""
    from playwright.sync_api import expect

    with playwright_sync.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            # The provider's pages pull a web font; nothing leaves loopback.
            page.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort())
            page.goto(url)
            page.locator("input[name=login]").fill("alice")
            page.locator("input[name=password]").fill("any password")
            page.get_by_role("button", name="Sign-in").click()
            page.get_by_role("button", name="Continue").click()
            expect(page.locator("body")).to_contain_text("Logged in", timeout=WAIT_S * 1000)
            return page.locator("body").inner_text()
        finally:
            browser.close()


def login_in_chromium(*args: str | Path) -> tuple[int, str, str, str]:
    """Run ``clawplane ARGS --no-browser``, log in through Chromium at the URL it prints.

    Returns the exit code, the authorization URL, what it printed until then (and the loopback
    page's text) and what it printed after.
    """
    login = subprocess.Popen(
        [sys.executable, "-m", "clawplane", *map(str, args), "--no-browser", "--timeout", str(int(WAIT_S))],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "2000"},
    )  # fmt: skip
    try:
        auth_url, printed = _read_url(login)
        page_text = _log_in_with_chromium(auth_url)
        rest = login.communicate(timeout=WAIT_S)[0].decode()
    finally:
        if login.poll() is None:
            login.kill()
            login.wait(10)
    return login.returncode, auth_url, printed + page_text, rest


def _wait_inactive(issuer: Issuer, token: str) -> None:
    """Until the provider says ``token`` expired (it lives ``TTL`` seconds)."""
    deadline = time.monotonic() + TTL + WAIT_S
    while issuer.introspect(token).get("active"):
        assert time.monotonic() < deadline, "the access token never expired"
        time.sleep(0.25)  # waiting on the provider's clock, not on another component


def test_login_discovers_refreshes_and_logout_revokes(tmp_path: Path) -> None:
    require_oracle("oidc-provider")
    folder = tmp_path / "folder"
    folder.mkdir()
    state = folder / ".clawplane"
    outputs: list[str] = []
    with oidc_provider(tmp_path, ttl=TTL) as issuer, protected_server(issuer, tmp_path) as url:
        _write_server(folder, url)
        try:
            # 1. Nobody logged in yet: waiting on the operator, with the command to run.
            assert _cli("apply", folder, "--yes", outputs=outputs).returncode == 0, outputs[-1]
            before = _server_status(folder, outputs)
            assert before["phase"] == "LoginRequired", before
            ready = next(c for c in before["conditions"] if c["type"] == "Ready")  # type: ignore[attr-defined]
            assert f"run `clawplane login {folder} notes`" in ready["message"], ready

            # 2. The login, through the provider's pages in Chromium.
            code, auth_url, printed, rest = login_in_chromium("login", folder, "notes")
            assert "code_challenge_method=S256" in auth_url and "resource=" in auth_url
            outputs.append(printed + rest)
            assert code == 0, printed + rest
            assert "logged in to notes: 2 tools" in rest, rest
            first = _stored(state)
            assert first is not None and issuer.introspect(first[0])["active"] is True

            # 3. apply discovers the tools with the stored token.
            assert _cli("apply", folder, "--yes", outputs=outputs).returncode == 0, outputs[-1]
            after = _server_status(folder, outputs)
            assert (after["phase"], after["toolCount"]) == ("Ready", 2), after

            # 4. Expired: the next probe (a spec change) refreshes and stores the new token.
            _wait_inactive(issuer, first[0])
            _write_server(folder, url, "  requestTimeoutMs: 30000\n")
            assert _cli("apply", folder, "--yes", outputs=outputs).returncode == 0, outputs[-1]
            refreshed = _server_status(folder, outputs)
            assert (refreshed["phase"], refreshed["toolCount"]) == ("Ready", 2), refreshed
            second = _stored(state)
            assert second is not None and second[0] != first[0]
            assert issuer.introspect(second[0])["active"] is True

            # 4b. A token the server refuses before its time: a 401, and the refresh token helps.
            (tmp_path / "refused-tokens").write_text(second[0] + "\n", encoding="utf-8")
            _write_server(folder, url, "  requestTimeoutMs: 40000\n")
            assert _cli("apply", folder, "--yes", outputs=outputs).returncode == 0, outputs[-1]
            again = _server_status(folder, outputs)
            assert (again["phase"], again["toolCount"]) == ("Ready", 2), again
            third = _stored(state)
            assert third is not None and third[0] not in (first[0], second[0])
            second = third

            # 5. logout revokes both tokens at the provider and deletes the credential.
            done = _cli("logout", folder, "notes", outputs=outputs)
            assert done.returncode == 0 and "tokens revoked" in done.stdout, done.stdout + done.stderr
            assert issuer.introspect(second[1])["active"] is False
            assert issuer.introspect(second[0])["active"] is False
            assert _stored(state) is None
        finally:
            _cli("down", folder, outputs=outputs)

    canaries = {t for pair in (first, second) for t in pair}
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            leaked = [t for t in canaries if t.encode() in data]
            assert not leaked, f"a token is in {path} in the clear"
    for text in outputs:
        assert not [t for t in canaries if t in text], "a token was printed"
