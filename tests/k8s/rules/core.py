"""Core (``v1``) kinds and Events: defaults, validation, immutable fields.

Ported from kubernetes/kubernetes ``pkg/apis/core/validation/validation.go``
(``ValidateNamespace``, ``ValidateConfigMap``, ``ValidateSecret``, ``ValidateService``,
``ValidateServiceAccount`` and their updates), ``pkg/apis/core/validation/events.go``
(``ValidateEventCreate`` for ``events.k8s.io/v1``), ``pkg/registry/core/secret/strategy.go``
(``stringData`` folded into ``data``), ``pkg/registry/core/service/storage`` (cluster IP
allocation, kept on update when the client leaves it empty) and ``pkg/apis/core/v1/defaults.go``.
"""

from __future__ import annotations

import base64
import binascii
import itertools
from typing import Any

from tests.k8s.rules import fielderrors as fe
from tests.k8s.rules import names
from tests.k8s.rules.fielderrors import FieldError
from tests.k8s.rules.meta import validate_labels

JSON = dict[str, Any]
MAX_DATA_BYTES = 1024 * 1024
SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_IPS = itertools.count(10)


class BadRequestError(Exception):
    """A body the server cannot decode (400)."""


# --- Namespace ---------------------------------------------------------------------------------


def default_namespace(ns: JSON) -> None:
    """Finalizer ``kubernetes``, phase ``Active`` and the ``kubernetes.io/metadata.name`` label."""
    meta = ns.setdefault("metadata", {})
    meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name", "")
    ns.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    ns.setdefault("status", {}).setdefault("phase", "Active")


# --- ConfigMap and Secret ----------------------------------------------------------------------


def _keys(data: JSON, other: JSON, path: str, other_name: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in data:
        errs += fe.each(path, key, names.is_config_map_key(key))
        if key in other:
            errs.append(fe.invalid(path, key, f"duplicate of key present in {other_name}"))
    return errs


def validate_config_map(cm: JSON) -> list[FieldError]:
    """``ValidateConfigMap``: keys, no key in both data and binaryData, at most 1 MiB."""
    data, binary = cm.get("data") or {}, cm.get("binaryData") or {}
    errs = _keys(data, {}, "data", "") + _keys(binary, data, "binaryData", "data")
    size = sum(len(str(v).encode()) for v in data.values()) + sum(len(_b64(v)) for v in binary.values())
    if size > MAX_DATA_BYTES:
        errs.append(fe.FieldError("FieldValueTooLong", "", fe.OMIT, f"must have at most {MAX_DATA_BYTES} bytes"))
    return errs


def _b64(value: Any) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        raise BadRequestError("illegal base64 data") from None


def _immutable_data(new: JSON, old: JSON, keys: tuple[str, ...]) -> list[FieldError]:
    errs: list[FieldError] = []
    if old.get("immutable"):
        if not new.get("immutable"):
            errs.append(fe.forbidden("immutable", "field is immutable when `immutable` is set"))
        for key in keys:
            if (new.get(key) or {}) != (old.get(key) or {}):
                errs.append(fe.forbidden(key, "field is immutable when `immutable` is set"))
    return errs


def validate_config_map_update(new: JSON, old: JSON) -> list[FieldError]:
    """``ValidateConfigMapUpdate``: an immutable ConfigMap keeps its data."""
    return _immutable_data(new, old, ("data", "binaryData")) + validate_config_map(new)


def default_secret(secret: JSON) -> None:
    """Type ``Opaque``; ``stringData`` is write-only and lands in ``data``, base64-encoded."""
    secret.setdefault("type", "Opaque")
    string_data = secret.pop("stringData", None) or {}
    data = secret.setdefault("data", {}) if string_data or secret.get("data") is not None else None
    for key, value in string_data.items():
        assert data is not None
        data[key] = base64.b64encode(str(value).encode()).decode()
    for value in (secret.get("data") or {}).values():
        _b64(value)


def validate_secret(secret: JSON) -> list[FieldError]:
    """``ValidateSecret``: keys, total size, the keys each well-known type requires."""
    data = secret.get("data") or {}
    errs = _keys(data, {}, "data", "")
    if sum(len(_b64(v)) for v in data.values()) > MAX_DATA_BYTES:
        errs.append(fe.FieldError("FieldValueTooLong", "data", fe.OMIT, f"may not be more than {MAX_DATA_BYTES} bytes"))
    required = {
        "kubernetes.io/tls": ("tls.crt", "tls.key"),
        "kubernetes.io/basic-auth": (),
        "kubernetes.io/ssh-auth": ("ssh-privatekey",),
        "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    }.get(str(secret.get("type")), ())
    for key in required:
        if key not in data:
            errs.append(fe.required(f"data[{key}]"))
    return errs


def validate_secret_update(new: JSON, old: JSON) -> list[FieldError]:
    """``ValidateSecretUpdate``: type is immutable, so is an immutable Secret's data."""
    errs = _immutable_data(new, old, ("data",))
    if new.get("type") != old.get("type"):
        errs.append(fe.immutable("type", new.get("type")))
    return errs + validate_secret(new)


# --- Service -----------------------------------------------------------------------------------


def default_service(svc: JSON, old: JSON | None) -> None:
    """Type, session affinity, port protocols and target ports; a cluster IP, kept on update."""
    spec = svc.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))
    if spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer"):
        previous = ((old or {}).get("spec") or {}).get("clusterIP")
        if not spec.get("clusterIP"):
            spec["clusterIP"] = previous or f"10.96.{next(_IPS) % 250}.{next(_IPS) % 250 + 1}"
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    svc.setdefault("status", {}).setdefault("loadBalancer", {})


def validate_service(svc: JSON) -> list[FieldError]:
    """``ValidateService``: type, ports, target ports, selector."""
    spec = svc.get("spec") or {}
    errs: list[FieldError] = []
    stype = spec.get("type") or ""
    if stype not in SERVICE_TYPES:
        errs.append(fe.not_supported("spec.type", stype, SERVICE_TYPES))
    ports = spec.get("ports") or []
    if not ports and stype != "ExternalName":
        errs.append(fe.required("spec.ports"))
    seen: set[str] = set()
    for i, port in enumerate(ports):
        here = f"spec.ports[{i}]"
        name = port.get("name") or ""
        if len(ports) > 1 and not name:
            errs.append(fe.required(f"{here}.name"))
        elif name:
            errs += fe.each(f"{here}.name", name, names.is_dns1123_label(name))
            if name in seen:
                errs.append(fe.duplicate(f"{here}.name", name))
            seen.add(name)
        errs += fe.each(f"{here}.port", port.get("port"), names.is_port_number(int(port.get("port") or 0)))
        protocol = port.get("protocol") or ""
        if protocol not in ("SCTP", "TCP", "UDP"):
            errs.append(fe.not_supported(f"{here}.protocol", protocol, ["SCTP", "TCP", "UDP"]))
        target = port.get("targetPort")
        if isinstance(target, int):
            errs += fe.each(f"{here}.targetPort", target, names.is_port_number(target))
        elif isinstance(target, str):
            errs += fe.each(f"{here}.targetPort", target, names.is_port_name(target))
    errs += validate_labels(spec.get("selector"), "spec.selector")
    affinity = spec.get("sessionAffinity") or ""
    if affinity not in ("ClientIP", "None"):
        errs.append(fe.not_supported("spec.sessionAffinity", affinity, ["ClientIP", "None"]))
    return errs


def validate_service_update(new: JSON, old: JSON) -> list[FieldError]:
    """``ValidateServiceUpdate``: a cluster IP never changes once set."""
    errs = validate_service(new)
    before, after = (old.get("spec") or {}).get("clusterIP"), (new.get("spec") or {}).get("clusterIP")
    if before and after != before:
        errs.append(fe.immutable("spec.clusterIP", after or ""))
    return errs


# --- Events (events.k8s.io/v1, strict) --------------------------------------------------------


def validate_event(event: JSON) -> list[FieldError]:
    """``ValidateEventCreate`` for the ``events.k8s.io/v1`` API (the strict rules)."""
    errs: list[FieldError] = []
    namespace = (event.get("metadata") or {}).get("namespace") or ""
    regarding = event.get("regarding") or {}
    if not event.get("eventTime"):
        errs.append(fe.required("eventTime"))
    elif not regarding.get("namespace") and namespace not in ("default", "kube-system"):
        errs.append(fe.invalid("involvedObject.namespace", "", "does not match event.namespace"))
    elif regarding.get("namespace") and regarding.get("namespace") != namespace:
        errs.append(fe.invalid("involvedObject.namespace", regarding["namespace"], "does not match event.namespace"))
    controller = event.get("reportingController") or ""
    if not controller:
        errs.append(fe.required("reportingController"))
    errs += fe.each("reportingController", controller, names.is_qualified_name(controller) if controller else [])
    for key, limit in (("reportingInstance", 128), ("action", 128), ("reason", 128)):
        value = event.get(key) or ""
        if not value:
            errs.append(fe.required(key))
        if len(value) > limit:
            errs.append(fe.invalid(key, "", f"can have at most {limit} characters"))
    # Validation runs on the internal type, so paths name its fields (message, count, ...).
    if len(event.get("note") or "") > 1024:
        errs.append(fe.invalid("message", "", "can have at most 1024 characters"))
    if event.get("type") not in ("Normal", "Warning"):
        errs.append(fe.invalid("type", "", f"has invalid value: {event.get('type') or ''}"))
    for key, internal in (("deprecatedFirstTimestamp", "firstTimestamp"), ("deprecatedLastTimestamp", "lastTimestamp")):
        if event.get(key):
            errs.append(fe.invalid(internal, "", "needs to be unset"))
    if event.get("deprecatedCount"):
        errs.append(fe.invalid("count", "", "needs to be unset"))
    errs += fe.each("namespace", namespace, names.is_dns1123_subdomain(namespace))
    series = event.get("series")
    if isinstance(series, dict):
        if int(series.get("count") or 0) < 2:
            errs.append(fe.invalid("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            errs.append(fe.required("series.lastObservedTime"))
    return errs


def validate_event_update(new: JSON, old: JSON) -> list[FieldError]:
    """``ValidateEventUpdate``: only the series (and metadata) may change."""
    errs = validate_event(new) if new.get("series") != old.get("series") else []
    for key in ("regarding", "reason", "note", "type", "eventTime", "action", "related", "reportingController", "reportingInstance"):
        if new.get(key) != old.get(key):
            errs.append(fe.immutable(key, new.get(key)))
    return errs
