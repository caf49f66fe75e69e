"""Skills a gateway pod can read: the files of every skill in an agent's prompt, in a ConfigMap.

The operator writes inline Skill resources under ``<skills mount path>/<namespace>/inline-skills``
(its own emptyDir at the same path the gateway pod mounts), so the ``<location>`` of every skill
in a prompt is a path that exists in the gateway pod once it mounts the ConfigMap
``clawplane-skills-<gateway>`` there. ``skills-volume.json`` in the gateway ConfigMap is the
ready-made ``volumes``/``volumeMounts`` entry (ConfigMap keys cannot hold ``/``, so ``items``
map each key back to its path).

Published per skill: every regular file of its folder (``SKILL.md`` and whatever it references),
at most ``MAX_FILES`` files of ``MAX_FILE_BYTES`` each, and the ConfigMap stays below the 1 MiB
object limit; symlinks are not followed. A skill outside the mount path (e.g. a Gateway
``load.extraDirs`` on the operator's disk) cannot be published: it is named in ``left_out``.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawplane.k8s.objects.children import Owner, config_map, dns_label
from clawplane.skills import AgentSnapshot

MAX_FILES = 64
MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 900_000
VOLUME = "clawplane-skills"
SKILLS_LABEL = "clawplane.dev/skills"


def skills_config_map_name(gateway: str) -> str:
    """The ConfigMap with the skill files the gateway's agents use."""
    return dns_label("clawplane-skills", gateway)


@dataclass
class SkillFiles:
    """The files to publish, by path relative to the namespace's skills folder."""

    files: dict[str, bytes] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)
    """Why skills or files were not published (a sentence each)."""


def collect(snapshots: dict[str, AgentSnapshot], root: Path) -> SkillFiles:
    """Every file of every skill in a prompt that lives under ``root`` (bounded, see the module)."""
    out = SkillFiles()
    folders: dict[str, str] = {}
    for snapshot in snapshots.values():
        for skill in snapshot.skills:
            if skill.in_prompt:
                folders.setdefault(skill.base_dir, skill.name)
    total = 0
    for folder, name in sorted(folders.items()):
        base = Path(folder)
        try:
            rel_base = base.relative_to(root)
        except ValueError:
            out.left_out.append(f"skill {name} ({folder}) is outside {root}; declare it as a Skill resource")
            continue
        count = 0
        for path in _files(base):
            rel = str(rel_base / path.relative_to(base))
            size = path.stat().st_size
            if count >= MAX_FILES or size > MAX_FILE_BYTES or total + size > MAX_TOTAL_BYTES:
                out.left_out.append(f"skill {name}: {rel} ({size} bytes) is over the published limits")
                continue
            out.files[rel] = path.read_bytes()
            total += size
            count += 1
    return out


def _files(base: Path) -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if name.startswith(".") or not stat.S_ISREG(path.lstat().st_mode):
                continue
            found.append(path)
    return found


def _key(rel: str) -> str:
    """A ConfigMap key for a path: readable, within the key alphabet, unique by a hash."""
    digest = hashlib.sha256(rel.encode()).hexdigest()[:10]
    readable = re.sub(r"[^-._a-zA-Z0-9]+", "_", rel.replace("/", "."))[:200].strip("._") or "f"
    return f"{readable}-{digest}"


def skills_config_map(
    name: str, namespace: str, published: SkillFiles, *, owner: Owner
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The ConfigMap (text in ``data``, anything else in ``binaryData``) and its volume ``items``."""
    data: dict[str, str] = {}
    binary: dict[str, str] = {}
    items: list[dict[str, str]] = []
    for rel, content in sorted(published.files.items()):
        key = _key(rel)
        try:
            data[key] = content.decode("utf-8")
        except UnicodeDecodeError:
            binary[key] = base64.b64encode(content).decode()
        items.append({"key": key, "path": rel})
    cm = config_map(name, namespace, data, owner=owner, labels={SKILLS_LABEL: name}, binary=binary)
    return cm, items


def volume_json(config_map_name: str, items: list[dict[str, str]], mount_path: str) -> dict[str, Any]:
    """The gateway pod's ``volumes`` and ``volumeMounts`` entries for the published skills."""
    return {
        "volumes": [{"name": VOLUME, "configMap": {"name": config_map_name, "items": items}}],
        "volumeMounts": [{"name": VOLUME, "mountPath": mount_path, "readOnly": True}],
    }
