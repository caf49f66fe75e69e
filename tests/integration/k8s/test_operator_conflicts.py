"""Conflicts injected into the operator's writes: the one operator test a real API server cannot host.

The rest of the operator's end-to-end tests run on the real API server
(tests/compat/kubernetes/test_operator_real.py and its neighbours); the emulator's
``inject_conflicts`` answers writes with 409 on purpose, which a real server has no switch for.
"""

from __future__ import annotations

from tests.k8s.cluster import (
    SERVER_PY,
    Cluster,
    apply_all,
    secret,
    server,
)


def test_conflicts_are_retried(cluster: Cluster) -> None:
    apply_all(cluster, secret("x"), server())
    cluster.ready("notes")
    cluster.emu.inject_conflicts("deployments", 2, verbs=("PUT",))
    cluster.emu.inject_conflicts("mcpservers", 2, verbs=("PATCH",))
    cluster.patch_spec("mcpservers", "notes", {"args": [str(SERVER_PY), "--name", "v2"]})
    cluster.ready("notes", generation=2)
    dep = cluster.get("deployments", "mcp-notes")
    assert dep is not None and dep["spec"]["template"]["spec"]["containers"][0]["command"][-1] == "v2"
