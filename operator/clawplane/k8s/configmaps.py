"""Rendered outputs → ConfigMaps: per Agent (snapshot, prompt, tools, Codex and client configs), per Gateway.

The engine renders files into the namespace's out dir exactly as it does locally; this
module groups them per owner, writes the ConfigMaps whose content changed and deletes
managed ConfigMaps that no longer have an owner.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from clawplane.k8s.children import (
    AGENT_LABEL,
    GATEWAY_LABEL,
    MANAGED_BY,
    Owner,
    config_map,
    dns_label,
    spec_hash,
)
from clawplane.k8s.converge import converge
from clawplane.k8s.kubeapi import CONFIGMAPS, KubeApi

log = logging.getLogger("clawplane.k8s")

AGENT_FILES = ("skills-prompt.txt", "snapshot.json", "tools.json")
MAX_DATA_BYTES = 900_000
"""Below the API server's 1 MiB object limit, with room for metadata."""
LARGEST_FIRST = ("snapshot.json", "tools.json")


def agent_config_map_name(agent: str) -> str:
    """The ConfigMap holding one agent's rendered files."""
    return dns_label("clawplane-agent", agent)


def gateway_config_map_name(gateway: str) -> str:
    """The ConfigMap holding the gateway's openclaw.json."""
    return dns_label("clawplane-gateway", gateway)


def wanted_config_maps(
    out_dir: Path, namespace: str, *, agents: dict[str, Owner], gateway: Owner | None
) -> dict[str, dict[str, Any]]:
    """Every ConfigMap the out dir implies, by name."""
    wanted: dict[str, dict[str, Any]] = {}
    for owner in agents.values():
        agent_id = owner.name.lower()
        base = out_dir / "agents" / agent_id
        data = {f: (base / f).read_text(encoding="utf-8") for f in AGENT_FILES if (base / f).exists()}
        codex = out_dir / "codex" / agent_id / "config.toml"
        if codex.exists():
            data["codex-config.toml"] = codex.read_text(encoding="utf-8")
        for client in sorted((out_dir / "clients").glob(f"*/{agent_id}/*")):
            # clients/<client>/<agent>/<file> → key client-<client>-<file> (keys allow [-._a-zA-Z0-9]).
            data[f"client-{client.parent.parent.name}-{client.name.lstrip('.')}"] = client.read_text(
                encoding="utf-8"
            )
        name = agent_config_map_name(owner.name)
        _fit(data, name)
        labels = {AGENT_LABEL: name}
        wanted[name] = config_map(name, namespace, data, owner=owner, labels=labels)
    openclaw = out_dir / "openclaw.json"
    if gateway is not None and openclaw.exists():
        name = gateway_config_map_name(gateway.name)
        data = {"openclaw.json": openclaw.read_text(encoding="utf-8")}
        secret_env = out_dir / "gateway-secret-env.json"
        if secret_env.exists():  # the gateway pod's `env` entries for the Secret keys openclaw.json uses
            data["secret-env.json"] = secret_env.read_text(encoding="utf-8")
        wanted[name] = config_map(name, namespace, data, owner=gateway, labels={GATEWAY_LABEL: name})
    return wanted


async def sync_config_maps(api: KubeApi, namespace: str, wanted: dict[str, dict[str, Any]]) -> list[str]:
    """Create, update or delete managed ConfigMaps; returns what was written or deleted."""
    changed: list[str] = []
    existing = await api.list(CONFIGMAPS, namespace, labels=_managed_selector())
    by_name = {cm["metadata"]["name"]: cm for cm in existing}
    for name, cm in sorted(wanted.items()):
        current = by_name.get(name)
        if current is None or spec_hash(current) != spec_hash(cm):
            await converge(api, CONFIGMAPS, namespace, cm, current)
            changed.append(name)
    for name, cm in sorted(by_name.items()):
        labels = cm["metadata"].get("labels") or {}
        owned = AGENT_LABEL in labels or GATEWAY_LABEL in labels
        if owned and name not in wanted:
            await api.delete(CONFIGMAPS, namespace, name)
            changed.append(f"-{name}")
    return changed


def _managed_selector() -> str:
    return ",".join(f"{k}={v}" for k, v in MANAGED_BY.items())


def _fit(data: dict[str, str], name: str) -> None:
    """Drop the bulkiest files (with a note) until the data fits: an oversized ConfigMap fails every pass."""
    for key in LARGEST_FIRST:
        size = sum(len(v.encode("utf-8")) for v in data.values())
        if size <= MAX_DATA_BYTES or key not in data:
            continue
        dropped = len(data.pop(key).encode("utf-8"))
        data[f"{key}.omitted"] = f"{key} ({dropped} bytes) does not fit in ConfigMap {name} (1 MiB limit)\n"
        log.warning("ConfigMap %s: %s left out (%d bytes, over the 1 MiB limit)", name, key, dropped)
