"""Rendered files → ConfigMaps: grouping per owner, and staying under the 1 MiB object limit."""

from __future__ import annotations

import json
from pathlib import Path

from clawplane.k8s.objects.children import Owner
from clawplane.k8s.objects.configmaps import (
    MAX_DATA_BYTES,
    agent_config_map_name,
    gateway_auth_header,
    wanted_config_maps,
)
from clawplane.render.finalize import finalize
from clawplane.state.tokens import OPENCLAW


def write(out: Path, rel: str, text: str) -> None:
    path = out / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_agent_and_gateway_files_are_grouped(tmp_path: Path) -> None:
    write(tmp_path, "agents/bot/skills-prompt.txt", "prompt")
    write(tmp_path, "agents/bot/tools.json", "[]")
    write(tmp_path, "codex/bot/config.toml", "[mcp_servers.a]\n")
    write(tmp_path, "clients/claude-code/bot/.mcp.json", '{"mcpServers": {}}')
    write(tmp_path, "clients/gemini-cli/bot/settings.json", '{"mcpServers": {}}')
    write(tmp_path, "clients/vscode/other/mcp.json", '{"servers": {}}')
    write(tmp_path, "openclaw.json", "{}")
    wanted = wanted_config_maps(
        tmp_path, "ns", agents={"Bot": Owner("Agent", "Bot", "u1")}, gateway=Owner("Gateway", "default", "u2")
    )
    # "Bot" is not a DNS label as is: a hash suffix keeps "Bot" and "bot" from sharing a ConfigMap.
    assert agent_config_map_name("Bot") != agent_config_map_name("bot")
    assert set(wanted) == {agent_config_map_name("Bot"), "clawplane-gateway-default"}
    owner, agent = wanted[agent_config_map_name("Bot")]
    assert owner == Owner("Agent", "Bot", "u1")
    assert set(agent["data"]) == {"skills-prompt.txt", "tools.json", "codex-config.toml",
                                  "client-claude-code-mcp.json", "client-gemini-cli-settings.json"}
    assert wanted["clawplane-gateway-default"][1]["data"] == {"openclaw.json": "{}"}


def test_oversized_snapshot_is_left_out_with_a_note(tmp_path: Path) -> None:
    write(tmp_path, "agents/bot/skills-prompt.txt", "prompt")
    write(tmp_path, "agents/bot/snapshot.json", "x" * (MAX_DATA_BYTES + 10))
    write(tmp_path, "agents/bot/tools.json", "[]")
    [(_, cm)] = wanted_config_maps(
        tmp_path, "ns", agents={"bot": Owner("Agent", "bot", "u")}, gateway=None
    ).values()
    assert "snapshot.json" not in cm["data"] and cm["data"]["skills-prompt.txt"] == "prompt"
    assert "does not fit" in cm["data"]["snapshot.json.omitted"]
    assert sum(len(v) for v in cm["data"].values()) <= MAX_DATA_BYTES


def test_gateway_entries_send_the_bridge_token_from_the_pod_env(tmp_path: Path) -> None:
    header = gateway_auth_header(OPENCLAW, "time")
    assert header is not None and finalize({"Authorization": header}) == {"Authorization": header}
    assert header.startswith("Bearer ${CLAWPLANE_SECRET_MCP_TIME_TOKEN_TOKEN_") and header.endswith("}")
    assert finalize("Bearer ${X}") == "Bearer $${X}"  # an ordinary literal is still escaped
    assert gateway_auth_header("codex:bot", "time") is None
    write(tmp_path, "openclaw.json", json.dumps({"mcp": {"servers": {"time": {"url": "u", "headers": {"Authorization": header}}}}}))
    write(tmp_path, "gateway-secret-env.json", json.dumps([{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]))
    (_, cm), = wanted_config_maps(tmp_path, "ns", agents={}, gateway=Owner("Gateway", "default", "u")).values()
    env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in json.loads(cm["data"]["secret-env.json"])}
    assert env == {"A": {"name": "s", "key": "k"}, header[len("Bearer ${") : -1]: {"name": "mcp-time-token", "key": "token"}}
