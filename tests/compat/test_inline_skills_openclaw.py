"""The rendered openclaw.json lets the real OpenClaw find inline Skill resources (`openclaw skills list`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.integration.engine.conftest import ROOT, Cli, processes_under
from tests.oracles.runners import OpenClawOracle


@pytest.mark.oracle_calls(2)
def test_openclaw_lists_the_quickstart_inline_skill(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    folder = tmp_path / "quickstart"
    shutil.copytree(ROOT / "examples" / "quickstart", folder, ignore=shutil.ignore_patterns(".clawplane"))
    cli = Cli(folder)
    with fake_quickstart_provider(folder) as fake:
        cli.env[KEY_ENV] = fake.key or ""
        try:
            applied = cli("apply", str(folder), "--yes")
            assert applied.returncode == 0, applied.stdout
        finally:
            cli("down", str(folder))
            for proc in processes_under(folder):
                proc.kill()
    rendered = folder / ".clawplane" / "out" / "openclaw.json"
    inline = folder / ".clawplane" / "inline-skills"
    assert str(inline.resolve()) in json.loads(rendered.read_text())["skills"]["load"]["extraDirs"]
    openclaw.use_config(rendered)
    listing = openclaw.json("skills", "list", "--json", "--agent", "coder")
    names = {s["name"] for s in listing["skills"]}
    assert "house-style" in names, sorted(names)
