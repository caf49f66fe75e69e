"""The published JSON Schemas carry OpenClaw's keys under ``spec``, per place, with OpenClaw's descriptions."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

from clawplane.schema.jsonschema import combined_schema, kind_schema
from clawplane.schema.openclaw import declared_keys, describe, node_at
from clawplane.schema.sharing import PREFIX, share

ROOT = Path(__file__).resolve().parents[3]
API = "clawplane.dev/v1alpha1"


def committed(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "schemas" / name).read_text(encoding="utf-8"))
    return data


def errors(schema: dict[str, Any], doc: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


def resource(kind: str, spec: dict[str, Any], name: str = "x") -> dict[str, Any]:
    return {"apiVersion": API, "kind": kind, "metadata": {"name": name}, "spec": spec}


def test_agent_schema_file_has_openclaw_sandbox_and_checks_its_values() -> None:
    schema = committed("agent.schema.json")
    spec = schema["properties"]["spec"]
    sandbox = spec["properties"]["sandbox"]
    title, text = describe(node_at(("agents", "entries", "*", "sandbox")) or {})
    # OpenClaw documents sandbox only by its keys; the schema then names where it goes.
    assert sandbox["description"] == (text or "The OpenClaw key ``agents.entries.<id>.sandbox``.")
    assert title == sandbox.get("title", "")
    injection = spec["properties"]["contextInjection"]
    assert (
        injection["description"] == describe(node_at(("agents", "entries", "*", "contextInjection")) or {})[1]
    )
    assert errors(schema, resource("Agent", {"sandbox": {"mode": "all"}})) == []
    refused = errors(schema, resource("Agent", {"sandbox": {"mode": "everything"}}))
    assert refused and all(e.startswith("['spec', 'sandbox', 'mode']") for e in refused)
    assert errors(schema, resource("Agent", {"sandbx": {}})) == [
        "['spec']: Additional properties are not allowed ('sandbx' was unexpected)"
    ]


def test_every_openclaw_key_of_an_agent_is_in_its_schema_and_its_own_fields_are_not_openclaw_keys() -> None:
    spec = kind_schema("Agent")["properties"]["spec"]
    assert set(declared_keys(node_at(("agents", "entries", "*")) or {})) <= set(spec["properties"])
    assert spec["additionalProperties"] is False
    assert "clawplane" not in json.dumps(spec["properties"]["sandbox"])  # OpenClaw's node, not a typed field


def test_a_value_from_reference_stands_where_openclaw_takes_a_string_and_nowhere_else() -> None:
    schema = committed("gateway.schema.json")
    token = {"gateway": {"auth": {"mode": "token", "token": {"valueFrom": {"env": "GATEWAY_TOKEN"}}}}}
    assert errors(schema, resource("Gateway", token, "default")) == []
    assert errors(committed("clawplane.schema.json"), resource("Gateway", token, "default")) == []
    secret_ref = {"gateway": {"auth": {"token": {"source": "env", "provider": "default", "id": "TOKEN"}}}}
    assert errors(schema, resource("Gateway", secret_ref, "default")) == []
    agent = committed("agent.schema.json")
    assert errors(agent, resource("Agent", {"sandbox": {"mode": {"valueFrom": {"env": "MODE"}}}})) == []
    # A boolean is no string: a reference cannot stand there.
    assert errors(
        agent, resource("Agent", {"sandbox": {"docker": {"readOnlyRoot": {"valueFrom": {"env": "X"}}}}})
    )
    assert errors(agent, resource("Agent", {"sandbox": {"mode": {"valueFrom": {"nowhere": "X"}}}}))


def test_gateway_leaves_out_what_other_kinds_declare() -> None:
    schema = committed("gateway.schema.json")
    spec = schema["properties"]["spec"]["properties"]
    assert "servers" not in spec["mcp"]["properties"] and spec["mcp"]["additionalProperties"] is False
    assert "entries" not in json.dumps(list(spec["agents"]["properties"]))
    assert "providers" not in spec["models"]["properties"]
    assert set(spec["channels"]["properties"]) == {"defaults", "modelByChannel"}
    assert {"gateway", "hooks", "logging", "plugins", "tools"} <= set(spec)
    for bad in ({"mcp": {"servers": {}}}, {"channels": {"telegram": {}}}, {"agents": {"entries": {}}}):
        assert errors(schema, resource("Gateway", bad, "default")), bad
    assert errors(schema, resource("Gateway", {"channels": {"defaults": {}}}, "default")) == []


def test_the_same_part_class_gets_the_openclaw_keys_of_each_place() -> None:
    gateway_tools = kind_schema("Gateway")["properties"]["spec"]["properties"]["tools"]
    agent_tools = kind_schema("Agent")["properties"]["spec"]["properties"]["tools"]["anyOf"][0]
    top = set(declared_keys(node_at(("tools",)) or {}))
    per_agent = set(declared_keys(node_at(("agents", "entries", "*", "tools")) or {}))
    assert top != per_agent
    assert top <= set(gateway_tools["properties"]) and per_agent <= set(agent_tools["properties"])
    assert (top - per_agent).isdisjoint(agent_tools["properties"])


def test_a_channel_spec_takes_the_keys_of_its_type() -> None:
    schema = committed("channel.schema.json")
    matrix = {
        "type": "matrix",
        "homeserver": "https://matrix.example",
        "groups": {"!room": {"autoReply": True}},
    }
    assert errors(schema, resource("Channel", matrix)) == []
    refused = errors(schema, resource("Channel", {**matrix, "type": "telegram"}))
    assert any("'homeserver' was unexpected" in e for e in refused)
    assert any("'autoReply' was unexpected" in e for e in refused)
    assert (
        errors(schema, resource("Channel", {"type": "telegram", "botToken": {"valueFrom": {"env": "T"}}}))
        == []
    )
    assert errors(schema, resource("Channel", {"type": "matrix", "typo": 1}))
    branches = schema["properties"]["spec"]["allOf"]
    assert len(branches) == 27 and branches[0]["if"]["properties"]["type"] == {"const": "a2a"}


def test_mcp_server_schema_has_the_openclaw_keys_of_a_server() -> None:
    spec = kind_schema("McpServer")["properties"]["spec"]
    node = node_at(("mcp", "servers", "*")) or {}
    assert set(declared_keys(node)) - {"type"} <= set(spec["properties"])
    assert spec["additionalProperties"] is False


def test_openclaw_titles_and_descriptions_are_kept() -> None:
    auth = kind_schema("Gateway")["properties"]["spec"]["properties"]["gateway"]["properties"]["auth"]
    assert (auth["title"], auth["description"]) == describe(node_at(("gateway", "auth")) or {})


def test_every_reference_resolves_and_repeated_openclaw_nodes_are_shared() -> None:
    for name in sorted(p.name for p in (ROOT / "schemas").glob("*.json")):
        schema = committed(name)
        defs = schema.get("$defs", {})
        text = json.dumps(schema)
        for ref in {part.split('"')[0] for part in text.split('"$ref": "')[1:]}:
            assert ref == "#" or ref.removeprefix("#/$defs/") in defs, (name, ref)
    gateway = kind_schema("Gateway")
    assert any(k.startswith(PREFIX) for k in gateway["$defs"])
    assert len(json.dumps(combined_schema())) < 1_500_000


def test_share_names_definitions_by_content_and_puts_back_single_uses() -> None:
    big = {"type": "object", "description": "x" * 80, "properties": {"a": {"type": "string"}}}
    once = {"type": "array", "items": {"type": "integer", "description": "y" * 80}}
    doc = {"type": "object", "properties": {"p": big, "q": dict(big), "r": once}}
    out = share(doc)
    (name,) = out["$defs"]
    assert name.startswith(PREFIX) and out["$defs"][name] == big
    assert out["properties"]["p"] == out["properties"]["q"] == {"$ref": f"#/$defs/{name}"}
    assert out["properties"]["r"] == once
    assert share(doc) == out


@pytest.mark.parametrize("kind", ["Agent", "Gateway", "Channel", "McpServer", "ModelProvider", "Skill"])
def test_kind_schemas_are_valid_2020_12(kind: str) -> None:
    # Without format checks: OpenClaw's patterns are ECMA-262 (``\\p{Cs}``), which Python's re cannot compile.
    meta = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    assert [e.message for e in meta.iter_errors(kind_schema(kind))] == []


def test_the_combined_schema_accepts_the_validate_benchmark_resources(tmp_path: Path) -> None:
    """bench/validate_bench.py times check-jsonschema with this schema on these files: they must pass."""
    spec = importlib.util.spec_from_file_location("validate_bench", ROOT / "bench" / "validate_bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.generate(tmp_path) == 1000
    validator = jsonschema.Draft202012Validator(committed("clawplane.schema.json"))
    for path in sorted(tmp_path.glob("*.yaml")):
        for doc in YAML(typ="safe").load_all(path):
            assert [e.message for e in validator.iter_errors(doc)] == [], path.name
