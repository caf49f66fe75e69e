"""ModelProviders render into ``models.providers`` with secrets as SecretRefs; session policy as written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.render.build import codes, gateway, provider, render_resources

ENV_REF = {"source": "env", "provider": "default", "id": "LOCAL_KEY"}


def local(**extra: Any) -> Any:
    spec: dict[str, Any] = {
        "api": "openai-completions",
        "baseUrl": "http://127.0.0.1:4000/v1",
        "apiKey": {"valueFrom": {"env": "LOCAL_KEY"}},
        "models": [{"id": "llama-3.1-8b", "contextWindow": 128000, "maxTokens": 8192}],
    }
    return provider("local", **{**spec, **extra})


def test_a_provider_renders_field_for_field_with_its_key_as_a_secret_ref() -> None:
    config, diags = render_resources(providers=[local(probe=False, connectionTimeoutMs=500)])
    assert diags == []
    assert config["models"] == {
        "providers": {
            "local": {
                "api": "openai-completions",
                "baseUrl": "http://127.0.0.1:4000/v1",
                "apiKey": ENV_REF,
                "models": [{"id": "llama-3.1-8b", "name": "llama-3.1-8b", "contextWindow": 128000, "maxTokens": 8192}],
            }
        }
    }
    assert "secrets" not in config


def test_secret_capable_fields_take_the_form_openclaw_reads(tmp_path: Path) -> None:
    key = tmp_path / "key.txt"
    key.write_text("k")
    key.chmod(0o600)
    p = local(
        apiKey={"valueFrom": {"file": "key.txt"}},
        headers={"X-Team": "blue", "X-Org": {"valueFrom": {"env": "ORG_ID"}}, "X-Num": 7},
        request={
            "auth": {"mode": "header", "headerName": "X-Key", "value": {"valueFrom": {"env": "HDR_KEY"}}, "prefix": "K "},
            "tls": {"ca": {"valueFrom": {"env": "CA_PEM"}}, "insecureSkipVerify": False},
        },
        models=[{"id": "m", "name": "Model M", "headers": {"X-Trace": {"valueFrom": {"env": "TRACE"}}, "X-Lit": "${HOME}"}}],
        localService={"command": "/usr/bin/llama-server", "cwd": "srv", "env": {"T": {"valueFrom": {"env": "SVC_T"}}}},
    )
    config, diags = render_resources(providers=[p], base=tmp_path)
    assert diags == []
    entry = config["models"]["providers"]["local"]
    [(alias, file_provider)] = config["secrets"]["providers"].items()
    assert file_provider == {"source": "file", "path": str(key), "mode": "singleValue"}
    assert entry["apiKey"] == {"source": "file", "provider": alias, "id": "value"}
    assert entry["headers"] == {
        "X-Team": "blue",
        "X-Org": {"source": "env", "provider": "default", "id": "ORG_ID"},
        "X-Num": "7",
    }
    assert entry["request"]["auth"]["value"] == {"source": "env", "provider": "default", "id": "HDR_KEY"}
    assert entry["request"]["tls"] == {"ca": {"source": "env", "provider": "default", "id": "CA_PEM"}, "insecureSkipVerify": False}
    # Model headers and localService.env are plain strings in OpenClaw: env refs become ${NAME}.
    assert entry["models"][0]["headers"] == {"X-Trace": "${TRACE}", "X-Lit": "$${HOME}"}
    assert entry["localService"] == {"command": "/usr/bin/llama-server", "cwd": str(tmp_path / "srv"), "env": {"T": "${SVC_T}"}}


def test_kubernetes_secret_key_refs_become_env_refs_listed_for_the_pod() -> None:
    secret_env: dict[str, tuple[str, str]] = {}
    p = local(apiKey={"valueFrom": {"secretKeyRef": {"name": "llm", "key": "api-key"}}})
    config, diags = render_resources(providers=[p], secret_env=secret_env)
    assert diags == []
    [(name, ref)] = secret_env.items()
    assert ref == ("llm", "api-key")
    assert config["models"]["providers"]["local"]["apiKey"] == {"source": "env", "provider": "default", "id": name}


def test_a_secret_key_ref_outside_kubernetes_is_left_out_with_an_error() -> None:
    p = local(apiKey={"valueFrom": {"secretKeyRef": {"name": "llm", "key": "api-key"}}})
    config, diags = render_resources(providers=[p])
    assert "apiKey" not in config["models"]["providers"]["local"]
    assert codes(diags) == ["render.secret-unrenderable"]
    assert diags[0].path == "spec.apiKey" and diags[0].resource == "ModelProvider/local"


def test_unset_fields_stay_unset_and_nulls_survive_where_openclaw_allows_them() -> None:
    p = provider(
        "anthropic",
        apiKey={"valueFrom": {"env": "ANTHROPIC_API_KEY"}},
        models=[{"id": "claude-x", "thinkingLevelMap": {"off": None, "high": "max"}, "compat": {"openRouterRouting": {"allow_fallbacks": False, "sort": {"by": "price", "partition": None}}}}],
    )
    config, _ = render_resources(providers=[p])
    entry = config["models"]["providers"]["anthropic"]
    assert set(entry) == {"apiKey", "models"}
    model = entry["models"][0]
    assert model["thinkingLevelMap"] == {"off": None, "high": "max"}
    assert model["compat"] == {"openRouterRouting": {"allow_fallbacks": False, "sort": {"by": "price", "partition": None}}}


def test_gateway_catalog_mode_and_session_policy_render_as_written(tmp_path: Path) -> None:
    session = {
        "dmScope": "per-channel-peer",
        "groupScope": "per-group",
        "identityLinks": {"ada": ["telegram:1", "slack:U2"]},
        "reset": {"mode": "daily", "atHour": 4},
        "resetByType": {"thread": {"mode": "idle", "idleMinutes": 120}},
        "resetByChannel": {"discord": {"mode": "none"}},
        "sendPolicy": {"default": "deny", "rules": [{"action": "allow", "match": {"channel": "slack", "chatType": "direct"}}]},
        "store": "state/sessions.json",
        "threadBindings": {"enabled": True, "idleHours": 12.5},
        "maintenance": {"mode": "warn", "pruneAfter": "12h", "archiveDashboardAfter": False, "maxDiskBytes": "500mb"},
    }
    gw = gateway(models={"mode": "replace", "catalogRefresh": {"enabled": False}}, session=session)
    config, diags = render_resources(gateway=gw, providers=[local()], base=tmp_path)
    assert diags == []
    assert config["session"] == {**session, "store": str(tmp_path / "state" / "sessions.json")}
    assert config["models"]["mode"] == "replace"
    assert config["models"]["catalogRefresh"] == {"enabled": False}


def test_defaults_are_not_written() -> None:
    config, _ = render_resources(gateway=gateway(session={}, models={}), providers=[])
    assert config["session"] == {}
    assert "models" not in config
