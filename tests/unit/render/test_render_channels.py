"""Channel → channels.<type>, route bindings and mention patterns."""

from __future__ import annotations

from tests.unit.render.build import agent, channel, codes, gateway, render_resources


def _render(channels, agents=(), gw=None):  # type: ignore[no-untyped-def]
    return render_resources(gateway=gw, agents=agents, channels=channels, hosted_urls={})


def test_telegram_policies_binding_and_mentions() -> None:
    tg = channel(
        "team",
        type="telegram",
        agent="writer",
        dmPolicy="allowlist",
        allowFrom=["123", 456],
        groupAllowFrom=["123"],
        groups={
            "*": {"requireMention": True},
            "-100": {"enabled": False, "allowFrom": ["7"], "groupPolicy": "open"},
        },
        mentionPatterns=["@writer\\b"],
        credentials={"botToken": {"valueFrom": {"env": "TELEGRAM_BOT_TOKEN"}}},
    )
    config, diagnostics = _render([tg], [agent("writer"), agent("coder")])
    assert config["channels"]["telegram"] == {
        "enabled": True,
        "dmPolicy": "allowlist",
        "allowFrom": ["123", 456],
        "groupPolicy": "allowlist",
        "groupAllowFrom": ["123"],
        "groups": {
            "*": {"requireMention": True},
            "-100": {"enabled": False, "allowFrom": ["7"], "groupPolicy": "open"},
        },
        "botToken": {"source": "env", "provider": "default", "id": "TELEGRAM_BOT_TOKEN"},
    }
    assert config["bindings"] == [{"type": "route", "agentId": "writer", "match": {"channel": "telegram"}}]
    assert config["agents"]["entries"]["writer"]["groupChat"] == {"mentionPatterns": ["@writer\\b"]}
    assert diagnostics == []


def test_unsupported_fields_are_reported_not_rendered() -> None:
    slack = channel(
        "s",
        type="slack",
        groupAllowFrom=["U1"],
        groups={"C1": {"requireMention": True}},
        credentials={"botToken": "xoxb-literal", "pager": "x"},
    )
    config, diagnostics = _render([slack])
    block = config["channels"]["slack"]
    assert "groupAllowFrom" not in block and "groups" not in block
    assert block["botToken"] == "xoxb-literal"
    assert codes(diagnostics) == [
        "render.channel-field-unsupported",
        "render.channel-field-unsupported",
        "render.channel-credential-unknown",
    ]


def test_whatsapp_groups_keep_only_known_keys() -> None:
    wa = channel("w", type="whatsapp", groups={"*": {"requireMention": True, "allowFrom": ["x"]}})
    config, diagnostics = _render([wa])
    assert config["channels"]["whatsapp"]["groups"] == {"*": {"requireMention": True}}
    assert codes(diagnostics) == ["render.channel-field-unsupported"]


def test_duplicate_channel_type() -> None:
    config, diagnostics = _render(
        [channel("a", type="telegram"), channel("b", type="telegram", dmPolicy="open")]
    )
    assert config["channels"]["telegram"]["dmPolicy"] == "pairing"
    assert codes(diagnostics) == ["render.channel-duplicate"]


def test_unbound_channel_in_fleet_without_default_is_warned() -> None:
    _, diagnostics = _render([channel("a", type="telegram")], [agent("x"), agent("y")])
    assert codes(diagnostics) == ["render.channel-unrouted"]


def test_mentions_follow_the_default_agent_or_go_global() -> None:
    tg = channel("a", type="telegram", mentionPatterns=["bot"])
    config, _ = _render([tg], [agent("x"), agent("y")], gw=gateway(agents={"defaultAgent": "y"}))
    assert config["agents"]["entries"]["y"]["groupChat"] == {"mentionPatterns": ["bot"]}
    config, _ = _render([tg])
    assert config["messages"] == {"groupChat": {"mentionPatterns": ["bot"]}}


def test_mentions_of_two_channels_for_one_agent_are_merged_with_warning() -> None:
    a = channel("a", type="telegram", agent="x", mentionPatterns=["one"])
    b = channel("b", type="discord", agent="x", mentionPatterns=["two"])
    config, diagnostics = _render([a, b], [agent("x")])
    assert config["agents"]["entries"]["x"]["groupChat"]["mentionPatterns"] == ["one", "two"]
    assert codes(diagnostics) == ["render.mention-patterns-merged"] * 2


def test_disabled_channel_and_unknown_agent() -> None:
    config, diagnostics = _render([channel("a", type="telegram", enabled=False, agent="ghost")], [agent("x")])
    assert config["channels"]["telegram"]["enabled"] is False
    assert "bindings" not in config
    assert codes(diagnostics) == ["render.channel-agent-unknown"]


def test_channels_openclaw_refuses_or_does_not_describe() -> None:
    qa = channel("qa", type="qa-channel")
    syn = channel("syn", type="synology-chat", dmPolicy="open", allowFrom=["*"])
    twitch = channel(
        "tw",
        type="twitch",
        allowFrom=["mod"],
        username="clawbot",
        channel="clawplane",
        credentials={"accessToken": {"valueFrom": {"env": "TWITCH_TOKEN"}}},
    )
    config, diagnostics = _render([qa, syn, twitch])
    assert "qa-channel" not in config["channels"]
    assert config["channels"]["synology-chat"] == {}
    assert config["channels"]["twitch"] == {
        "enabled": True,
        "allowFrom": ["mod"],
        "username": "clawbot",
        "channel": "clawplane",
        "accessToken": "${TWITCH_TOKEN}",
    }
    assert codes(diagnostics) == [
        "render.channel-rejected",
        "render.channel-field-unsupported",
        "render.channel-field-unsupported",
    ]
