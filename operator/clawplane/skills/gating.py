"""Whether a skill may run here: OpenClaw's gating, in OpenClaw's order.

1. ``skills.entries.<skillKey>.enabled: false`` → disabled;
2. ``allowBundled`` (bundled and custodian skills only; key or name) → blocked;
3. ``os`` must list the platform (``always`` does not override it);
4. ``always: true`` → eligible without checking requirements;
5. ``requires.env``: set in the environment, in the entry's ``env``, or the
   ``primaryEnv`` with an ``apiKey`` configured;
6. ``requires.config``: dot paths truthy in the config (``browser.enabled`` and
   ``browser.evaluateEnabled`` default to true when unset);
7. ``requires.bins`` all on PATH, ``requires.anyBins`` at least one.

OpenClaw has two copies of step 3. ``skills list/check`` trim and lower-case the
OS names and accept ``macos`` for ``darwin``; the prompt path compares them
exactly. Both are computed: ``eligible`` follows the listing, ``prompt_eligible``
the prompt, so ``os: [Linux]`` is "eligible" yet absent from the prompt, as in
OpenClaw 2026.9.6.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clawplane._utils.fastinit import fast_init
from clawplane.jscompat import js_trim
from clawplane.skills.types import EntrySettings, Host, SkillRecord, SkillsSettings

__all__ = ["CONFIG_DEFAULTS", "Gate", "Requirement", "SkillGating"]

CONFIG_DEFAULTS: Mapping[str, bool] = {"browser.enabled": True, "browser.evaluateEnabled": True}
_BLOCKED_KEYS = frozenset({"__proto__", "prototype", "constructor"})
# Inherited members a JavaScript object lookup finds (functions, hence truthy).
_OBJECT_MEMBERS = frozenset(
    {
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "valueOf",
    }
)
_FUNCTION = object()
_MISSING = object()


@fast_init
@dataclass(frozen=True, slots=True)
class Requirement:
    """One requirement group: what the skill asks for and what is missing."""

    bins: tuple[str, ...] = ()
    any_bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    config: tuple[str, ...] = ()
    os: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, list[str]]:
        """OpenClaw's ``{bins, anyBins, env, config, os}``."""
        return {
            "bins": list(self.bins),
            "anyBins": list(self.any_bins),
            "env": list(self.env),
            "config": list(self.config),
            "os": list(self.os),
        }

    @property
    def empty(self) -> bool:
        """Nothing listed."""
        return not (self.bins or self.any_bins or self.env or self.config or self.os)


_NOTHING = Requirement()


@fast_init
@dataclass(frozen=True, slots=True)
class SkillGating:
    """The gating verdict for one skill."""

    disabled: bool
    blocked_by_allowlist: bool
    always: bool
    required: Requirement
    missing: Requirement
    config_checks: tuple[tuple[str, bool], ...]
    eligible: bool
    prompt_eligible: bool


class Gate:
    """Gating against one set of settings, config and host (PATH lookups memoized)."""

    def __init__(self, settings: SkillsSettings, config: Mapping[str, Any], host: Host) -> None:
        self.settings = settings
        self.config = config
        self.host = host
        allow = tuple(e for e in (js_trim(a) for a in settings.allow_bundled or ()) if e)
        self.allow_bundled = frozenset(allow) or None
        self._bins: dict[str, bool] = {}
        self._path_dirs = [part for part in host.path.split(os.pathsep) if part]

    def evaluate(self, record: SkillRecord) -> SkillGating:
        """Disabled, allowlist, OS and requirement checks for ``record``."""
        entry = self.settings.entries.get(record.skill_key)
        disabled = entry is not None and entry.enabled is False
        blocked = not self._bundled_allowed(record)
        manifest = record.manifest
        always = bool(manifest and manifest.always is True)
        requires = manifest.requires if manifest else None
        os_list = manifest.os if manifest else ()
        primary_env = manifest.primary_env if manifest else None
        # Most skills ask for little: shared empty groups and no generators for empty lists.
        if requires is None and not os_list:
            required = _NOTHING
        else:
            required = Requirement(
                bins=requires.bins if requires else (),
                any_bins=requires.any_bins if requires else (),
                env=requires.env if requires else (),
                config=requires.config if requires else (),
                os=os_list,
            )
        checks = (
            tuple((path, self.config_truthy(path)) for path in required.config) if required.config else ()
        )
        bins = tuple(b for b in required.bins if not self.has_bin(b)) if required.bins else ()
        any_bins = (
            ()
            if not required.any_bins or any(self.has_bin(b) for b in required.any_bins)
            else required.any_bins
        )
        env = (
            tuple(e for e in required.env if not self._env_ok(e, entry, primary_env)) if required.env else ()
        )
        config = tuple(path for path, ok in checks if not ok) if checks else ()
        os_listing_ok = not os_list or _normal_os(self.host.platform) in {_normal_os(o) for o in os_list}
        os_prompt_ok = not os_list or self.host.platform in os_list
        needs_nothing = not (bins or any_bins or env or config)
        requirements_ok = always or needs_nothing
        if os_listing_ok and (always or needs_nothing):
            missing = _NOTHING
        elif always:
            missing = Requirement(os=os_list)
        else:
            missing = Requirement(
                bins=bins, any_bins=any_bins, env=env, config=config, os=() if os_listing_ok else os_list
            )
        allowed = not disabled and not blocked
        return SkillGating(
            disabled=disabled,
            blocked_by_allowlist=blocked,
            always=always,
            required=required,
            missing=missing,
            config_checks=checks,
            eligible=allowed and os_listing_ok and requirements_ok,
            prompt_eligible=allowed and os_prompt_ok and requirements_ok,
        )

    def _bundled_allowed(self, record: SkillRecord) -> bool:
        if self.allow_bundled is None or not record.source.bundled:
            return True
        return record.skill_key in self.allow_bundled or record.name in self.allow_bundled

    def _env_ok(self, name: str, entry: EntrySettings | None, primary_env: str | None) -> bool:
        if js_trim(self.host.env.get(name, "")):
            return True
        if entry is not None and js_trim(entry.env.get(name, "")):
            return True
        return primary_env == name and entry is not None and entry.api_key_configured

    def probed(self) -> dict[str, bool]:
        """Every binary looked up so far and whether it was found."""
        return dict(self._bins)

    def preload(self, bins: Mapping[str, bool]) -> None:
        """Trust lookups already made in this pass (same PATH and cwd) instead of repeating them."""
        self._bins.update(bins)

    def has_bin(self, name: str) -> bool:
        """An executable (or searchable directory) of that name on PATH."""
        found = self._bins.get(name)
        if found is None:
            found = any(os.access(self._candidate(part, name), os.X_OK) for part in self._path_dirs)
            self._bins[name] = found
        return found

    def _candidate(self, part: str, name: str) -> str:
        # Node's path.join never lets an absolute name replace the directory.
        joined = posixpath.normpath(f"{part}/{name}")
        return joined if posixpath.isabs(joined) else posixpath.join(self.host.cwd, joined)

    def config_truthy(self, path: str) -> bool:
        """``requires.config``: the dot path's value is truthy (with OpenClaw's two defaults)."""
        parts = [p for p in path.split(".") if p]
        value = _resolve(self.config, parts)
        if value is _MISSING and not any(p in _BLOCKED_KEYS for p in parts) and path in CONFIG_DEFAULTS:
            return CONFIG_DEFAULTS[path]
        return _truthy(value)


def _normal_os(name: str) -> str:
    normalized = js_trim(name).lower()
    return "darwin" if normalized == "macos" else normalized


def _resolve(config: Any, parts: list[str]) -> Any:
    current: Any = config
    for part in parts:
        if part in _BLOCKED_KEYS:
            return _MISSING
        if isinstance(current, Mapping):
            current = current.get(part, _FUNCTION if part in _OBJECT_MEMBERS else _MISSING)
        elif isinstance(current, list):
            current = _list_member(current, part)
        else:
            return _MISSING
        if current is _MISSING:
            return _MISSING
    return current


def _list_member(items: list[Any], part: str) -> Any:
    if part == "length":
        return float(len(items))
    if part.isascii() and part.isdigit() and str(int(part)) == part:
        index = int(part)
        return items[index] if index < len(items) else _MISSING
    return _FUNCTION if part in _OBJECT_MEMBERS else _MISSING


def _truthy(value: Any) -> bool:
    if value is _MISSING or value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0  # NaN counts as true: OpenClaw tests `value !== 0`
    if isinstance(value, str):
        return bool(js_trim(value))
    return True
