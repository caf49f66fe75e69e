"""The loopback redirect listener of ``clawplane login`` (``runtimes/oauth/loopback.py``), over real sockets."""

from __future__ import annotations

import anyio
import httpx
import pytest

from clawplane.runtimes.oauth.interaction import LoginFailedError
from clawplane.runtimes.oauth.loopback import LoopbackCallback, NotLoopbackError

AUTH_URL = "https://as.example/authorize?response_type=code&state=expected-state&client_id=c"


async def _get(url: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.get(url)


def test_only_the_redirect_with_the_state_handed_out_completes_the_wait() -> None:
    """Another path is 404, another state 400 (the wait goes on), then the right one wins."""
    announced: list[str] = []

    async def main() -> tuple[str, list[int], str]:
        callback = await LoopbackCallback.open(None, announced.append)
        try:
            base = callback.redirect_uri
            assert base.startswith("http://127.0.0.1:") and base.endswith("/callback")
            await callback.redirect(AUTH_URL)
            statuses: list[int] = []
            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    result_box: list[str] = []

                    async def wait() -> None:
                        result = await callback.callback()
                        result_box.append(f"{result.code}|{result.state}|{result.iss}")

                    tg.start_soon(wait)
                    statuses.append((await _get(base.replace("/callback", "/other"))).status_code)
                    statuses.append((await _get(f"{base}?code=evil&state=forged")).status_code)
                    page = await _get(f"{base}?code=good&state=expected-state&iss=https%3A%2F%2Fas.example")
                    statuses.append(page.status_code)
            return result_box[0], statuses, page.text
        finally:
            await callback.aclose()

    result, statuses, page = anyio.run(main)
    assert announced == [AUTH_URL]
    assert statuses == [404, 400, 200]
    assert result == "good|expected-state|https://as.example"
    assert "Logged in" in page


def test_an_error_redirect_fails_the_login_with_the_reason_escaped() -> None:
    """``?error=…`` ends the wait with LoginFailedError; the page shows the reason HTML-escaped."""

    async def main() -> tuple[str, str]:
        callback = await LoopbackCallback.open(None, lambda url: None)
        try:
            await callback.redirect(AUTH_URL)
            pages: list[str] = []
            failure = ""
            url = f"{callback.redirect_uri}?error=access_denied&error_description=%3Cb%3Eno%3C/b%3E&state=expected-state"
            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:

                    async def wait() -> None:
                        nonlocal failure
                        try:
                            await callback.callback()
                        except LoginFailedError as exc:
                            failure = str(exc)

                    tg.start_soon(wait)
                    pages.append((await _get(url)).text)
            return failure, pages[0]
        finally:
            await callback.aclose()

    failure, page = anyio.run(main)
    assert "access_denied" in failure
    assert "Login failed" in page and "<b>no</b>" not in page and "&lt;b&gt;no&lt;/b&gt;" in page


def test_a_redirect_url_off_this_machine_is_refused() -> None:
    """``oauth.redirectUrl`` must be http on a loopback address: the redirect comes here."""

    async def main() -> None:
        await LoopbackCallback.open("https://app.example/callback", lambda url: None)

    with pytest.raises(NotLoopbackError, match=r"not an http:// URL on 127\.0\.0\.1"):
        anyio.run(main)
