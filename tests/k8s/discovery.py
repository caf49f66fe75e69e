"""Discovery documents for the emulator: kmock's, with deterministic order and core ``groupVersion: v1``.

kmock 0.8 answers ``/api/v1`` with ``groupVersion: "/v1"`` (kubectl then cannot map core kinds) and
picks a group's preferred version from a set (random with several versions). The mixin overrides the
handlers kmock registers for ``/api/v1``, ``/apis`` and ``/apis/GROUP[/VERSION]``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import kmock
from kmock._internal import rendering

JSON = dict[str, Any]
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def _version_rank(version: str) -> tuple[int, int, int]:
    """Kubernetes version priority: GA before beta before alpha, higher numbers first."""
    m = re.match(r"^v(\d+)(?:(alpha|beta)(\d+))?$", version)
    if not m:
        return (3, 0, 0)
    stage = {"alpha": 2, "beta": 1}.get(m.group(2) or "", 0)
    return (stage, -int(m.group(1)), -int(m.group(3) or 0))


class DiscoveryMixin:
    """Discovery handlers; mixed into a ``kmock.KubernetesScaffold`` subclass (uses ``self.resources``)."""

    resources: kmock.ResourcesArray

    def _get_resources(self) -> list[kmock.resource]:
        # Only what is declared: objects of an unregistered kind must not resurrect it.
        return [res for res in self.resources if isinstance(res, kmock.resource)]

    def _group_versions(self) -> dict[str, list[str]]:
        groups: dict[str, set[str]] = defaultdict(set)
        for res in self.resources:
            if res.group and res.version:
                groups[res.group].add(res.version)
        return {g: sorted(vs, key=_version_rank) for g, vs in sorted(groups.items())}

    @staticmethod
    def _group_doc(group: str, versions: list[str]) -> JSON:
        listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": listed, "preferredVersion": listed[0]}

    async def _serve_apis(self, request: rendering.Request) -> rendering.Payload:
        groups = [self._group_doc(g, vs) for g, vs in self._group_versions().items()]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    async def _serve_group(self, request: rendering.Request) -> rendering.Payload:
        assert request.resource is not None
        versions = self._group_versions().get(str(request.resource.group))
        if not versions:
            raise kmock.KubernetesResourceNotFoundError()
        return {
            "kind": "APIGroup",
            "apiVersion": "v1",
            **self._group_doc(str(request.resource.group), versions),
        }

    async def _serve_version(self, request: rendering.Request) -> rendering.Payload:
        assert request.resource is not None
        group, version = request.resource.group, request.resource.version
        found = sorted(
            (r for r in self.resources if r.group == group and r.version == version),
            key=lambda r: str(r.plural),
        )
        if not found and group != "":
            raise kmock.KubernetesResourceNotFoundError()
        entries = [entry for res in found for entry in self._discovery_entries(res)]
        group_version = f"{group}/{version}" if group else str(version)
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": group_version,
            "resources": entries,
        }

    def _discovery_entries(self, res: kmock.resource) -> list[JSON]:
        info = self.resources[res]
        kind = info.kind or str(res.plural).capitalize()
        main = {
            "name": res.plural,
            "singularName": info.singular or str(res.plural),
            "namespaced": bool(info.namespaced),
            "kind": kind,
            "verbs": sorted(info.verbs or ALL_VERBS),
            "shortNames": sorted(info.shortnames),
            "categories": sorted(info.categories),
        }
        subs = [
            {
                "name": f"{res.plural}/{sub}",
                "singularName": "",
                "namespaced": bool(info.namespaced),
                "kind": kind,
                "verbs": ["get", "patch", "update"],
            }
            for sub in sorted(info.subresources)
        ]
        return [main, *subs]
