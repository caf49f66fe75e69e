"""OpenClaw's schema ships as generated, with its licence, and is read whole and correctly."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from clawplane.schema.openclaw import (
    LICENSE_FILE,
    OPENCLAW_VERSION,
    RELEASE_FILE,
    SCHEMA_FILE,
    child,
    config_schema,
    node_at,
)
from clawplane.schema.openclaw.validator import KEYWORDS, failures


def test_the_schema_matches_its_release_record_and_carries_openclaws_licence() -> None:
    release = json.loads(RELEASE_FILE.read_text(encoding="utf-8"))
    assert release["version"] == OPENCLAW_VERSION == "2026.9.6"
    assert hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest() == release["sha256"]
    licence = LICENSE_FILE.read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "OpenClaw" in licence


def _walk(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    stack: list[tuple[str, Any]] = [(path, node)]
    while stack:
        here, item = stack.pop()
        if isinstance(item, dict):
            out.append((here, item))
            for key, value in item.items():
                if key == "properties" and isinstance(value, dict):
                    stack.extend((f"{here}.{k}", v) for k, v in value.items())
                elif key not in ("const", "enum", "default", "examples"):
                    stack.append((f"{here}/{key}", value))
        elif isinstance(item, list):
            stack.extend((f"{here}[{i}]", v) for i, v in enumerate(item))
    return out


def test_after_loading_no_reference_or_foreign_dialect_is_left_and_every_keyword_is_known() -> None:
    nodes = _walk(config_schema())
    assert [p for p, n in nodes if "$ref" in n or "$defs" in n] == []
    assert [p for p, n in nodes if p and isinstance(n.get("$schema"), str)] == []
    # Every keyword the validator meets is one it implements (or an annotation).
    keywords = {k for p, n in nodes for k in n if not p.endswith("/properties")}
    assert keywords - KEYWORDS - {"properties", "patternProperties"} == set(), keywords - KEYWORDS


def test_zod_defaults_are_not_required_and_lengths_count_utf16() -> None:
    telegram = node_at(("channels", "telegram"))
    assert telegram is not None and "dmPolicy" in telegram["required"]
    assert failures({}, telegram) == []
    name = {"type": "string", "maxLength": 2}
    assert failures("ab", name) == [] and failures("😀", name) == []
    assert failures("a😀", name)[0].keyword == "maxLength"


def test_walking_follows_records_and_unions() -> None:
    assert node_at(("agents", "entries", "*", "sandbox", "mode")) is not None
    assert node_at(("agents", "entries", "*", "nope")) is None
    model = node_at(("agents", "defaults", "model"))
    assert model is not None and child(model, "primary") is not None
