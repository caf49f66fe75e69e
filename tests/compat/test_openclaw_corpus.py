"""The corpus (tests/fixtures/openclaw-corpus): every top-level section of OpenClaw's config and every
channel type it loads, declared through typed resources by OpenClaw's names, validates, renders, and
is accepted by the real OpenClaw 2026.9.6 (``openclaw config validate``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dotenv import dotenv_values
from tests.oracles.runners import OpenClawOracle

from clawplane.models import Agent, Channel, Gateway, McpServer, ModelProvider
from clawplane.render import render_openclaw_config
from clawplane.schema.openclaw import config_schema, declared_keys
from clawplane.schema.openclaw.refinements import UNKNOWN_CHANNELS
from clawplane.validation import validate_paths

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "openclaw-corpus"
BOOKKEEPING = {"$schema", "meta"}
"""Top-level keys OpenClaw writes for itself (``clawplane import`` drops them)."""


def _render() -> tuple[dict[str, Any], list[Any]]:
    result = validate_paths([CORPUS])
    assert result.ok and not result.diagnostics.warnings, result.diagnostics.sorted()
    found = [item.resource for item in result.resources]
    base_dirs = {item.resource.key: Path(item.source.file).resolve().parent for item in result.resources}
    config, diagnostics = render_openclaw_config(
        gateway=next(r for r in found if isinstance(r, Gateway)),
        servers=[r for r in found if isinstance(r, McpServer)],
        agents=[r for r in found if isinstance(r, Agent)],
        channels=[r for r in found if isinstance(r, Channel)],
        providers=[r for r in found if isinstance(r, ModelProvider)],
        hosted_urls={},
        base_dirs=base_dirs,
        environ={},
    )
    return config, diagnostics


def test_the_corpus_covers_every_section_and_every_channel_type() -> None:
    config, diagnostics = _render()
    assert [d for d in diagnostics if d.is_error] == []
    sections = set(declared_keys(config_schema())) - BOOKKEEPING
    assert sections - set(config) == set()
    channel_types = set(declared_keys(config_schema()["properties"]["channels"])) - {"defaults", "modelByChannel"}
    assert channel_types - set(UNKNOWN_CHANNELS) - set(config["channels"]) == set()


@pytest.mark.oracle_calls(1)
def test_the_real_openclaw_accepts_what_the_corpus_renders(openclaw: OpenClawOracle) -> None:
    config, _ = _render()
    openclaw.write_config(config)
    env = {k: v for k, v in dotenv_values(CORPUS / "secrets.env").items() if v is not None}
    result = openclaw.run("config", "validate", "--json", env=env)
    verdict = json.loads(result.stdout)
    assert verdict["valid"] is True, verdict
    assert verdict.get("warnings", []) == [], verdict
