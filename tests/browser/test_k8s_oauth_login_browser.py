"""``clawplane login --kubernetes`` on the real API server, with a real OpenID provider and Chromium.

The operator runs under the chart's identity (tests/k8s/real/operator_cluster.py, no pods: the
server is remote) and probes an ``auth: oauth`` McpServer that checks every bearer token at
panva's oidc-provider by introspection (``tests/support/oidc.py``, as in
``test_oauth_login_browser``). The whole life of a cluster login:

1. before any login the McpServer is ``LoginRequired`` (not Failed), naming the command to run;
2. ``clawplane login --kubernetes NS notes --no-browser`` prints the authorization URL, Chromium
   signs in and consents, and the tokens land in Secret ``clawplane-oauth-notes``; the operator,
   woken by that Secret, discovers the server's two tools with them;
3. once the access token expired, the next probe (a spec change) refreshes it and writes the
   new tokens back to the Secret;
4. ``clawplane logout --kubernetes`` revokes both tokens and deletes the Secret;

and no token is in the operator's log, the namespace's Events, the McpServer's status or any
ConfigMap, nor in the commands' output.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.browser.test_oauth_login_browser import (
    CHROMIUM,
    TTL,
    WAIT_S,
    _wait_inactive,
    login_in_chromium,
)
from tests.compat.conftest import require_oracle
from tests.compat.kubernetes.conftest import admin, real_cluster  # noqa: F401  (the fixtures)
from tests.k8s.operator_run import ready_at, wait_for
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube
from tests.k8s.real.operator_cluster import API, real_operator_cluster
from tests.support.oidc import oidc_provider, protected_server

assert CHROMIUM
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
ROOT = Path(__file__).resolve().parents[2]
SECRET = "clawplane-oauth-notes"


def _cli(*args: str | Path, outputs: list[str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", *map(str, args)],
        capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, env={**os.environ, "NO_COLOR": "1"}, check=False,
    )  # fmt: skip
    outputs.append(proc.stdout + proc.stderr)
    return proc


def _tokens(admin: Kube, namespace: str) -> tuple[str, str] | None:  # noqa: F811
    """The (access, refresh) tokens in the login Secret."""
    found = admin.get("v1", "Secret", namespace, SECRET)
    if found is None:
        return None
    tokens = json.loads(base64.b64decode(found["data"]["tokens.json"]))
    return tokens["access_token"], tokens["refresh_token"]


def test_a_cluster_login_is_used_refreshed_and_revoked(
    real_cluster: RealCluster,  # noqa: F811
    admin: Kube,  # noqa: F811
    tmp_path: Path,
) -> None:
    require_oracle("oidc-provider")
    started = time.monotonic()
    outputs: list[str] = []
    kubeconfig = real_cluster.write_kubeconfig(
        tmp_path / "user.kubeconfig", real_cluster.admin_token, "admin"
    )
    with (
        oidc_provider(tmp_path, ttl=TTL) as issuer,
        protected_server(issuer, tmp_path) as url,
        real_operator_cluster(real_cluster, admin, tmp_path, kubelet=False) as cluster,
    ):
        ns = cluster.namespace
        spec = {"url": url, "transport": "streamable-http", "auth": "oauth"}
        admin.apply(
            {
                "apiVersion": API,
                "kind": "McpServer",
                "metadata": {"name": "notes", "namespace": ns},
                "spec": spec,
            }
        )

        # 1. Nobody logged in: waiting on a person, with the command to run; not a failure.
        before = wait_for(
            "notes LoginRequired",
            lambda: (
                (cluster.get("mcpservers", "notes") or {}).get("status", {}).get("phase") == "LoginRequired"
                and cluster.get("mcpservers", "notes")
            ),
        )
        ready = next(c for c in before["status"]["conditions"] if c["type"] == "Ready")
        assert f"run `clawplane login --kubernetes {ns} notes`" in ready["message"], ready

        # 2. The login, through the provider's pages in Chromium; the operator discovers the tools.
        code, _, printed, rest = login_in_chromium(
            "login", "--kubernetes", ns, "notes", "--kubeconfig", kubeconfig
        )
        outputs.append(printed + rest)
        assert code == 0, printed + rest
        assert "logged in to notes: 2 tools" in rest and f"Secret {ns}/{SECRET}" in rest, rest
        first = _tokens(admin, ns)
        assert first is not None and issuer.introspect(first[0])["active"] is True
        found = wait_for(
            "notes Ready with its tools", lambda: ready_at(cluster.get("mcpservers", "notes"), 1)
        )
        assert found["status"]["toolCount"] == 2, found["status"]

        # 3. Expired: the next probe refreshes and writes the new tokens back to the Secret.
        _wait_inactive(issuer, first[0])
        admin.apply({"apiVersion": API, "kind": "McpServer", "metadata": {"name": "notes", "namespace": ns},
                     "spec": {**spec, "requestTimeoutMs": 30000}})  # fmt: skip
        again = wait_for(
            "notes Ready at generation 2", lambda: ready_at(cluster.get("mcpservers", "notes"), 2)
        )
        assert again["status"]["toolCount"] == 2, again["status"]
        second = wait_for(
            "the refreshed tokens in the Secret", lambda: (t := _tokens(admin, ns)) and t[0] != first[0] and t
        )
        assert issuer.introspect(second[0])["active"] is True

        # 4. logout revokes both tokens at the provider and deletes the Secret.
        done = _cli("logout", "--kubernetes", ns, "notes", "--kubeconfig", kubeconfig, outputs=outputs)
        assert done.returncode == 0 and "tokens revoked" in done.stdout, done.stdout + done.stderr
        assert admin.get("v1", "Secret", ns, SECRET) is None
        assert issuer.introspect(second[1])["active"] is False

        # What the API server holds besides the Secret: status, Events, ConfigMaps.
        held = [
            json.dumps(cluster.get("mcpservers", "notes")),
            json.dumps(admin.list("v1", "Event", ns)),
            json.dumps(admin.list("events.k8s.io/v1", "Event", ns)),
            json.dumps(admin.list("v1", "ConfigMap", ns)),
        ]
    log = cluster.op.log
    canaries = {t for pair in (first, second) for t in pair}
    assert "notes" in log  # the log is the operator's, and it is there
    for where, text in (
        ("the operator's log", log),
        *(("the API server", h) for h in held),
        *(("output", o) for o in outputs),
    ):
        leaked = [t for t in canaries if t in text]
        assert not leaked, f"a token is in {where}"
    print(f"cluster login life: {time.monotonic() - started:.1f}s")
