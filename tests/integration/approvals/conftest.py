"""A quickstart copy with extra hosted servers and plan approval rules, watched by ``clawplane run``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.integration.engine.conftest import Cli, processes_under
from tests.integration.runloop.conftest import Loop
from tests.support.quickstart import copy_quickstart

EXTRA_SERVER = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: {name}
spec:
  command: python3
  args: [servers/notes_server.py]
  cwd: .
  env:
    NOTES_GREETING: "{name}"
"""
RULES = """  approvals:
    rules:
      - name: brief-deletes
        kinds: [McpServer]
        actions: [delete]
        names: ["brief-*"]
        ttlMs: 1500
      - name: server-deletes
        kinds: [McpServer]
        actions: [delete]
"""
EXTRAS = ("notes-two", "notes-three", "brief-one")


def add_rules(folder: Path) -> None:
    """The quickstart Gateway, with a rule holding McpServer deletes (brief-* ones expire in 1.5 s)."""
    gateway = folder / "gateway.yaml"
    gateway.write_text(gateway.read_text() + RULES)


def approvals(cli: Cli, folder: Path, *args: str) -> Any:
    """``clawplane approvals list --json`` (pass ``--all`` for the answered ones)."""
    return cli.json("approvals", "list", str(folder), "--json", *args)


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Loop]:
    """The watched folder: quickstart + three more hosted servers + the approval rules."""
    folder = tmp_path / "quickstart"
    copy_quickstart(folder)
    for name in EXTRAS:
        (folder / f"{name}.yaml").write_text(EXTRA_SERVER.format(name=name))
    add_rules(folder)
    cli = Cli(folder)
    loop = Loop(folder, cli)
    with fake_quickstart_provider(folder) as fake:
        cli.env[KEY_ENV] = fake.key or ""
        try:
            started = cli("run", str(folder), "--detach", "--resync-interval", "1")
            assert started.returncode == 0, started.stdout + started.stderr
            loop.wait_settled(timeout=120)
            yield loop
        finally:
            cli("down", str(folder))
            for proc in processes_under(folder):
                proc.kill()
