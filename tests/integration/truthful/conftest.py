"""A quickstart copy per test, run by the CLI as a user runs it, and ways to break it.

Every test here runs ``python -m clawplane`` as a real process against a real folder; the
fixture stops whatever supervisor a test left and kills any process still naming the folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.integration.engine.conftest import ROOT, Cli, processes_under
from tests.integration.runloop.conftest import wait_for
from tests.support.quickstart import copy_quickstart

BROKEN_SERVER = """\
import sys
print("loading the broken server", file=sys.stderr, flush=True)
import clawplane_test_module_that_does_not_exist  # noqa: F401  (the cause the user must see)
"""


def server_doc(name: str, command: str, *args: str, extra: str = "") -> str:
    """An McpServer resource for a stdio server."""
    quoted = ", ".join(json.dumps(a) for a in args)
    return (
        f"apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: {name}\n"
        f"spec:\n  command: {json.dumps(command)}\n  args: [{quoted}]\n{extra}"
    )


class ServerCli(Cli):
    """``Cli`` for folders whose servers crash: their tracebacks are shown, clawplane's never are."""

    def check(self, proc: subprocess.CompletedProcess[str]) -> None:
        both = proc.stdout + proc.stderr
        assert "internal error" not in both and f"{PACKAGE}/" not in both, both


PACKAGE = str(ROOT / "operator" / "clawplane")


class Folder:
    """A quickstart copy and the CLI that drives it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cli = ServerCli(path)

    @property
    def state(self) -> Path:
        return self.path / ".clawplane"

    def add_broken_server(self, name: str = "broken") -> None:
        """A stdio server that writes to stderr and dies of a missing module at every start."""
        script = self.path / "servers" / f"{name}_server.py"
        script.write_text(BROKEN_SERVER)
        (self.path / f"{name}.yaml").write_text(
            server_doc(name, sys.executable, str(script), extra="  connectionTimeoutMs: 10000\n")
        )

    def status(self, *args: str) -> dict[str, Any]:
        return dict(self.cli.json("status", str(self.path), "--json", *args))

    def resource(self, key: str) -> dict[str, Any]:
        return next(r for r in self.status()["resources"] if r["key"] == key)

    def settled(self, key: str, phase: str, within: float = 60.0) -> dict[str, Any]:
        """The resource as ``status`` shows it once it is in ``phase``.

        A server that keeps failing cycles Starting → Backoff with growing delays, so a single
        read may land in a retry; the retry ends in Backoff again, which is what is waited for.
        """
        return wait_for(
            f"{key} in {phase}", lambda: r if (r := self.resource(key))["phase"] == phase else None, timeout=within
        )

    def supervisor_pid(self) -> int | None:
        try:
            return int(json.loads((self.state / "supervisor.pid").read_text())["pid"])
        except (OSError, ValueError, KeyError):
            return None

    def log(self) -> str:
        try:
            return (self.state / "supervisor.log").read_text()
        except OSError:
            return ""

    def alive(self) -> list[str]:
        """Command lines of live processes that name this folder (supervisor, servers)."""
        # The command line read while listing: a process that died since (a zombie) has none to read.
        return [" ".join(p.info["cmdline"] or []) for p in processes_under(self.path)]


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Folder]:
    """A private quickstart copy; nothing started for it outlives the test."""
    path = tmp_path / "quickstart"
    copy_quickstart(path)
    made = Folder(path)
    with fake_quickstart_provider(path) as fake:
        made.cli.env[KEY_ENV] = fake.key or ""
        yield made
        made.cli("down", str(path))
        for proc in processes_under(path):
            proc.kill()
