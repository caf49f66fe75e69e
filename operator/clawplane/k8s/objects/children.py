"""The Kubernetes objects clawplane owns: server Deployments and Services, output ConfigMaps.

Builders are pure: the same inputs give the same manifest, and each manifest carries
``clawplane.dev/spec-hash`` so the backend writes only when something it manages changed.
The pod template carries the config hash (spec, Secret digests, restart token), so a spec
or Secret change rolls the pods and nothing else does.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from clawplane.k8s.objects.bridgeobserve import BridgeObservability
from clawplane.models import McpServerSpec, SessionAffinity, ValueFrom, literal_text

GROUP = "clawplane.dev"
MANAGED_BY = {"app.kubernetes.io/managed-by": "clawplane"}
SERVER_LABEL = f"{GROUP}/mcpserver"
AGENT_LABEL = f"{GROUP}/agent"
GATEWAY_LABEL = f"{GROUP}/gateway"
SPEC_HASH = f"{GROUP}/spec-hash"
CONFIG_HASH = f"{GROUP}/config-hash"
TOKEN_HASH = f"{GROUP}/token-hash"
"""Pod template annotation: a digest of the bridge token (never the token)."""
RESTART_ANNOTATION = f"{GROUP}/restartedAt"
BRIDGE_PORT = 8080
TOKEN_DIR = "/var/run/clawplane/token"
TOKEN_FILE = f"{TOKEN_DIR}/token"
TOKEN_KEY = "token"
AUTHORIZATION_KEY = "authorization"
"""The token Secret also holds ``Bearer <token>``, for resources that send it as a header."""


class UnsupportedInClusterError(Exception):
    """A server setting that only makes sense on one machine; the message says what to use instead."""


@dataclass(frozen=True, slots=True)
class Owner:
    """The custom resource a child belongs to."""

    kind: str
    name: str
    uid: str

    def reference(self) -> dict[str, Any]:
        """An ownerReference: the owner controls the child, and deleting it collects the child."""
        return {
            "apiVersion": f"{GROUP}/v1alpha1",
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }


def dns_label(prefix: str, name: str) -> str:
    """A DNS-1035 label (Service names need one) derived from ``name``, unique per name."""
    clean = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")
    label = f"{prefix}-{clean}" if clean else prefix
    if label != f"{prefix}-{name}" or len(label) > 63:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        label = f"{label[: 63 - 9].rstrip('-')}-{digest}"
    return label


def server_child_name(name: str) -> str:
    """Deployment and Service name of a hosted server."""
    return dns_label("mcp", name)


def _hashed(obj: dict[str, Any]) -> dict[str, Any]:
    digest = hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]
    obj["metadata"].setdefault("annotations", {})[SPEC_HASH] = digest
    return obj


def spec_hash(obj: dict[str, Any] | None) -> str | None:
    """The spec hash a stored child was written with."""
    if obj is None:
        return None
    value = (obj.get("metadata", {}).get("annotations") or {}).get(SPEC_HASH)
    return str(value) if value is not None else None


def _meta(name: str, namespace: str, labels: dict[str, str], owner: Owner) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": namespace,
        "labels": {**MANAGED_BY, **labels},
        "ownerReferences": [owner.reference()],
    }


def container_env(spec: McpServerSpec) -> list[dict[str, Any]]:
    """The container env: literals inline, Secret references as secretKeyRef (never resolved here)."""
    env: list[dict[str, Any]] = [{"name": "HOME", "value": "/tmp"}]
    for key, value in sorted(spec.env.items()):
        if not isinstance(value, ValueFrom):
            env.append({"name": key, "value": literal_text(value)})
            continue
        ref = value.value_from.secret_key_ref
        if ref is None:
            source = "env" if value.value_from.env is not None else "file"
            raise UnsupportedInClusterError(
                f"env {key}: valueFrom.{source} reads the operator's own {source}s; "
                "in Kubernetes use valueFrom.secretKeyRef"
            )
        env.append({"name": key, "valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key}}})
    return env


def token_secret_name(name: str) -> str:
    """The Secret holding the bearer token of a hosted server's bridge."""
    return f"{server_child_name(name)}-token"


def server_token_secret(name: str, namespace: str, token: str, *, owner: Owner) -> dict[str, Any]:
    """The bearer token the bridge requires (mounted in its pod) and the gateway sends."""
    child = server_child_name(name)
    data = {TOKEN_KEY: token, AUTHORIZATION_KEY: f"Bearer {token}"}
    return _hashed(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": _meta(token_secret_name(name), namespace, {SERVER_LABEL: child}, owner),
            "type": "Opaque",
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
        }
    )


def pod_labels(name: str) -> dict[str, str]:
    """The labels of a hosted server's pods (its Service and NetworkPolicy select them)."""
    child = server_child_name(name)
    return {
        "app.kubernetes.io/name": "clawplane-mcp",
        "app.kubernetes.io/instance": child,
        SERVER_LABEL: child,
    }


def peers_service_name(name: str) -> str:
    """The headless Service whose addresses are a replicated server's bridge pods."""
    return dns_label("mcp-peers", name)


def _bridge_argv(name: str, namespace: str, spec: McpServerSpec, observe: BridgeObservability) -> list[str]:
    argv = ["clawplane", "bridge", "--host", "0.0.0.0", "--port", str(BRIDGE_PORT), "--name", name]
    argv += ["--token-file", TOKEN_FILE, "--sessions", spec.sessions.value]
    argv += ["--max-sessions", str(spec.max_sessions), "--session-idle-ttl-ms", str(spec.session_idle_ttl_ms)]
    if spec.tool_approval is not None:  # no approval queue in the pod: the bridge refuses held calls
        argv += ["--tool-approval", spec.tool_approval.model_dump_json(by_alias=True)]
    if spec.tool_filter is not None:  # hidden tools stay hidden and uncallable behind the pod too
        argv += ["--tool-filter", spec.tool_filter.model_dump_json(by_alias=True, exclude_none=True)]
    if spec.replicas > 1:
        # Each replica tags the session ids it issues with its pod IP; the others forward to it.
        argv += ["--advertise", "$(POD_IP)", "--peers-dns", f"{peers_service_name(name)}.{namespace}.svc"]
    return [*argv, *observe.args, "--"]


def server_deployment(
    name: str,
    namespace: str,
    spec: McpServerSpec,
    *,
    owner: Owner,
    image: str,
    config_hash: str,
    token_hash: str = "",
    observe: BridgeObservability | None = None,
) -> dict[str, Any]:
    """``spec.replicas`` pods running ``clawplane bridge --token-file ... -- COMMAND ARGS``.

    ``observe``: the namespace Gateway's traces and audit settings, as bridge flags and env (last,
    so a server's own env cannot shadow a trace header's variable).
    """
    observe = observe or BridgeObservability()
    child = server_child_name(name)
    labels = pod_labels(name)
    selector = {"app.kubernetes.io/instance": child, SERVER_LABEL: child}
    assert spec.command is not None
    bridge = _bridge_argv(name, namespace, spec, observe)
    env = [*container_env(spec), *observe.env]
    if spec.replicas > 1:
        env = [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}, *env]
    container: dict[str, Any] = {
        "name": "server",
        "image": spec.image or image,
        "command": [*bridge, spec.command, *spec.args],
        "env": env,
        "ports": [{"name": "mcp", "containerPort": BRIDGE_PORT, "protocol": "TCP"}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": "mcp"}, "periodSeconds": 5},
        # Fit the "restricted" Pod Security Standard, so servers run in locked-down namespaces too.
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumeMounts": [
            {"name": "tmp", "mountPath": "/tmp"},
            {"name": "token", "mountPath": TOKEN_DIR, "readOnly": True},
        ],
    }
    token_volume = {
        "name": "token",
        "secret": {
            "secretName": token_secret_name(name),
            "items": [{"key": TOKEN_KEY, "path": TOKEN_KEY}],
            "defaultMode": 0o400,
        },
    }
    if spec.cwd and spec.cwd.startswith("/"):
        container["workingDir"] = spec.cwd
    if spec.resources is not None:
        container["resources"] = spec.resources.model_dump(mode="json", exclude_defaults=True)
    return _hashed(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": _meta(child, namespace, labels, owner),
            "spec": {
                "replicas": spec.replicas,
                "selector": {"matchLabels": selector},
                "template": {
                    "metadata": {
                        "labels": labels,
                        # A new bridge token (a deleted Secret) must reach the bridge: the pod rolls.
                        "annotations": {CONFIG_HASH: config_hash, TOKEN_HASH: token_hash},
                    },
                    "spec": {
                        "containers": [container],
                        "volumes": [{"name": "tmp", "emptyDir": {}}, token_volume],
                        "automountServiceAccountToken": False,
                    },
                },
            },
        }
    )


def server_service(
    name: str, namespace: str, *, owner: Owner, spec: McpServerSpec | None = None
) -> dict[str, Any]:
    """The ClusterIP Service in front of a hosted server's bridge (``ClientIP`` affinity when asked)."""
    child = server_child_name(name)
    body: dict[str, Any] = {
        "type": "ClusterIP",
        "selector": {"app.kubernetes.io/instance": child, SERVER_LABEL: child},
        "ports": [{"name": "mcp", "port": BRIDGE_PORT, "targetPort": "mcp", "protocol": "TCP"}],
    }
    if spec is not None and spec.replicas > 1 and spec.session_affinity is SessionAffinity.CLIENT_IP:
        # As long as a session may stay idle: a client back after that has no session to return to.
        timeout = max(1, min(86400, -(-spec.session_idle_ttl_ms // 1000)))
        body["sessionAffinity"] = "ClientIP"
        body["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": timeout}}
    return _hashed(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta(child, namespace, {SERVER_LABEL: child}, owner),
            "spec": body,
        }
    )


def server_peers_service(name: str, namespace: str, *, owner: Owner) -> dict[str, Any]:
    """The headless Service the replicas of a server find each other by (ready pods only)."""
    child = server_child_name(name)
    return _hashed(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta(peers_service_name(name), namespace, {SERVER_LABEL: child}, owner),
            "spec": {
                "clusterIP": "None",
                "selector": {"app.kubernetes.io/instance": child, SERVER_LABEL: child},
                "ports": [{"name": "mcp", "port": BRIDGE_PORT, "targetPort": "mcp", "protocol": "TCP"}],
            },
        }
    )


def server_network_policy(
    name: str, namespace: str, peers: list[dict[str, Any]], *, owner: Owner, replicas: int = 1
) -> dict[str, Any]:
    """Ingress to a server's pods only from ``peers`` (gateway pods, the operator), on the bridge port.

    Replicas also reach each other: a request for a session another replica holds is forwarded.
    """
    child = server_child_name(name)
    selector = {"app.kubernetes.io/instance": child, SERVER_LABEL: child}
    if replicas > 1:
        peers = [*peers, {"podSelector": {"matchLabels": selector}}]
    return _hashed(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": _meta(child, namespace, {SERVER_LABEL: child}, owner),
            "spec": {
                "podSelector": {"matchLabels": selector},
                "policyTypes": ["Ingress"],
                "ingress": [{"from": peers, "ports": [{"protocol": "TCP", "port": BRIDGE_PORT}]}],
            },
        }
    )


def service_url(name: str, namespace: str) -> str:
    """The in-cluster streamable-HTTP endpoint of a hosted server."""
    return f"http://{server_child_name(name)}.{namespace}.svc:{BRIDGE_PORT}/mcp"


def config_map(
    name: str,
    namespace: str,
    data: dict[str, str],
    *,
    owner: Owner,
    labels: dict[str, str],
    binary: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A ConfigMap holding rendered files (keys are file names; ``binary``: base64 values)."""
    cm: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(name, namespace, labels, owner),
        "data": dict(sorted(data.items())),
    }
    if binary:
        cm["binaryData"] = dict(sorted(binary.items()))
    return _hashed(cm)
