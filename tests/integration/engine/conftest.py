"""Helpers for engine tests: a copied quickstart folder and the CLI run as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.support.quickstart import copy_quickstart

ROOT = Path(__file__).resolve().parents[3]
CANARY = "canary-secret-5d1e0c"
PROVIDER_CANARY = "sk-canary-provider-9b2e71"


class Cli:
    """Runs ``python -m clawplane`` with the venv first on PATH and a canary secret set."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        bin_dir = str(Path(sys.executable).parent)
        self.env = {
            **os.environ,
            "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
            "NOTES_API_TOKEN": CANARY,
            "NO_COLOR": "1",
        }

    def argv(self, *args: str) -> list[str]:
        """The command line of one CLI call (to run it another way, e.g. in a namespace)."""
        return [sys.executable, "-m", "clawplane", *args]

    def __call__(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            self.argv(*args),
            capture_output=True,
            text=True,
            env=self.env,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        self.check(proc)
        return proc

    def check(self, proc: subprocess.CompletedProcess[str]) -> None:
        """No traceback, ever: a user never sees one."""
        assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr

    def json(self, *args: str) -> Any:
        proc = self(*args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads(proc.stdout)


def processes_under(folder: Path) -> list[psutil.Process]:
    """Live processes whose command line mentions ``folder``."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and str(folder) in " ".join(
                proc.info["cmdline"] or []
            ):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@pytest.fixture
def quickstart(tmp_path: Path) -> Iterator[tuple[Path, Cli]]:
    """A private copy of examples/quickstart; its supervisor is always stopped afterwards."""
    folder = tmp_path / "quickstart"
    copy_quickstart(folder)
    cli = Cli(folder)
    with fake_quickstart_provider(folder, key=PROVIDER_CANARY) as fake:
        cli.env[KEY_ENV] = fake.key or ""
        yield folder, cli
        cli("down", str(folder))
        for proc in processes_under(folder):
            proc.kill()
