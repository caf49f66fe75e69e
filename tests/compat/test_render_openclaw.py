"""Rendered openclaw.json files pass the real OpenClaw 2026.9.6 (`config validate`) and its JSON schema."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from tests.oracles.runners import OpenClawOracle
from tests.unit.render.build import Folder, agent, channel, gateway, load_folder, server
from tests.unit.render.oracle_checks import openclaw_validate, schema_errors

from clawplane.models import CHANNEL_TYPES
from clawplane.naming.channelfields import channel_fields

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"


def _check(
    openclaw: OpenClawOracle, folder: Folder, env: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[Any]]:
    config, diagnostics = folder.render()
    assert not [d for d in diagnostics if d.is_error], diagnostics
    assert schema_errors(config) == []
    warnings = openclaw_validate(openclaw, config, env=env)
    return config, warnings


def test_quickstart(openclaw: OpenClawOracle) -> None:
    env = {"DOCS_SEARCH_TOKEN": "t", "NOTES_API_TOKEN": "n", "TELEGRAM_BOT_TOKEN": "1:a"}
    config, warnings = _check(openclaw, load_folder(QUICKSTART), env)
    assert set(config["mcp"]["servers"]) == {"notes", "docs-search"}
    # The only warning: a fleet without a heartbeat owner (the quickstart names no default agent).
    assert [w["path"] for w in warnings] == ["agents.defaults.heartbeat.agentId"]


def _kitchen_sink(tmp_path: Path) -> Folder:
    secret = tmp_path / "webhook.secret"
    secret.write_text("s3cret\n")
    os.chmod(secret, 0o600)
    folder = Folder(
        gateway=gateway(
            skills={
                "load": {"extraDirs": ["skills"], "allowSymlinkTargets": ["/opt/skills"], "watch": True},
                "allowBundled": ["weather"],
                "entries": {
                    "weather": {"enabled": True, "apiKey": {"valueFrom": {"env": "WEATHER_KEY"}}, "env": {"UNITS": "metric"}},
                    "img": {"apiKey": {"valueFrom": {"file": "webhook.secret"}}, "config": {"size": 512}},
                },
                "limits": {"maxSkillsInPrompt": 20, "maxSkillsPromptChars": 9000},
            },
            agents={"defaults": {"skills": ["weather"], "workspace": "ws", "model": "openai/gpt-5"}, "defaultAgent": "main"},
            mcp={"sessionIdleTtlMs": 600000},
            plugins={"enabled": True, "deny": ["canvas"]},
            tools={"profile": "coding", "deny": ["nodes"]},
            config={"gateway": {"port": 18789}, "messages": {"groupChat": {"historyLimit": 20}}},
        ),
        servers=[
            server("notes", command="python3", args=["notes.py"], env={"T": {"valueFrom": {"env": "NOTES_TOKEN"}}},
                   toolFilter={"exclude": ["debug_*"]}, codex={"agents": ["main"], "defaultToolsApprovalMode": "prompt"}),
            server("files", hosting="consumer", command="mcp-files", args=["--root", "${HOME}"], cwd="data",
                   env={"GITHUB_TOKEN": {"valueFrom": {"env": "GITHUB_TOKEN"}}, "LEVEL": 2, "DEBUG": False},
                   connectionTimeoutMs=5000, requestTimeoutMs=90000, supportsParallelToolCalls=True),
            server("docs", transport="streamable-http", url="https://docs.example/mcp",
                   headers={"Authorization": {"valueFrom": {"env": "DOCS_AUTH"}}, "X-Team": "blue"},
                   sslVerify=True, toolFilter={"include": ["search", "fetch_*"]}),
            server("legacy", type="sse", url="http://127.0.0.1:9/sse", clientCert="c.pem", clientKey="c.key"),
            server("off", enabled=False, hosting="consumer", command="mcp-off", env={"K": {"valueFrom": {"file": "x"}}}),
        ],
        agents=[
            agent("main", description="Front desk", tools={"profile": "messaging", "alsoAllow": ["web_search"]}),
            agent("coder", skills=[], mcpServers=["files"], workspace="ws/coder",
                  model={"primary": "anthropic/claude-sonnet-4", "fallbacks": ["openai/gpt-5"]},
                  skillsLimits={"maxSkillsPromptChars": 3000}, tools={"allow": ["read", "write"], "deny": ["exec"]}),
            agent("ops", mcpServers=["notes", "docs"]),
        ],
        channels=[
            channel("tg", type="telegram", agent="main", dmPolicy="allowlist", allowFrom=["123", 456],
                    groups={"*": {"requireMention": True}, "-100": {"groupPolicy": "open", "enabled": True}},
                    mentionPatterns=["\\bmain\\b"],
                    credentials={"botToken": {"valueFrom": {"env": "TELEGRAM_BOT_TOKEN"}},
                                 "webhookSecret": {"valueFrom": {"file": "webhook.secret"}}}),
            channel("sl", type="slack", agent="coder", dmPolicy="open", allowFrom=["*"], groupPolicy="disabled",
                    credentials={"botToken": {"valueFrom": {"env": "SLACK_BOT_TOKEN"}}, "appToken": "xapp-literal"}),
            channel("wa", type="whatsapp", dmPolicy="disabled", groups={"*": {"requireMention": False}},
                    mentionPatterns=["hey"]),
            channel("dc", type="discord", enabled=False, agent="ops",
                    credentials={"token": {"valueFrom": {"env": "DISCORD_TOKEN"}}}),
        ],
    )  # fmt: skip
    folder.base_dirs = {
        r.key: tmp_path for r in [folder.gateway, *folder.servers, *folder.agents, *folder.channels] if r
    }
    return folder


def test_kitchen_sink(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    config, warnings = _check(openclaw, _kitchen_sink(tmp_path))
    text = json.dumps(config)
    assert "s3cret" not in text and "${NOTES_TOKEN}" not in text  # hosted env stays with the supervisor
    assert config["agents"]["entries"]["coder"]["tools"]["deny"] == [
        "exec",
        "notes__*",
        "docs__*",
        "legacy__*",
    ]
    assert {w["path"] for w in warnings} <= {
        "mcp.servers.files.env.GITHUB_TOKEN", "mcp.servers.docs.headers.Authorization",
        "skills.entries.weather.env", "plugins.deny",
    }  # fmt: skip


def test_secret_refs_resolve_through_openclaw(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    """`openclaw secrets audit` resolves every SecretRef clawplane wrote (env and private file)."""
    folder = _kitchen_sink(tmp_path)
    config, _ = folder.render()
    openclaw.write_config(config)
    env = {"TELEGRAM_BOT_TOKEN": "1:a", "SLACK_BOT_TOKEN": "xoxb-1", "DISCORD_TOKEN": "d", "WEATHER_KEY": "w"}
    audit = openclaw.json("secrets", "audit", "--json", env=env)
    # Bundled surfaces only (telegram, skills): slack/discord are plugins this install lacks.
    assert audit["resolution"]["refsChecked"] >= 3
    assert audit["summary"]["unresolvedRefCount"] == 0, audit["findings"]
    assert audit["summary"]["plaintextCount"] == 0


def test_every_channel_type(openclaw: OpenClawOracle) -> None:
    channels = []
    for kind in (k for k in CHANNEL_TYPES if k != "qa-channel"):  # OpenClaw refuses qa-channel
        fields = channel_fields(kind)
        creds = {
            key: {"valueFrom": {"env": f"{kind.upper().replace('-', '_')}_{i}"}}
            for i, key in enumerate(sorted(fields.secret_inputs))
        }
        spec: dict[str, Any] = {"type": kind, "credentials": creds}
        if "allowFrom" in fields.policy:
            spec.update(
                dmPolicy="allowlist", allowFrom=["1"]
            ) if "dmPolicy" in fields.policy else spec.update(allowFrom=["1"])
        if (
            "groups" in fields.policy and "requireMention" in fields.group_keys and kind != "buzz"
        ):  # buzz: UUID keys
            spec["groups"] = {"*": {"requireMention": True}}
        channels.append(channel(kind, **spec))
    # twitch also needs its account identity, which only raw config can give.
    raw = {"channels": {"twitch": {"username": "bot", "channel": "stream", "accessToken": "${TWITCH_TOKEN}"}}}
    folder = Folder(gateway=gateway(config=raw), channels=channels, agents=[agent("main")])
    config, diagnostics = folder.render()
    assert [d for d in diagnostics if d.is_error] == []
    assert schema_errors(config) == []
    openclaw_validate(openclaw, config)


def _random_folder(seed: int) -> Folder:
    rng = random.Random(seed)
    servers = []
    for i in range(rng.randint(1, 5)):
        kind = rng.choice(["hosted", "consumer", "sse", "http"])
        spec: dict[str, Any] = {"enabled": rng.random() > 0.2}
        if kind in ("hosted", "consumer"):
            spec.update(
                command="mcp-x",
                args=rng.sample(["-v", "--port=1", "${X}", "$${Y}"], 2),
                hosting="clawplane" if kind == "hosted" else "consumer",
                env={"A_TOKEN": {"valueFrom": {"env": "A_TOKEN"}}, "PLAIN": "v"},
            )
        else:
            spec.update(
                url=f"http://127.0.0.1:{9000 + i}/mcp",
                transport="sse" if kind == "sse" else "streamable-http",
                headers={"Authorization": {"valueFrom": {"env": "AUTH"}}},
            )
        if rng.random() > 0.5:
            spec["toolFilter"] = {"include": ["a*"]} if rng.random() > 0.5 else {"exclude": ["b"]}
        if rng.random() > 0.5:
            spec["codex"] = {"defaultToolsApprovalMode": rng.choice(["auto", "prompt", "approve"])}
        if rng.random() > 0.5:
            spec["requestTimeoutMs"] = rng.randint(1000, 100000)
        servers.append(server(f"srv-{i}", **spec))
    names = [s.name for s in servers]
    agents = [agent(f"agent{i}", mcpServers=rng.sample(names, rng.randint(0, len(names))) if rng.random() > 0.5 else None,
                    skills=rng.choice([None, [], ["a", "b"]])) for i in range(rng.randint(1, 4))]  # fmt: skip
    kinds = rng.sample(
        ["telegram", "slack", "discord", "whatsapp", "signal", "matrix", "irc"], rng.randint(0, 4)
    )
    channels = [
        channel(k, type=k, agent=rng.choice([None, agents[0].name]), dmPolicy=rng.choice(["pairing", "open", "disabled"]),
                allowFrom=["*"], groupPolicy=rng.choice(["open", "allowlist", "disabled"]))
        for k in kinds
    ]  # fmt: skip
    gw = gateway(agents={"defaultAgent": agents[-1].name}, tools={"profile": rng.choice(["minimal", "full"])})
    return Folder(gateway=gw, servers=servers, agents=agents, channels=channels)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_generated_configs(openclaw: OpenClawOracle, seed: int) -> None:
    folder = _random_folder(seed)
    config, diagnostics = folder.render()
    assert [d for d in diagnostics if d.is_error] == []
    assert schema_errors(config) == []
    openclaw_validate(openclaw, config)
