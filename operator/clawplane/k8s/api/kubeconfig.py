"""Where the Kubernetes API is and how to authenticate: in-cluster service account or a kubeconfig.

Only what an operator needs: server URL, CA, bearer token or client certificate.
Exec plugins and auth providers are not supported; they are for humans, not pods.
"""

from __future__ import annotations

import base64
import contextlib
import os
import ssl
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from clawplane._utils.private import open_private

SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class KubeConfigError(Exception):
    """The connection settings cannot be found or used; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Connection:
    """Everything needed to talk to one API server."""

    server: str
    ca_file: str | None = None
    insecure: bool = False
    token: str | None = field(default=None, repr=False)
    cert_file: str | None = None
    key_file: str | None = None
    namespace: str = "default"
    token_file: str | None = None
    """Re-read on every request: the kubelet rotates projected service-account tokens."""
    ca_data: str | None = None
    cert_data: str | None = None
    key_data: str | None = field(default=None, repr=False)
    """PEM text embedded in the kubeconfig (``*-data``); kept in memory, never left on disk."""
    agent: str = ""
    """Which operator this client is (replica, shard), appended to the User-Agent so an API
    server's audit log tells replicas and shards of one ServiceAccount apart."""

    def ssl_context(self) -> ssl.SSLContext | bool:
        """The TLS settings for httpx (``False`` skips verification when the config asks for it)."""
        if not self.server.startswith("https"):
            return True
        if self.insecure:
            return False
        try:
            ctx = ssl.create_default_context(cafile=self.ca_file, cadata=self.ca_data)
            if self.cert_file or self.cert_data:
                with self._client_pem_files() as (cert, key):
                    ctx.load_cert_chain(cert, key)
        except (ssl.SSLError, OSError) as exc:  # the user's certificates, not our bug
            raise KubeConfigError(
                f"cannot use the kubeconfig's TLS certificates for {self.server}: {exc}; "
                "fix certificate-authority and client-certificate/client-key (or their -data)"
            ) from None
        return ctx

    @contextlib.contextmanager
    def _client_pem_files(self) -> Iterator[tuple[str, str | None]]:
        """Paths of the client certificate and key; embedded ones exist only while ``ssl`` reads them.

        ``ssl`` loads a certificate chain from files only. Embedded data goes to a private
        directory (0700, files 0600) that is removed as soon as the context has loaded them.
        """
        if not (self.cert_data or self.key_data):
            yield str(self.cert_file), self.key_file
            return
        with tempfile.TemporaryDirectory(prefix="clawplane-kube-") as folder:
            cert = self.cert_file or _private_file(Path(folder) / "client.crt", self.cert_data or "")
            key = self.key_file or (
                _private_file(Path(folder) / "client.key", self.key_data) if self.key_data else None
            )
            yield cert, key

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
    ca_file, ca_data = _file_or_data(cluster, "certificate-authority", base, path)
    cert_file, cert_data = _file_or_data(user, "client-certificate", base, path)
    key_file, key_data = _file_or_data(user, "client-key", base, path)
    return Connection(
        server=str(cluster.get("server", "")).rstrip("/"),
        ca_file=ca_file,
        ca_data=ca_data,
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        token=token,
        cert_file=cert_file,
        cert_data=cert_data,
        key_file=key_file,
        key_data=key_data,
        namespace=str(context.get("namespace") or "default"),
        token_file=token_file,
    )


def _file_or_data(section: dict[str, Any], key: str, base: Path, path: Path) -> tuple[str | None, str | None]:
    """``key`` as a path (relative to the kubeconfig), or ``key-data`` decoded to PEM text."""
    if section.get(key):
        return str(base / section[key]), None
    data = section.get(f"{key}-data")
    if not data:
        return None, None
    try:
        # kubectl ignores line breaks inside the base64 text; so do we.
        return None, base64.b64decode("".join(str(data).split()), validate=True).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        raise KubeConfigError(f"{path}: {key}-data is not base64-encoded PEM; fix the kubeconfig") from None


def _private_file(path: Path, text: str) -> str:
    """Write ``text`` to a new file only its owner can read."""
    fd = open_private(path, os.O_WRONLY | os.O_EXCL)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(text)
    return str(path)
