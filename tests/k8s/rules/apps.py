"""Deployments, NetworkPolicies and RBAC objects: defaults, validation, immutable fields.

Ported from kubernetes/kubernetes ``pkg/apis/apps/v1/defaults.go`` (``SetDefaults_Deployment``),
``pkg/apis/apps/validation/validation.go`` (``ValidateDeploymentSpec``,
``ValidateDeploymentUpdate``: ``spec.selector`` is immutable in apps/v1),
``pkg/apis/networking/validation`` (``ValidateNetworkPolicy``) and ``pkg/apis/rbac/validation``.
"""

from __future__ import annotations

from typing import Any

from tests.k8s.rules import fielderrors as fe
from tests.k8s.rules import names
from tests.k8s.rules.fielderrors import FieldError
from tests.k8s.rules.meta import validate_labels
from tests.k8s.rules.pods import default_template, validate_template
from tests.k8s.selectors import SelectorError, label_selector_matcher

JSON = dict[str, Any]


# --- Deployment --------------------------------------------------------------------------------


def default_deployment(dep: JSON) -> None:
    """``SetDefaults_Deployment`` plus the pod template's defaults."""
    spec = dep.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    default_template(spec.setdefault("template", {}))
    dep.setdefault("status", {})


def label_selector(selector: Any, path: str) -> list[FieldError]:
    """``ValidateLabelSelector``."""
    errs = validate_labels((selector or {}).get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate((selector or {}).get("matchExpressions") or []):
        here = f"{path}.matchExpressions[{i}]"
        op = expr.get("operator") or ""
        values = expr.get("values") or []
        if op in ("In", "NotIn") and not values:
            errs.append(fe.required(f"{here}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(fe.forbidden(f"{here}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        elif op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            errs.append(fe.invalid(f"{here}.operator", op, "not a valid selector operator"))
        errs += fe.each(f"{here}.key", expr.get("key") or "", names.is_qualified_name(expr.get("key") or ""))
    return errs


def percent_or_int(value: Any, path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``."""
    if isinstance(value, str):
        return fe.each(path, value, names.is_percent(value))
    if isinstance(value, int) and value < 0:
        return [fe.invalid(path, value, "must be greater than or equal to 0")]
    return []


def number(value: Any) -> int:
    """The integer of an int-or-percent (``"25%"`` → 25)."""
    return int(str(value).rstrip("%")) if value is not None else 0


def validate_deployment(dep: JSON) -> list[FieldError]:
    """``ValidateDeploymentSpec``: replicas, selector (non-empty, matching the template), strategy."""
    spec = dep.get("spec") or {}
    errs: list[FieldError] = []
    if int(spec.get("replicas") or 0) < 0:
        errs.append(fe.invalid("spec.replicas", spec["replicas"], "must be greater than or equal to 0"))
    selector = spec.get("selector")
    template = spec.get("template") or {}
    if selector is None:
        errs.append(fe.required("spec.selector"))
    else:
        errs += label_selector(selector, "spec.selector")
        if not (selector.get("matchLabels") or selector.get("matchExpressions")):
            errs.append(fe.invalid("spec.selector", selector, "empty selector is invalid for deployment"))
        else:
            try:
                matches = label_selector_matcher(selector)
            except SelectorError:
                errs.append(fe.invalid("spec.selector", selector, "invalid label selector"))
            else:
                labels = (template.get("metadata") or {}).get("labels") or {}
                if not matches(labels):
                    errs.append(
                        fe.invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`")
                    )
    errs += validate_template(template, "spec.template")
    policy = (template.get("spec") or {}).get("restartPolicy")
    if policy != "Always":
        errs.append(fe.not_supported("spec.template.spec.restartPolicy", policy or "", ["Always"]))
    if (template.get("spec") or {}).get("activeDeadlineSeconds") is not None:
        errs.append(fe.forbidden("spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in ReplicaSet is not Supported"))
    strategy = spec.get("strategy") or {}
    stype = strategy.get("type") or ""
    if stype == "Recreate" and strategy.get("rollingUpdate") is not None:
        errs.append(fe.forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"))
    elif stype == "RollingUpdate":
        rolling = strategy.get("rollingUpdate") or {}
        errs += percent_or_int(rolling.get("maxUnavailable"), "spec.strategy.rollingUpdate.maxUnavailable")
        errs += percent_or_int(rolling.get("maxSurge"), "spec.strategy.rollingUpdate.maxSurge")
        if number(rolling.get("maxUnavailable")) == 0 and number(rolling.get("maxSurge")) == 0:
            errs.append(
                fe.invalid("spec.strategy.rollingUpdate.maxUnavailable", rolling.get("maxUnavailable"), "may not be 0 when `maxSurge` is 0")
            )
    elif stype not in ("Recreate", "RollingUpdate"):
        errs.append(fe.not_supported("spec.strategy", strategy, ["Recreate", "RollingUpdate"]))
    for key in ("minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"):
        if spec.get(key) is not None and int(spec[key]) < 0:
            errs.append(fe.invalid(f"spec.{key}", spec[key], "must be greater than or equal to 0"))
    deadline = spec.get("progressDeadlineSeconds")
    if deadline is not None and deadline <= int(spec.get("minReadySeconds") or 0):
        errs.append(fe.invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
    return errs


def validate_deployment_update(new: JSON, old: JSON) -> list[FieldError]:
    """``ValidateDeploymentUpdate``: the spec rules, and the selector never changes (apps/v1)."""
    errs = validate_deployment(new)
    before, after = (old.get("spec") or {}).get("selector"), (new.get("spec") or {}).get("selector")
    if before != after:
        errs.append(fe.immutable("spec.selector", after))
    return errs


def validate_deployment_status(dep: JSON) -> list[FieldError]:
    """``ValidateDeploymentStatus``: counts are non-negative and consistent."""
    status = dep.get("status") or {}
    errs: list[FieldError] = []
    for key in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas", "observedGeneration"):
        if int(status.get(key) or 0) < 0:
            errs.append(fe.invalid(f"status.{key}", status[key], "must be greater than or equal to 0"))
    replicas = int(status.get("replicas") or 0)
    for key in ("updatedReplicas", "availableReplicas"):
        if int(status.get(key) or 0) > replicas:
            errs.append(fe.invalid(f"status.{key}", status[key], "cannot be greater than status.replicas"))
    if int(status.get("readyReplicas") or 0) > replicas:
        errs.append(fe.invalid("status.readyReplicas", status["readyReplicas"], "cannot be greater than status.replicas"))
    if int(status.get("availableReplicas") or 0) > int(status.get("readyReplicas") or 0):
        errs.append(fe.invalid("status.availableReplicas", status["availableReplicas"], "cannot be greater than readyReplicas"))
    return errs


# --- NetworkPolicy -----------------------------------------------------------------------------


def default_network_policy(np: JSON) -> None:
    """``SetDefaults_NetworkPolicy``: policy types from the rules given; port protocol TCP."""
    spec = np.setdefault("spec", {})
    if not spec.get("policyTypes"):
        types = ["Ingress"]
        if spec.get("egress"):
            types.append("Egress")
        spec["policyTypes"] = types
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction) or []:
            for port in rule.get("ports") or []:
                port.setdefault("protocol", "TCP")


def validate_network_policy(np: JSON) -> list[FieldError]:
    """``ValidateNetworkPolicySpec``."""
    spec = np.get("spec") or {}
    errs = label_selector(spec.get("podSelector") or {}, "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or []):
            for j, port in enumerate(rule.get("ports") or []):
                here = f"spec.{direction}[{i}].ports[{j}]"
                if port.get("protocol") not in ("TCP", "UDP", "SCTP"):
                    errs.append(fe.not_supported(f"{here}.protocol", port.get("protocol"), ["SCTP", "TCP", "UDP"]))
                value = port.get("port")
                if isinstance(value, int):
                    errs += fe.each(f"{here}.port", value, names.is_port_number(value))
                elif isinstance(value, str):
                    errs += fe.each(f"{here}.port", value, names.is_port_name(value))
            for j, peer in enumerate(rule.get(peers) or []):
                here = f"spec.{direction}[{i}].{peers}[{j}]"
                given = [k for k in ("podSelector", "namespaceSelector", "ipBlock") if peer.get(k) is not None]
                if not given:
                    errs.append(fe.required(here, "must specify a peer"))
                elif "ipBlock" in given and len(given) > 1:
                    errs.append(fe.forbidden(here, "may not specify both ipBlock and another peer"))
                for key in ("podSelector", "namespaceSelector"):
                    if peer.get(key) is not None:
                        errs += label_selector(peer[key], f"{here}.{key}")
    for i, ptype in enumerate(spec.get("policyTypes") or []):
        if ptype not in ("Ingress", "Egress"):
            errs.append(fe.not_supported(f"spec.policyTypes[{i}]", ptype, ["Egress", "Ingress"]))
    return errs


# --- RBAC --------------------------------------------------------------------------------------


def validate_role(role: JSON) -> list[FieldError]:
    """``ValidateRole``/``ValidateClusterRole``: every rule has verbs, resource rules have groups."""
    errs: list[FieldError] = []
    for i, rule in enumerate(role.get("rules") or []):
        here = f"rules[{i}]"
        if not rule.get("verbs"):
            errs.append(fe.required(f"{here}.verbs", "verbs must contain at least one value"))
        if rule.get("nonResourceURLs"):
            if role.get("kind") == "Role":
                errs.append(fe.invalid(f"{here}.nonResourceURLs", rule["nonResourceURLs"], "namespaced rules cannot apply to non-resource URLs"))
            continue
        if not rule.get("apiGroups"):
            errs.append(fe.required(f"{here}.apiGroups", "resource rules must supply at least one api group"))
        if not rule.get("resources"):
            errs.append(fe.required(f"{here}.resources", "resource rules must supply at least one resource"))
    return errs


def validate_binding(binding: JSON) -> list[FieldError]:
    """``ValidateRoleBinding``/``ValidateClusterRoleBinding``."""
    errs: list[FieldError] = []
    ref = binding.get("roleRef") or {}
    if ref.get("apiGroup") != "rbac.authorization.k8s.io":
        errs.append(fe.not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", ["rbac.authorization.k8s.io"]))
    allowed = ["ClusterRole"] if binding.get("kind") == "ClusterRoleBinding" else ["ClusterRole", "Role"]
    if ref.get("kind") not in allowed:
        errs.append(fe.not_supported("roleRef.kind", ref.get("kind") or "", allowed))
    if not ref.get("name"):
        errs.append(fe.required("roleRef.name"))
    for i, subject in enumerate(binding.get("subjects") or []):
        here = f"subjects[{i}]"
        if not subject.get("name"):
            errs.append(fe.required(f"{here}.name"))
        kind = subject.get("kind")
        if kind == "ServiceAccount":
            if subject.get("apiGroup"):
                errs.append(fe.not_supported(f"{here}.apiGroup", subject["apiGroup"], [""]))
            if not subject.get("namespace") and binding.get("kind") == "ClusterRoleBinding":
                errs.append(fe.required(f"{here}.namespace"))
        elif kind not in ("User", "Group"):
            errs.append(fe.not_supported(f"{here}.kind", kind or "", ["Group", "ServiceAccount", "User"]))
    return errs


def validate_binding_update(new: JSON, old: JSON) -> list[FieldError]:
    """A binding's ``roleRef`` can never change."""
    errs = validate_binding(new)
    if new.get("roleRef") != old.get("roleRef"):
        errs.append(fe.invalid("roleRef", new.get("roleRef"), "cannot change roleRef"))
    return errs
