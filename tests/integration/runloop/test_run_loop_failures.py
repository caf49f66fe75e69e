"""A server that keeps crashing is reported and backs off without touching the others; mass deletes wait."""

from __future__ import annotations

from pathlib import Path

from tests.integration.runloop.conftest import Loop, wait_for

ROOT = Path(__file__).resolve().parents[3]
CRASHER = ROOT / "tests" / "fixtures" / "servers" / "crashing_server.py"


def test_a_crash_looping_server_is_reported_backing_off_and_others_unaffected(looping: Loop) -> None:
    before = looping.pids()
    counter = looping.folder / "crash-counter"
    counter.write_text("1000")
    (looping.folder / "crasher.yaml").write_text(
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: crasher\nspec:\n"
        f"  command: python3\n  args: [{CRASHER}, --crash-on-start, {counter}]\n"
    )

    def backing_off() -> dict[str, object] | None:
        server = looping.observed().get("McpServer/crasher")
        restarts = server.get("restarts") if server else None
        if server and isinstance(restarts, int) and restarts >= 2 and server.get("lastError"):
            return server
        return None

    server = wait_for("the crasher to be restarted twice", backing_off, timeout=60)
    assert server["phase"] != "Ready"
    assert "17" in str(server["lastError"])  # the exit code the fixture crashes with
    after = looping.pids()
    assert after["McpServer/notes"] == before["McpServer/notes"]
    assert after["McpServer/notes-two"] == before["McpServer/notes-two"]
    assert all(looping.status()[k]["phase"] == "Ready" for k in ("McpServer/notes", "McpServer/notes-two"))
    assert 'clawplane_runtime_restarts{server="crasher"}' in looping.metrics()
    # The loop's own errors are in the text view, with the server's cause.
    wait_for("a failed pass", lambda: "McpServer/crasher" in (looping.loop_status().get("errors") or {}))
    text = looping.cli("status", str(looping.folder)).stdout
    assert "loop: McpServer/crasher failed: not ready (backoff" in text and "code 17" in text


def test_the_loop_refuses_a_mass_delete_and_tears_nothing_down(looping: Loop) -> None:
    before = looping.pids()
    for name in ("agents.yaml", "channels.yaml", "skills.yaml", "mcp-servers.yaml", "notes-two.yaml"):
        (looping.folder / name).unlink()
    refused = wait_for("the loop to refuse the plan", lambda: looping.loop_status().get("refused"))
    assert "allow-mass-delete" in str(refused)
    assert "loop: REFUSED — the folder would delete" in looping.cli("status", str(looping.folder)).stdout
    assert looping.pids() == before
    assert "Agent/coder" in looping.status()
