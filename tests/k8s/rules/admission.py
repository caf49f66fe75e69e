"""The write path of one object: decode, default, validate, in the API server's order.

``Admission.admit`` is called by the emulator for every create and update (main endpoint
or ``/status``, dry runs included) and raises ``Rejected`` with the Status the real server
would answer; it returns the warnings to send back. Built-in kinds use the rules of the
other modules here; custom resources are pruned, defaulted and validated against their
CRD's schema (apiextensions-apiserver ``pkg/registry/customresource``); a kind with no
rules at all is refused, so nothing is stored unchecked.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.k8s.rules import apps, coordination, core, crd, decode, meta, names, policy
from tests.k8s.rules import fielderrors as fe
from tests.k8s.rules.fielderrors import FieldError
from tests.k8s.rules.structural import apply_defaults, prune, prune_nulls
from tests.k8s.rules.values import validate_value

JSON = dict[str, Any]
Check = Callable[[JSON], list[FieldError]]
CheckUpdate = Callable[[JSON, JSON], list[FieldError]]


class Rejected(Exception):
    """The write is refused; ``status`` is the Status body to answer with."""

    def __init__(self, code: int, reason: str, message: str, status: JSON | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.body = status


@dataclass(frozen=True)
class Kind:
    """The rules of one built-in kind."""

    name_fn: Callable[[str, bool], list[str]] = names.name_is_dns_subdomain
    default: Callable[[JSON, JSON | None], None] | None = None
    validate: Check | None = None
    validate_update: CheckUpdate | None = None
    validate_status: Check | None = None
    unconditional_update: bool = True
    """PUT without a resourceVersion overwrites (true for most built-ins, never for custom resources)."""


def _no_old(fn: Callable[[JSON], None]) -> Callable[[JSON, JSON | None], None]:
    return lambda obj, _old: fn(obj)


_RBAC_NAME = names.is_path_segment_name
BUILTINS: dict[tuple[str, str], Kind] = {
    ("", "Namespace"): Kind(names.name_is_dns_label, _no_old(core.default_namespace)),
    ("", "ConfigMap"): Kind(validate=core.validate_config_map, validate_update=core.validate_config_map_update),
    ("", "Secret"): Kind(
        default=_no_old(core.default_secret), validate=core.validate_secret, validate_update=core.validate_secret_update
    ),
    ("", "Service"): Kind(
        names.name_is_dns1035_label, core.default_service, core.validate_service, core.validate_service_update
    ),
    ("", "ServiceAccount"): Kind(),
    ("", "Pod"): Kind(default=lambda pod, _old: apps.default_template(pod)),
    ("", "Event"): Kind(),
    ("events.k8s.io", "Event"): Kind(validate=core.validate_event, validate_update=core.validate_event_update),
    ("apps", "Deployment"): Kind(
        default=_no_old(apps.default_deployment),
        validate=apps.validate_deployment,
        validate_update=apps.validate_deployment_update,
        validate_status=apps.validate_deployment_status,
    ),
    ("networking.k8s.io", "NetworkPolicy"): Kind(
        default=_no_old(apps.default_network_policy), validate=apps.validate_network_policy
    ),
    ("rbac.authorization.k8s.io", "ClusterRole"): Kind(lambda n, p: _RBAC_NAME(n), validate=apps.validate_role),
    ("rbac.authorization.k8s.io", "Role"): Kind(lambda n, p: _RBAC_NAME(n), validate=apps.validate_role),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): Kind(
        lambda n, p: _RBAC_NAME(n), validate=apps.validate_binding, validate_update=apps.validate_binding_update
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): Kind(
        lambda n, p: _RBAC_NAME(n), validate=apps.validate_binding, validate_update=apps.validate_binding_update
    ),
    ("coordination.k8s.io", "Lease"): Kind(validate=coordination.validate_lease),
    ("policy", "PodDisruptionBudget"): Kind(validate=policy.validate_pod_disruption_budget),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): Kind(
        validate=crd.validate_crd, validate_update=crd.validate_crd_update
    ),
}


@dataclass(frozen=True)
class Write:
    """One write as the emulator sees it."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    subresource: str | None
    field_validation: str
    schema: JSON | None = None
    """A custom resource's ``openAPIV3Schema`` (None for built-ins)."""

    @property
    def qualified(self) -> str:
        """``Kind.group`` as Status messages name it (``Kind`` for the core group)."""
        return f"{self.kind}.{self.group}" if self.group else self.kind


def _invalid(w: Write, name: str, errors: list[FieldError]) -> Rejected:
    status = fe.invalid_status(w.qualified, w.kind, name, errors)
    return Rejected(422, "Invalid", status["message"], status)


def admit(w: Write, obj: JSON, old: JSON | None) -> list[str]:
    """Decode, default and validate ``obj`` (``old`` on updates); raise ``Rejected``; return warnings."""
    name = (obj.get("metadata") or {}).get("name") or ""
    warnings = _decode(w, obj)
    errors: list[FieldError] = []
    if w.schema is not None:
        errors = _custom(w, obj, old)
    else:
        rules = BUILTINS.get((w.group, w.kind))
        if rules is None:
            raise Rejected(501, "NotImplemented", f"the emulator has no write rules for {w.qualified}; add them")
        if rules.default is not None and w.subresource is None:
            rules.default(obj, old)
        errors = _builtin(w, rules, obj, old)
    if errors:
        raise _invalid(w, name, errors)
    return warnings


def _decode(w: Write, obj: JSON) -> list[str]:
    where = f'{w.kind} in version "{w.version}" cannot be handled as a {w.kind}'
    if w.schema is None:
        try:
            return decode.check(obj, field_validation=w.field_validation)
        except decode.DecodeError as exc:
            raise Rejected(400, "BadRequest", str(exc)) from None
    unknown = prune(obj, w.schema, resource_root=True)
    if unknown and w.field_validation == "Strict":
        detail = ", ".join(f'unknown field "{p}"' for p in unknown)
        raise Rejected(400, "BadRequest", f"{where}: strict decoding error: {detail}")
    prune_nulls(obj, w.schema)
    apply_defaults(obj, w.schema)
    return [] if w.field_validation == "Ignore" else [f'unknown field "{p}"' for p in unknown]


def _meta_errors(w: Write, rules_name: Callable[[str, bool], list[str]], obj: JSON, old: JSON | None) -> list[FieldError]:
    m = obj.get("metadata") or {}
    if old is None:
        return meta.validate_create(m, namespaced=w.namespaced, name_fn=rules_name)
    return meta.validate_update(m, old.get("metadata") or {})


def _builtin(w: Write, rules: Kind, obj: JSON, old: JSON | None) -> list[FieldError]:
    errors = _meta_errors(w, rules.name_fn, obj, old)
    if w.subresource == "status":
        return errors + (rules.validate_status(obj) if rules.validate_status else [])
    if old is not None and rules.validate_update is not None:
        return errors + rules.validate_update(obj, old)
    return errors + (rules.validate(obj) if rules.validate else [])


def _custom(w: Write, obj: JSON, old: JSON | None) -> list[FieldError]:
    """``customResourceValidator``: type meta, metadata, the schema (status alone on /status)."""
    assert w.schema is not None
    errors: list[FieldError] = []
    if obj.get("kind") != w.kind:
        errors.append(fe.invalid("kind", obj.get("kind") or "", f"must be {w.kind}"))
    api_version = f"{w.group}/{w.version}"
    if obj.get("apiVersion") != api_version:
        errors.append(fe.invalid("apiVersion", obj.get("apiVersion") or "", f"must be {api_version}"))
    if errors:
        return errors
    errors += _meta_errors(w, names.name_is_dns_subdomain, obj, old)
    if w.subresource == "status":
        status_schema = (w.schema.get("properties") or {}).get("status")
        if "status" in obj and status_schema is not None:
            errors += validate_value(obj["status"], status_schema, "status")
        return errors
    body = copy.deepcopy(obj)
    body.pop("metadata", None)
    schema = {k: v for k, v in w.schema.items() if k != "properties"}
    schema["properties"] = {k: v for k, v in (w.schema.get("properties") or {}).items() if k != "metadata"}
    return errors + validate_value(body, schema)


def served_schema(crd_obj: JSON, version: str) -> JSON | None:
    """The ``openAPIV3Schema`` of one served version of a CRD."""
    for v in (crd_obj.get("spec") or {}).get("versions") or []:
        if v.get("name") == version and v.get("served", True):
            schema = (v.get("schema") or {}).get("openAPIV3Schema")
            return dict(schema) if isinstance(schema, dict) else None
    return None
