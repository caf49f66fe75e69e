"""The ``emulator`` fixture: a running Kubernetes API emulator (tests/k8s) for tests in this directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.k8s.emulator import EmulatorThread


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[EmulatorThread]:
    """A started emulator with namespace ``default``; ``.url`` and ``.kubeconfig`` (written) are set."""
    with EmulatorThread() as emu:
        emu.write_kubeconfig(tmp_path / "kubeconfig")
        yield emu
