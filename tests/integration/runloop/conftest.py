"""Helpers for GitOps-loop tests: a quickstart copy with ``clawplane run --detach`` watching it."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.integration.engine.conftest import Cli, processes_under
from tests.support.patience import CONDITION_S
from tests.support.peek import by_key, status_text
from tests.support.quickstart import copy_quickstart

T = TypeVar("T")

SECOND_SERVER = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: notes-two
spec:
  command: python3
  args: [servers/notes_server.py]
  cwd: .
  env:
    NOTES_GREETING: "second"
"""


def wait_for(what: str, probe: Callable[[], T | None], *, timeout: float = CONDITION_S, interval: float = 0.1) -> T:
    """Poll ``probe`` until it returns something truthy (files and HTTP have no event to await)."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")


def http_get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """Status and body of a GET (non-2xx answers included)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@dataclass
class Loop:
    """A watched folder and ways to look at its supervisor."""

    folder: Path
    cli: Cli

    @property
    def state(self) -> Path:
        return self.folder / ".clawplane"

    def info(self) -> dict[str, Any]:
        return dict(json.loads((self.state / "supervisor.pid").read_text()))

    def loop_status(self) -> dict[str, Any]:
        try:
            return dict(json.loads((self.state / "loop.json").read_text()))
        except (OSError, ValueError):
            return {}

    def status(self) -> dict[str, dict[str, Any]]:
        return by_key(self.cli.json("status", str(self.folder), "--json"))

    def observed(self) -> dict[str, dict[str, Any]]:
        """``status()`` read in this process, for polls (see ``tests.support.peek``)."""
        text = status_text(self.folder)
        return by_key(json.loads(text)) if text is not None else self.status()

    def pids(self) -> dict[str, int | None]:
        return {k: r.get("pid") for k, r in self.status().items() if k.startswith("McpServer/")}

    def metrics(self) -> str:
        token = self.cli("token", "show", str(self.folder), "cli").stdout.strip()
        code, body = http_get(self.info()["metrics"] + "/metrics", {"Authorization": f"Bearer {token}"})
        assert code == 200
        return body

    def reconciles(self) -> int:
        return int(self.loop_status().get("reconciles", 0))

    def wait_settled(self, *, after: int = 0, timeout: float = CONDITION_S) -> dict[str, Any]:
        """Wait until a pass after the ``after``-th ended in sync and no newer one is pending."""

        def settled() -> dict[str, Any] | None:
            st = self.loop_status()
            last = st.get("lastReconcile") or {}
            if st.get("reconciles", 0) > after and last.get("result") == "unchanged":
                return st
            return None

        return wait_for("the loop to settle", settled, timeout=timeout)


@pytest.fixture
def looping(tmp_path: Path) -> Iterator[Loop]:
    """A quickstart copy with a second hosted server, watched by ``clawplane run --detach``."""
    folder = tmp_path / "quickstart"
    copy_quickstart(folder)
    (folder / "notes-two.yaml").write_text(SECOND_SERVER)
    cli = Cli(folder)
    loop = Loop(folder, cli)
    with fake_quickstart_provider(folder) as fake:
        cli.env[KEY_ENV] = fake.key or ""
        try:
            started = cli("run", str(folder), "--detach", "--resync-interval", "2")
            assert started.returncode == 0, started.stdout + started.stderr
            loop.wait_settled()
            yield loop
        finally:
            cli("down", str(folder))
            for proc in processes_under(folder):
                proc.kill()
