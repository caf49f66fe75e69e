"""An operator run against the emulator with its kubelet, and the objects the operator tests apply.

Shared by tests/integration/k8s: namespace ``demo``, a Secret ``tokens``, hosted servers
running the fixture MCP server, an Agent ``bot`` and the ``default`` Gateway.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.k8s.emulator import EmulatorThread
from tests.k8s.operator_run import OperatorRun, install_crds, ready_at, until

NS = "demo"
SERVER_PY = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "normal_server.py"
CONFIG_HASH = "clawplane.dev/config-hash"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def secret(token: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "tokens", "namespace": NS},
        "data": {"token": b64(token)},
    }


def server(name: str = "notes", args: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    spec = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(SERVER_PY), *(args or [])],
        "env": {"API_TOKEN": {"valueFrom": {"secretKeyRef": {"name": "tokens", "key": "token"}}}},
        **extra,
    }
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def agent(servers: list[str] | None, description: str = "helps", name: str = "bot") -> dict[str, Any]:
    spec: dict[str, Any] = {"description": description}
    if servers is not None:
        spec["mcpServers"] = servers
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "Agent",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


GATEWAY = {
    "apiVersion": "clawplane.dev/v1alpha1",
    "kind": "Gateway",
    "metadata": {"name": "default", "namespace": NS},
    "spec": {},
}


class Cluster:
    """The emulator plus one operator run, with helpers over both."""

    def __init__(self, emu: EmulatorThread, tmp: Path) -> None:
        self.emu, self.tmp = emu, tmp
        self.kubelet = emu.start_kubelet(tmp / "pods")
        self.op = self.start_operator()

    def start_operator(self, state: str = "state") -> OperatorRun:
        assert self.emu.kubeconfig is not None
        return OperatorRun(self.emu.kubeconfig, self.tmp / state, routes=self.kubelet.resolve).start()

    def get(self, plural: str, name: str) -> dict[str, Any] | None:
        return self.emu.get(plural, NS, name)

    def ready(self, name: str, generation: int = 1) -> dict[str, Any]:
        return until(
            self.emu,
            f"McpServer {name} Ready at generation {generation}",
            lambda: ready_at(self.get("mcpservers", name), generation),
        )

    def template_hash(self, name: str = "mcp-notes") -> str:
        dep = self.get("deployments", name)
        assert dep is not None
        return str(dep["spec"]["template"]["metadata"]["annotations"][CONFIG_HASH])

    def child_writes(self) -> int:
        return sum(len(self.emu.writes(kind, NS)) for kind in ("deployments", "services", "configmaps"))

    def condition(self, plural: str, name: str, ctype: str, *, status: str, reason: str | None = None) -> dict[str, Any]:
        """Wait until ``plural/name`` has condition ``ctype`` with this status (and reason); return it."""

        def found() -> dict[str, Any] | None:
            for cond in ((self.get(plural, name) or {}).get("status") or {}).get("conditions") or []:
                if cond["type"] == ctype and cond["status"] == status and reason in (None, cond["reason"]):
                    return dict(cond)
            return None

        return until(self.emu, f"{plural}/{name} {ctype}={status} ({reason or 'any reason'})", found)

    def patch_spec(self, plural: str, name: str, spec: dict[str, Any]) -> None:
        obj = self.get(plural, name)
        assert obj is not None
        obj["spec"] = {**obj["spec"], **spec}
        self.emu.apply_object(obj)


@contextmanager
def running_cluster(emulator: EmulatorThread, tmp_path: Path) -> Iterator[Cluster]:
    """Namespace ``demo``, the CRDs, a kubelet and a started operator; the operator stops afterwards."""
    emulator.setup_cluster(NS)
    install_crds(emulator)
    c = Cluster(emulator, tmp_path)
    try:
        yield c
    finally:
        c.op.stop()


def apply_all(c: Any, *objs: dict[str, Any]) -> None:
    """Apply each object through ``c.emu`` (an emulator cluster or tests/k8s/real/operator_cluster.py's)."""
    for obj in objs:
        c.emu.apply_object(obj)


