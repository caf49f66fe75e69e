"""`clawplane apply` reports what really runs: a server that cannot start fails the apply, with its cause.

Each case is a way a newcomer's first apply goes wrong: a referenced variable that is not set, a
server whose interpreter lacks a module, a remote server turned on that is not there. Apply must
exit 1 naming the server, its last stderr lines (redacted) and a hint; `--no-wait` keeps the old
hand-over behaviour, explicitly.
"""

from __future__ import annotations

import socket

from tests.integration.truthful.conftest import Folder


def _closed_port() -> int:
    # Bound and closed at once: nothing listens there while the test runs on loopback.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unset_secret_fails_the_apply_with_its_name_and_a_hint(folder: Folder) -> None:
    del folder.cli.env["NOTES_API_TOKEN"]
    proc = folder.cli("apply", str(folder.path), "--yes")
    assert proc.returncode == 1, proc.stdout
    assert "Apply FAILED: 7 succeeded, 1 failed" in proc.stdout
    assert "McpServer/notes: not ready (backoff" in proc.stdout
    assert "environment variable NOTES_API_TOKEN is not set" in proc.stdout
    assert "hint: set NOTES_API_TOKEN in the environment" in proc.stdout
    notes = folder.settled("McpServer/notes", "Backoff")
    assert notes["phase"] == "Backoff"
    ready = next(c for c in notes["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False" and "NOTES_API_TOKEN is not set" in ready["message"]


def test_a_server_missing_a_module_shows_its_stderr_in_apply_status_and_conditions(folder: Folder) -> None:
    folder.add_broken_server()
    proc = folder.cli("apply", str(folder.path), "--yes")
    assert proc.returncode == 1, proc.stdout
    assert "Apply FAILED: 8 succeeded, 1 failed" in proc.stdout
    cause = "ModuleNotFoundError: No module named 'clawplane_test_module_that_does_not_exist'"
    assert f"McpServer/broken: not ready (backoff — the supervisor keeps retrying with back-off): " \
           f"process exited with code 1: {cause}" in proc.stdout  # fmt: skip
    assert "stderr line(s):\n    loading the broken server\n    Traceback" in proc.stdout
    assert "hint: the server's interpreter has no module 'clawplane_test_module_that_does_not_exist'" in proc.stdout
    assert "canary-secret" not in proc.stdout

    broken = folder.settled("McpServer/broken", "Backoff")
    assert broken["phase"] == "Backoff" and cause in broken["lastError"]
    # Live: the server has kept restarting, so its last 20 lines span sessions; the newest is the cause.
    assert "loading the broken server" in broken["stderr"] and broken["stderr"][-1] == cause
    ready = next(c for c in broken["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False" and cause in ready["message"]
    one = folder.cli("status", str(folder.path), "broken")
    assert one.returncode == 0 and "stderr (last" in one.stdout and cause in one.stdout
    # The other server is unaffected, and the start failure is a WARNING with its stderr.
    assert folder.resource("McpServer/notes")["phase"] == "Ready"
    log = folder.log()
    assert "WARNING" in log and "MCP server broken: start-failed process exited with code 1" in log
    assert f"MCP server broken: stderr: {cause}" in log


def test_a_remote_server_turned_on_that_is_not_there_fails_the_apply(folder: Folder) -> None:
    servers = folder.path / "mcp-servers.yaml"
    text = servers.read_text().replace("http://127.0.0.1:8765/mcp", f"http://127.0.0.1:{_closed_port()}/mcp")
    servers.write_text(text.replace("enabled: false", "enabled: true"))
    folder.cli.env["DOCS_SEARCH_TOKEN"] = "docs-token"
    proc = folder.cli("apply", str(folder.path), "--yes")
    assert proc.returncode == 1, proc.stdout
    assert "1 failed" in proc.stdout and "McpServer/docs-search: not ready (failed): " in proc.stdout
    assert "docs-token" not in proc.stdout


def test_no_wait_hands_over_and_says_so(folder: Folder) -> None:
    folder.add_broken_server()
    proc = folder.cli("apply", str(folder.path), "--yes", "--no-wait")
    assert proc.returncode == 0, proc.stdout
    assert "server change(s) handed over without waiting (--no-wait)" in proc.stdout
    assert f"`clawplane status {folder.path}`" in proc.stdout


def test_log_level_debug_reaches_the_supervisor_apply_starts(folder: Folder) -> None:
    folder.add_broken_server()
    assert folder.cli("apply", str(folder.path), "--yes", "--log-level", "debug").returncode == 1
    assert "DEBUG" in folder.log() and "clawplane.runtimes.stderr: broken: loading the broken server" in folder.log()
    bad = folder.cli("apply", str(folder.path), "--yes", "--log-level", "loud")
    assert bad.returncode == 2 and "--log-level must be one of debug, info, warning, error" in bad.stdout
