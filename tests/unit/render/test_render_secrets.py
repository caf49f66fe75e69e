"""No secret value lands in openclaw.json unless the caller asks for resolution."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.unit.render.build import channel, codes, gateway, render_resources, server

from clawplane.diagnostics import Severity


def _render(tmp_path: Path, *, servers=(), channels=(), gw=None, **kwargs):  # type: ignore[no-untyped-def]
    return render_resources(
        gateway=gw, servers=servers, channels=channels, hosted_urls={}, base=tmp_path, **kwargs
    )


def _consumer(**env):  # type: ignore[no-untyped-def]
    return server("s", hosting="consumer", command="x", env=env)


def test_env_reference_becomes_substitution(tmp_path: Path) -> None:
    config, diagnostics = _render(tmp_path, servers=[_consumer(K={"valueFrom": {"env": "MY_TOKEN"}})])
    assert config["mcp"]["servers"]["s"]["env"] == {"K": "${MY_TOKEN}"}
    assert diagnostics == []


def test_lower_case_env_name_cannot_be_referenced(tmp_path: Path) -> None:
    srv = _consumer(K={"valueFrom": {"env": "my_token"}})
    config, diagnostics = _render(tmp_path, servers=[srv])
    assert config["mcp"]["servers"]["s"]["env"] == {}
    assert codes(diagnostics) == ["render.secret-unrenderable"]
    assert diagnostics[0].severity is Severity.ERROR and diagnostics[0].path == "spec.env.K"
    resolved, diagnostics = _render(tmp_path, servers=[srv], resolve_secrets=True, environ={"my_token": "v"})
    assert resolved["mcp"]["servers"]["s"]["env"] == {"K": "v"} and diagnostics == []


def test_file_reference_in_env_needs_resolution(tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("s3cr${ET}\n")
    srv = _consumer(K={"valueFrom": {"file": "tok"}})
    config, diagnostics = _render(tmp_path, servers=[srv])
    assert "s3cr" not in json.dumps(config)
    assert codes(diagnostics) == ["render.secret-unrenderable"]
    config, diagnostics = _render(tmp_path, servers=[srv], resolve_secrets=True)
    assert config["mcp"]["servers"]["s"]["env"] == {"K": "s3cr$${ET}"}  # escaped like any literal
    assert diagnostics == []


def test_unresolvable_reference_is_an_error_without_the_value(tmp_path: Path) -> None:
    srv = _consumer(
        K={"valueFrom": {"file": "missing"}}, L={"valueFrom": {"secretKeyRef": {"name": "n", "key": "k"}}}
    )
    config, diagnostics = _render(tmp_path, servers=[srv], resolve_secrets=True)
    assert config["mcp"]["servers"]["s"]["env"] == {}
    assert codes(diagnostics) == ["render.secret-unresolved", "render.secret-unresolved"]


def test_channel_credentials_use_secret_refs(tmp_path: Path) -> None:
    secret = tmp_path / "bot.token"
    secret.write_text("123:abc\n")
    os.chmod(secret, 0o600)
    tg = channel(
        "tg",
        type="telegram",
        credentials={
            "botToken": {"valueFrom": {"env": "TG_TOKEN"}},
            "webhookSecret": {"valueFrom": {"file": "bot.token"}},
        },
    )
    config, diagnostics = _render(tmp_path, channels=[tg])
    block = config["channels"]["telegram"]
    assert block["botToken"] == {"source": "env", "provider": "default", "id": "TG_TOKEN"}
    provider = block["webhookSecret"]["provider"]
    assert block["webhookSecret"] == {"source": "file", "provider": provider, "id": "value"}
    assert provider.startswith("clawplane-file-")
    assert config["secrets"]["providers"][provider] == {
        "source": "file",
        "path": str(secret),
        "mode": "singleValue",
    }
    assert "123:abc" not in json.dumps(config)
    assert diagnostics == []


@pytest.mark.parametrize(("mode", "expected"), [(0o644, ["render.secret-file"]), (0o600, [])])
def test_shared_secret_file_is_warned_about(tmp_path: Path, mode: int, expected: list[str]) -> None:
    (tmp_path / "key").write_text("k")
    os.chmod(tmp_path / "key", mode)
    gw = gateway(skills={"entries": {"img": {"apiKey": {"valueFrom": {"file": "key"}}}}})
    config, diagnostics = _render(tmp_path, gw=gw)
    assert config["skills"]["entries"]["img"]["apiKey"]["source"] == "file"
    assert codes(diagnostics) == expected


def test_literal_values_are_escaped_everywhere(tmp_path: Path) -> None:
    tg = channel("tg", type="telegram", allowFrom=["${NOT_A_VAR}"], credentials={"botToken": "lit${X}"})
    config, _ = _render(tmp_path, channels=[tg])
    assert config["channels"]["telegram"]["allowFrom"] == ["$${NOT_A_VAR}"]
    assert config["channels"]["telegram"]["botToken"] == "lit$${X}"


def test_kubernetes_secret_refs_become_env_references_with_a_mapping(tmp_path: Path) -> None:
    ref = {"valueFrom": {"secretKeyRef": {"name": "demo-tokens", "key": "bot-token"}}}
    tg = channel("tg", type="telegram", credentials={"botToken": ref})
    srv = _consumer(K=ref)
    secret_env: dict[str, tuple[str, str]] = {}
    config, diagnostics = _render(tmp_path, servers=[srv], channels=[tg], secret_env=secret_env)
    assert diagnostics == []
    [(name, target)] = secret_env.items()
    assert target == ("demo-tokens", "bot-token") and name.startswith(
        "CLAWPLANE_SECRET_DEMO_TOKENS_BOT_TOKEN_"
    )
    assert config["channels"]["telegram"]["botToken"] == {"source": "env", "provider": "default", "id": name}
    assert config["mcp"]["servers"]["s"]["env"] == {"K": "${" + name + "}"}
    other: dict[str, tuple[str, str]] = {}
    _render(
        tmp_path,
        servers=[_consumer(K={"valueFrom": {"secretKeyRef": {"name": "demo.tokens", "key": "bot-token"}}})],
        secret_env=other,
    )
    assert list(other) != [name]  # names that sanitize alike still get distinct variables
