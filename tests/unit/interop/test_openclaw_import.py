"""openclaw.json → clawplane resources: canonicalization, carry-over as raw config, and loss reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawplane.diagnostics import Severity
from clawplane.interop import import_openclaw_config, load_openclaw_file, load_openclaw_text
from clawplane.validation import validate_paths

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "openclaw-configs"


def _specs(result: Any, kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d["spec"] for d in result.documents.get(kind, [])}


def _at(result: Any, code: str) -> list[str]:
    return [d.path for d in result.diagnostics if d.code == code]


def test_mcp_servers_are_canonicalized_like_doctor_fix() -> None:
    config = {
        "mcp": {
            "servers": {
                "a": {
                    "command": "srv",
                    "workingDirectory": "/w",
                    "timeout": 2.5,
                    "connect_timeout": 5,
                    "disabled": True,
                },
                "b": {
                    "type": "http",
                    "url": "http://h/mcp",
                    "ssl_verify": False,
                    "codex": {"default_tools_approval_mode": "prompt"},
                },
                "c": {"url": "http://h/sse"},
                "d": {
                    "command": "x",
                    "supports_parallel_tool_calls": True,
                    "supportsParallelToolCalls": False,
                },
                "e": {"command": "x", "timeout": 3, "requestTimeoutMs": 100},
            }
        }
    }
    result = import_openclaw_config(config)
    specs = _specs(result, "McpServer")
    assert specs["a"] == {
        "enabled": False, "transport": "stdio", "hosting": "consumer", "command": "srv", "cwd": "/w",
        "connectionTimeoutMs": 5000, "requestTimeoutMs": 2500,
    }  # fmt: skip
    assert specs["b"] == {
        "transport": "streamable-http", "url": "http://h/mcp", "sslVerify": False,
        "codex": {"defaultToolsApprovalMode": "prompt"},
    }  # fmt: skip
    assert specs["c"] == {"transport": "sse", "url": "http://h/sse"}
    assert specs["d"]["supportsParallelToolCalls"] is False  # the canonical key wins
    assert specs["e"]["requestTimeoutMs"] == 100
    assert result.complete
    assert "mcp.servers.a.disabled" in _at(result, "import.canonicalized")


def test_env_values() -> None:
    config = {
        "mcp": {
            "servers": {
                "s": {
                    "command": "x",
                    "args": ["$${HOME}", 3],
                    "env": {
                        "A": "${A_TOKEN}",
                        "B": "plain $${X}",
                        "API_TOKEN": "sk-1",
                        "N": 5,
                        "NODE_OPTIONS": "--x",
                    },
                }
            }
        }
    }
    result = import_openclaw_config(config)
    spec = _specs(result, "McpServer")["s"]
    assert spec["args"] == ["${HOME}"]  # unescaped; the non-string arg is dropped as OpenClaw does
    assert spec["env"] == {
        "A": {"valueFrom": {"env": "A_TOKEN"}},
        "B": "plain ${X}",
        "API_TOKEN": "sk-1",
        "N": 5,
    }
    assert _at(result, "import.literal-secret") == ["mcp.servers.s.env.API_TOKEN"]
    assert "mcp.servers.s.env.NODE_OPTIONS" in _at(result, "import.canonicalized")
    assert result.complete


def test_unmappable_values_are_reported_losses_with_paths() -> None:
    config = {
        "mcp": {
            "servers": {
                "bad name": {"command": "x"},
                "empty": {},
                "mixed": {"url": "http://h", "headers": {"Authorization": "Bearer ${T}"}},
                "notobj": "x",
            }
        },
        "channels": {"telegram": {"botToken": {"source": "exec", "provider": "vault", "id": "tg"}}},
    }
    result = import_openclaw_config(config)
    assert not result.complete
    assert sorted(_at(result, "import.unmapped")) == [
        "channels.telegram.botToken",
        "mcp.servers.empty",
        "mcp.servers.mixed.headers.Authorization",
        "mcp.servers.notobj",
    ]
    assert all(d.severity is Severity.WARNING for d in result.lost)
    assert _specs(result, "McpServer")["mixed"]["headers"] == {}  # what could be imported still is
    # An invalid resource name is renamed (OpenClaw's own sanitizing gives the same tool prefix).
    assert _specs(result, "McpServer")["bad-name"] == {"transport": "stdio", "hosting": "consumer", "command": "x"}
    assert _at(result, "import.renamed") == ["mcp.servers.bad name"]


def test_blank_skill_names_are_dropped_with_a_warning_and_the_agent_kept() -> None:
    config = {
        "agents": {
            "defaults": {"skills": ["a", "  "]},
            "entries": {"main": {"skills": ["", " b ", "c"]}, "other": {"skills": [""]}},
        },
        "skills": {"allowBundled": ["x", ""]},
    }
    result = import_openclaw_config(config)
    agents = _specs(result, "Agent")
    assert agents == {"main": {"skills": ["b", "c"]}, "other": {"skills": []}}
    gateway = _specs(result, "Gateway")["default"]
    assert gateway["agents"]["defaults"]["skills"] == ["a"]
    assert gateway["skills"]["allowBundled"] == ["x"]
    assert sorted(_at(result, "import.blank-skill-name")) == [
        "agents.defaults.skills[1]",
        "agents.entries.main.skills[0]",
        "agents.entries.other.skills[0]",
        "skills.allowBundled[1]",
    ]
    assert result.complete


def test_a_bad_list_item_costs_that_item_not_the_resource() -> None:
    config = {"agents": {"entries": {"main": {"skills": ["ok", 7], "description": "kept"}}}}
    result = import_openclaw_config(config)
    assert _specs(result, "Agent")["main"] == {"skills": ["ok"], "description": "kept"}
    assert _at(result, "import.unmapped") == ["agents.entries.main.skills[1]"]


def test_losses_name_their_line_in_the_source() -> None:
    source = FIXTURES / "unmappable.json5"
    data, positions = load_openclaw_text(source.read_text(encoding="utf-8"), str(source))
    result = import_openclaw_config(data, source=str(source), positions=positions)
    broken = next(d for d in result.lost if d.path == "mcp.servers.broken")
    assert broken.location is not None and (broken.location.line, broken.location.column) == (11, 7)
    assert all(d.location is not None and d.location.line > 0 for d in result.diagnostics)


def test_unknown_keys_become_raw_config() -> None:
    config = {
        "gateway": {"port": 1},
        "agents": {
            "defaults": {"sandbox": {"mode": "all"}, "skills": ["a"]},
            "entries": {"x": {"identity": {"name": "X"}}},
        },
        "mcp": {"apps": {"enabled": True}, "servers": {"o": {"url": "https://h/mcp", "auth": "oauth"}}},
        "tools": {"profile": "coding", "exec": {"security": "full"}},
    }
    result = import_openclaw_config(config)
    gateway = _specs(result, "Gateway")["default"]
    assert gateway["config"] == {
        "gateway": {"port": 1},
        "agents": {"defaults": {"sandbox": {"mode": "all"}}, "entries": {"x": {"identity": {"name": "X"}}}},
        "mcp": {"apps": {"enabled": True}, "servers": {"o": {"auth": "oauth"}}},
        "tools": {"exec": {"security": "full"}},
    }
    assert gateway["agents"] == {"defaults": {"skills": ["a"]}}
    assert gateway["tools"] == {"profile": "coding"}
    assert _at(result, "import.server-auth") == ["mcp.servers.o.auth"]
    assert result.complete


def test_secret_refs_and_channel_credentials() -> None:
    config = {
        "secrets": {"providers": {"f": {"source": "file", "path": "/run/s", "mode": "singleValue"}}},
        "skills": {"entries": {"img": {"apiKey": {"source": "env", "provider": "default", "id": "IMG_KEY"}}}},
        "channels": {
            "telegram": {
                "botToken": {"source": "file", "provider": "f", "id": "value"},
                "webhookSecret": "lit",
            },
            "slack": {"botToken": "${SLACK_BOT_TOKEN}", "mode": "socket"},
        },
    }
    result = import_openclaw_config(config)
    channels = _specs(result, "Channel")
    assert channels["telegram"]["credentials"] == {
        "botToken": {"valueFrom": {"file": "/run/s"}},
        "webhookSecret": "lit",
    }
    assert channels["slack"]["credentials"] == {"botToken": {"valueFrom": {"env": "SLACK_BOT_TOKEN"}}}
    gateway = _specs(result, "Gateway")["default"]
    assert gateway["skills"]["entries"]["img"]["apiKey"] == {"valueFrom": {"env": "IMG_KEY"}}
    assert _at(result, "import.literal-secret") == ["channels.telegram.webhookSecret"]


def test_bindings_and_defaults() -> None:
    config = {
        "agents": {"entries": {"a": {"default": True}, "b": {}}},
        "bindings": [
            {"agentId": "b", "match": {"channel": "telegram"}},
            {"agentId": "a", "match": {"channel": "telegram"}},
            {"agentId": "a", "match": {"channel": "telegram", "peer": {"kind": "group", "id": "1"}}},
            {"agentId": "a", "match": {"channel": "discord"}},
        ],
        "channels": {"defaults": {"groupPolicy": "open"}, "telegram": {"dmPolicy": "pairing"}},
    }
    result = import_openclaw_config(config)
    assert _specs(result, "Channel")["telegram"] == {
        "type": "telegram",
        "dmPolicy": "pairing",
        "agent": "b",
        "groupPolicy": "open",
    }
    gateway = _specs(result, "Gateway")["default"]
    assert gateway["agents"] == {"defaultAgent": "a"}
    assert gateway["config"]["bindings"] == [config["bindings"][2], config["bindings"][3]]
    assert result.complete


def test_values_clawplane_rejects_move_to_raw_config() -> None:
    result = import_openclaw_config(
        {"skills": {"limits": {"maxSkillsInPrompt": 0, "maxSkillFileBytes": 1000}}}
    )
    gateway = _specs(result, "Gateway")["default"]
    assert gateway["skills"]["limits"] == {"maxSkillFileBytes": 1000}
    assert gateway["config"] == {"skills": {"limits": {"maxSkillsInPrompt": 0}}}
    assert _at(result, "import.rejected-value") == ["skills.limits.maxSkillsInPrompt"]


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.glob("*.json5")))
def test_fixture_imports_into_valid_resources(fixture: str, tmp_path: Path) -> None:
    result = import_openclaw_config(load_openclaw_file(FIXTURES / fixture), source=fixture)
    for name, text in result.files(source=fixture).items():
        (tmp_path / name).write_text(text)
    checked = validate_paths([tmp_path])
    assert checked.ok, [f"{d.location}: {d.message}" for d in checked.diagnostics.errors]
    loaded = {(r.resource.kind, r.resource.name): r.raw["spec"] for r in checked.resources}
    expected = {
        (d["kind"], d["metadata"]["name"]): d["spec"] for docs in result.documents.values() for d in docs
    }
    assert loaded == expected  # the YAML reads back exactly
    assert result.complete == (fixture != "unmappable.json5")
    assert all(d.path for d in result.diagnostics if d.severity is not Severity.INFO)


def test_json5_loading(tmp_path: Path) -> None:
    path = tmp_path / "c.json5"
    path.write_text("// c\n{mcp: {servers: {a: {command: 'x',},},},}\n")
    assert load_openclaw_file(path) == {"mcp": {"servers": {"a": {"command": "x"}}}}
    path.write_text("[1]")
    with pytest.raises(ValueError, match="top level"):
        load_openclaw_file(path)
