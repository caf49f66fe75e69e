"""Checks of rendered configs against OpenClaw's JSON schema and the real CLIs (used by tests/compat)."""

from __future__ import annotations

import copy
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from tests.oracles.locate import openclaw_schema


def _relax_defaults(node: Any) -> Any:
    # The schema is zod's *output* type: keys with a default are listed as required although
    # OpenClaw fills them in while parsing (slack.postAs, whatsapp.mediaMaxMb, ...).
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict) and isinstance(node.get("required"), list):
            node["required"] = [k for k in node["required"] if "default" not in props.get(k, {})]
        for value in node.values():
            _relax_defaults(value)
    elif isinstance(node, list):
        for value in node:
            _relax_defaults(value)
    return node


@cache
def _validator(path: Path) -> Draft7Validator:
    schema = json.loads(path.read_text(encoding="utf-8"))
    return Draft7Validator(_relax_defaults(copy.deepcopy(schema)))


def require_schema() -> Path:
    """OpenClaw's config schema (shared copy or oracle-generated); skips loudly when neither exists."""
    path = openclaw_schema()
    if path is None:
        message = (
            "ORACLE UNAVAILABLE: OpenClaw schema (no ../shared copy and no OpenClaw oracle to generate it)"
        )
        if os.environ.get("CLAWPLANE_REQUIRE_ORACLES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


def schema_errors(config: dict[str, Any]) -> list[str]:
    """Offline check against the `openclaw config schema` output (skips loudly without it)."""
    validator = _validator(require_schema())
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(config)]


def openclaw_validate(
    openclaw: Any,
    config: dict[str, Any] | str,
    *,
    name: str = "openclaw.json",
    env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Run the real `openclaw config validate --json`; assert valid and return its warnings."""
    path = openclaw.write_config(config, openclaw.config_path.parent / name)
    return validation_warnings(openclaw.json("config", "validate", "--json", env=env), path.name)


def validation_warnings(doc: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """Assert an `openclaw config validate --json` answer says valid; print and return its warnings."""
    assert doc.get("valid") is True, json.dumps(doc, indent=2)
    warnings: list[dict[str, Any]] = doc.get("warnings", [])
    for warning in warnings:
        print(f"OPENCLAW WARNING ({name}): {warning.get('path')}: {warning.get('message')}")
    return warnings
