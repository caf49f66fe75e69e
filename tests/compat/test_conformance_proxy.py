"""The MCP conformance suite (0.1.16, ``--suite all``) through clawplane's proxy.

The conformance fixture runs as a stdio server (b) behind ``clawplane bridge`` and (c) behind a
folder supervisor's hosted endpoint, reached with the token from the rendered ``openclaw.json``.
Every scenario that passes directly (``conformance_direct``) must pass through both; the suite
cannot send headers, so it talks to the test-side token forwarder. The suite opens a session per
scenario and never closes one, so both get ``maxSessions: 64`` (the default 32 would refuse the
last scenarios, as documented).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from tests.compat.conftest import SuiteRunner
from tests.fixtures.servers.helpers import TOKEN
from tests.support import conformance

PROXIED_SUITE_TIMEOUT = 240.0
"""Behind the proxy every scenario's session starts a fixture process of its own (perClient):
~1 s each when idle (``import mcp``), up to ~5 s on a loaded 2-core box, for 40 sessions."""
pytestmark = pytest.mark.timeout(PROXIED_SUITE_TIMEOUT + conformance.TEST_TIMEOUT)
CLAWPLANE = [sys.executable, "-m", "clawplane"]


@contextmanager
def bridged(tmp_path: Path) -> Iterator[str]:
    """``clawplane bridge --token-file`` around the fixture over stdio; yields its /mcp URL."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    argv = [
        *CLAWPLANE,
        "bridge",
        "--port",
        "0",
        "--token-file",
        str(token_file),
        "--max-sessions",
        "64",
        "--",
        *conformance.fixture_stdio_argv(),
    ]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        url = ""
        for line in proc.stderr:
            if "listening on " in line:
                url = line.split("listening on ", 1)[1].split()[0]
            if "ready:" in line:
                break
        else:
            raise AssertionError("the bridge stopped before its server was ready")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@contextmanager
def hosted(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A folder declaring the fixture, applied; yields its hosted URL and the gateway's token."""
    folder = tmp_path / "folder"
    folder.mkdir()
    argv = conformance.fixture_stdio_argv()
    (folder / "server.yaml").write_text(
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata: {name: conformance}\n"
        f"spec: {{command: {json.dumps(argv[0])}, args: {json.dumps(argv[1:])}, maxSessions: 64}}\n"
    )
    applied = subprocess.run(
        [*CLAWPLANE, "apply", str(folder), "--yes"], capture_output=True, text=True, timeout=300
    )
    try:
        assert applied.returncode == 0, applied.stdout + applied.stderr
        entry = json.loads((folder / ".clawplane" / "out" / "openclaw.json").read_text())["mcp"]["servers"][
            "conformance"
        ]
        yield entry["url"], entry["headers"]["Authorization"].removeprefix("Bearer ")
    finally:
        subprocess.run([*CLAWPLANE, "down", str(folder)], capture_output=True, timeout=120)


def _assert_like_direct(direct: conformance.SuiteResults, through: conformance.SuiteResults) -> None:
    assert conformance.regressions(direct, through) == [], through.report()
    # server-sse-polling even passes here: the proxy starts each stream of a 2025-11-25 session
    # with a priming event, going by the negotiated version rather than the version header the
    # suite sends on that request (see conformance.SSE_POLLING_NOTE for the direct run).
    assert through.passing == sorted(conformance.SCENARIOS_ALL), through.report()
    assert through.forwarded is not None and all(f.status < 500 for f in through.forwarded)


def _resumes(url: str, token: str) -> None:
    """A client that drops a streamed answer resumes it with ``Last-Event-ID`` (no HTTP 500).

    ``test_tool_with_progress`` sends progress before its result, so its answer is an SSE
    stream (priming event first); the client reads only the priming event, hangs up, and a
    ``GET`` with that event's id replays the progress and the result.
    """
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    init_params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    with httpx.Client(timeout=30) as http:
        init = http.post(
            url,
            headers=headers,
            json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init_params},
        )
        assert init.status_code == 200, init.text
        session = {
            **headers,
            "Mcp-Session-Id": init.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-11-25",
        }
        http.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p1"}}}  # fmt: skip
        with http.stream("POST", url, headers=session, json=call) as post:
            assert post.headers["content-type"] == "text/event-stream"
            priming = next(conformance.parse_sse(post.iter_lines()))
        assert priming.id and not priming.data.strip()
        with http.stream(
            "GET", url, headers={**session, "Accept": "text/event-stream", "Last-Event-ID": priming.id}
        ) as resumed:
            assert resumed.status_code == 200
            messages = [e.message() for e in conformance.parse_sse(resumed.iter_lines())]
        http.delete(url, headers=session)
    progress = [
        m["params"]["progress"] for m in messages if m and m.get("method") == "notifications/progress"
    ]
    assert progress == [0, 50, 100]
    assert messages[-1] is not None and messages[-1]["id"] == 7 and "result" in messages[-1]


def test_every_scenario_passing_directly_passes_behind_the_bridge(
    conformance_direct: conformance.SuiteResults, conformance_suite: SuiteRunner, tmp_path: Path
) -> None:
    with bridged(tmp_path) as url:
        through = conformance_suite(url, token=TOKEN, timeout=PROXIED_SUITE_TIMEOUT)
        _assert_like_direct(conformance_direct, through)
        _resumes(url, TOKEN)


def test_every_scenario_passing_directly_passes_behind_the_hosted_endpoint(
    conformance_direct: conformance.SuiteResults, conformance_suite: SuiteRunner, tmp_path: Path
) -> None:
    with hosted(tmp_path) as (url, token):
        through = conformance_suite(url, token=token, timeout=PROXIED_SUITE_TIMEOUT)
        _assert_like_direct(conformance_direct, through)
        _resumes(url, token)
