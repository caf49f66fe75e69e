"""PodDisruptionBudgets: validation, ported from kubernetes/kubernetes ``pkg/apis/policy/validation/validation.go``
(``ValidatePodDisruptionBudgetSpec``, with ``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``
of ``pkg/apis/apps/validation``)."""

from __future__ import annotations

from typing import Any

from tests.k8s.rules import apps
from tests.k8s.rules import fielderrors as fe
from tests.k8s.rules.fielderrors import FieldError

JSON = dict[str, Any]
EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]


def validate_pod_disruption_budget(pdb: JSON) -> list[FieldError]:
    """``ValidatePodDisruptionBudgetSpec``."""
    spec = pdb.get("spec") or {}
    errs = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(
            fe.invalid(
                "spec",
                fe.Raw("policy.PodDisruptionBudgetSpec{...}"),
                "minAvailable and maxUnavailable cannot be both set",
            )
        )
    for key in ("minAvailable", "maxUnavailable"):
        value = spec.get(key)
        if value is None:
            continue
        errs += apps.percent_or_int(value, f"spec.{key}")
        if isinstance(value, str) and value.endswith("%") and apps.number(value) > 100:
            errs.append(fe.invalid(f"spec.{key}", value, "must not be greater than 100%"))
    if spec.get("selector") is not None:
        errs += apps.label_selector(spec["selector"], "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in EVICTION_POLICIES:
        errs.append(fe.not_supported("spec.unhealthyPodEvictionPolicy", policy, EVICTION_POLICIES))
    return errs
