"""Argo CD resource health checks for every clawplane kind, as argocd-cm keys.

Argo CD reads custom health checks from its ``argocd-cm`` ConfigMap under
``resource.customizations.health.<group>_<Kind>``; without one it shows a custom resource as
Healthy whatever its status says. One Lua script (``data/argocd-health.lua``) maps the
conditions clawplane writes to Argo CD's health states and serves every kind in ``KINDS``, so
a new kind gets its check when ``clawplane schema`` runs.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from clawplane.models import API_GROUP, KINDS

__all__ = ["health_checks", "health_key", "health_lua"]


@cache
def health_lua() -> str:
    """The health check script."""
    script = resources.files("clawplane.schema").joinpath("data", "argocd-health.lua")
    return script.read_text(encoding="utf-8")


def health_key(kind: str) -> str:
    """The argocd-cm key of ``kind``'s health check."""
    return f"resource.customizations.health.{API_GROUP}_{kind}"


def health_checks() -> dict[str, str]:
    """argocd-cm data: one key per kind, each holding the script."""
    return {health_key(kind): health_lua() for kind in sorted(KINDS)}
