"""The ``emulator`` fixture: a running Kubernetes API emulator (tests/k8s) for tests in this directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from tests.k8s.cluster import Cluster, running_cluster
from tests.k8s.emulator import EmulatorThread

CRD_PATH = Path(__file__).resolve().parents[3] / "manifests" / "crds" / "mcpservers.clawplane.dev.yaml"


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[EmulatorThread]:
    """A started emulator with namespace ``default``; ``.url`` and ``.kubeconfig`` (written) are set."""
    with EmulatorThread() as emu:
        emu.write_kubeconfig(tmp_path / "kubeconfig")
        yield emu


@pytest.fixture
def api(emulator: EmulatorThread) -> Iterator[httpx.Client]:
    """An HTTP client for the emulator."""
    with httpx.Client(base_url=emulator.url, timeout=10) as client:
        yield client


@pytest.fixture
def crd(api: httpx.Client) -> dict[str, Any]:
    """The McpServer CRD, created over HTTP."""
    resp = api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=yaml.safe_load(CRD_PATH.read_text()))
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


@pytest.fixture
def cluster(emulator: EmulatorThread, tmp_path: Path) -> Iterator[Cluster]:
    """The emulator with a kubelet and a running operator (tests/k8s/cluster.py)."""
    with running_cluster(emulator, tmp_path) as c:
        yield c
