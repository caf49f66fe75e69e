"""JSON Schema → Kubernetes structural schema: each rule, on small schemas (OpenClaw's shapes)."""

from __future__ import annotations

from typing import Any

import pytest

from clawplane.schema.openclawjson import VALUE_FROM_REF, convert
from clawplane.schema.structural import INT_OR_STRING, PRESERVE, Structural, merge

VALUE_FROM = {
    "description": "A value taken from an environment variable, a file or a Secret.",
    "type": "object",
    "properties": {"valueFrom": {"type": "object", "properties": {"env": {"type": "string"}}}},
    "required": ["valueFrom"],
    "additionalProperties": False,
}


def structural(schema: dict[str, Any], path: tuple[str, ...] = ()) -> dict[str, Any]:
    return Structural({"ValueFrom": VALUE_FROM}).node(schema, path)


def test_a_union_of_constants_is_an_enum() -> None:
    node = {
        "anyOf": [{"type": "string", "const": "off"}, {"type": "string", "const": "all"}],
        "title": "Mode",
    }
    assert structural(node) == {"description": "Mode", "type": "string", "enum": ["off", "all"]}


def test_a_string_or_reference_keeps_its_value_and_says_its_constants() -> None:
    node = convert({"anyOf": [{"const": "off", "type": "string"}, {"const": "all", "type": "string"}]})
    assert node["anyOf"][-1] == {"$ref": VALUE_FROM_REF}
    assert structural(node) == {"description": "One of: off, all.", PRESERVE: True}
    described = convert({"type": "string", "description": "Where it runs."})
    assert described == {
        "description": "Where it runs.",
        "anyOf": [{"type": "string"}, {"$ref": VALUE_FROM_REF}],
    }
    assert structural(described) == {"description": "Where it runs.", PRESERVE: True}


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        (["string", "null"], {"type": "string", "nullable": True}),
        (["string", "number"], {PRESERVE: True}),
        (["integer", "string"], {INT_OR_STRING: True}),
    ],
)
def test_a_list_of_types_is_a_type_a_union_or_kept_as_written(
    types: list[str], expected: dict[str, Any]
) -> None:
    assert structural({"type": types}) == expected


def test_patterns_go_s_re2_cannot_compile_and_unknown_formats_are_left_out() -> None:
    assert structural({"type": "string", "pattern": "^(?!-)[a-z]+$"}) == {"type": "string"}
    assert structural({"type": "string", "pattern": "^[a-z]+$"}) == {"type": "string", "pattern": "^[a-z]+$"}
    assert structural({"type": "string", "format": "starts_with"}) == {"type": "string"}
    assert structural({"type": "string", "format": "uri"}) == {"type": "string", "format": "uri"}
    assert structural({"type": "array", "items": {"type": "string"}, "uniqueItems": True}) == {
        "type": "array",
        "items": {"type": "string"},
    }


def test_objects_named_keys_records_and_catch_alls() -> None:
    catch_all = {"type": "object", "properties": {"a": {"type": "boolean"}}, "additionalProperties": {}}
    assert structural(catch_all) == {
        "type": "object",
        "properties": {"a": {"type": "boolean"}},
        PRESERVE: True,
    }
    record = {
        "type": "object",
        "propertyNames": {"type": "string"},
        "additionalProperties": {"type": "integer"},
    }
    assert structural(record) == {"type": "object", "additionalProperties": {"type": "integer"}}
    alike = {
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "additionalProperties": {"type": "integer"},
    }
    assert structural(alike) == {"type": "object", "additionalProperties": {"type": "integer"}}
    closed = {
        "type": "object",
        "properties": {"a": {"type": "boolean"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert structural(closed) == {
        "type": "object",
        "properties": {"a": {"type": "boolean"}},
        "required": ["a"],
    }
    assert structural(convert({"type": "array", "items": [{"type": "string"}, {"type": "number"}]})) == {
        "type": "array",
        "items": {PRESERVE: True},
    }


def test_a_plugin_entry_config_is_kept_as_written() -> None:
    config = {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": False}
    path = ("spec", "plugins", "entries", "acme", "config")
    assert structural(config, path) == {"type": "object", PRESERVE: True}
    assert structural(config, ("spec", "skills", "entries", "acme", "config"))["properties"]


def test_merge_is_as_loose_as_every_variant_needs() -> None:
    assert merge([{"type": "string"}, {"type": "string"}]) == {"type": "string"}
    assert merge([{"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["b"]}]) == {
        "type": "string",
        "enum": ["a", "b"],
    }
    assert merge([{"type": "string"}, {"type": "object", PRESERVE: True}]) == {PRESERVE: True}
    assert merge([{"type": "string"}, {"type": "integer"}]) == {INT_OR_STRING: True}
    left = {
        "type": "object",
        "properties": {"a": {"type": "boolean"}, "b": {"type": "string"}},
        "required": ["a", "b"],
    }
    right = {
        "type": "object",
        "properties": {"a": {"type": "boolean"}, "c": {"type": "integer"}},
        "required": ["a"],
    }
    assert merge([left, right], "Both.") == {
        "description": "Both.",
        "type": "object",
        "properties": {"a": {"type": "boolean"}, "b": {"type": "string"}, "c": {"type": "integer"}},
        "required": ["a"],
    }


def test_per_type_branches_merge_into_one_spec_saying_which_types_have_a_key() -> None:
    def branch(kind: str, props: dict[str, Any]) -> dict[str, Any]:
        return {
            "if": {"properties": {"type": {"const": kind}}, "required": ["type"]},
            "then": {"properties": {"type": True, **props}, "additionalProperties": False},
        }

    spec = {
        "type": "object",
        "properties": {"type": {"type": "string", "enum": ["a", "b"]}},
        "required": ["type"],
        "allOf": [
            branch("a", {"only": {"type": "boolean", "description": "Only A."}, "both": {"type": "string"}}),
            branch("b", {"both": {"type": "integer"}}),
        ],
    }
    assert structural(spec) == {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["a", "b"]},
            "only": {"description": "Only A. Only for type: a.", "type": "boolean"},
            "both": {INT_OR_STRING: True},
        },
        "required": ["type"],
    }
