"""Rendered outputs → ConfigMaps: per Agent (snapshot, prompt, tools, Codex and client configs), per Gateway.

The engine renders files into the namespace's out dir exactly as it does locally; this
module groups them per owner, converges the ConfigMaps (level-based: an edited one is written
back, a foreign one of the same name is a Conflict on its would-be owner) and deletes
clawplane's ConfigMaps that no owner wants any more.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawplane.k8s.api.kubeapi import CONFIGMAPS
from clawplane.k8s.objects.children import (
    AGENT_LABEL,
    GATEWAY_LABEL,
    TOKEN_KEY,
    Owner,
    config_map,
    dns_label,
    token_secret_name,
)
from clawplane.k8s.objects.converge import ChildProblem, ChildWriter
from clawplane.k8s.objects.skillfiles import (
    SKILLS_LABEL,
    SkillFiles,
    skills_config_map,
    skills_config_map_name,
    volume_json,
)
from clawplane.render.secretvalues import Substituted, secret_env_name
from clawplane.state import OPENCLAW

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
    out_dir: Path,
    namespace: str,
    *,
    agents: dict[str, Owner],
    gateway: Owner | None,
    skills: SkillFiles | None = None,
    skills_mount: str = "",
) -> dict[str, tuple[Owner, dict[str, Any]]]:
    """Every ConfigMap the out dir implies, by name, with its owner.

    ``skills`` are the files published for the gateway pod, mounted at ``skills_mount``.
    """
    wanted: dict[str, tuple[Owner, dict[str, Any]]] = {}
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
        wanted[name] = (owner, config_map(name, namespace, data, owner=owner, labels=labels))
    openclaw = out_dir / "openclaw.json"
    if gateway is not None and openclaw.exists():
        name = gateway_config_map_name(gateway.name)
        data = {"openclaw.json": openclaw.read_text(encoding="utf-8")}
        env = _secret_env(out_dir, data["openclaw.json"])
        if env:  # the gateway pod's `env` entries for the Secret keys openclaw.json uses
            data["secret-env.json"] = json.dumps(env, indent=2, sort_keys=True) + "\n"
        if skills is not None and skills.files:
            skills_name = skills_config_map_name(gateway.name)
            skills_cm, items = skills_config_map(skills_name, namespace, skills, owner=gateway)
            wanted[skills_name] = (gateway, skills_cm)
            volume = volume_json(skills_name, items, skills_mount)
            data["skills-volume.json"] = json.dumps(volume, indent=2, sort_keys=True) + "\n"
        cm = config_map(name, namespace, data, owner=gateway, labels={GATEWAY_LABEL: name})
        wanted[name] = (gateway, cm)
    return wanted


@dataclass
class Published:
    """What one sync of the ConfigMaps did: names written or deleted, and per-owner problems."""

    changed: list[str] = field(default_factory=list)
    problems: dict[str, ChildProblem] = field(default_factory=dict)
    """``Kind/name`` of the owner → why its ConfigMap could not be written."""


async def sync_config_maps(
    writer: ChildWriter,
    wanted: dict[str, tuple[Owner, dict[str, Any]]],
    *,
    frozen: set[str] | frozenset[str] = frozenset(),
    last_good: dict[str, tuple[Owner, dict[str, Any]]] | None = None,
) -> Published:
    """Converge every wanted ConfigMap; delete clawplane's ConfigMaps that no owner wants any more.

    A ``frozen`` ConfigMap (its owner, or a resource its content comes from, lost a reference)
    keeps what it holds: it is neither rewritten nor deleted, and if it was deleted it comes
    back as last published (``last_good``, which every successful write updates).
    """
    out = Published()
    existing = await writer.existing(CONFIGMAPS)
    by_name = {cm["metadata"]["name"]: cm for cm in existing}
    published = last_good if last_good is not None else {}
    for name in sorted(frozen):
        if name not in by_name and name in published:
            wanted[name] = published[name]
        else:
            wanted.pop(name, None)
    # Skill files first: the gateway ConfigMap's skills-volume.json must never name a missing one.
    order = sorted(wanted.items(), key=lambda kv: (SKILLS_LABEL not in kv[1][1]["metadata"]["labels"], kv[0]))
    for name, (owner, cm) in order:
        current = by_name.get(name)
        before = (current or {}).get("metadata", {}).get("resourceVersion")
        try:
            stored = await writer.converge(CONFIGMAPS, cm, current, owner)
        except ChildProblem as problem:
            out.problems[f"{owner.kind}/{owner.name}"] = problem
            await writer.rejected_event(owner, problem)
            continue
        if stored.get("metadata", {}).get("resourceVersion") != before:
            out.changed.append(name)
        published[name] = (owner, cm)
    for name, cm in sorted(by_name.items()):
        labels = cm["metadata"].get("labels") or {}
        previous = _owner_of(cm)
        ours = previous is not None and any(k in labels for k in (AGENT_LABEL, GATEWAY_LABEL, SKILLS_LABEL))
        gone = name not in wanted and name not in frozen and previous is not None and ours
        if gone and previous is not None and await writer.delete(CONFIGMAPS, name, previous):
            out.changed.append(f"-{name}")
    return out


def _owner_of(cm: dict[str, Any]) -> Owner | None:
    """The clawplane resource a managed ConfigMap belongs to (from its controller reference)."""
    for ref in cm["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and str(ref.get("apiVersion", "")).startswith("clawplane.dev/"):
            return Owner(str(ref.get("kind")), str(ref.get("name")), str(ref.get("uid")))
    return None


def gateway_auth_header(consumer: str, server: str) -> str | None:
    """The ``Authorization`` header a hosted server's entry sends: the gateway's env copy of its token.

    Only openclaw.json (the gateway) gets one; other consumers' configs carry none in a cluster.
    """
    if consumer != OPENCLAW:
        return None
    return Substituted(f"Bearer ${{{_token_env(server)}}}")


def _token_env(server: str) -> str:
    return secret_env_name(token_secret_name(server), TOKEN_KEY)


def _secret_env(out_dir: Path, openclaw: str) -> list[dict[str, Any]]:
    """The renderer's Secret env entries, plus the bridge tokens the rendered headers name."""
    path = out_dir / "gateway-secret-env.json"
    env: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    names = {e["name"] for e in env}
    for server, entry in sorted(((json.loads(openclaw).get("mcp") or {}).get("servers") or {}).items()):
        wanted = _token_env(server)
        header = str((entry.get("headers") or {}).get("Authorization", ""))
        if wanted in header and wanted not in names:
            ref = {"name": token_secret_name(server), "key": TOKEN_KEY}
            env.append({"name": wanted, "valueFrom": {"secretKeyRef": ref}})
    return sorted(env, key=lambda e: str(e["name"]))


def _fit(data: dict[str, str], name: str) -> None:
    """Drop the bulkiest files (with a note) until the data fits: an oversized ConfigMap fails every pass."""
    for key in LARGEST_FIRST:
        size = sum(len(v.encode("utf-8")) for v in data.values())
        if size <= MAX_DATA_BYTES or key not in data:
            continue
        dropped = len(data.pop(key).encode("utf-8"))
        data[f"{key}.omitted"] = f"{key} ({dropped} bytes) does not fit in ConfigMap {name} (1 MiB limit)\n"
        log.warning("ConfigMap %s: %s left out (%d bytes, over the 1 MiB limit)", name, key, dropped)
