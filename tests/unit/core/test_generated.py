"""Generated schemas and CRDs are fresh and the CRDs are structural."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from clawplane.schema import CRD_DIR, SCHEMA_DIR, generated_files, stale_files

ROOT = Path(__file__).resolve().parents[3]


def test_committed_generated_files_match_the_models() -> None:
    include_chart = (ROOT / "charts" / "clawplane").is_dir()
    stale = stale_files(ROOT, include_chart=include_chart)
    assert stale == [], f"run `clawplane schema` and commit: {stale}"


def test_stale_files_names_a_changed_file(tmp_path: Path) -> None:
    for rel, text in generated_files(include_chart=False).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    victim = tmp_path / "schemas" / "agent.schema.json"
    victim.write_text(victim.read_text() + " ")
    assert [str(p) for p in stale_files(tmp_path, include_chart=False)] == ["schemas/agent.schema.json"]


def _walk(node: Any, path: str) -> list[str]:
    """Kubernetes structural-schema violations under ``node``."""
    problems: list[str] = []
    if not isinstance(node, dict):
        return problems
    for banned in (
        "$ref", "$defs", "const", "title", "anyOf", "oneOf", "allOf", "$schema", "if", "then", "else", "not",
        "prefixItems", "propertyNames", "patternProperties", "uniqueItems", "default",
    ):  # fmt: skip
        if banned in node:
            problems.append(f"{path}: has {banned}")
    if isinstance(node.get("pattern"), str) and re.search(r"\(\?<?[=!]", node["pattern"]):
        problems.append(f"{path}: pattern with a lookaround (Go's RE2 has none)")
    escape = node.get("x-kubernetes-preserve-unknown-fields") or node.get("x-kubernetes-int-or-string")
    if "type" not in node and not escape:
        problems.append(f"{path}: no type")
    if "properties" in node and "additionalProperties" in node:
        problems.append(f"{path}: properties and additionalProperties")
    if isinstance(node.get("exclusiveMinimum"), int | float) and not isinstance(
        node["exclusiveMinimum"], bool
    ):
        problems.append(f"{path}: numeric exclusiveMinimum")
    for key, sub in node.get("properties", {}).items():
        problems.extend(_walk(sub, f"{path}.{key}"))
    if isinstance(node.get("items"), dict):
        problems.extend(_walk(node["items"], f"{path}[]"))
    if isinstance(node.get("additionalProperties"), dict):
        problems.extend(_walk(node["additionalProperties"], f"{path}{{}}"))
    return problems


@pytest.mark.parametrize("crd_file", sorted((ROOT / CRD_DIR).glob("*.yaml")), ids=lambda p: p.name)
def test_crd_schema_is_structural_with_status_columns_and_short_names(crd_file: Path) -> None:
    crd = YAML(typ="safe").load(crd_file)
    version = crd["spec"]["versions"][0]
    assert _walk(version["schema"]["openAPIV3Schema"], "") == []
    assert version["subresources"] == {"status": {}}
    assert any(c["name"] == "Ready" for c in version["additionalPrinterColumns"])
    assert crd["spec"]["names"]["shortNames"]


@pytest.mark.parametrize("crd_file", sorted((ROOT / CRD_DIR).glob("*.yaml")), ids=lambda p: p.name)
def test_crd_is_well_under_the_object_size_limit(crd_file: Path) -> None:
    crd = YAML(typ="safe").load(crd_file)
    assert len(json.dumps(crd, separators=(",", ":"), ensure_ascii=False).encode()) < 700 * 1024


def test_generated_schemas_carry_openclaw_keys() -> None:
    agent = json.loads((ROOT / SCHEMA_DIR / "agent.schema.json").read_text(encoding="utf-8"))
    assert "sandbox" in agent["properties"]["spec"]["properties"]
    crd = YAML(typ="safe").load(ROOT / CRD_DIR / "gateways.clawplane.dev.yaml")
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["properties"]["gateway"]["properties"]["auth"]["description"]
