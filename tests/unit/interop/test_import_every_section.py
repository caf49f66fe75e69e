"""An openclaw.json using every section OpenClaw allows imports into typed homes only, and renders back.

The fixture (``every-section.json5``) is valid for the real OpenClaw 2026.9.6 (``openclaw config
validate``) and is also the source of the import → apply → render round trip.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from tests.unit.render.build import load_folder

from clawplane.interop import ImportResult, import_openclaw_config, load_openclaw_text
from clawplane.schema.openclaw import config_schema, declared_keys
from clawplane.validation import validate_paths

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "openclaw-configs" / "every-section.json5"
NOT_CONFIG = {"$schema", "meta"}
"""Top-level keys that are no configuration (an editor's schema pointer, OpenClaw's bookkeeping)."""
OTHER_KINDS = {"McpServer": ("mcp", "servers"), "Agent": ("agents", "entries"), "ModelProvider": ("models", "providers")}


@pytest.fixture(scope="module")
def source() -> dict[str, Any]:
    data, _ = load_openclaw_text(FIXTURE.read_text(encoding="utf-8"), str(FIXTURE))
    return data


@pytest.fixture(scope="module")
def imported() -> ImportResult:
    data, positions = load_openclaw_text(FIXTURE.read_text(encoding="utf-8"), str(FIXTURE))
    return import_openclaw_config(data, source=str(FIXTURE), positions=positions)


def _specs(result: ImportResult, kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d["spec"] for d in result.documents.get(kind, [])}


def test_the_fixture_uses_every_section(source: dict[str, Any]) -> None:
    assert set(source) == set(declared_keys(config_schema())) - NOT_CONFIG
    channels = [k for k in source["channels"] if k not in ("defaults", "modelByChannel")]
    assert len(channels) >= 5
    entries = source["agents"]["entries"]
    for key in ("identity", "sandbox", "heartbeat", "subagents"):
        assert sum(key in entry for entry in entries.values()) >= 2, key
    assert sum("exec" in entry.get("tools", {}) for entry in entries.values()) >= 2
    assert any(s.get("auth") == "oauth" and "oauth" in s for s in source["mcp"]["servers"].values())


def test_nothing_lands_in_raw_config(imported: ImportResult) -> None:
    gateway = _specs(imported, "Gateway")["default"]
    assert "config" not in gateway and "configUnchecked" not in gateway
    carried = {"import.raw-config", "import.unchecked-key", "import.substitution-kept", "import.rejected-value"}
    assert [d for d in imported.diagnostics if d.code in carried] == []
    assert imported.complete, [f"{d.path}: {d.message}" for d in imported.lost]


def test_every_key_is_under_spec_of_the_resource_of_its_object(
    imported: ImportResult, source: dict[str, Any]
) -> None:
    gateway = _specs(imported, "Gateway")["default"]
    # Every section is the Gateway's by its own name, but for what other kinds declare.
    assert set(gateway) == set(source)
    for kind, (section, key) in OTHER_KINDS.items():
        assert set(_specs(imported, kind)) == set(source[section][key])
        assert key not in gateway[section]
    assert gateway["agents"]["defaultAgent"] == "ops"  # agents.defaults.systemAgent
    assert "ownership" not in gateway["agents"]  # clawplane writes it for a fleet
    assert "systemAgent" not in gateway["agents"]["defaults"]
    assert set(gateway["channels"]) == {"defaults", "modelByChannel"}
    assert gateway["approvals"] == source["approvals"]
    assert gateway["tools"]["exec"] == source["tools"]["exec"]
    assert gateway["plugins"]["entries"] == source["plugins"]["entries"]
    assert gateway["skills"]["install"] == source["skills"]["install"]
    assert gateway["mcp"] == {"sessionIdleTtlMs": 900000, "apps": source["mcp"]["apps"]}
    # Only the bindings no Channel's agent expresses stay the Gateway's.
    assert [b["match"] for b in gateway["bindings"]] == [b["match"] for b in source["bindings"][:3]]
    channels = _specs(imported, "Channel")
    assert {name: spec.get("agent") for name, spec in channels.items()} == {
        "telegram": None, "discord": "ops", "slack": "ops", "matrix": "research", "whatsapp": "family",
        "signal": "family",
    }  # fmt: skip
    assert channels["matrix"]["dm"] == source["channels"]["matrix"]["dm"]
    assert channels["telegram"]["accounts"]["alerts"]["botToken"] == {"valueFrom": {"env": "TELEGRAM_ALERTS_BOT_TOKEN"}}
    agents = _specs(imported, "Agent")
    assert agents["ops"]["identity"] == source["agents"]["entries"]["ops"]["identity"]
    assert agents["ops"]["tools"]["exec"] == source["agents"]["entries"]["ops"]["tools"]["exec"]
    assert agents["codex"]["runtime"] == source["agents"]["entries"]["codex"]["runtime"]
    linear = _specs(imported, "McpServer")["linear"]
    assert (linear["auth"], linear["oauth"]) == ("oauth", source["mcp"]["servers"]["linear"]["oauth"])


def test_secrets_stay_references(imported: ImportResult) -> None:
    gateway = _specs(imported, "Gateway")["default"]
    assert gateway["gateway"]["auth"]["token"] == {"valueFrom": {"env": "OPENCLAW_GATEWAY_TOKEN"}}
    # An exec SecretRef has no valueFrom form; OpenClaw reads it as written.
    assert gateway["gateway"]["remote"]["token"] == {"source": "exec", "provider": "vault", "id": "openclaw/remote-token"}
    assert gateway["hooks"]["token"] == {"valueFrom": {"env": "OPENCLAW_HOOKS_TOKEN"}}
    assert gateway["diagnostics"]["otel"]["headers"] == {"x-honeycomb-team": {"valueFrom": {"env": "HONEYCOMB_API_KEY"}}}
    assert _specs(imported, "Channel")["slack"]["appToken"] == {"valueFrom": {"env": "SLACK_APP_TOKEN"}}
    assert [d.code for d in imported.diagnostics if d.code == "import.literal-secret"] == []


def test_the_report_names_the_line_of_each_key(imported: ImportResult) -> None:
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    notes = {d.path: d for d in imported.diagnostics}
    for path, text in (("agents.ownership", "ownership:"), ("gateway.remote.token", "token: { source: \"exec\"")):
        location = notes[path].location
        assert location is not None and text in lines[location.line - 1], path


def test_the_imported_folder_validates_and_renders_the_same_config(
    imported: ImportResult, source: dict[str, Any], tmp_path: Path
) -> None:
    for name, text in imported.files(source=FIXTURE.name).items():
        (tmp_path / name).write_text(text)
    checked = validate_paths([tmp_path])
    assert checked.ok, [f"{d.location}: {d.message}" for d in checked.diagnostics.errors]
    rendered, diagnostics = load_folder(tmp_path).render(hosted_urls={})
    assert [d for d in diagnostics if d.is_error] == []
    assert rendered == copy.deepcopy(source)
