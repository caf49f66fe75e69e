"""Leases: validation, ported from kubernetes/kubernetes ``pkg/apis/coordination/validation/validation.go``
(``ValidateLeaseSpec``; the name is a DNS subdomain, the default)."""

from __future__ import annotations

from typing import Any

from tests.k8s.rules import fielderrors as fe
from tests.k8s.rules.fielderrors import FieldError

JSON = dict[str, Any]
STRATEGIES = ["OldestEmulationVersion"]


def validate_lease(lease: JSON) -> list[FieldError]:
    """``ValidateLeaseSpec``: positive duration, non-negative transitions, preferredHolder needs a strategy."""
    spec = lease.get("spec") or {}
    errs = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and duration <= 0:
        errs.append(fe.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and transitions < 0:
        errs.append(fe.invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    strategy = spec.get("strategy")
    if strategy is not None and strategy not in STRATEGIES:
        errs.append(fe.not_supported("spec.strategy", strategy, STRATEGIES))
    if spec.get("preferredHolder") and not strategy:
        errs.append(fe.forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
    return errs
