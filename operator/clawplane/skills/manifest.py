"""The ``metadata.openclaw`` manifest and invocation flags of a skill, read as OpenClaw reads them.

``metadata`` is a frontmatter string parsed as JSON, then JSON5; the manifest is
its ``openclaw`` object, else the legacy ``clawdbot`` one. List fields accept
arrays (each entry ``String()``-ed and trimmed) or comma-separated strings.
Invocation flags accept ``true/1/yes/on`` and ``false/0/no/off`` in any case;
anything else keeps the default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import json5

from clawplane._utils.fastinit import fast_init
from clawplane.jscompat import js_trim, normalize_string_list
from clawplane.skills.install import InstallSpec, parse_install_spec

__all__ = [
    "Invocation",
    "Manifest",
    "Requirements",
    "normalize_string_list",
    "parse_bool",
    "parse_invocation",
    "parse_manifest",
]

MANIFEST_KEYS = ("openclaw", "clawdbot")
_TRUTHY = frozenset({"true", "1", "yes", "on"})
_FALSY = frozenset({"false", "0", "no", "off"})


@fast_init
@dataclass(frozen=True, slots=True)
class Requirements:
    """``requires``: every list normalized, possibly empty."""

    bins: tuple[str, ...] = ()
    any_bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    config: tuple[str, ...] = ()


@fast_init
@dataclass(frozen=True, slots=True)
class Manifest:
    """The parts of ``metadata.openclaw`` that gating, listing and the prompt use."""

    always: bool | None = None
    emoji: str | None = None
    homepage: str | None = None
    skill_key: str | None = None
    primary_env: str | None = None
    os: tuple[str, ...] = ()
    requires: Requirements | None = None
    install: tuple[InstallSpec, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class Invocation:
    """Who may invoke the skill: users (slash commands) and the model (prompt)."""

    user_invocable: bool = True
    disable_model_invocation: bool = False


def parse_bool(value: object, default: bool) -> bool:
    """A frontmatter boolean: a real bool, or one of the accepted spellings; else ``default``."""
    if isinstance(value, bool):
        return value
    if not isinstance(value, str):
        return default
    normalized = js_trim(value).lower()
    if normalized in _TRUTHY:
        return True
    if normalized in _FALSY:
        return False
    return default


def parse_invocation(frontmatter: dict[str, str]) -> Invocation:
    """``user-invocable`` (default true) and ``disable-model-invocation`` (default false)."""
    return Invocation(
        user_invocable=parse_bool(frontmatter.get("user-invocable"), True),
        disable_model_invocation=parse_bool(frontmatter.get("disable-model-invocation"), False),
    )


def manifest_block(
    frontmatter: dict[str, str], json_values: dict[str, Any] | None = None
) -> dict[str, Any] | list[Any] | None:
    """The ``openclaw`` (or legacy ``clawdbot``) object inside ``metadata``, if any.

    ``json_values`` holds what the frontmatter reader already parsed (``json.loads`` of the
    same text), so the ``metadata`` text is not parsed twice.
    """
    raw = frontmatter.get("metadata")
    if not raw:
        return None
    known = json_values or {}
    parsed = known["metadata"] if "metadata" in known else _parse_json_or_json5(raw)
    if not isinstance(parsed, dict):
        return None
    for key in MANIFEST_KEYS:
        candidate = parsed.get(key)
        # JavaScript's `candidate && typeof candidate === "object"` also admits arrays.
        if isinstance(candidate, dict | list):
            return candidate
    return None


def _parse_json_or_json5(raw: str) -> Any:
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        pass
    try:
        return json5.loads(raw)
    except (ValueError, RecursionError, TypeError):
        return None


def _reject_constant(name: str) -> Any:
    # JSON.parse has no NaN/Infinity literals; JSON5 does, so let the fallback decide.
    raise ValueError(name)


def parse_manifest(frontmatter: dict[str, str], json_values: dict[str, Any] | None = None) -> Manifest | None:
    """The skill's manifest, or ``None`` when ``metadata`` has no OpenClaw block."""
    block = manifest_block(frontmatter, json_values)
    if block is None:
        return None
    obj: dict[str, Any] = block if isinstance(block, dict) else {}
    requires_raw = obj.get("requires")
    install_raw = obj.get("install")
    install = (
        tuple(spec for spec in (parse_install_spec(entry) for entry in install_raw) if spec is not None)
        if isinstance(install_raw, list)
        else ()
    )
    always = obj.get("always")
    skill_key = obj.get("skillKey")
    return Manifest(
        always=always if isinstance(always, bool) else None,
        emoji=_str_or_none(obj.get("emoji")),
        homepage=_str_or_none(obj.get("homepage")),
        skill_key=skill_key if isinstance(skill_key, str) and skill_key else None,
        primary_env=_str_or_none(obj.get("primaryEnv")),
        os=normalize_string_list(obj.get("os")),
        requires=_requirements(requires_raw) if isinstance(requires_raw, dict | list) else None,
        install=install,
    )


def _requirements(raw: dict[str, Any] | list[Any]) -> Requirements:
    obj: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return Requirements(
        *(
            normalize_string_list(obj[key]) if key in obj else ()
            for key in ("bins", "anyBins", "env", "config")
        )
    )


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
