"""Where the Kubernetes API is and how to authenticate: in-cluster service account or a kubeconfig.

Only what an operator needs: server URL, CA, bearer token or client certificate.
Exec plugins and auth providers are not supported; they are for humans, not pods.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class KubeConfigError(Exception):
    """The connection settings cannot be found or used; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Connection:
    """Everything needed to talk to one API server."""

    server: str
    ca_file: str | None = None
    insecure: bool = False
    token: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    namespace: str = "default"
    token_file: str | None = None
    """Re-read on every request: the kubelet rotates projected service-account tokens."""

    def ssl_context(self) -> ssl.SSLContext | bool:
        """The TLS settings for httpx (``False`` skips verification when the config asks for it)."""
        if not self.server.startswith("https"):
            return True
        if self.insecure:
            return False
        ctx = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_file:
            ctx.load_cert_chain(self.cert_file, self.key_file)
        return ctx

    def headers(self) -> dict[str, str]:
        """Authorization header with the current token, when one is configured."""
        token = Path(self.token_file).read_text().strip() if self.token_file else self.token
        return {"Authorization": f"Bearer {token}"} if token else {}


def load_connection(kubeconfig: str | None = None) -> Connection:
    """In-cluster settings in a pod, else ``kubeconfig`` / ``$KUBECONFIG`` / ``~/.kube/config``."""
    path = kubeconfig or os.environ.get("KUBECONFIG")
    if path is None and os.environ.get("KUBERNETES_SERVICE_HOST") and (SA_DIR / "token").exists():
        return _in_cluster()
    target = Path(path.split(os.pathsep)[0] if path else Path.home() / ".kube" / "config")
    if not target.exists():
        raise KubeConfigError(
            f"no kubeconfig at {target}: set KUBECONFIG, or run the operator in a pod with a service account"
        )
    return _from_kubeconfig(target)


def _in_cluster() -> Connection:
    host = os.environ["KUBERNETES_SERVICE_HOST"]
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    host = f"[{host}]" if ":" in host else host
    namespace_file = SA_DIR / "namespace"
    return Connection(
        server=f"https://{host}:{port}",
        ca_file=str(SA_DIR / "ca.crt"),
        token=(SA_DIR / "token").read_text().strip(),
        token_file=str(SA_DIR / "token"),
        namespace=namespace_file.read_text().strip() if namespace_file.exists() else "default",
    )


def _named(items: Any, name: str, what: str, path: Path) -> dict[str, Any]:
    for item in items or []:
        if item.get("name") == name:
            return dict(item.get(what) or {})
    raise KubeConfigError(
        f"{path}: {what} {name!r} is not defined; fix the kubeconfig or pick another context"
    )


def _from_kubeconfig(path: Path) -> Connection:
    try:
        doc = YAML(typ="safe").load(path.read_text(encoding="utf-8")) or {}
    except Exception as exc:  # any parse problem is the user's file, not our bug
        raise KubeConfigError(f"{path}: cannot read kubeconfig: {exc}") from None
    current = doc.get("current-context")
    if not current:
        raise KubeConfigError(f"{path}: no current-context; run `kubectl config use-context NAME`")
    context = _named(doc.get("contexts"), current, "context", path)
    cluster = _named(doc.get("clusters"), context.get("cluster", ""), "cluster", path)
    user = _named(doc.get("users"), context.get("user", ""), "user", path) if context.get("user") else {}
    base = path.parent
    token = user.get("token")
    token_file = str(base / user["tokenFile"]) if user.get("tokenFile") else None
    if token_file:
        token = Path(token_file).read_text().strip()
    return Connection(
        server=str(cluster.get("server", "")).rstrip("/"),
        ca_file=_file_or_data(cluster, "certificate-authority", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        token=token,
        cert_file=_file_or_data(user, "client-certificate", base),
        key_file=_file_or_data(user, "client-key", base),
        namespace=str(context.get("namespace") or "default"),
        token_file=token_file,
    )


def _file_or_data(section: dict[str, Any], key: str, base: Path) -> str | None:
    if section.get(key):
        return str(base / section[key])
    data = section.get(f"{key}-data")
    if not data:
        return None
    # ssl wants files: keep the decoded PEM in a private temp file for the process's lifetime.
    fd, name = tempfile.mkstemp(prefix="clawplane-kube-", suffix=".pem")
    with os.fdopen(fd, "wb") as fh:
        fh.write(base64.b64decode(data))
    return name
