"""A watched quickstart copy for dashboard tests, and an httpx client logged in to its ``/ui``."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.integration.approvals.conftest import EXTRA_SERVER
from tests.integration.engine.conftest import Cli, processes_under
from tests.integration.runloop.conftest import Loop
from tests.support.quickstart import copy_quickstart

# Prints the resolved secret to stderr before serving: the dashboard must show it redacted.
NOISY_SERVER = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: noisy
spec:
  command: sh
  args: ["-c", "echo \\"starting with token $NOTES_API_TOKEN\\" >&2; exec python3 servers/notes_server.py"]
  cwd: .
  env:
    NOTES_API_TOKEN:
      valueFrom:
        env: NOTES_API_TOKEN
"""
HOLD_DELETES = """  approvals:
    rules:
      - name: server-deletes
        kinds: [McpServer]
        actions: [delete]
"""
DOOMED = ("doomed-one", "doomed-two")


@dataclass
class Dashboard:
    """The watched folder, its endpoint and tokens."""

    loop: Loop
    base: str

    def token(self, consumer: str = "cli") -> str:
        return self.loop.cli("token", "show", str(self.loop.folder), consumer).stdout.strip()

    def client(self) -> httpx.Client:
        """A client that sends this endpoint's Origin, as a browser posting its forms does."""
        return httpx.Client(base_url=self.base, headers={"Origin": self.base}, timeout=10)

    @contextlib.contextmanager
    def login(self) -> Iterator[httpx.Client]:
        """A client holding a session cookie of the ``cli`` token."""
        with self.client() as client:
            answer = client.post("/ui/login", data={"token": self.token()})
            assert answer.status_code == 303, answer.text
            yield client


def csrf_of(html: str) -> str:
    """The CSRF token a page's forms carry."""
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, html
    return found.group(1)


@contextlib.contextmanager
def watched_dashboard(root: Path) -> Iterator[Dashboard]:
    """The quickstart + a noisy server + two servers whose deletion is held, watched by ``clawplane run``."""
    folder = root / "quickstart"
    copy_quickstart(folder)
    (folder / "noisy.yaml").write_text(NOISY_SERVER)
    for name in DOOMED:
        (folder / f"{name}.yaml").write_text(EXTRA_SERVER.format(name=name))
    gateway = folder / "gateway.yaml"
    gateway.write_text(gateway.read_text() + HOLD_DELETES)
    cli = Cli(folder)
    loop = Loop(folder, cli)
    with fake_quickstart_provider(folder) as fake:
        cli.env[KEY_ENV] = fake.key or ""
        try:
            started = cli("run", str(folder), "--detach", "--resync-interval", "2")
            assert started.returncode == 0, started.stdout + started.stderr
            loop.wait_settled(timeout=120)
            yield Dashboard(loop, str(loop.info()["endpoint"]))
        finally:
            cli("down", str(folder))
            for proc in processes_under(folder):
                proc.kill()


@pytest.fixture
def dashboard(tmp_path: Path) -> Iterator[Dashboard]:
    """A dashboard of this test's own (for a test that changes the folder or answers approvals)."""
    with watched_dashboard(tmp_path) as board:
        yield board


@pytest.fixture(scope="module")
def shared_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """One dashboard for a module's tests that only read, and log in and out: each setup starts a
    supervisor and four servers (~8 CPU-s on a 2-core machine)."""
    with watched_dashboard(tmp_path_factory.mktemp("shared-dashboard")) as board:
        yield board
