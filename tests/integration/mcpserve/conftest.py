"""Helpers for the control-plane MCP server: an applied quickstart, and SDK clients over stdio and HTTP."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.fixtures.servers.helpers import authed
from tests.integration.engine.conftest import Cli, processes_under
from tests.support.quickstart import copy_quickstart

TRANSPORTS = ("stdio", "http")
MODES = ("auto", "legacy")  # auto negotiates 2026-07-28 with our server, legacy the handshake era


def quickstart_cli(folder: Path) -> Cli:
    """A quickstart copy at ``folder`` and the CLI that drives it."""
    copy_quickstart(folder)
    return Cli(folder)


@contextlib.contextmanager
def applied(folder: Path) -> Iterator[Cli]:
    """``folder`` with the quickstart applied (its supervisor runs); stopped afterwards."""
    cli = quickstart_cli(folder)
    with fake_quickstart_provider(folder) as fake:  # the quickstart's ModelProvider, on loopback
        cli.env[KEY_ENV] = fake.key or ""
        try:
            done = cli("apply", str(folder), "--yes")
            assert done.returncode == 0, done.stdout + done.stderr
            yield cli
        finally:
            cli("down", str(folder))
            for proc in processes_under(folder):
                proc.kill()


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Cli]]:
    """One applied quickstart for the read-only tests of a module."""
    folder = tmp_path_factory.mktemp("control") / "quickstart"
    with applied(folder) as cli:
        yield folder, cli


def endpoint(folder: Path) -> str:
    return str(json.loads((folder / ".clawplane" / "supervisor.pid").read_text())["endpoint"])


@contextlib.asynccontextmanager
async def control(
    transport: str, folder: Path, cli: Cli, *, mode: str = "auto", consumer: str = "cli", **kwargs: Any
) -> AsyncIterator[Client]:
    """An SDK client of the folder's control plane: ``clawplane mcp serve`` (stdio) or ``/mcp/_clawplane``."""
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "clawplane", "mcp", "serve", str(folder)], env=cli.env
        )
        client = Client(params, mode=mode, read_timeout_seconds=60, **kwargs)
    else:
        token = cli("token", "show", str(folder), consumer).stdout.strip()
        client = authed(endpoint(folder) + "/mcp/_clawplane", token, mode=mode, **kwargs)
    async with client:
        yield client
