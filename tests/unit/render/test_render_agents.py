"""Agent → agents.entries.<id>, ownership, system agent and per-agent server lists."""

from __future__ import annotations

from pathlib import Path

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


def test_kept_entries_follow_their_inputs_and_are_never_changed_in_place() -> None:
    from tests.unit.render.build import channel

    from clawplane.render import AgentEntries

    memo = AgentEntries()
    # allow with alsoAllow: an error each render, and a deny list for the servers it does not use.
    coder = agent("coder", mcpServers=["a"], tools={"allow": ["x"], "alsoAllow": ["y"]})
    writer = agent("writer", skills=["s"])
    servers = [server("a", command="x"), server("b", command="x", enabled=False)]
    mention = channel("team", type="telegram", agent="writer", mentionPatterns=["@w"])

    def both(**kwargs):  # type: ignore[no-untyped-def]
        kept = render_resources(agent_memo=memo, hosted_urls={}, **kwargs)
        assert kept == render_resources(hosted_urls={}, **kwargs)  # as rendered without the memo
        return kept

    first, found = both(agents=[coder, writer], servers=servers)
    assert "deny" not in first["agents"]["entries"]["coder"]["tools"]  # b is disabled
    second, again = both(agents=[coder, writer], servers=servers)
    assert second["agents"]["entries"]["coder"] is first["agents"]["entries"]["coder"]  # reused
    assert again == found and "render.tools-allow-conflict" in codes(found)
    enabled = [servers[0], server("b", command="x")]
    third, _ = both(agents=[coder, writer], servers=enabled)
    assert third["agents"]["entries"]["coder"]["tools"]["deny"] == ["b__*"]
    mentioned, _ = both(agents=[coder, writer], servers=enabled, channels=[mention])
    assert mentioned["agents"]["entries"]["writer"]["groupChat"] == {"mentionPatterns": ["@w"]}
    plain, _ = both(agents=[coder, writer], servers=enabled)
    assert "groupChat" not in plain["agents"]["entries"]["writer"]  # the kept entry was not changed
    moved, _ = both(agents=[coder, writer], servers=enabled, base=Path("/elsewhere"))
    assert moved["agents"]["entries"]["writer"] is not plain["agents"]["entries"]["writer"]
