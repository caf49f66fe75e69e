"""Running the clawplane operator in-process (kopf's KopfRunner) against the emulator, plus helpers.

``OperatorRun`` builds the same kopf registry ``clawplane k8s run`` uses, logs in with
the emulator's kubeconfig and exposes the pass counter from the operator's metrics, so
tests wait for "a pass finished after my change" instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from kopf.testing import KopfRunner
from ruamel.yaml import YAML
from tests.support.patience import CONDITION_S

from clawplane.k8s.adapter.reconciler import ClusterSettings
from clawplane.k8s.api.kubeconfig import load_connection
from clawplane.k8s.dashboard import DashboardOptions
from clawplane.k8s.operator import OperatorConfig, build_registry
from clawplane.k8s.options import default_ingress
from clawplane.reconcile.metrics import LoopMetrics

ROOT = Path(__file__).resolve().parents[2]
CRD_DIR = ROOT / "manifests" / "crds"
T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T | None], *, timeout: float = CONDITION_S) -> T:
    """Poll ``probe`` (HTTP, subprocesses, counters: things with no event to await) until truthy."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {last!r}")


def until(emu: Any, what: str, probe: Callable[[], T | None], *, timeout: float = CONDITION_S) -> T:
    """Wait for ``probe`` (reading only the emulator) to be truthy; re-checked on every store change."""
    try:
        result: T = emu.wait_for(probe, timeout)
    except TimeoutError:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}") from None
    return result


def load_yaml_docs(path: Path) -> list[dict[str, Any]]:
    """Every document of a YAML file."""
    return [d for d in YAML(typ="safe").load_all(path.read_text(encoding="utf-8")) if d]


def install_crds(emu: Any) -> None:
    """Create clawplane's generated CRDs in the emulator."""
    for path in sorted(CRD_DIR.glob("*.yaml")):
        for doc in load_yaml_docs(path):
            emu.apply_object(doc)


@dataclass
class OperatorRun:
    """The operator running in a thread of this process until ``stop()``."""

    kubeconfig: Path
    state_dir: Path
    routes: Callable[[str], str | None] | None = None
    """How the operator reaches in-cluster Services: ``Kubelet.resolve`` (tests/k8s/kubelet.py)."""
    namespaces: tuple[str, ...] = ()
    """Watch only these (like ``clawplane k8s run -n``); empty: all namespaces."""
    bridge_image: str = "ghcr.io/clawplane/clawplane:test"
    skills_mount_path: Path | None = None
    """Where the gateway pod would mount skills (default: beside the state dir)."""
    metrics: LoopMetrics = field(default_factory=LoopMetrics)
    dashboard: DashboardOptions | None = None
    """Serve a namespace's dashboard (``clawplane k8s run --ui-port``)."""
    log: str = ""
    """The operator's whole log, once stopped."""
    _runner: KopfRunner | None = None

    def start(self) -> OperatorRun:
        """Start kopf with clawplane's handlers (standalone)."""
        settings = ClusterSettings(
            state_dir=self.state_dir,
            bridge_image=self.bridge_image,
            routes=self.routes,
            bridge_ingress_from=tuple(default_ingress()),
            skills_mount_path=str(self.skills_mount_path or self.state_dir.parent / "skills"),
        )
        config = OperatorConfig(
            settings,
            resync_interval=3600,
            connection=partial(load_connection, str(self.kubeconfig)),
            metrics=self.metrics,
            namespaces=self.namespaces,
            dashboard=self.dashboard,
        )
        scope = [arg for ns in self.namespaces for arg in ("-n", ns)] or ["-A"]
        self._runner = KopfRunner(
            ["run", "--standalone", *scope], registry=build_registry(config), timeout=60
        )
        self._runner.__enter__()
        return self

    def stop(self) -> None:
        """Stop kopf (cleanup handlers run) and re-raise anything it failed with."""
        runner, self._runner = self._runner, None
        if runner is not None:
            runner.__exit__(None, None, None)
            self.log = runner.output
            assert runner.exception is None, self.log[-4000:]

    def passes(self) -> int:
        """Reconcile passes finished so far (applied or failed)."""
        total = 0.0
        for result in ("applied", "failed"):
            value = self.metrics.registry.get_sample_value("clawplane_reconciles_total", {"result": result})
            total += value or 0.0
        return int(total)

    def wait_pass(self, after: int, timeout: float = CONDITION_S) -> int:
        """Wait until a pass numbered beyond ``after`` finished; returns the new count."""
        return wait_for(
            f"a reconcile pass after #{after}",
            lambda: self.passes() > after and self.passes(),
            timeout=timeout,
        )

    def __enter__(self) -> OperatorRun:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    """The condition of type ``kind`` in ``obj``'s status, if any."""
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def ready_at(obj: dict[str, Any] | None, generation: int) -> dict[str, Any] | None:
    """``obj`` when it is Ready and its status observed ``generation``; else None."""
    if obj is None or not is_true(obj, "Ready", generation=generation):
        return None
    return obj if (obj.get("status") or {}).get("observedGeneration") == generation else None


def is_true(obj: dict[str, Any] | None, kind: str, *, generation: int | None = None) -> bool:
    """``obj`` has condition ``kind`` True (for ``generation``, when given)."""
    cond = condition(obj, kind)
    if cond is None or cond.get("status") != "True":
        return False
    return generation is None or cond.get("observedGeneration") == generation
