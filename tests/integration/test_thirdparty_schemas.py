"""Third-party tools accept our schemas: check-jsonschema, kubernetes-validate, jsonschema on CRDs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
QUICKSTART = sorted((ROOT / "examples" / "quickstart").glob("*.yaml"))
KIND_SCHEMAS = {
    "Gateway": "gateway", "McpServer": "mcpserver", "Agent": "agent", "Channel": "channel", "Skill": "skill"
}  # fmt: skip


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in YAML(typ="safe").load_all(path) if d]


def _tool(name: str) -> str:
    exe = BIN / name
    if not exe.exists():
        pytest.fail(f"{name} is not installed in the venv; run `make setup`")
    return str(exe)


def _split(paths: list[Path], into: Path, kind: str | None = None) -> list[str]:
    """One JSON file per document: check-jsonschema reads a single instance per file."""
    out = []
    for path in paths:
        for i, doc in enumerate(_docs(path)):
            if kind is None or doc["kind"] == kind:
                target = into / f"{path.stem}-{i}.json"
                target.write_text(json.dumps(doc))
                out.append(str(target))
    return out


def test_every_example_resource_validates_with_check_jsonschema_combined_schema(tmp_path: Path) -> None:
    schema = ROOT / "schemas" / "clawplane.schema.json"
    instances = _split(QUICKSTART, tmp_path)
    assert len(instances) == 8
    proc = subprocess.run(
        [_tool("check-jsonschema"), "--schemafile", str(schema), *instances],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("kind,stem", sorted(KIND_SCHEMAS.items()))
def test_example_resources_validate_against_their_kind_schema(tmp_path: Path, kind: str, stem: str) -> None:
    instances = _split(QUICKSTART, tmp_path, kind)
    assert instances, f"the quickstart has no {kind}"
    schema = ROOT / "schemas" / f"{stem}.schema.json"
    proc = subprocess.run(
        [_tool("check-jsonschema"), "--schemafile", str(schema), *instances],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_check_jsonschema_rejects_an_invalid_example(tmp_path: Path) -> None:
    schema = ROOT / "schemas" / "clawplane.schema.json"
    bad = _split([ROOT / "examples" / "invalid" / "typos.yaml"], tmp_path)
    proc = subprocess.run(
        [_tool("check-jsonschema"), "--schemafile", str(schema), *bad],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "comand" in proc.stdout + proc.stderr


def test_crds_pass_kubernetes_validate_strict() -> None:
    crds = sorted(map(str, (ROOT / "manifests" / "crds").glob("*.yaml")))
    proc = subprocess.run(
        [_tool("kubernetes-validate"), "--strict", *crds], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("passed") == len(crds)


@pytest.mark.parametrize("path", QUICKSTART, ids=lambda p: p.name)
def test_example_resources_validate_against_their_crd_openapi_schema(path: Path) -> None:
    crds = {}
    for crd_path in (ROOT / "manifests" / "crds").glob("*.yaml"):
        crd = YAML(typ="safe").load(crd_path)
        crds[crd["spec"]["names"]["kind"]] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for doc in _docs(path):
        jsonschema.Draft4Validator(crds[doc["kind"]]).validate(doc)


def test_crd_openapi_schema_rejects_a_wrong_enum() -> None:
    crd = YAML(typ="safe").load(ROOT / "manifests" / "crds" / "channels.clawplane.dev.yaml")
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    doc = {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "Channel",
        "metadata": {"name": "c"},
        "spec": {"type": "telegramm"},
    }
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(doc)
