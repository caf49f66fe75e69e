"""Agent → agents.entries.<id>, ownership, system agent and per-agent server lists."""

from __future__ import annotations

from tests.unit.render.build import agent, codes, gateway, render_resources, server

from clawplane.diagnostics import Severity


def _render(agents, servers=(), gw=None):  # type: ignore[no-untyped-def]
    return render_resources(gateway=gw, servers=servers, agents=agents)


def test_entry_fields() -> None:
    coder = agent(
        "Coder",
        description="Writes code.",
        skills=[],
        skillsLimits={"maxSkillsPromptChars": 4000},
        workspace="ws/coder",
        model={"primary": "anthropic/claude-sonnet-4", "fallbacks": ["openai/gpt-5"]},
        tools={"profile": "coding", "deny": ["exec"]},
    )
    config, diagnostics = _render([coder])
    assert config["agents"] == {
        "entries": {
            "coder": {  # ids are stored lower-case
                "description": "Writes code.",
                "skills": [],
                "skillsLimits": {"maxSkillsPromptChars": 4000},
                "workspace": "/res/ws/coder",
                "model": {"primary": "anthropic/claude-sonnet-4", "fallbacks": ["openai/gpt-5"]},
                "tools": {"profile": "coding", "deny": ["exec"]},
            }
        }
    }
    assert diagnostics == []


def test_absent_skills_inherit() -> None:
    config, _ = _render([agent("solo")])
    assert config["agents"]["entries"]["solo"] == {}
    assert "ownership" not in config["agents"]


def test_fleet_is_explicit_with_main_as_system_agent() -> None:
    config, _ = _render([agent("main"), agent("helper")])
    assert config["agents"]["ownership"] == "explicit"
    assert config["agents"]["defaults"] == {"systemAgent": {"agentId": "main"}}


def test_gateway_default_agent() -> None:
    gw = gateway(agents={"defaultAgent": "Helper", "defaults": {"skills": ["a"]}})
    config, _ = _render([agent("main"), agent("helper")], gw=gw)
    assert config["agents"]["defaults"] == {"skills": ["a"], "systemAgent": {"agentId": "helper"}}


def test_fleet_without_default_has_no_system_agent() -> None:
    config, _ = _render([agent("a"), agent("b")])
    assert "defaults" not in config["agents"]


def test_allow_and_also_allow_conflict() -> None:
    config, diagnostics = _render([agent("a", tools={"allow": ["read"], "alsoAllow": ["exec"]})])
    assert config["agents"]["entries"]["a"]["tools"] == {"allow": ["read"]}
    assert codes(diagnostics) == ["render.tools-allow-conflict"]


def test_mcp_server_list_becomes_deny_globs_on_sanitized_names() -> None:
    servers = [
        server("notes", command="x"),
        server("docs.search", command="y"),
        server("off", enabled=False, command="z"),
    ]
    only_notes = agent("a", mcpServers=["notes"], tools={"deny": ["exec"]})
    everything = agent("b")
    config, diagnostics = _render([only_notes, everything], servers)
    assert config["agents"]["entries"]["a"]["tools"]["deny"] == ["exec", "docs-search__*"]
    assert "tools" not in config["agents"]["entries"]["b"]
    assert codes(diagnostics) == ["render.agent-servers-as-deny"]
    assert diagnostics[0].severity is Severity.INFO
