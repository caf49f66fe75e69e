"""etcd, kube-apiserver and kube-controller-manager on loopback: a real control plane, no nodes.

The API server serves TLS with a CA of its own (``pki.py``), authenticates an admin by a static
token (group ``system:masters``) and ServiceAccounts by tokens it issues (TokenRequest), authorizes
with RBAC, runs its default admission plugins and writes an audit log (who did what, at Metadata
level). The controller manager runs the namespace, garbage-collector, ServiceAccount and root-CA
controllers; its Deployment and ReplicaSet controllers are off because nothing could schedule or
run their pods here (tests/k8s/kubelet.py stands in for a node where a test needs one).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from tests.k8s.operator_run import wait_for
from tests.k8s.real import pki
from tests.k8s.real.client import ApiError, Kube

START_S = 120.0
"""The API server bootstraps its own objects (RBAC roles, priority levels) before it is ready."""
_PR_SET_PDEATHSIG = 1
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _die_with_parent() -> None:
    """A control plane left behind by a killed test run would hold ports and memory for ever."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


@dataclass
class RealCluster:
    """A started control plane under ``root`` (``start()``/``stop()`` or a ``with`` block)."""

    root: Path
    bins: dict[str, Path]
    admin_token: str = field(default_factory=lambda: secrets.token_hex(24))
    url: str = ""
    pki: pki.Pki | None = None
    apiserver_args: tuple[str, ...] = ()
    """More kube-apiserver flags (a test that needs, e.g., a short etcd compaction interval)."""
    _procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def ca(self) -> Path:
        """The CA every client verifies the API server with."""
        assert self.pki is not None
        return self.pki.ca_cert

    @property
    def audit_log(self) -> Path:
        """One JSON object per request: user, verb, resource, namespace, response code."""
        return self.root / "audit.log"

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.root / f"{name}.log", "ab")  # noqa: SIM115 - the child owns it from here
        with log:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.root,
                start_new_session=True, preexec_fn=_die_with_parent,
            )  # fmt: skip
        self._procs[name] = proc
        return proc

    def pid(self, name: str) -> int:
        """The process id of one component (``etcd``, ``kube-apiserver``, ``kube-controller-manager``)."""
        return self._procs[name].pid

    def log_tail(self, name: str, lines: int = 30) -> str:
        """The end of one component's log (for a failure message)."""
        path = self.root / f"{name}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def start(self) -> RealCluster:
        """Start all three and wait until the API is ready and the default ServiceAccount exists."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.pki = pki.create(self.root / "pki")
        client, peer, secure = _free_port(), _free_port(), _free_port()
        self._spawn("etcd", [
            str(self.bins["etcd"]), "--name", "default", "--data-dir", str(self.root / "etcd"),
            "--listen-client-urls", f"http://127.0.0.1:{client}",
            "--advertise-client-urls", f"http://127.0.0.1:{client}",
            "--listen-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-cluster", f"default=http://127.0.0.1:{peer}",
            "--unsafe-no-fsync", "--log-level", "warn",
        ])  # fmt: skip
        tokens = self.root / "tokens.csv"
        tokens.write_text(f'{self.admin_token},admin,admin-uid,"system:masters"\n')
        tokens.chmod(0o600)
        policy = self.root / "audit-policy.yaml"
        policy.write_text(AUDIT_POLICY)
        self._spawn("kube-apiserver", [
            str(self.bins["kube-apiserver"]),
            "--etcd-servers", f"http://127.0.0.1:{client}",
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
            "--secure-port", str(secure), "--cert-dir", str(self.root / "certs"),
            "--tls-cert-file", str(self.pki.serving_cert), "--tls-private-key-file", str(self.pki.serving_key),
            "--client-ca-file", str(self.pki.ca_cert),
            "--token-auth-file", str(tokens), "--authorization-mode", "RBAC",
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file", str(self.pki.sa_pub),
            "--service-account-signing-key-file", str(self.pki.sa_key),
            "--service-cluster-ip-range", "10.96.0.0/16",
            "--audit-policy-file", str(policy), "--audit-log-path", str(self.audit_log),
            "--audit-log-format", "json", "--profiling=false",
            # The kubernetes Service endpoint may not be loopback; nothing in the tests uses it.
            "--endpoint-reconciler-type", "none",
            *self.apiserver_args,
        ])  # fmt: skip
        self.url = f"https://127.0.0.1:{secure}"
        self._wait_ready()
        admin_config = self.write_kubeconfig(self.root / "admin.kubeconfig", self.admin_token, "admin")
        self._spawn("kube-controller-manager", [
            str(self.bins["kube-controller-manager"]), "--kubeconfig", str(admin_config),
            "--bind-address", "127.0.0.1", "--secure-port", "0", "--leader-elect=false",
            "--controllers", "*,-deployment-controller,-replicaset-controller",
            "--service-account-private-key-file", str(self.pki.sa_key),
            "--root-ca-file", str(self.pki.ca_cert), "--use-service-account-credentials=false",
            "--profiling=false",
        ])  # fmt: skip
        with self.admin() as kube:
            wait_for(
                "the controller manager to create ServiceAccount default/default",
                lambda: self._alive() and kube.get("v1", "ServiceAccount", "default", "default"),
                timeout=START_S,
            )
        return self

    def _alive(self) -> bool:
        for name, proc in self._procs.items():
            if proc.poll() is not None:
                code = proc.returncode
                how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
                raise RuntimeError(
                    f"{name} (pid {proc.pid}, of the control plane in {self.root}) is gone: {how}; "
                    f"the end of its log:\n{self.log_tail(name)}"
                )
        return True

    def check(self) -> None:
        """Raise, naming the component and how it ended, when any part of the control plane is gone."""
        self._alive()

    def _wait_ready(self) -> None:
        headers = {"Authorization": f"Bearer {self.admin_token}"}
        deadline = time.monotonic() + START_S
        with httpx.Client(verify=str(self.ca), headers=headers, timeout=5) as http:
            while time.monotonic() < deadline:
                self._alive()
                with contextlib.suppress(httpx.HTTPError):
                    if http.get(f"{self.url}/readyz").status_code == 200:
                        return
                time.sleep(0.2)
        raise RuntimeError(
            f"kube-apiserver not ready after {START_S:.0f}s:\n{self.log_tail('kube-apiserver')}"
        )

    def stop(self) -> None:
        """Stop every component (SIGTERM, then SIGKILL after 10 s), the controller manager first."""
        for name in ("kube-controller-manager", "kube-apiserver", "etcd"):
            proc = self._procs.pop(name, None)
            if proc is None or proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __enter__(self) -> RealCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def client(self, token: str, manager: str = "clawplane-tests") -> Kube:
        """A client that authenticates with ``token``."""
        return Kube(self.url, self.ca, token, manager=manager)

    def admin(self) -> Kube:
        """A client in ``system:masters`` (authorized for everything)."""
        return self.client(self.admin_token)

    def write_kubeconfig(self, path: Path, token: str, user: str, namespace: str = "default") -> Path:
        """A kubeconfig (0600) that reaches this API server as ``user`` with ``token``."""
        text = f"""apiVersion: v1
kind: Config
clusters:
  - name: real
    cluster: {{server: "{self.url}", certificate-authority: "{self.ca}"}}
users:
  - name: {user}
    user: {{token: "{token}"}}
contexts:
  - name: real
    context: {{cluster: real, user: {user}, namespace: {namespace}}}
current-context: real
"""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(text)
        return path

    def service_account_token(self, namespace: str, name: str, seconds: int = 7200) -> str:
        """A token for ServiceAccount ``namespace/name`` from the TokenRequest API."""
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"expirationSeconds": seconds}}  # fmt: skip
        with self.admin() as kube:
            path = kube.path("v1", "ServiceAccount", namespace, name, "token")
            token: str = kube.request("POST", path, json=body).json()["status"]["token"]
        return token

    def new_namespace(self, prefix: str = "t") -> str:
        """A namespace of its own for one test (first: the control plane is still whole)."""
        self.check()
        name = f"{prefix}-{secrets.token_hex(4)}"
        with self.admin() as kube:
            kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        return name


__all__ = ["ApiError", "RealCluster"]
