"""Gateway → skills, agents.defaults, mcp, plugins, tools; spec.config merged underneath."""

from __future__ import annotations

from tests.unit.render.build import agent, channel, codes, gateway, render_resources


def _render(gw, agents=(), channels=()):  # type: ignore[no-untyped-def]
    return render_resources(gateway=gw, agents=agents, channels=channels, hosted_urls={})


def test_skills_and_defaults() -> None:
    gw = gateway(
        skills={
            "roots": {"plugins": ["plug"], "managed": "managed"},
            "load": {"extraDirs": ["./skills", "/abs"], "allowSymlinkTargets": ["../shared"], "watch": False},
            "allowBundled": ["weather"],
            "entries": {
                "x": {
                    "enabled": False,
                    "env": {"A": "1", "B": {"valueFrom": {"env": "B_KEY"}}},
                    "config": {"k": 1},
                }
            },
            "limits": {"maxSkillsInPrompt": 50},
        },
        agents={"defaults": {"skills": ["a"], "workspace": "ws", "model": "openai/gpt-5"}},
        mcp={"sessionIdleTtlMs": 0},
        plugins={"enabled": True, "deny": ["canvas"]},
        tools={"profile": "messaging", "alsoAllow": ["web_search"], "deny": ["exec"]},
    )
    config, diagnostics = _render(gw)
    assert config == {
        "skills": {
            "load": {
                "extraDirs": ["/res/skills", "/abs", "/res/plug"],
                "allowSymlinkTargets": ["/shared"],
                "watch": False,
            },
            "allowBundled": ["weather"],
            "entries": {"x": {"enabled": False, "env": {"A": "1", "B": "${B_KEY}"}, "config": {"k": 1}}},
            "limits": {"maxSkillsInPrompt": 50},
        },
        "agents": {"defaults": {"skills": ["a"], "workspace": "/res/ws", "model": "openai/gpt-5"}},
        "mcp": {"sessionIdleTtlMs": 0},
        "plugins": {"enabled": True, "deny": ["canvas"]},
        "tools": {"profile": "messaging", "alsoAllow": ["web_search"], "deny": ["exec"]},
    }
    assert codes(diagnostics) == ["render.skill-root-not-rendered"]


def test_empty_gateway_renders_nothing() -> None:
    assert _render(gateway()) == ({}, [])


def test_raw_config_is_merged_under_rendered_values() -> None:
    gw = gateway(
        tools={"profile": "coding"},
        config={
            "gateway": {"port": 18789, "auth": {"token": "${GATEWAY_TOKEN}"}},  # raw: not escaped
            "tools": {"profile": "full", "exec": {"timeoutSeconds": 30}},
            "channels": {"telegram": {"streaming": {"mode": "partial"}}},
            "bindings": [
                {"agentId": "x", "match": {"channel": "telegram", "peer": {"kind": "group", "id": "-1"}}}
            ],
        },
    )
    tg = channel("t", type="telegram", agent="x")
    config, diagnostics = _render(gw, [agent("x")], [tg])
    assert config["gateway"] == {"port": 18789, "auth": {"token": "${GATEWAY_TOKEN}"}}
    assert config["tools"] == {"profile": "coding", "exec": {"timeoutSeconds": 30}}
    assert config["channels"]["telegram"]["streaming"] == {"mode": "partial"}
    assert config["channels"]["telegram"]["dmPolicy"] == "pairing"
    assert [b["match"].get("peer") for b in config["bindings"]] == [{"kind": "group", "id": "-1"}, None]
    assert codes(diagnostics) == ["render.config-overridden"]
    assert diagnostics[0].path == "spec.config.tools.profile"


def test_what_rendering_produces_is_checked_against_openclaws_schema() -> None:
    # spec.config is checked at validate time; rendered here without validation, the mistake
    # still surfaces, on the resource and path that wrote it.
    gw = gateway(config={"tools": {"exec": {"timeoutSec": 30}}})
    tg = channel("t", type="telegram", streaming="partial")
    _, diagnostics = _render(gw, [], [tg])
    found = [(d.code, d.resource, d.path) for d in diagnostics]
    assert found == [
        ("render.openclaw-schema", "Gateway/default", "spec.tools.exec.timeoutSec"),
        ("render.openclaw-schema", "Channel/t", "spec.streaming"),
    ]
