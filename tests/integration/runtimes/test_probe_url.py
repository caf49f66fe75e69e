"""``clawplane mcp probe --url/--transport/--header/--call/--args`` as a real command.

The fixture server runs as its own process over streamable HTTP or SSE; the probe is the
installed CLI in a subprocess (run from a worker thread so the fixture's event loop stays free).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.fixtures.servers.helpers import CLAWPLANE, http_fixture, script

pytestmark = pytest.mark.anyio

TRANSPORTS = ["streamable-http", "sse"]
SECRET = "blue-s3cret-team"


def probe(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``clawplane mcp probe ARGS`` and capture what it printed."""
    return subprocess.run([*CLAWPLANE, "mcp", "probe", *args], capture_output=True, text=True, timeout=120)


async def probe_async(*args: str) -> subprocess.CompletedProcess[str]:
    """``probe`` from a worker thread: the fixture server lives in this test's event loop."""
    return await anyio.to_thread.run_sync(lambda: probe(*args))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_probe_url_calls_a_tool_with_headers(transport: str) -> None:
    async with http_fixture("normal", transport) as url:
        listing = await probe_async("--url", url, "--transport", transport, "--json")
        called = await probe_async(
            "--url", url, "--transport", transport, "--header", f"X-Team: {SECRET}",
            "--call", "header", "--args", '{"name": "x-team"}',
        )  # fmt: skip
        echoed = await probe_async(
            "--url", url, "--transport", transport, "--call", "echo", "--args", '{"message": "hi\\u001b[2J"}'
        )

    assert listing.returncode == 0, listing.stderr
    doc = json.loads(listing.stdout)
    assert list(doc["servers"]) == ["127.0.0.1"] and doc["diagnostics"] == []
    assert "mcp-127-0-0-1__echo" in doc["tools"] and "call" not in doc
    # The header reached the server (it echoes its value) and the value is never printed.
    assert called.returncode == 0, called.stderr
    assert "call 127.0.0.1/header:\n<redacted>\n" in called.stdout
    assert SECRET not in called.stdout + called.stderr
    # Server text is escaped: the terminal control sequence arrives as visible characters.
    assert echoed.returncode == 0, echoed.stderr
    assert "echo: hi\\x1b[2J" in echoed.stdout and "\x1b" not in echoed.stdout


async def test_probe_url_call_in_json_and_an_error_result() -> None:
    async with http_fixture("normal", "streamable-http") as url:
        added = await probe_async("--url", url, "--call", "add", "--args", '{"a": 2, "b": 3}', "--json")
        failed = await probe_async("--url", url, "--call", "fail")
        unknown = await probe_async("--url", url, "--call", "nope")

    assert added.returncode == 0, added.stderr
    call = json.loads(added.stdout)["call"]
    assert call["server"] == "127.0.0.1" and call["tool"] == "add"
    assert call["result"]["content"] == [{"type": "text", "text": "5"}] and call["result"]["isError"] is False
    assert failed.returncode == 1 and 'calling tool "fail" on "127.0.0.1" failed: ' in failed.stderr
    assert "boom" in failed.stderr and "Traceback" not in failed.stderr
    assert unknown.returncode == 1
    assert "lists no tool named 'nope' (it lists: add, cwd, echo, env, fail, header, log, pid, slow)" in (
        unknown.stderr
    )


def test_probe_bad_args_are_usage_errors_before_connecting() -> None:
    """Nothing listens at the URL: the argument errors come first, exit 2, no traceback."""
    url = "http://127.0.0.1:9/mcp"
    bad_json = probe("--url", url, "--call", "echo", "--args", '{"message": ')
    not_object = probe("--url", url, "--call", "echo", "--args", "[1, 2]")
    no_call = probe("--url", url, "--args", "{}")
    bad_header = probe("--url", url, "--header", "no-colon-here")
    both = probe("somewhere", "--url", url)
    bad_transport = probe("--url", url, "--transport", "stdio")

    assert bad_json.returncode == 2 and "--args is not valid JSON (Expecting value" in bad_json.stderr
    assert "give the tool's arguments as a JSON object" in bad_json.stderr
    assert not_object.returncode == 2 and "--args must be a JSON object" in not_object.stderr
    assert no_call.returncode == 2 and "--args needs --call TOOL" in no_call.stderr
    assert bad_header.returncode == 2 and "expected 'Name: value'" in bad_header.stderr
    assert both.returncode == 2 and "either PATH" in both.stderr
    assert bad_transport.returncode == 2 and "expected one of streamable-http, sse" in bad_transport.stderr
    for proc in (bad_json, not_object, no_call, bad_header, both, bad_transport):
        assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_probe_unreachable_url_says_why_and_what_to_check() -> None:
    with socket.socket() as sock:  # a port nothing listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        proc = probe("--url", url, "--header", f"Authorization: Bearer {SECRET}", "--call", "echo")

    assert proc.returncode == 1
    assert f'MCP probe failed for "127.0.0.1" in {url}: ' in proc.stderr
    assert "ConnectError" in proc.stderr and f"check that an MCP server answers at {url}" in proc.stderr
    assert SECRET not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr


def write_normal(folder: Path) -> Path:
    """A folder declaring the normal fixture (stdio) and a second, so --call needs a NAME."""
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "clawplane.dev/v1alpha1",
            "kind": "McpServer",
            "metadata": {"name": name},
            "spec": {"command": sys.executable, "args": [script("normal")], "connectionTimeoutMs": 60000},
        }
        for name in ("one", "two")
    ]
    folder.mkdir(parents=True)
    (folder / "servers.yaml").write_text("\n---\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    return folder


def test_probe_call_in_folder_mode_needs_one_name(tmp_path: Path) -> None:
    folder = write_normal(tmp_path / "decl")
    unnamed = probe(str(folder), "--call", "echo")
    named = probe(str(folder), "two", "--call", "echo", "--args", '{"message": "from a folder"}')

    assert unnamed.returncode == 2 and "--call needs one server: give its NAME after PATH" in unnamed.stderr
    assert named.returncode == 0, named.stderr
    assert "call two/echo:\necho: from a folder\n" in named.stdout
