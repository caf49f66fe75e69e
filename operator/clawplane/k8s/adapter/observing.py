"""The namespace Gateway's ``spec.observability`` carried to every bridge pod, and what cannot be.

Each pass reads the Gateway's spec in effect (its last accepted one while a newer is refused),
turns it into the bridge's flags and env (``objects.bridgeobserve``) and gives every hosted stdio
server a digest of them and of the Secret values their headers reference: the digest is folded
into the servers' config hashes, so a change of the traces, the audit settings or a header's
Secret rolls the pods and nothing else does. A header a pod cannot carry is reported on the
Gateway — ``ResolvedRefs=False`` with reason ``UnsupportedInCluster`` and a Warning Event, each
saying what to write instead — never silently dropped.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from pydantic import ValidationError

from clawplane.k8s.adapter.materialize import key_of
from clawplane.k8s.objects.bridgeobserve import BridgeObservability, bridge_observability
from clawplane.k8s.objects.children import Owner
from clawplane.k8s.objects.events import EventRecorder
from clawplane.k8s.objects.secretrefs import SecretReader
from clawplane.models import Hosting, Observability
from clawplane.reconcile.conditions import Cond, merge

__all__ = ["UNSUPPORTED", "noted", "of_pass"]

log = logging.getLogger("clawplane.k8s")
UNSUPPORTED = "UnsupportedInCluster"


async def of_pass(
    live: list[dict[str, Any]],
    secrets: SecretReader,
    in_effect: dict[str, dict[str, Any]],
    events: EventRecorder | None = None,
) -> tuple[BridgeObservability, dict[str, str]]:
    """What bridge pods are given this pass, and the digest each hosted stdio server's hash folds in.

    A trace header the pods cannot send is a Warning Event on the Gateway (``events``; once per message).
    """
    gateways = sorted((cr for cr in live if cr["kind"] == "Gateway"), key=lambda cr: cr["metadata"]["name"])
    declared: dict[str, Any] = {}
    if gateways:
        spec = in_effect.get(key_of(gateways[0]), gateways[0].get("spec") or {})
        declared = spec.get("observability") or {}
    try:
        observability = Observability.model_validate(declared)
    except ValidationError:  # refused (and reported) with the rest of the Gateway; the defaults hold
        observability = Observability()
    found = bridge_observability(observability)
    if events is not None and gateways and found.problems:
        meta = gateways[0]["metadata"]
        owner = Owner("Gateway", meta["name"], meta.get("uid", ""))
        events.record(
            owner, reason=UNSUPPORTED, action="Reconcile", note="; ".join(found.problems), warning=True
        )
    secret_digest, _missing = await secrets.digest(declared)  # a missing one is the Gateway's own problem
    digest = hashlib.sha256(f"{found.digest}\0{secret_digest or ''}".encode()).hexdigest()[:16]
    hosted = [
        cr
        for cr in live
        if cr["kind"] == "McpServer" and _runs_in_a_pod(in_effect.get(key_of(cr), cr.get("spec")))
    ]
    return found, {key_of(cr): digest for cr in hosted}


def _runs_in_a_pod(spec: dict[str, Any] | None) -> bool:
    """An McpServer spec clawplane hosts as bridge pods (a stdio command it keeps running)."""
    if not isinstance(spec, dict) or not spec.get("command"):
        return False
    hosted = spec.get("hosting", Hosting.CLAWPLANE.value) == Hosting.CLAWPLANE.value
    return hosted and spec.get("enabled") is not False


def noted(status: dict[str, Any], cr: dict[str, Any], found: BridgeObservability) -> dict[str, Any]:
    """A Gateway's ``status`` with ``ResolvedRefs=False`` (``UnsupportedInCluster``) while bridge pods
    cannot send one of its trace headers; another unresolved reference, reported already, stays."""
    if cr["kind"] != "Gateway" or not found.problems:
        return status
    conditions = list(status.get("conditions") or ())
    if any(c.get("type") == "ResolvedRefs" and c.get("status") == "False" for c in conditions):
        return status
    message = "; ".join(found.problems)
    generation = int(status.get("observedGeneration") or cr["metadata"].get("generation") or 1)
    prior = [c for c in (cr.get("status") or {}).get("conditions") or () if c.get("type") == "ResolvedRefs"]
    fresh = merge(prior, [Cond("ResolvedRefs", False, UNSUPPORTED, message)], generation=generation)[0]
    kept = [c for c in conditions if c.get("type") != "ResolvedRefs"]
    return {**status, "conditions": [*kept, fresh], "message": message}
