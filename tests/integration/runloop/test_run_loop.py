"""``clawplane run`` converges the folder on start, on every save, on crashes and on resync."""

from __future__ import annotations

import json
import os
import re
import signal

from tests.integration.runloop.conftest import Loop, http_get, wait_for


def _ready_with_new_pid(loop: Loop, key: str, old: int | None) -> int | None:
    server = loop.observed()[key]
    if server["phase"] == "Ready" and server.get("pid") not in (None, old):
        return int(server["pid"])
    return None


def test_editing_a_server_restarts_only_that_server(looping: Loop) -> None:
    before = looping.pids()
    assert before["McpServer/notes"] and before["McpServer/notes-two"]
    path = looping.folder / "mcp-servers.yaml"
    path.write_text(path.read_text().replace("hello from clawplane", "hello again"))
    new_pid = wait_for(
        "notes to restart", lambda: _ready_with_new_pid(looping, "McpServer/notes", before["McpServer/notes"])
    )
    looping.wait_settled()
    after = looping.pids()
    assert after["McpServer/notes"] == new_pid
    assert after["McpServer/notes-two"] == before["McpServer/notes-two"]
    assert looping.status()["McpServer/notes"]["toolCount"] == 4


def test_editing_a_skill_changes_the_snapshot_and_restarts_nothing(looping: Loop) -> None:
    before = looping.pids()
    snapshot = looping.state / "out" / "agents" / "coder" / "skills-prompt.txt"
    old = snapshot.read_text()
    skill = looping.folder / "skills" / "git-helper" / "SKILL.md"
    skill.write_text(
        skill.read_text().replace(
            "Inspect history, write commit messages", "Inspect history, write careful commit messages"
        )
    )
    wait_for("the coder prompt to change", lambda: "careful commit messages" in snapshot.read_text())
    looping.wait_settled()
    assert snapshot.read_text() != old
    assert looping.pids() == before


def test_a_killed_server_is_restarted(looping: Loop) -> None:
    before = looping.pids()
    os.kill(int(before["McpServer/notes"] or 0), signal.SIGKILL)
    wait_for(
        "notes to come back",
        lambda: _ready_with_new_pid(looping, "McpServer/notes", before["McpServer/notes"]),
    )
    assert looping.pids()["McpServer/notes-two"] == before["McpServer/notes-two"]
    assert 'clawplane_runtime_crashes_total{server="notes"} 1.0' in looping.metrics()


def test_an_invalid_folder_tears_nothing_down_and_a_fix_converges(looping: Loop) -> None:
    before = looping.pids()
    agents = looping.folder / "agents.yaml"
    good = agents.read_text()
    agents.write_text(good + "\n---\nkind: Agent\nmetadata: {name: [broken\n")
    st = wait_for(
        "the folder to be reported invalid",
        lambda: (s := looping.loop_status()).get("folderValid") is False and s,
    )
    assert st["diagnostics"]
    assert "clawplane_folder_valid 0.0" in looping.metrics()
    shown = looping.cli.json("status", str(looping.folder), "--json")
    assert shown["loop"]["folderValid"] is False and shown["loop"]["diagnostics"]
    # Diagnostics read as validate prints them, never as dataclass reprs.
    found = shown["loop"]["diagnostics"]
    assert found[0].startswith(f"{agents}:28:1: error[yaml.syntax]: invalid YAML"), found
    assert all(re.match(r"/\S+\.yaml:\d+:\d+: error\[[a-z.-]+\]: ", d) for d in found), found
    text = looping.cli("status", str(looping.folder)).stdout
    assert "folder: INVALID" in text and f"{agents}:" in text
    assert "Diagnostic(" not in json.dumps(shown) + text + (looping.state / "supervisor.log").read_text()
    assert looping.pids() == before
    assert all(r["phase"] in ("Ready", "Disabled") for r in looping.status().values())
    ping_ok, _ = http_get(looping.info()["metrics"] + "/healthz")
    assert ping_ok == 200

    agents.write_text(good.replace("Drafts release notes", "Drafts release notes and changelogs"))
    wait_for("the folder to validate again", lambda: looping.loop_status().get("folderValid") is True)
    looping.wait_settled()
    assert "clawplane_folder_valid 1.0" in looping.metrics()
    assert looping.pids() == before

    (looping.folder / "channels.yaml").unlink()
    wait_for("the channel to be pruned", lambda: "Channel/team-telegram" not in looping.observed())
    rendered = json.loads((looping.state / "out" / "openclaw.json").read_text())
    assert "telegram" not in rendered.get("channels", {})
    assert looping.pids() == before


def test_health_ready_and_metrics_endpoints(looping: Loop) -> None:
    base = looping.info()["metrics"]
    assert base.startswith("http://127.0.0.1:")
    assert http_get(base + "/healthz") == (200, "ok\n")
    assert http_get(base + "/readyz") == (200, "ready\n")
    assert http_get(base + "/nope")[0] == 404
    # The same Host/Origin checks as the hosted endpoint, and /metrics needs the cli token.
    assert http_get(base + "/metrics")[0] == 401
    assert http_get(base + "/healthz", {"Host": "attacker.example"})[0] == 421
    assert http_get(base + "/healthz", {"Origin": "http://attacker.example"})[0] == 403
    openclaw = looping.cli("token", "show", str(looping.folder), "openclaw").stdout.strip()
    assert http_get(base + "/metrics", {"Authorization": f"Bearer {openclaw}"})[0] == 403
    text = looping.metrics()
    for line in (
        'clawplane_runtimes{phase="ready"} 2.0',
        'clawplane_server_tools{server="notes"} 4.0',
        'clawplane_runtime_restarts{server="notes-two"} 0.0',
        "clawplane_folder_valid 1.0",
    ):
        assert line in text, text
    assert 'clawplane_reconciles_total{result="applied"}' in text
    assert "clawplane_reconcile_duration_seconds_count" in text
    assert 'clawplane_agent_prompt_chars{agent="coder"}' in text
    assert "clawplane_last_successful_reconcile_timestamp_seconds 1." in text
    log = (looping.state / "supervisor.log").read_text()
    assert "canary-secret" not in log and "canary-secret" not in text
    looping.cli("down", str(looping.folder))
    assert not (looping.state / "supervisor.pid").exists()
