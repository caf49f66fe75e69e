"""Rendered providers and session policy, judged by the real OpenClaw 2026.9.6.

- ``openclaw config validate`` accepts them (no errors, no warnings), for every field
  clawplane types;
- ``openclaw models list --json`` resolves the declared provider's models with its
  SecretRef read from the environment, and fails without the variable (so the reference,
  not a value, is what the config holds);
- an imported config with providers and session policy renders back to one OpenClaw
  accepts and reads the same way.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tests.oracles.runners import OpenClawOracle
from tests.unit.interop.test_import_models import CONFIG
from tests.unit.render.build import Folder, agent, gateway, load_folder, provider
from tests.unit.render.oracle_checks import openclaw_validate, schema_errors

from clawplane.interop import import_openclaw_config

KEY = "sk-canary-openclaw-3d7f0a"
SESSION = {
    "scope": "per-sender",
    "dmScope": "per-channel-peer",
    "groupScope": "per-group",
    "notifyOnCreate": False,
    "identityLinks": {"ada": ["telegram:123", "slack:U1"]},
    "resetTriggers": ["/fresh"],
    "reset": {"mode": "daily", "atHour": 4, "idleMinutes": 600},
    "resetByType": {"direct": {"mode": "idle", "idleMinutes": 120}, "thread": {"mode": "none"}},
    "resetByChannel": {"discord": {"mode": "idle", "idleMinutes": 30}},
    "sendPolicy": {"default": "deny", "rules": [{"action": "allow", "match": {"channel": "slack", "chatType": "direct"}}]},
    "threadBindings": {"enabled": True, "idleHours": 12, "maxAgeHours": 0, "spawnSessions": True, "defaultSpawnContext": "isolated"},
    "sharing": {"readOnly": True, "suggest": False, "drafts": True},
    "maintenance": {
        "mode": "warn",
        "coldStorage": {"enabled": True, "afterDays": 14},
        "pruneAfter": "30d",
        "archiveDashboardAfter": False,
        "maxEntries": 2000,
        "preserveRecent": "7d",
        "resetArchiveRetention": False,
        "maxDiskBytes": "500mb",
        "highWaterBytes": "400mb",
    },
}


def _kitchen_sink(tmp_path: Path) -> Folder:
    local = provider(
        "local",
        api="openai-completions",
        baseUrl="http://127.0.0.1:9/v1",
        apiKey={"valueFrom": {"env": "LOCAL_LLM_API_KEY"}},
        headers={"X-Team": "blue", "X-Org": {"valueFrom": {"env": "LOCAL_ORG"}}},
        maxTokens=4096,
        timeoutSeconds=300,
        injectNumCtxForOpenAICompat=False,
        params={"keep_alive": "5m"},
        agentRuntime={"id": "openclaw"},
        request={
            "headers": {"X-Request": "r"},
            "auth": {"mode": "header", "headerName": "X-Key", "value": {"valueFrom": {"env": "LOCAL_HDR"}}, "prefix": "Key "},
            "proxy": {"mode": "env-proxy"},
            "tls": {"insecureSkipVerify": True, "serverName": "llm.internal"},
            "allowPrivateNetwork": True,
        },
        localService={"command": "/usr/bin/llama-server", "args": ["--port", "9"], "cwd": "srv", "readyTimeoutMs": 30000, "idleStopMs": 0},
        models=[
            {
                "id": "llama-3.1-8b",
                "name": "Llama 3.1 8B",
                "reasoning": False,
                "input": ["text", "image"],
                "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0,
                         "tieredPricing": [{"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "range": [0, 200000]}]},
                "contextWindow": 131072,
                "contextTokens": 96000,
                "maxTokens": 8192,
                "thinkingLevelMap": {"off": None, "high": "high"},
                "headers": {"X-Trace": {"valueFrom": {"env": "TRACE_ID"}}},
                "compat": {"supportsTools": True, "maxTokensField": "max_tokens", "thinkingFormat": "qwen",
                           "openRouterRouting": {"allow_fallbacks": False, "sort": "price"}},
                "mediaInput": {"image": {"maxBytes": 5000000, "tokenMode": "tile"}},
            },
            {"id": "qwen2.5-coder"},
        ],
    )
    anthropic = provider("anthropic", apiKey={"valueFrom": {"env": "ANTHROPIC_API_KEY"}})
    return Folder(
        gateway=gateway(models={"mode": "merge", "catalogRefresh": {"enabled": False}}, session=SESSION),
        providers=[local, anthropic],
        agents=[agent("main", model={"primary": "local/llama-3.1-8b", "fallbacks": ["anthropic/claude-sonnet-4"]})],
        base_dirs={"ModelProvider/local": tmp_path, "Gateway/default": tmp_path, "Agent/main": tmp_path},
    )


def test_every_typed_provider_and_session_field_is_accepted(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    config, diagnostics = _kitchen_sink(tmp_path).render()
    assert [d for d in diagnostics if d.is_error] == []
    assert config["session"] == SESSION
    assert schema_errors(config) == []
    assert openclaw_validate(openclaw, config, env={"TRACE_ID": "t"}) == []


def test_openclaw_resolves_the_declared_models_with_the_key_from_the_environment(
    openclaw: OpenClawOracle, tmp_path: Path
) -> None:
    folder = Folder(
        gateway=gateway(models={"mode": "replace"}, agents={"defaults": {"model": "local/llama-3.1-8b"}}),
        providers=[
            provider(
                "local",
                baseUrl="http://127.0.0.1:9/v1",
                apiKey={"valueFrom": {"env": "LOCAL_LLM_API_KEY"}},
                models=[{"id": "llama-3.1-8b", "contextWindow": 131072}, {"id": "qwen2.5-coder", "name": "Qwen Coder"}],
            )
        ],
        base_dirs={"ModelProvider/local": tmp_path, "Gateway/default": tmp_path},
    )
    config, _ = folder.render()
    assert KEY not in json.dumps(config)
    openclaw_validate(openclaw, config)
    listed = openclaw.json("models", "list", "--json", env={"LOCAL_LLM_API_KEY": KEY})
    by_key = {m["key"]: m for m in listed["models"]}
    assert set(by_key) == {"local/llama-3.1-8b", "local/qwen2.5-coder"}
    assert by_key["local/llama-3.1-8b"]["contextWindow"] == 131072
    assert by_key["local/llama-3.1-8b"]["available"] is True and "default" in by_key["local/llama-3.1-8b"]["tags"]
    assert by_key["local/qwen2.5-coder"]["name"] == "Qwen Coder"
    # Without the variable OpenClaw cannot resolve the SecretRef: the config holds a reference only.
    missing = openclaw.json("models", "list", "--json")
    assert missing.get("ok") is False and "failed to resolve secrets" in missing["error"]["message"]


def test_imported_providers_and_session_policy_render_back_to_what_openclaw_reads(
    openclaw: OpenClawOracle, tmp_path: Path
) -> None:
    original: dict[str, Any] = copy.deepcopy(CONFIG)
    result = import_openclaw_config(copy.deepcopy(original))
    assert result.complete
    for name, text in result.files().items():
        (tmp_path / name).write_text(text)
    rendered, _ = load_folder(tmp_path).render()
    env = {"LITELLM_API_KEY": KEY, "ORG_ID": "org-1"}
    openclaw_validate(openclaw, original, name="original.json", env=env)
    before = openclaw.json("config", "get", "session", "--json", env=env)
    openclaw_validate(openclaw, rendered, name="rendered.json", env=env)
    after = openclaw.json("config", "get", "session", "--json", env=env)
    assert after == before
    assert rendered["models"]["mode"] == original["models"]["mode"]
    assert rendered["models"]["providers"]["local"]["models"] == original["models"]["providers"]["local"]["models"]
