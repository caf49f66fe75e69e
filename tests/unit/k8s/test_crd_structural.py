"""The generated CRDs pass the API server's CRD rules (ported in tests/k8s/rules), and the rules bite.

The rules are ported from apiextensions-apiserver (ValidateStructural, ValidateDefaults,
ValidateCustomResourceDefinition); the negative cases pin the upstream wording, so a
lenient port cannot pass silently.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from tests.k8s.rules.crd import has_cel, validate_crd
from tests.k8s.rules.fielderrors import aggregate
from tests.k8s.rules.structural import apply_defaults, prune
from tests.k8s.rules.values import validate_value

from clawplane.models import KINDS
from clawplane.schema.crd import all_crds

CRDS = all_crds()
ROOT = "spec.versions[0].schema.openAPIV3Schema"


def texts(crd: dict[str, Any]) -> list[str]:
    return [e.text() for e in validate_crd(crd)]


def schema_of(crd: dict[str, Any]) -> dict[str, Any]:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def with_schema(change: Any) -> dict[str, Any]:
    crd = copy.deepcopy(CRDS["mcpservers.clawplane.dev.yaml"])
    change(schema_of(crd))
    return crd


@pytest.mark.parametrize("name", sorted(CRDS))
def test_every_generated_crd_passes_the_api_server_rules(name: str) -> None:
    assert texts(CRDS[name]) == []


@pytest.mark.parametrize("name", sorted(CRDS))
def test_root_metadata_is_exactly_type_object(name: str) -> None:
    assert schema_of(CRDS[name])["properties"]["metadata"] == {"type": "object"}


def test_the_old_metadata_schema_is_refused_with_the_upstream_message() -> None:
    def old_form(schema: dict[str, Any]) -> None:
        schema["properties"]["metadata"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

    assert texts(with_schema(old_form)) == [
        f"{ROOT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, "
        "but metadata is implicitly specified"
    ]


@pytest.mark.parametrize(
    ("metadata", "ok"),
    [
        ({"type": "object"}, True),
        ({"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}}, True),
        ({"type": "object", "description": "standard metadata"}, False),
        ({"type": "object", "properties": {"labels": {"type": "object"}}}, False),
        ({"type": "object", "required": ["name"]}, False),
        ({}, False),
    ],
)
def test_root_metadata_may_only_restrict_name_and_generate_name(metadata: dict[str, Any], ok: bool) -> None:
    def set_metadata(schema: dict[str, Any]) -> None:
        schema["properties"]["metadata"] = metadata

    assert (texts(with_schema(set_metadata)) == []) is ok


def test_structural_violations_name_the_field() -> None:
    def break_it(schema: dict[str, Any]) -> None:
        spec = schema["properties"]["spec"]["properties"]
        spec["args"] = {"type": "array"}  # items missing
        spec["env"] = {"description": "no type"}
        spec["cwd"]["anyOf"] = [{"type": "string"}]  # a type inside a value validation
        schema["additionalProperties"] = False
        schema["properties"]["spec"]["properties"]["image"]["properties"] = {"metadata": {"type": "object"}}

    found = texts(with_schema(break_it))
    assert f"{ROOT}.properties[spec].properties[args].items: Required value: must be specified" in found
    assert (
        f"{ROOT}.properties[spec].properties[env].type: Required value: must not be empty for specified object fields"
        in found
    )
    assert f"{ROOT}.properties[spec].properties[cwd].anyOf[0].type: Forbidden: must be empty to be structural" in found
    assert f"{ROOT}.additionalProperties: Forbidden: must not be used at the root" in found


def test_defaults_must_be_pruned_and_valid() -> None:
    def bad_defaults(schema: dict[str, Any]) -> None:
        spec = schema["properties"]["spec"]["properties"]
        spec["connectionTimeoutMs"]["default"] = 0  # exclusiveMinimum 0
        spec["toolFilter"]["default"] = {"include": ["a"], "unknown": 1}

    found = aggregate(validate_crd(with_schema(bad_defaults)))
    assert "properties[connectionTimeoutMs].default: Invalid value: 0: " in found
    assert "should be greater than 0" in found
    assert "properties[toolFilter].default: Invalid value: " in found and "must not have unknown fields" in found


def test_defaults_in_top_level_metadata_are_forbidden() -> None:
    def default_kind(schema: dict[str, Any]) -> None:
        schema["properties"]["kind"]["default"] = "McpServer"

    assert f"{ROOT}.properties[kind].default: Forbidden: must not be set in top-level kind" in texts(
        with_schema(default_kind)
    )


def test_names_and_versions_follow_the_crd_rules() -> None:
    crd = copy.deepcopy(CRDS["agents.clawplane.dev.yaml"])
    crd["metadata"]["name"] = "agents.example.com"
    crd["spec"]["names"]["listKind"] = crd["spec"]["names"]["kind"]
    crd["spec"]["versions"][0]["storage"] = False
    crd["spec"]["versions"][0]["additionalPrinterColumns"].append({"name": "X", "type": "map", "jsonPath": "spec"})
    found = aggregate(validate_crd(crd))
    assert 'metadata.name: Invalid value: "agents.example.com": must be spec.names.plural+"."+spec.group' in found
    assert "kind and listKind may not be the same" in found
    assert "must have exactly one version marked as storage version" in found
    assert '.type: Invalid value: "map": must be one of boolean,date,integer,number,string' in found
    assert ".JSONPath: Invalid value: \"spec\": must be a simple json path starting with ." in found


def test_cel_rules_are_stored_not_evaluated() -> None:
    def with_cel(schema: dict[str, Any]) -> None:
        schema["properties"]["spec"]["x-kubernetes-validations"] = [{"rule": "self.enabled"}]

    crd = with_schema(with_cel)
    assert validate_crd(crd) == [] and has_cel(crd["spec"])


def test_pruning_and_defaulting_of_a_custom_resource() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer", "default": 1},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            }
        },
    }
    obj = {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "a"},
        "spec": {"typo": 1, "free": {"anything": [1]}},
        "extra": True,
    }
    assert prune(obj, schema, resource_root=True) == ["extra", "spec.typo"]
    apply_defaults(obj, schema)
    assert obj == {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}, "spec": {"size": 1, "free": {"anything": [1]}}}


JSON_SCHEMA_PROPS = {
    "id", "$schema", "$ref", "description", "type", "format", "title", "default", "maximum",
    "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems",
    "minItems", "uniqueItems", "multipleOf", "enum", "maxProperties", "minProperties", "required", "items",
    "allOf", "oneOf", "anyOf", "not", "properties", "additionalProperties", "patternProperties",
    "dependencies", "additionalItems", "definitions", "externalDocs", "example", "nullable",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys", "x-kubernetes-list-type", "x-kubernetes-map-type", "x-kubernetes-validations",
}  # fmt: skip


def _keys(node: Any) -> set[str]:
    if not isinstance(node, dict):
        return set()
    found = set(node)
    for key, value in node.items():
        if key == "properties":
            found |= {k for v in value.values() for k in _keys(v)}
        elif key in ("items", "additionalProperties", "not"):
            found |= _keys(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            found |= {k for v in value for k in _keys(v)}
    return found


@pytest.mark.parametrize("name", sorted(CRDS))
def test_schemas_use_only_fields_the_api_server_decodes(name: str) -> None:
    """JSON Schema keywords such as propertyNames are unknown to apiextensions: strict clients refuse them."""
    assert _keys(schema_of(CRDS[name])) - JSON_SCHEMA_PROPS == set()


def spec_of(name: str) -> dict[str, Any]:
    return schema_of(CRDS[name])["properties"]["spec"]


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("agents.clawplane.dev.yaml", ("sandbox",)),
        ("agents.clawplane.dev.yaml", ("contextInjection",)),
        ("channels.clawplane.dev.yaml", ("homeserver",)),
        ("mcpservers.clawplane.dev.yaml", ("oauth",)),
        ("gateways.clawplane.dev.yaml", ("gateway",)),
        ("gateways.clawplane.dev.yaml", ("gateway", "auth")),
    ],
)
def test_crds_carry_openclaw_keys_with_their_descriptions(name: str, path: tuple[str, ...]) -> None:
    node = spec_of(name)
    for key in path:
        node = node["properties"][key]
    assert node["description"].strip()


def test_openclaw_descriptions_reach_the_crd_and_titles_stand_in_for_missing_ones() -> None:
    from clawplane.schema.openclaw import describe, node_at

    auth = spec_of("gateways.clawplane.dev.yaml")["properties"]["gateway"]["properties"]["auth"]
    assert auth["description"] == describe(node_at(("gateway", "auth")) or {})[1]
    assert "title" not in json.dumps(auth)
    injection = spec_of("agents.clawplane.dev.yaml")["properties"]["contextInjection"]
    assert injection["description"].startswith(describe(node_at(("agents", "entries", "*", "contextInjection")) or {})[1])
    assert injection["description"].endswith("One of: always, continuation-skip, never.")


@pytest.mark.parametrize("name", sorted(CRDS))
def test_crds_fit_client_side_apply(name: str) -> None:
    """``kubectl apply`` (client-side) keeps the whole CRD in an annotation of at most 262144 bytes."""
    assert len(json.dumps(CRDS[name], separators=(",", ":"), ensure_ascii=False).encode()) < 262_144


def test_gateway_crd_leaves_out_other_kinds_and_keeps_plugin_configs_as_written() -> None:
    spec = spec_of("gateways.clawplane.dev.yaml")["properties"]
    assert "servers" not in spec["mcp"]["properties"]
    assert set(spec["channels"]["properties"]) == {"defaults", "modelByChannel"}
    entries = spec["plugins"]["properties"]["entries"]
    # Every named plugin entry is said alike once its config is kept as written: one map says them all.
    assert "properties" not in entries
    config = entries["additionalProperties"]["properties"]["config"]
    assert config.get("x-kubernetes-preserve-unknown-fields") is True and "properties" not in config


def test_channel_crd_is_the_union_of_the_channel_types() -> None:
    spec = spec_of("channels.clawplane.dev.yaml")
    props = spec["properties"]
    assert {"homeserver", "guilds", "botToken", "accounts", "dm"} <= set(props)
    assert props["homeserver"]["description"].endswith("Only for type: matrix.")
    assert props["type"]["enum"][0] == "a2a" and props["dmPolicy"]["enum"] == ["pairing", "allowlist", "open", "disabled"]
    groups = props["groups"]["additionalProperties"]
    assert {"requireMention", "autoReply"} <= set(groups["properties"])


def _custom_resource(kind: str, spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    name = f"{KINDS[kind].PLURAL}.clawplane.dev.yaml"
    obj = {"apiVersion": "clawplane.dev/v1alpha1", "kind": kind, "metadata": {"name": "x"}, "spec": spec}
    return obj, schema_of(CRDS[name])


@pytest.mark.parametrize(
    ("kind", "spec"),
    [
        ("Agent", {"sandbox": {"mode": "all", "docker": {"readOnlyRoot": True}}, "model": "a/b"}),
        ("Agent", {"sandbox": {"mode": {"valueFrom": {"env": "MODE"}}}}),
        ("Gateway", {"gateway": {"auth": {"mode": "token", "token": {"valueFrom": {"env": "T"}}}}}),
        ("Gateway", {"plugins": {"entries": {"acme": {"enabled": True, "config": {"any": [1, {"x": 2}]}}}}}),
        ("Channel", {"type": "matrix", "homeserver": "https://m.example", "groups": {"!r": {"autoReply": True}}}),
        ("McpServer", {"url": "https://mcp.example/sse", "auth": "oauth", "oauth": {"scope": "read"}}),
    ],
)
def test_custom_resources_with_openclaw_keys_are_kept_whole_and_valid(kind: str, spec: dict[str, Any]) -> None:
    obj, schema = _custom_resource(kind, spec)
    kept = copy.deepcopy(obj)
    assert prune(kept, schema, resource_root=True) == []
    assert kept == obj
    assert [e.text() for e in validate_value(obj, schema)] == []


def test_a_wrong_openclaw_value_of_a_plain_type_is_refused_by_the_api_server() -> None:
    obj, schema = _custom_resource("Agent", {"sandbox": {"docker": {"readOnlyRoot": "yes"}}})
    assert any("readOnlyRoot" in e.text() for e in validate_value(obj, schema))
