"""The dashboard at ``/ui`` of a real ``clawplane run`` supervisor, over HTTP (httpx).

Tests that only read pages and log in and out share one supervisor (``shared_dashboard``);
a test that changes the folder or answers approvals gets its own (``dashboard``).
"""

from __future__ import annotations

import html
import json

import httpx
from tests.integration.engine.conftest import CANARY
from tests.integration.runloop.conftest import wait_for
from tests.integration.ui.conftest import Dashboard, csrf_of

PAGES = ("/ui", "/ui/servers/notes", "/ui/agents/writer", "/ui/plan", "/ui/approvals", "/ui/audit", "/ui/events")


def test_nothing_of_the_folder_before_login(shared_dashboard: Dashboard) -> None:
    with shared_dashboard.client() as client:
        for path in PAGES:
            answer = client.get(path)
            assert answer.status_code == 401, path
            assert 'action="/ui/login"' in answer.text
            for leak in ("notes", "writer", "McpServer", "Ready", str(shared_dashboard.loop.folder)):
                assert leak not in answer.text, (path, leak)


def test_login_keeps_a_session_cookie_not_the_token(shared_dashboard: Dashboard) -> None:
    token = shared_dashboard.token()
    with shared_dashboard.client() as client:
        wrong = client.post("/ui/login", data={"token": token[:-2] + "xx"})
        assert wrong.status_code == 401
        assert "not valid" in wrong.text and "set-cookie" not in wrong.headers
        answer = client.post("/ui/login", data={"token": token})
        assert answer.status_code == 303 and answer.headers["location"] == "/ui"
        cookie = answer.headers["set-cookie"]
        flags = [part.strip().lower() for part in cookie.split(";")]
        assert "httponly" in flags and "samesite=strict" in flags and "path=/ui" in flags
        assert token not in cookie
        overview = client.get("/ui")
        assert overview.status_code == 200
        for key in ("McpServer/notes", "McpServer/noisy", "Agent/writer", "Agent/coder", "Gateway/default"):
            assert f'data-key="{key}"' in overview.text
        assert "The folder is valid." in overview.text
        assert "default-src 'none'" in overview.headers["content-security-policy"]
        assert token not in overview.text
        # Logging out ends the session on the server, not only in the browser.
        sid = client.cookies.get("clawplane_ui")
        out = client.post("/ui/logout", data={"csrf": csrf_of(overview.text)})
        assert out.status_code == 303
    with httpx.Client(base_url=shared_dashboard.base, cookies={"clawplane_ui": sid or ""}) as replay:
        assert replay.get("/ui").status_code == 401


def test_a_token_without_read_scope_cannot_log_in(shared_dashboard: Dashboard) -> None:
    with shared_dashboard.client() as client:
        answer = client.post("/ui/login", data={"token": shared_dashboard.token("openclaw")})
        assert answer.status_code == 403 and "no read scope" in answer.text
        assert "set-cookie" not in answer.headers


def test_forms_need_the_session_csrf_token_and_our_origin(shared_dashboard: Dashboard) -> None:
    with shared_dashboard.login() as client:
        csrf = csrf_of(client.get("/ui").text)
        assert client.post("/ui/logout", data={}).status_code == 403
        forged = client.post("/ui/logout", data={"csrf": "forged"})
        # The error page is not a rendered view: its live stream starts at the newest event,
        # not at 0 (which replayed the whole backlog).
        assert forged.status_code == 403 and "<body" in forged.text and "data-events-after" not in forged.text
        no_origin = client.post("/ui/logout", data={"csrf": csrf}, headers={"Origin": ""})
        assert no_origin.status_code == 403
        other_port = client.post("/ui/logout", data={"csrf": csrf}, headers={"Origin": "http://127.0.0.1:1"})
        assert other_port.status_code == 403
        assert client.get("/ui").status_code == 200  # none of those logged out
        # A login form posted from another site is refused too (login CSRF).
        assert client.post("/ui/login", data={"token": shared_dashboard.token()}, headers={"Origin": ""}).status_code == 403


def test_foreign_host_and_origin_are_refused(shared_dashboard: Dashboard) -> None:
    with shared_dashboard.login() as client:
        assert client.get("/ui", headers={"Host": "evil.example"}).status_code == 421
        assert client.get("/ui", headers={"Origin": "http://evil.example"}).status_code == 403
        posted = client.post("/ui/login", data={"token": shared_dashboard.token()}, headers={"Origin": "http://evil.example"})
        assert posted.status_code == 403 and "set-cookie" not in posted.headers


def test_server_and_agent_pages_show_redacted_live_facts(shared_dashboard: Dashboard) -> None:
    with shared_dashboard.login() as client:
        def noisy_page() -> str | None:
            page = client.get("/ui/servers/noisy").text
            return page if "starting with token" in page else None

        noisy = wait_for("noisy's stderr on its page", noisy_page)
        assert CANARY not in noisy
        assert "starting with token &lt;redacted&gt;" in noisy
        assert "/mcp/noisy" in noisy and "notes__greet" not in noisy and "noisy__greet" in noisy
        assert "Greet someone with the configured greeting." in noisy
        coder = client.get("/ui/agents/coder").text
        excluded = coder.split('id="skills-excluded"')[1].split("</table>")[0]
        assert "release-notes" in excluded and "agent-filter" in excluded
        assert 'id="budget"' in coder and "&lt;available_skills&gt;" in coder
        for path in ("/ui", "/ui/agents/writer", "/ui/approvals"):
            assert CANARY not in client.get(path).text
        assert client.get("/ui/servers/nope").status_code == 404


def _events(client: httpx.Client, want: str, subject: str) -> dict[str, object]:
    """Read the SSE stream until an event of type ``want`` about ``subject`` arrives."""
    with client.stream("GET", "/ui/events", timeout=60) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                if event.get("type") == want and event.get("subject") == subject:
                    return dict(event)
    raise AssertionError("the stream ended")


def test_events_stream_a_phase_change(dashboard: Dashboard) -> None:
    folder = dashboard.loop.folder
    with dashboard.login() as client:
        with client.stream("GET", "/ui/events", timeout=60) as stream:
            (folder / "late.yaml").write_text((folder / "doomed-one.yaml").read_text().replace("doomed-one", "late"))
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    if event.get("subject") == "McpServer/late" and event.get("phase") == "Ready":
                        break
        assert "McpServer/late" in client.get("/ui").text


def test_the_stream_starts_where_the_page_was_rendered(dashboard: Dashboard) -> None:
    # What happens between a page's render and its EventSource connecting must still reach
    # it: on a busy machine a server can start and become Ready in that window.
    folder = dashboard.loop.folder
    with dashboard.login() as client:
        page = client.get("/ui").text
        after = int(page.split('data-events-after="')[1].split('"')[0])
        (folder / "late.yaml").write_text((folder / "doomed-one.yaml").read_text().replace("doomed-one", "late"))
        wait_for("late to be Ready", lambda: dashboard.loop.observed().get("McpServer/late", {}).get("phase") == "Ready")
        seen: list[dict[str, object]] = []
        with client.stream("GET", f"/ui/events?after={after}", timeout=60) as stream:
            for line in stream.iter_lines():
                if line.startswith(": keep-alive"):
                    break  # the backlog is over
                if line.startswith("data: "):
                    seen.append(json.loads(line[6:]))
                    if seen[-1].get("subject") == "McpServer/late" and seen[-1].get("phase") == "Ready":
                        break
        assert any(e.get("subject") == "McpServer/late" and e.get("phase") == "Ready" for e in seen), seen
        # A cursor from the future (an old tab after the state was reset) starts at the newest.
        with client.stream("GET", "/ui/events?after=99999999", timeout=60) as stream:
            assert stream.status_code == 200


def test_approve_and_reject_held_deletes(dashboard: Dashboard) -> None:
    folder, loop = dashboard.loop.folder, dashboard.loop

    def pending_for(name: str) -> str | None:
        page = client.get("/ui/approvals").text
        return page if f"delete McpServer/{name}" in page.split("<h2>Answered")[0] else None

    with dashboard.login() as client:
        (folder / "doomed-one.yaml").unlink()
        page = wait_for("a held delete of doomed-one", lambda: pending_for("doomed-one"))
        approval = page.split('id="approval-')[1].split('"')[0]
        answer = client.post(f"/ui/approvals/{approval}", data={"csrf": csrf_of(page), "decision": "approve", "reason": "retired"})
        assert answer.status_code == 303
        wait_for("doomed-one to go", lambda: "McpServer/doomed-one" not in loop.observed())
        (folder / "doomed-two.yaml").unlink()
        page = wait_for("a held delete of doomed-two", lambda: pending_for("doomed-two"))
        approval = page.split('id="approval-')[1].split('"')[0]
        again = client.post(f"/ui/approvals/{approval}", data={"csrf": csrf_of(page), "decision": "reject", "reason": "still needed"})
        assert again.status_code == 303
        answered = client.get("/ui/approvals").text.split("<h2>Answered")[1]
        assert "rejected" in answered and "still needed" in answered and "ui:cli" in answered
        # The approved request was carried out: the queue records it as applied.
        assert "applied" in answered and "the approved actions were applied" in answered
        assert "McpServer/doomed-two" in loop.status()
        # An answered request takes no second answer: a clear refusal, not a traceback.
        late = client.post(f"/ui/approvals/{approval}", data={"csrf": csrf_of(page), "decision": "approve"})
        assert late.status_code == 409


def test_plan_page_is_the_cli_plan_redacted(dashboard: Dashboard) -> None:
    folder, loop = dashboard.loop.folder, dashboard.loop
    with dashboard.login() as client:
        settled = client.get("/ui/plan").text
        assert "No changes: the running state matches the folder." in settled
        # A held delete stays in the plan until it is answered: what the folder would change now.
        (folder / "doomed-one.yaml").unlink()
        wait_for("a held delete", lambda: "approval-" in client.get("/ui/approvals").text or None)
        page = client.get("/ui/plan").text
        row = page.split('data-key="McpServer/doomed-one"')[1].split("</tr>")[0]
        assert ">delete<" in row
        assert "delete McpServer/doomed-one (rule server-deletes)" in page.split('id="plan-held"')[1]
        cli = loop.cli("plan", str(folder))
        text = html.unescape(page.split('<pre id="plan-text">')[1].split("</pre>")[0])
        assert text.strip() == cli.stdout.strip()
        assert CANARY not in page and CANARY not in cli.stdout
        (folder / "broken.yaml").write_text("apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: Bad_Name\n")
        broken = client.get("/ui/plan").text
        assert "No plan: the folder does not validate" in broken and "broken.yaml:" in broken


def test_audit_page_lists_applies_and_answers(dashboard: Dashboard) -> None:
    folder = dashboard.loop.folder
    with dashboard.login() as client:
        audit = client.get("/ui/audit").text
        applies = audit.split('id="applies"')[1].split("</table>")[0]
        assert "success" in applies and "@" in applies
        (folder / "doomed-one.yaml").unlink()

        def pending() -> str | None:
            page = client.get("/ui/approvals").text
            return page if 'id="approval-' in page else None

        page = wait_for("a held delete", pending)
        approval = page.split('id="approval-')[1].split('"')[0]
        client.post(f"/ui/approvals/{approval}", data={"csrf": csrf_of(page), "decision": "reject", "reason": "keep it"})
        answers = client.get("/ui/audit").text.split('id="answers"')[1]
        assert approval in answers and "rejected" in answers and "keep it" in answers and "ui:cli" in answers


def test_server_page_shows_its_recent_events(shared_dashboard: Dashboard) -> None:
    with shared_dashboard.login() as client:
        page = client.get("/ui/servers/notes").text
        events = page.split('id="events"')[1].split("</table>")[0]
        assert "ready" in events.lower() and "No events recorded" not in events
