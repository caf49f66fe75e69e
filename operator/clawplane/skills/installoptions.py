"""Install options as ``skills check --json`` shows them (OpenClaw's ``normalizeInstallOptions``).

A skill whose ``os`` excludes this platform offers none. Of the specs for this
platform, downloads are all listed when they are the only kind; otherwise one
preferred spec is: brew when preferred and installed, else uv, node, brew when
installed, go, download, brew, the first. Labels follow OpenClaw's wording.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clawplane._utils.fastinit import fast_init
from clawplane.jscompat import js_trim
from clawplane.skills.install import InstallSpec

__all__ = ["InstallOption", "install_options"]


@fast_init
@dataclass(frozen=True, slots=True)
class InstallOption:
    """One install choice as ``skills check --json`` shows it."""

    id: str
    kind: str
    label: str
    bins: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{id, kind, label, bins}``."""
        return {"id": self.id, "kind": self.kind, "label": self.label, "bins": list(self.bins)}


def install_options(
    specs: tuple[InstallSpec, ...],
    skill_os: tuple[str, ...],
    platform: str,
    *,
    prefer_brew: bool,
    node_manager: str,
    has_bin: Callable[[str], bool],
) -> tuple[InstallOption, ...]:
    """OpenClaw's ``normalizeInstallOptions``: the preferred option (or every download)."""
    if skill_os and platform not in skill_os:
        return ()
    usable = [s for s in specs if not s.os or platform in s.os]
    if not usable:
        return ()
    if all(s.kind == "download" for s in usable):
        return tuple(_option(s, i, node_manager) for i, s in enumerate(specs) if any(s is u for u in usable))
    preferred = _preferred(usable, prefer_brew, has_bin)
    index = next(i for i, spec in enumerate(specs) if spec is preferred)
    return (_option(preferred, index, node_manager),)


def _preferred(specs: list[InstallSpec], prefer_brew: bool, has_bin: Callable[[str], bool]) -> InstallSpec:
    first: dict[str, InstallSpec] = {}
    for spec in specs:
        first.setdefault(spec.kind, spec)
    brew = first.get("brew")
    brew_ready = brew if brew is not None and has_bin("brew") else None
    order = (
        brew_ready if prefer_brew else None,
        first.get("uv"),
        first.get("node"),
        brew_ready,
        first.get("go"),
        first.get("download"),
        brew,
    )
    return next((choice for choice in order if choice is not None), specs[0])


def _option(spec: InstallSpec, index: int, node_manager: str) -> InstallOption:
    label = js_trim(spec.label or "")
    if spec.kind == "node" and spec.package:
        label = f"Install {spec.package} ({node_manager})"
    if not label:
        label = _default_label(spec)
    return InstallOption(
        id=js_trim(spec.id or f"{spec.kind}-{index}"), kind=spec.kind, label=label, bins=spec.bins
    )


def _default_label(spec: InstallSpec) -> str:
    if spec.kind == "brew" and spec.formula:
        return f"Install {spec.formula} (brew)"
    if spec.kind == "go" and spec.module:
        return f"Install {spec.module} (go)"
    if spec.kind == "uv" and spec.package:
        return f"Install {spec.package} (uv)"
    if spec.kind == "download" and spec.url:
        url = js_trim(spec.url)
        last = url.split("/")[-1]
        return f"Download {last or url}"
    return "Run installer"
