"""The ValidatingWebhookConfiguration the operator keeps pointing at its webhook.

Only creates and updates of clawplane's own kinds are sent (deletes never: a webhook must not
stand between a user and removing an object). ``failurePolicy`` is ``Ignore`` unless asked
otherwise: with the operator down, objects are still admitted with the CRDs' schema and CEL
rules, and the operator reports any other problem as ``Invalid`` once it is back, so a GitOps
sync never stalls on the operator's availability. ``Fail`` makes the operator a gate instead.
"""

from __future__ import annotations

import re
from typing import Any

from clawplane.k8s.admission.settings import Target
from clawplane.k8s.api.kubeapi import Kind, KubeApi
from clawplane.models import KINDS

WEBHOOKS = Kind(
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration"
)
WEBHOOK_NAME = "validate.clawplane.dev"
POLICIES = ("Ignore", "Fail")


_REQUIREMENT = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<absent>[\w./-]+)"
    r"|(?P<key>[\w./-]+)\s*(?:(?P<op>==|!=|=)\s*(?P<value>[\w.-]*)"
    r"|\s+(?P<set>in|notin)\s*\((?P<values>[^)]*)\))?)\s*(?:,|$)"
)


def label_selector(text: str) -> dict[str, Any]:
    """A label selector string (``k=v,k2 in (a,b),!k3``) as a LabelSelector object."""
    labels: dict[str, str] = {}
    expressions: list[dict[str, Any]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        found = _REQUIREMENT.match(text, pos)
        if found is None or found.end() == pos:
            raise ValueError(f"cannot read the label selector {text!r} at {text[pos:]!r}")
        pos = found.end()
        if found["absent"]:
            expressions.append({"key": found["absent"], "operator": "DoesNotExist"})
        elif found["op"] in ("=", "=="):
            labels[found["key"]] = found["value"]
        elif found["op"] == "!=":
            expressions.append({"key": found["key"], "operator": "NotIn", "values": [found["value"]]})
        elif found["set"]:
            values = [v.strip() for v in found["values"].split(",") if v.strip()]
            operator = "In" if found["set"] == "in" else "NotIn"
            expressions.append({"key": found["key"], "operator": operator, "values": values})
        else:
            expressions.append({"key": found["key"], "operator": "Exists"})
    selector: dict[str, Any] = {}
    if labels:
        selector["matchLabels"] = labels
    if expressions:
        selector["matchExpressions"] = expressions
    return selector


def namespace_selector(namespaces: tuple[str, ...], selector: str | None) -> dict[str, Any]:
    """Which namespaces' objects are sent: the watched ones, the shard's, or all (``{}``)."""
    if selector:
        return label_selector(selector)
    if namespaces:
        names = sorted(namespaces)
        return {
            "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": names}]
        }
    return {}


def configuration(
    name: str,
    target: Target,
    ca_bundle: bytes,
    *,
    failure_policy: str = "Ignore",
    timeout_seconds: int = 5,
    namespaces: tuple[str, ...] = (),
    selector: str | None = None,
) -> dict[str, Any]:
    """The whole ValidatingWebhookConfiguration object."""
    plurals = sorted(cls.PLURAL for cls in KINDS.values())
    return {
        "apiVersion": f"{WEBHOOKS.group}/{WEBHOOKS.version}",
        "kind": WEBHOOKS.kind,
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "clawplane-operator"}},
        "webhooks": [
            {
                "name": WEBHOOK_NAME,
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": failure_policy,
                "timeoutSeconds": timeout_seconds,
                "matchPolicy": "Equivalent",
                "namespaceSelector": namespace_selector(namespaces, selector),
                "rules": [
                    {
                        "apiGroups": ["clawplane.dev"],
                        "apiVersions": ["*"],
                        "resources": plurals,
                        "operations": ["CREATE", "UPDATE"],
                        "scope": "Namespaced",
                    }
                ],
                "clientConfig": target.client_config(ca_bundle),
            }
        ],
    }


def _holds(current: Any, wanted: Any) -> bool:
    """Whether ``current`` says everything ``wanted`` says (the API server adds defaults of its own)."""
    if isinstance(wanted, dict) and not wanted:
        return not current
    if isinstance(wanted, dict):
        return isinstance(current, dict) and all(_holds(current.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return (
            isinstance(current, list)
            and len(current) == len(wanted)
            and all(_holds(c, w) for c, w in zip(current, wanted, strict=True))
        )
    return bool(current == wanted)


async def register(api: KubeApi, wanted: dict[str, Any]) -> None:
    """Create the configuration, or replace what it says with ``wanted`` (other labels are kept)."""

    def mutate(current: dict[str, Any] | None) -> dict[str, Any] | None:
        if current is None:
            return dict(wanted)
        labels = current["metadata"].get("labels") or {}
        if _holds(current.get("webhooks"), wanted["webhooks"]) and _holds(
            labels, wanted["metadata"]["labels"]
        ):
            return None
        body = dict(wanted)
        body["metadata"] = {
            **wanted["metadata"],
            "labels": {**(current["metadata"].get("labels") or {}), **wanted["metadata"]["labels"]},
        }
        return body

    await api.update(WEBHOOKS, "", wanted["metadata"]["name"], mutate)
