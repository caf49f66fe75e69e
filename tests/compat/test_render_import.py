"""`clawplane import` then render gives back an equivalent openclaw.json, judged by the real OpenClaw.

"Equivalent", precisely, for each complete fixture in tests/fixtures/openclaw-configs:
- mcp.servers: equal to the fixture's after `openclaw doctor --fix` (OpenClaw's own canonicalization),
  once both are reduced to what OpenClaw acts on: transport resolved as OpenClaw resolves it
  (a command means stdio, url/transport/type are then ignored; otherwise sse unless
  streamable-http), unknown `type` values dropped, defaults filled (enabled true, 30000/60000 ms,
  no parallel calls), empty env/headers dropped. And `openclaw mcp status --json` (OpenClaw's
  resolved view of every server) is identical for both files.
- agents.entries: equal to the fixture's, without the legacy `default: true` marker (which
  becomes agents.defaults.systemAgent).
- channels: every channel's policy fields (enabled, dmPolicy, allowFrom, groupPolicy,
  groupAllowFrom, groups) equal, with OpenClaw's defaults filled in on both sides (pairing,
  channels.defaults.groupPolicy or allowlist, enabled); every other key of the fixture's
  channel block present with the same value, secrets compared by where they are read from
  (``"${X}"`` = the env SecretRef X; a file SecretRef = its provider's path, mode and id).
- skills: the whole `skills` block equal.
- bindings: every binding of the fixture that OpenClaw can ever match is present (same agentId
  and match); a second channel-wide binding of the same channel never matches and may go.
And the rendered file passes `openclaw config validate` with no error.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.compat.conftest import openclaw_at
from tests.oracles.runners import OpenClawOracle
from tests.unit.render.build import load_folder
from tests.unit.render.oracle_checks import schema_errors, validation_warnings

from clawplane.interop import import_openclaw_config, load_openclaw_file
from clawplane.naming.channelfields import channel_fields

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openclaw-configs"
COMPLETE = [
    "personal-assistant.json5",
    "team-fleet.json5",
    "legacy-mcp.json5",
    "channels-mixed.json5",
    "every-section.json5",
]
POLICY = ("enabled", "dmPolicy", "allowFrom", "groupPolicy", "groupAllowFrom", "groups")


def _effective_server(server: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in server.items() if k != "type"}
    if isinstance(out.get("command"), str) and out["command"].strip():
        out["transport"] = "stdio"
        out.pop("url", None)
    else:
        out["transport"] = (
            out.get("transport") if out.get("transport") in ("sse", "streamable-http") else "sse"
        )
    defaults = {
        "enabled": True,
        "connectionTimeoutMs": 30000,
        "requestTimeoutMs": 60000,
        "supportsParallelToolCalls": False,
    }
    for key, value in defaults.items():
        out.setdefault(key, value)
    for key in ("env", "headers", "args"):
        if not out.get(key):
            out.pop(key, None)
    return out


def _secret_source(value: Any, config: dict[str, Any]) -> Any:
    """A secret as where it reads from: "${X}" and env refs alike, file refs through their provider."""
    if isinstance(value, str) and value.startswith("${") and value.endswith("}"):
        return ("env", value[2:-1])
    if isinstance(value, dict) and value.get("source") == "env":
        return ("env", value.get("id"))
    if isinstance(value, dict) and value.get("source") == "file":
        provider = config.get("secrets", {}).get("providers", {}).get(value.get("provider"), {})
        return ("file", provider.get("path"), provider.get("mode"), value.get("id"))
    return value


def _policy(kind: str, block: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    fields = channel_fields(kind).policy
    filled = {"enabled": True, "allowFrom": [], "groupAllowFrom": [], "groups": {}}
    if "dmPolicy" in fields:
        filled["dmPolicy"] = "pairing"
    if "groupPolicy" in fields:
        filled["groupPolicy"] = defaults.get("groupPolicy", "allowlist")
    return {key: block.get(key, filled.get(key)) for key in POLICY if key in fields}


def _mcp_only(openclaw: OpenClawOracle, config: dict[str, Any], name: str) -> Path:
    # Only the mcp section for doctor and `mcp status`: doctor also probes channels and
    # plugins (minutes offline), and a whole fleet config makes `mcp status` load plugins.
    target = openclaw.config_path.parent / name / "openclaw.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps({"mcp": config.get("mcp", {})}, indent=2), encoding="utf-8")
    return target


def _statuses(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [{k: v for k, v in s.items() if k != "ok"} for s in json.loads(proc.stdout)["servers"]]


def _rendered(name: str, out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fixture and what clawplane renders after importing it (resource files under ``out``)."""
    original = load_openclaw_file(FIXTURES / name)
    result = import_openclaw_config(original, source=name)
    assert result.complete, [f"{d.path}: {d.message}" for d in result.diagnostics if d.is_error]
    out.mkdir(parents=True)
    for file_name, text in result.files(source=name).items():
        (out / file_name).write_text(text)
    rendered, diagnostics = load_folder(out).render(hosted_urls={})
    assert not [d for d in diagnostics if d.is_error], diagnostics
    assert schema_errors(rendered) == []
    return original, rendered


Verdicts = tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]
Judged = dict[str, tuple[dict[str, Any], dict[str, Any], Verdicts]]
"""Per fixture: the fixture, what clawplane renders of it, and OpenClaw's verdicts."""


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Judged:
    """Each complete fixture, its rendering and OpenClaw's verdicts, all in one OpenClaw process
    (each CLI start costs 3-12 CPU-s here).

    Per fixture: `config validate` of the rendered file; `doctor --fix` of the fixture's mcp
    section (its own canonicalization, written back in place); then `mcp status` of the rendered
    and of the doctor-fixed mcp sections. Verdicts are (validation, fixed config, the two statuses).
    """
    root = tmp_path_factory.mktemp("render-import")
    openclaw = openclaw_at(root / "openclaw")
    cases = {name: _rendered(name, root / name / "resources") for name in COMPLETE}
    calls: list[tuple[list[str], Path]] = []
    fixed: dict[str, Path] = {}
    for name, (original, rendered) in cases.items():
        whole = openclaw.write_config(rendered, openclaw.config_path.parent / name / "rendered.json")
        fixed[name] = _mcp_only(openclaw, original, f"{name}/original")
        calls += [
            (["config", "validate", "--json"], whole),
            (["doctor", "--fix", "--non-interactive"], fixed[name]),
            (["mcp", "status", "--json"], _mcp_only(openclaw, rendered, f"{name}/status-rendered")),
            (["mcp", "status", "--json"], fixed[name]),
        ]
    results = openclaw.batch([c for c, _ in calls], envs=[{"OPENCLAW_CONFIG_PATH": str(p)} for _, p in calls])
    judged: Judged = {}
    for index, (name, (original, rendered)) in enumerate(cases.items()):
        validate, doctor, got, want = results[4 * index : 4 * index + 4]
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        verdicts = (json.loads(validate.stdout), load_openclaw_file(fixed[name]), _statuses(got), _statuses(want))
        judged[name] = (original, rendered, verdicts)
    return judged


@pytest.mark.slow
@pytest.mark.parametrize("name", COMPLETE)
def test_import_then_render_is_equivalent(judged: Judged, name: str) -> None:
    original, rendered, (validation, fixed, got_status, want_status) = judged[name]
    validation_warnings(validation, "rendered.json")

    want_servers = {n: _effective_server(s) for n, s in fixed.get("mcp", {}).get("servers", {}).items()}
    got_servers = {n: _effective_server(s) for n, s in rendered.get("mcp", {}).get("servers", {}).items()}
    assert got_servers == want_servers
    assert got_status == want_status

    want_agents = {
        agent_id: {k: v for k, v in entry.items() if k != "default"}
        for agent_id, entry in original.get("agents", {}).get("entries", {}).items()
    }
    assert rendered.get("agents", {}).get("entries", {}) == want_agents

    channels = original.get("channels", {})
    defaults = channels.get("defaults", {})
    for kind, block in channels.items():
        if kind in ("defaults", "modelByChannel"):
            continue
        got = rendered["channels"][kind]
        assert _policy(kind, got, defaults) == _policy(kind, block, defaults), kind
        assert {k: _secret_source(got.get(k), rendered) for k in block} == {
            k: _secret_source(v, original) for k, v in block.items()
        }, kind

    assert rendered.get("skills") == original.get("skills")

    def route(binding: dict[str, Any]) -> str:
        return json.dumps({"agentId": binding["agentId"], "match": binding["match"]}, sort_keys=True)

    got_routes = {route(b) for b in rendered.get("bindings", [])}
    seen_channels: set[str] = set()
    for binding in original.get("bindings", []):
        match = binding["match"]
        if set(match) == {"channel"}:
            if match["channel"] in seen_channels:
                continue  # never matched by OpenClaw: the first channel-wide binding wins
            seen_channels.add(match["channel"])
        assert route(binding) in got_routes, binding
