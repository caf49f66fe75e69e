"""CustomResourceDefinitions in the emulator: acceptance status and the kinds a CRD serves."""

from __future__ import annotations

from typing import Any

import kmock
from tests.k8s.discovery import ALL_VERBS
from tests.k8s.objects import now_rfc3339

JSON = dict[str, Any]
CRD_RESOURCE = kmock.resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
_CONDITIONS = (("NamesAccepted", "NoConflicts"), ("Established", "InitialNamesAccepted"))


def establish(crd: JSON) -> None:
    """Set the status the real server reaches a moment after creation (``kubectl wait`` needs it)."""
    status = crd.setdefault("status", {})
    conditions = {c.get("type"): c for c in status.get("conditions") or []}
    for ctype, reason in _CONDITIONS:
        if (conditions.get(ctype) or {}).get("status") != "True":
            conditions[ctype] = {
                "type": ctype,
                "status": "True",
                "reason": reason,
                "message": "",
                "lastTransitionTime": now_rfc3339(),
            }
    status["conditions"] = list(conditions.values())
    spec = crd.get("spec") or {}
    status["acceptedNames"] = spec.get("names") or {}
    status["storedVersions"] = [v["name"] for v in spec.get("versions") or [] if v.get("storage")]


def served_kinds(crd: JSON) -> dict[kmock.resource, kmock.ResourceInfo]:
    """Discovery entries for every served version of a CRD."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    kinds: dict[kmock.resource, kmock.ResourceInfo] = {}
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        res = kmock.resource(spec.get("group", ""), version["name"], names.get("plural"))
        kinds[res] = kmock.ResourceInfo(
            kind=names.get("kind"),
            singular=names.get("singular") or str(names.get("kind", "")).lower(),
            namespaced=spec.get("scope", "Namespaced") == "Namespaced",
            shortnames=names.get("shortNames") or [],
            categories=names.get("categories") or [],
            verbs=ALL_VERBS,
            subresources=set((version.get("subresources") or {}).keys()),
        )
    return kinds
