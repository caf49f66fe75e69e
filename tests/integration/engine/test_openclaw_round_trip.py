"""Round trip: ``clawplane import`` of an openclaw.json → ``validate`` → ``apply`` writes the same openclaw.json.

For the file that uses every top-level section (tests/fixtures/openclaw-configs/every-section.json5)
and for the openclaw.json the typed corpus renders (tests/fixtures/openclaw-corpus), the CLI runs as
a user runs it. Nothing may reach the network: apply runs in a network namespace of its own with
only loopback up (its remote MCP servers then fail fast, as they would offline, and openclaw.json is
written all the same). The only difference allowed is OpenClaw's own bookkeeping (``$schema``,
``meta``), which import drops.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import json5
import pytest
from deepdiff import DeepDiff
from tests.integration.engine.conftest import Cli

from clawplane.models import Agent, Channel, Gateway, McpServer, ModelProvider
from clawplane.render import render_openclaw_config
from clawplane.validation import validate_paths

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EVERY_SECTION = FIXTURES / "openclaw-configs" / "every-section.json5"
CORPUS = FIXTURES / "openclaw-corpus"


def _netns_or_skip() -> None:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare and ip (util-linux, iproute2) to keep apply off the network")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"cannot create a network namespace here: {probe.stderr.strip()}")


def _references(text: str) -> dict[str, str]:
    """A value for every environment variable the config reads (``${NAME}`` and env SecretRefs)."""
    names = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)\}", text))
    names |= set(re.findall(r'"?id"?\s*:\s*"([A-Z][A-Z0-9_]*)"', text))
    return {name: f"round-trip-{name.lower()}" for name in names}


def _round_trip(source: Path, tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    folder = tmp_path / "imported"
    cli = Cli(folder)
    cli.env.update(_references(source.read_text(encoding="utf-8")))
    imported = cli("import", str(source), "--out", str(folder))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    validated = cli("validate", str(folder))
    assert validated.returncode == 0, validated.stdout + validated.stderr
    applied = subprocess.run(
        ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh",
         *cli.argv("apply", str(folder), "--yes")],
        capture_output=True, text=True, env=cli.env, timeout=180, stdin=subprocess.DEVNULL, check=False,
    )
    try:
        cli.check(applied)
        written = folder / ".clawplane" / "out" / "openclaw.json"
        assert written.is_file(), applied.stdout + applied.stderr
        rendered = json.loads(written.read_text(encoding="utf-8"))
    finally:
        cli("down", str(folder))
    text = source.read_text(encoding="utf-8")
    # The standard library joins \u surrogate-pair escapes as JavaScript does (json5 does not).
    original = json.loads(text) if source.suffix == ".json" else json5.loads(text)
    for bookkeeping in ("$schema", "meta"):
        original.pop(bookkeeping, None)
    return original, rendered


def test_every_section_comes_back_as_it_was(tmp_path: Path) -> None:
    _netns_or_skip()
    original, rendered = _round_trip(EVERY_SECTION, tmp_path)
    assert DeepDiff(original, rendered) == {}


def test_the_corpus_comes_back_through_import_and_apply(tmp_path: Path) -> None:
    _netns_or_skip()
    result = validate_paths([CORPUS])
    assert result.ok
    found = [item.resource for item in result.resources]
    config, _ = render_openclaw_config(
        gateway=next(r for r in found if isinstance(r, Gateway)),
        servers=[r for r in found if isinstance(r, McpServer)],
        agents=[r for r in found if isinstance(r, Agent)],
        channels=[r for r in found if isinstance(r, Channel)],
        providers=[r for r in found if isinstance(r, ModelProvider)],
        hosted_urls={},
        base_dirs={item.resource.key: Path(item.source.file).resolve().parent for item in result.resources},
        environ={},
    )
    source = tmp_path / "openclaw.json"
    source.write_text(json.dumps(config, indent=2), encoding="utf-8")
    original, rendered = _round_trip(source, tmp_path)
    assert DeepDiff(original, rendered) == {}
