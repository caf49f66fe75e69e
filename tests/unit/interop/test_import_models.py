"""``models`` and ``session`` import into ModelProviders and the Gateway, and render back to the same config."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tests.unit.render.build import load_folder

from clawplane.interop import import_openclaw_config

SECRETS = {"providers": {"keys": {"source": "file", "path": "/run/secrets/llm", "mode": "singleValue"}}}
MODELS: dict[str, Any] = {
    "mode": "replace",
    "catalogRefresh": {"enabled": False},
    "providers": {
        "local": {
            "baseUrl": "http://127.0.0.1:4000/v1",
            "api": "openai-completions",
            "apiKey": {"source": "env", "provider": "default", "id": "LITELLM_API_KEY"},
            "headers": {"X-Team": "blue", "X-Org": "${ORG_ID}"},
            "timeoutSeconds": 300,
            "request": {
                "auth": {"mode": "header", "headerName": "X-Key", "value": {"source": "file", "provider": "keys", "id": "value"}},
                "allowPrivateNetwork": True,
            },
            "models": [
                {
                    "id": "llama-3.1-8b",
                    "name": "Llama 3.1 8B",
                    "reasoning": False,
                    "input": ["text"],
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    "contextWindow": 128000,
                    "contextTokens": 96000,
                    "maxTokens": 32000,
                    "thinkingLevelMap": {"off": None},
                    "params": {"temperature": 0.2},
                    "compat": {"supportsTools": True, "maxTokensField": "max_tokens"},
                }
            ],
        },
        "anthropic": {"apiKey": "sk-ant-literal-kept-for-years"},
    },
}
SESSION: dict[str, Any] = {
    "dmScope": "per-channel-peer",
    "identityLinks": {"ada": ["telegram:1"]},
    "reset": {"mode": "idle", "idleMinutes": 240},
    "resetByChannel": {"discord": {"mode": "daily", "atHour": 5}},
    "sendPolicy": {"default": "allow", "rules": [{"action": "deny", "match": {"channel": "discord"}}]},
    "store": "/var/lib/openclaw/sessions.json",
    "maintenance": {"mode": "enforce", "pruneAfter": "14d", "maxDiskBytes": False},
}
CONFIG = {"secrets": SECRETS, "models": MODELS, "session": SESSION, "gateway": {"port": 18789}}


def _specs(result: Any, kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d["spec"] for d in result.documents.get(kind, [])}


def test_providers_become_model_providers_with_value_from() -> None:
    result = import_openclaw_config(copy.deepcopy(CONFIG))
    providers = _specs(result, "ModelProvider")
    assert set(providers) == {"local", "anthropic"}
    local = providers["local"]
    assert local["apiKey"] == {"valueFrom": {"env": "LITELLM_API_KEY"}}
    assert local["headers"] == {"X-Team": "blue", "X-Org": {"valueFrom": {"env": "ORG_ID"}}}
    assert local["request"]["auth"]["value"] == {"valueFrom": {"file": "/run/secrets/llm"}}
    assert local["models"][0]["thinkingLevelMap"] == {"off": None}
    assert providers["anthropic"] == {"apiKey": "sk-ant-literal-kept-for-years"}
    gateway = _specs(result, "Gateway")["default"]
    assert gateway["models"] == {"mode": "replace", "catalogRefresh": {"enabled": False}}
    assert gateway["session"] == SESSION
    assert gateway["gateway"] == {"port": 18789}
    assert gateway["secrets"] == SECRETS
    assert "config" not in gateway
    literal = [d for d in result.diagnostics if d.code == "import.literal-secret"]
    assert [d.path for d in literal] == ["models.providers.anthropic.apiKey"]
    assert "valueFrom" in literal[0].hint
    assert result.complete


def test_import_then_render_gives_back_the_providers_and_the_session_policy(tmp_path: Path) -> None:
    result = import_openclaw_config(copy.deepcopy(CONFIG))
    for name, text in result.files().items():
        (tmp_path / name).write_text(text)
    assert "model-providers.yaml" in result.files()
    config, diags = load_folder(tmp_path).render()
    assert [d for d in diags if d.is_error] == []
    # The file SecretRef comes back through clawplane's own single-value provider for the same path.
    rendered = copy.deepcopy(config["models"])
    auth = rendered["providers"]["local"]["request"]["auth"]
    alias = auth["value"]["provider"]
    assert config["secrets"]["providers"][alias] == SECRETS["providers"]["keys"]
    auth["value"]["provider"] = "keys"
    expected = copy.deepcopy(MODELS)
    expected["providers"]["local"]["headers"]["X-Org"] = {"source": "env", "provider": "default", "id": "ORG_ID"}
    assert rendered == expected
    assert config["session"] == SESSION


def test_what_clawplane_cannot_carry_is_reported_not_dropped_silently() -> None:
    config = {
        "models": {
            "providers": {
                "a b": {"baseUrl": "http://x"},
                "proxy": {"baseUrl": "${PROXY_URL}/v1", "models": [{"id": "m", "name": "m"}]},
                "vault": {"baseUrl": "http://v", "apiKey": {"source": "exec", "provider": "op", "id": "k"}, "models": []},
                "Mixed": {"baseUrl": "http://m", "models": []},
            }
        },
        "session": {"store": "${HOME}/s.json", "dmScope": "main"},
    }
    result = import_openclaw_config(config)
    unmapped = sorted(d.path for d in result.diagnostics if d.code == "import.unmapped")
    assert unmapped == [
        "models.providers.a b",
        "models.providers.proxy.baseUrl",
        "models.providers.vault.apiKey",
        "session.store",
    ]
    assert [d.path for d in result.diagnostics if d.code == "import.provider-id"] == ["models.providers.Mixed"]
    assert _specs(result, "Gateway")["default"]["session"] == {"dmScope": "main"}
    assert not result.complete
