"""openclaw.json → clawplane resources: canonicalization, every key in its typed home, raw config only
for what no typed home holds verbatim, and loss reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.unit.render.build import load_folder

from clawplane.diagnostics import Severity
from clawplane.interop import import_openclaw_config, load_openclaw_file, load_openclaw_text
from clawplane.interop.result import UNWRITABLE, verbatim
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
        "mcp.servers.empty",
        "mcp.servers.mixed.headers.Authorization",
        "mcp.servers.notobj",
    ]
    assert all(d.severity is Severity.WARNING for d in result.lost)
    assert _specs(result, "McpServer")["mixed"]["headers"] == {}  # what could be imported still is
    # An invalid resource name is renamed (OpenClaw's own sanitizing gives the same tool prefix).
    assert _specs(result, "McpServer")["bad-name"] == {"transport": "stdio", "hosting": "consumer", "command": "x"}
    assert _at(result, "import.renamed") == ["mcp.servers.bad name"]
    # An exec SecretRef is a valid OpenClaw value of a SecretInput field: kept as written.
    assert _specs(result, "Channel")["telegram"]["botToken"] == {"source": "exec", "provider": "vault", "id": "tg"}
    assert _at(result, "import.secret-ref-kept") == ["channels.telegram.botToken"]


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


def test_every_key_lands_under_spec_of_its_resource_by_its_openclaw_name() -> None:
    config = {
        "gateway": {"port": 1},
        "agents": {
            "defaults": {"sandbox": {"mode": "all"}, "skills": ["a"]},
            "entries": {"x": {"identity": {"name": "X"}, "tools": {"exec": {"security": "full"}}}},
        },
        "mcp": {"apps": {"enabled": True}, "servers": {"o": {"url": "https://h/mcp", "auth": "oauth",
                                                              "oauth": {"scope": "read"}}}},
        "tools": {"profile": "coding", "exec": {"security": "full"}},
        "plugins": {"entries": {"memory-core": {"config": {"dreaming": {"enabled": False}}}}},
        "channels": {"matrix": {"homeserver": "https://m.example.org", "dm": {"policy": "open"}}},
    }
    result = import_openclaw_config(config)
    gateway = _specs(result, "Gateway")["default"]
    assert "config" not in gateway and "configUnchecked" not in gateway
    assert gateway["gateway"] == {"port": 1}
    assert gateway["agents"] == {"defaults": {"sandbox": {"mode": "all"}, "skills": ["a"]}}
    assert gateway["mcp"] == {"apps": {"enabled": True}}
    assert gateway["tools"] == {"profile": "coding", "exec": {"security": "full"}}
    assert gateway["plugins"] == config["plugins"]
    assert _specs(result, "Agent")["x"] == config["agents"]["entries"]["x"]
    assert _specs(result, "McpServer")["o"] == {
        "transport": "sse", "url": "https://h/mcp", "auth": "oauth", "oauth": {"scope": "read"},
    }  # fmt: skip
    assert _specs(result, "Channel")["matrix"] == {
        "type": "matrix", "homeserver": "https://m.example.org", "dm": {"policy": "open"},
    }  # fmt: skip
    assert _at(result, "import.server-auth") == ["mcp.servers.o.auth"]
    assert _at(result, "import.raw-config") == []
    assert result.complete


def test_keys_openclaw_does_not_know_go_to_raw_config_listed_as_unchecked(tmp_path: Path) -> None:
    config = {
        "gateway": {"port": 1, "newThing": True},
        "futureSection": {"a": 1},
        "agents": {"entries": {"x": {"identity": {"name": "X"}, "futureKey": 1}}},
        "mcp": {"servers": {"bad name": {"command": "x", "futureKey": 2}}},
        "channels": {"telegram": {"dmPolicy": "pairing", "futureKey": 3}},
        "hooks": {"enabled": True, "mappings": [{"id": "a", "futureKey": 4}]},
    }
    result = import_openclaw_config(config)
    gateway = _specs(result, "Gateway")["default"]
    assert gateway["config"] == {
        "gateway": {"newThing": True},
        "futureSection": {"a": 1},
        "agents": {"entries": {"x": {"futureKey": 1}}},
        "mcp": {"servers": {"bad-name": {"futureKey": 2}}},  # under the name it is rendered with
        "channels": {"telegram": {"futureKey": 3}},
        "hooks": {"mappings": [{"id": "a", "futureKey": 4}]},  # a list is carried whole
    }
    assert sorted(gateway["configUnchecked"]) == [
        "agents.entries.x.futureKey",
        "channels.telegram.futureKey",
        "futureSection",
        "gateway.newThing",
        "hooks.mappings",
        "mcp.servers.bad-name.futureKey",
    ]
    assert gateway["gateway"] == {"port": 1} and gateway["hooks"] == {"enabled": True}
    assert _specs(result, "Agent")["x"] == {"identity": {"name": "X"}}
    assert sorted(_at(result, "import.unchecked-key")) == [
        "agents.entries.x.futureKey",
        "channels.telegram.futureKey",
        "futureSection",
        "gateway.newThing",
        "hooks.mappings[0].futureKey",
        "mcp.servers.bad name.futureKey",
    ]
    for name, text in result.files().items():
        (tmp_path / name).write_text(text)
    checked = validate_paths([tmp_path])
    assert checked.ok, [f"{d.location}: {d.message}" for d in checked.diagnostics.errors]


def test_strings_that_mix_text_and_substitution_are_kept_verbatim_in_raw_config(tmp_path: Path) -> None:
    config = {
        "diagnostics": {"otel": {"enabled": True, "headers": {"Authorization": "Bearer ${OTEL_TOKEN}"}}},
        "browser": {"enabled": True, "extraArgs": ["--proxy-server=${PROXY}", "--lang=$${LANG}"]},
        "gateway": {"remote": {"url": "wss://${GW_HOST}:18789", "token": "${GW_TOKEN}"}},
        "agents": {"entries": {"main": {"identity": {"name": "Clawd ${SUFFIX}"}, "workspace": "${HOME}/ws"}}},
    }
    result = import_openclaw_config(config)
    gateway = _specs(result, "Gateway")["default"]
    assert gateway["config"] == {
        "diagnostics": {"otel": {"headers": {"Authorization": "Bearer ${OTEL_TOKEN}"}}},
        "browser": {"extraArgs": ["--proxy-server=${PROXY}", "--lang=$${LANG}"]},  # as written
        "gateway": {"remote": {"url": "wss://${GW_HOST}:18789"}},
        "agents": {"entries": {"main": {"identity": {"name": "Clawd ${SUFFIX}"}}}},
    }
    assert "configUnchecked" not in gateway
    assert gateway["diagnostics"] == {"otel": {"enabled": True}}  # the emptied headers are left out
    assert gateway["gateway"] == {"remote": {"token": {"valueFrom": {"env": "GW_TOKEN"}}}}
    assert sorted(_at(result, "import.substitution-kept")) == [
        "agents.entries.main.identity.name",
        "browser.extraArgs[0]",
        "diagnostics.otel.headers.Authorization",
        "gateway.remote.url",
    ]
    # A field clawplane itself acts on cannot be carried: clawplane and OpenClaw would disagree.
    assert _at(result, "import.unmapped") == ["agents.entries.main.workspace"]
    for name, text in result.files().items():
        (tmp_path / name).write_text(text)
    rendered, diags = load_folder(tmp_path).render()
    assert [d for d in diags if d.is_error] == []
    assert rendered["diagnostics"]["otel"]["headers"] == {"Authorization": "Bearer ${OTEL_TOKEN}"}
    assert rendered["browser"]["extraArgs"] == ["--proxy-server=${PROXY}", "--lang=$${LANG}"]
    assert rendered["gateway"]["remote"] == {
        "url": "wss://${GW_HOST}:18789",
        "token": {"source": "env", "provider": "default", "id": "GW_TOKEN"},
    }
    assert rendered["agents"]["entries"]["main"]["identity"] == {"name": "Clawd ${SUFFIX}"}


def test_a_key_named_like_a_clawplane_field_is_kept_with_openclaw_meaning() -> None:
    config = {
        "mcp": {"servers": {"s": {"command": "x", "image": "ghcr.io/x/y"}}},
        "channels": {"telegram": {"dmPolicy": "pairing", "mentionPatterns": {"mode": "allow"}}},
    }
    result = import_openclaw_config(config)
    gateway = _specs(result, "Gateway")["default"]
    # clawplane's McpServer.image is a Kubernetes container image, not OpenClaw's key.
    assert gateway["config"] == {"mcp": {"servers": {"s": {"image": "ghcr.io/x/y"}}}}
    assert gateway["configUnchecked"] == ["mcp.servers.s.image"]
    assert "image" not in _specs(result, "McpServer")["s"]
    # A Channel's mentionPatterns takes OpenClaw's mapping as written (a list is clawplane's regexes).
    assert _specs(result, "Channel")["telegram"]["mentionPatterns"] == {"mode": "allow"}


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
        "gateway": {"auth": {"mode": "token", "token": "gw-literal"}},
        "hooks": {"token": "${HOOKS_TOKEN}"},
    }
    result = import_openclaw_config(config)
    channels = _specs(result, "Channel")
    # A channel's credentials are its own keys, directly under spec.
    assert channels["telegram"] == {
        "type": "telegram",
        "botToken": {"valueFrom": {"file": "/run/s"}},
        "webhookSecret": "lit",
    }
    assert channels["slack"] == {"type": "slack", "botToken": {"valueFrom": {"env": "SLACK_BOT_TOKEN"}}, "mode": "socket"}
    gateway = _specs(result, "Gateway")["default"]
    assert gateway["skills"]["entries"]["img"]["apiKey"] == {"valueFrom": {"env": "IMG_KEY"}}
    # The provider stays: it is OpenClaw's, and clawplane's valueFrom.file needs none of it.
    assert gateway["secrets"] == config["secrets"]
    assert gateway["gateway"] == config["gateway"]
    assert gateway["hooks"] == {"token": {"valueFrom": {"env": "HOOKS_TOKEN"}}}
    assert sorted(_at(result, "import.literal-secret")) == ["channels.telegram.webhookSecret", "gateway.auth.token"]
    assert result.complete


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
    assert gateway["bindings"] == [config["bindings"][2], config["bindings"][3]]
    assert gateway["channels"] == {"defaults": {"groupPolicy": "open"}}
    assert "config" not in gateway
    assert result.complete


def test_values_clawplane_rejects_move_to_raw_config() -> None:
    result = import_openclaw_config(
        {"skills": {"limits": {"maxSkillsInPrompt": -1, "maxSkillFileBytes": 1000}}}
    )
    gateway = _specs(result, "Gateway")["default"]
    assert gateway["skills"]["limits"] == {"maxSkillFileBytes": 1000}
    assert gateway["config"] == {"skills": {"limits": {"maxSkillsInPrompt": -1}}}
    assert _at(result, "import.rejected-value") == ["skills.limits.maxSkillsInPrompt"]


def test_a_rejected_value_is_carried_as_openclaw_wrote_it() -> None:
    result = import_openclaw_config(
        {"agents": {"entries": {"x": {"skillsLimits": {"maxSkillsPromptChars": -1}, "description": "kept"}}}}
    )
    assert _specs(result, "Agent")["x"] == {"skillsLimits": {}, "description": "kept"}
    gateway = _specs(result, "Gateway")["default"]
    assert gateway["config"] == {"agents": {"entries": {"x": {"skillsLimits": {"maxSkillsPromptChars": -1}}}}}
    assert _at(result, "import.rejected-value") == ["agents.entries.x.skillsLimits.maxSkillsPromptChars"]
    # Raw config is written verbatim: literals escaped again, env references as OpenClaw writes them.
    written = verbatim({"a": "x ${Y}", "b": {"valueFrom": {"env": "T"}}, "c": [1, "z"]})
    assert written == {"a": "x $${Y}", "b": "${T}", "c": [1, "z"]}
    assert verbatim([{"valueFrom": {"file": "/run/s"}}]) is UNWRITABLE


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


def test_escaped_surrogate_pairs_are_read_as_the_characters_javascript_sees(tmp_path: Path) -> None:
    from clawplane.interop import load_openclaw_file

    config = tmp_path / "openclaw.json"
    # What json.dumps and many editors write for "🦞": a surrogate pair of \u escapes.
    config.write_text('{"agents": {"entries": {"main": {"identity": {"emoji": "\\ud83e\\udd9e"}}}}}')
    assert load_openclaw_file(config)["agents"]["entries"]["main"]["identity"]["emoji"] == "🦞"
    config.write_text('{"ui": {"seamColor": "\\ud83e"}}')
    with pytest.raises(ValueError, match="lone UTF-16 surrogate"):
        load_openclaw_file(config)
