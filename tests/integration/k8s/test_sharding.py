"""Two ``clawplane k8s run --namespace-selector`` processes split the namespaces of one emulator.

Each process has a token of its own, so the emulator's write log tells which one wrote what.
Shard ``a`` takes namespaces labelled ``clawplane.dev/shard=a``, shard ``b`` those labelled ``b``;
an unlabelled namespace belongs to neither.
"""

from __future__ import annotations

from typing import Any

from tests.integration.k8s.test_leader_election import STARTUP_TIMEOUT, start
from tests.k8s.emulator import EmulatorThread
from tests.k8s.operator_run import is_true, until, wait_for

from clawplane.k8s.operator import finalizer

__all__ = ["start"]  # the fixture, shared with the leader election tests

SHARD = "clawplane.dev/shard"
NAMESPACES = {"team-a": "a", "team-b": "b", "team-c": None}


def namespace(name: str, shard: str | None) -> dict[str, Any]:
    labels = {SHARD: shard} if shard else {}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def server(ns: str, *args: str) -> dict[str, Any]:
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": "files", "namespace": ns},
        "spec": {"transport": "stdio", "command": "npx", "args": ["-y", "files-server", *args]},
    }


def programmed(emulator: EmulatorThread, ns: str) -> bool:
    return is_true(emulator.get("mcpservers", ns, "files"), "Programmed")


def command(emulator: EmulatorThread, ns: str) -> list[str]:
    dep = emulator.get("deployments", ns, "mcp-files") or {}
    containers = ((dep.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or [{}]
    return list(containers[0].get("command") or [])


def namespaces_written(emulator: EmulatorThread, token: str, *, since: int = 0) -> set[str]:
    return {
        w.namespace or "" for w in emulator.write_log()[since:] if w.user == token and w.plural != "leases"
    }


def writes_in(
    emulator: EmulatorThread, token: str, ns: str, *, since: int
) -> list[tuple[str, str, str | None]]:
    return [
        (w.verb, w.plural, w.name)
        for w in emulator.write_log()[since:]
        if w.user == token and w.namespace == ns
    ]


def finalizers_of(emulator: EmulatorThread, ns: str) -> list[str]:
    return list(
        ((emulator.get("mcpservers", ns, "files") or {}).get("metadata") or {}).get("finalizers") or []
    )


def test_two_shards_split_the_namespaces_and_a_relabelled_namespace_moves(
    emulator: EmulatorThread, start: Any
) -> None:
    for name, shard in NAMESPACES.items():
        emulator.apply_object(namespace(name, shard))
        emulator.apply_object(server(name))
    a = start("shard-a", "--namespace-selector", f"{SHARD}=a", "--leader-election-id", "clawplane-shard-a")
    b = start("shard-b", "--namespace-selector", f"{SHARD}=b", "--leader-election-id", "clawplane-shard-b")
    until(
        emulator,
        "both shards programmed theirs",
        lambda: programmed(emulator, "team-a") and programmed(emulator, "team-b"),
        timeout=STARTUP_TIMEOUT,
    )
    wait_for(
        "both lead their own Lease",
        lambda: a.readyz() == b.readyz() == "ready (leader)",
        timeout=STARTUP_TIMEOUT,
    )
    # Each shard wrote in its namespace only; the unlabelled one is nobody's.
    assert namespaces_written(emulator, "shard-a") == {"team-a"}
    assert namespaces_written(emulator, "shard-b") == {"team-b"}
    assert emulator.get("deployments", "team-c", "mcp-files") is None and not programmed(emulator, "team-c")
    finalizers = {
        ns: (emulator.get("mcpservers", ns, "files") or {})["metadata"].get("finalizers") for ns in NAMESPACES
    }
    assert finalizers["team-c"] in (None, []), (
        "no shard holds a finalizer on a resource it does not reconcile"
    )

    # team-b moves to shard a: a change made after the move is a's to apply, and b writes there no more.
    mark = len(emulator.write_log())
    emulator.apply_object(namespace("team-b", "a"))
    emulator.apply_object(server("team-b", "--after-the-move"))
    until(
        emulator,
        "shard a applied the change in team-b",
        lambda: "--after-the-move" in command(emulator, "team-b"),
        timeout=STARTUP_TIMEOUT,
    )
    assert "team-b" in namespaces_written(emulator, "shard-a", since=mark)
    # b's one write there: kopf taking b's finalizer off (each shard has its own), so a's alone holds it.
    assert writes_in(emulator, "shard-b", "team-b", since=mark) == [("PATCH", "mcpservers", "files")]
    until(
        emulator,
        "only shard a's finalizer",
        lambda: finalizers_of(emulator, "team-b") == [finalizer(f"{SHARD}=a")],
    )
    # Moving it back hands it back; team-a stays a's throughout.
    mark = len(emulator.write_log())
    emulator.apply_object(namespace("team-b", "b"))
    emulator.apply_object(server("team-b", "--back-again"))
    until(
        emulator,
        "shard b applied the change in team-b",
        lambda: "--back-again" in command(emulator, "team-b"),
        timeout=STARTUP_TIMEOUT,
    )
    assert namespaces_written(emulator, "shard-b", since=mark) == {"team-b"}
    for op in (a, b):
        assert op.proc.poll() is None and "Traceback" not in op.output()


def test_a_malformed_selector_is_refused_with_the_api_servers_reason(
    emulator: EmulatorThread, start: Any
) -> None:
    bad = start("shard-bad", "--namespace-selector", "shard in (a", "--no-leader-elect")
    assert bad.proc.wait(timeout=STARTUP_TIMEOUT) != 0
    output = bad.output()
    assert "--namespace-selector" in output and "Traceback" not in output, output[-2000:]
