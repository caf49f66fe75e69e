"""ObjectMeta on create and update (k8s.io/apimachinery ``pkg/api/validation/objectmeta.go``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.k8s.rules import fielderrors as fe
from tests.k8s.rules import names
from tests.k8s.rules.fielderrors import FieldError

JSON = dict[str, Any]
NameFn = Callable[[str, bool], list[str]]
ANNOTATIONS_LIMIT = 256 * 1024
_GV = re.compile(r"^(?:[a-z0-9.-]+/)?v[0-9a-z]+$")


def validate_labels(labels: Any, path: str) -> list[FieldError]:
    """``ValidateLabels``: qualified keys, label values."""
    errs: list[FieldError] = []
    for key, value in (labels or {}).items():
        errs += fe.each(path, key, names.is_qualified_name(key))
        errs += fe.each(path, value, names.is_label_value(str(value)))
    return errs


def validate_annotations(annotations: Any, path: str) -> list[FieldError]:
    """``ValidateAnnotations``: qualified keys (lower-cased), 256 KiB in total."""
    errs: list[FieldError] = []
    total = 0
    for key, value in (annotations or {}).items():
        errs += fe.each(path, key, names.is_qualified_name(key.lower()))
        total += len(key.encode()) + len(str(value).encode())
    if total > ANNOTATIONS_LIMIT:
        errs.append(fe.too_long(path, ANNOTATIONS_LIMIT))
    return errs


def validate_owner_references(refs: Any, path: str) -> list[FieldError]:
    """``ValidateOwnerReferences``: every field set, at most one controller."""
    errs: list[FieldError] = []
    controller = ""
    for i, ref in enumerate(refs or []):
        here = f"{path}[{i}]"
        api_version = ref.get("apiVersion") or ""
        if not api_version:
            errs.append(fe.required(f"{here}.apiVersion", "must not be empty"))
        elif not _GV.match(api_version):
            errs.append(fe.invalid(f"{here}.apiVersion", api_version, "must be <group>/<version> or <version>"))
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                errs.append(fe.required(f"{here}.{key}", "must not be empty"))
        if api_version == "v1" and ref.get("kind") == "Event":
            errs.append(fe.invalid(here, ref, "/v1, Kind=Event is disallowed from being an owner"))
        if ref.get("controller"):
            name = f"{ref.get('kind')}/{ref.get('name')}"
            if controller:
                errs.append(
                    fe.invalid(
                        path,
                        refs,
                        f'Only one reference can have Controller set to true. Found "true" in references for {controller} and {name}',
                    )
                )
            else:
                controller = name
    return errs


def validate_finalizers(finalizers: Any, path: str) -> list[FieldError]:
    """``ValidateFinalizers``."""
    errs: list[FieldError] = []
    for value in finalizers or []:
        errs += fe.each(path, value, names.is_qualified_name(value))
    if {"orphan", "foregroundDeletion"} <= set(finalizers or []):
        errs.append(fe.invalid(path, finalizers, "finalizer orphan and foregroundDeletion cannot be both set"))
    return errs


def _common(meta: JSON, namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            errs.append(fe.required("metadata.namespace"))
        else:
            errs += fe.each("metadata.namespace", namespace, names.is_dns1123_label(namespace))
    elif namespace:
        errs.append(fe.forbidden("metadata.namespace", "not allowed on this type"))
    if int(meta.get("generation") or 0) < 0:
        errs.append(fe.invalid("metadata.generation", meta["generation"], "must be greater than or equal to 0"))
    errs += validate_labels(meta.get("labels"), "metadata.labels")
    errs += validate_annotations(meta.get("annotations"), "metadata.annotations")
    errs += validate_owner_references(meta.get("ownerReferences"), "metadata.ownerReferences")
    errs += validate_finalizers(meta.get("finalizers"), "metadata.finalizers")
    return errs


def validate_create(meta: JSON, *, namespaced: bool, name_fn: NameFn) -> list[FieldError]:
    """``ValidateObjectMeta``."""
    errs: list[FieldError] = []
    if meta.get("generateName"):
        errs += fe.each("metadata.generateName", meta["generateName"], name_fn(meta["generateName"], True))
    name = meta.get("name") or ""
    if not name:
        errs.append(fe.required("metadata.name", "name or generateName is required"))
    else:
        errs += fe.each("metadata.name", name, name_fn(name, False))
    return errs + _common(meta, namespaced)


def validate_update(new: JSON, old: JSON) -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: identity fields are immutable, no new finalizers while deleting."""
    errs: list[FieldError] = []
    if old.get("deletionTimestamp"):
        extra = sorted(set(new.get("finalizers") or []) - set(old.get("finalizers") or []))
        if extra:
            shown = "[]string{" + ", ".join(f'"{f}"' for f in extra) + "}"
            errs.append(
                fe.forbidden(
                    "metadata.finalizers",
                    f"no new finalizers can be added if the object is being deleted, found new finalizers {shown}",
                )
            )
    if not new.get("resourceVersion"):
        errs.append(fe.invalid("metadata.resourceVersion", "", "must be specified for an update"))
    if int(new.get("generation") or 0) < int(old.get("generation") or 0):
        errs.append(fe.invalid("metadata.generation", new.get("generation"), "must not be decremented"))
    for key in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        if new.get(key) != old.get(key):
            errs.append(fe.immutable(f"metadata.{key}", new.get(key) if new.get(key) is not None else ""))
    errs += validate_labels(new.get("labels"), "metadata.labels")
    errs += validate_annotations(new.get("annotations"), "metadata.annotations")
    errs += validate_owner_references(new.get("ownerReferences"), "metadata.ownerReferences")
    return errs
