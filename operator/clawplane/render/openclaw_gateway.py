"""The Gateway → OpenClaw's top-level skills, agents.defaults, mcp, plugins, tools and session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import Gateway
from clawplane.models.gateway import SkillEntry
from clawplane.models.session import SessionConfig
from clawplane.models.values import literal_text
from clawplane.render.openclaw_agents import render_tool_policy
from clawplane.render.paths import absolute_path
from clawplane.render.secretvalues import SecretRenderer

# Skill tiers OpenClaw derives itself (state dir, package, home); openclaw.json cannot move them.
_FIXED_ROOTS = ("bundled", "workshop", "managed", "personal")


def render_gateway(
    gateway: Gateway, *, base_dir: Path, secrets: SecretRenderer, diagnostics: list[Diagnostic]
) -> dict[str, Any]:
    """The Gateway's sections of openclaw.json (without ``spec.config``, merged later)."""
    spec = gateway.spec
    out: dict[str, Any] = {}
    skills = _skills(gateway, base_dir, secrets, diagnostics)
    if skills:
        out["skills"] = skills
    defaults = spec.agents.defaults
    agent_defaults: dict[str, Any] = {}
    if defaults.skills is not None:
        agent_defaults["skills"] = list(defaults.skills)
    if defaults.workspace is not None:
        agent_defaults["workspace"] = absolute_path(defaults.workspace, base_dir)
    if defaults.model is not None:
        agent_defaults["model"] = defaults.model
    if agent_defaults:
        out["agents"] = {"defaults": agent_defaults}
    if spec.mcp.session_idle_ttl_ms is not None:
        out["mcp"] = {"sessionIdleTtlMs": spec.mcp.session_idle_ttl_ms}
    plugins = spec.plugins.model_dump(mode="json", by_alias=True, exclude_none=True)
    if plugins:
        out["plugins"] = plugins
    tools = render_tool_policy(spec.tools, resource=gateway.key, path="spec.tools", diagnostics=diagnostics)
    if tools:
        out["tools"] = tools
    if spec.session is not None:
        out["session"] = _session(spec.session, base_dir)
    return out


def _session(session: SessionConfig, base_dir: Path) -> dict[str, Any]:
    """The session policy as written: only the fields set, so OpenClaw's defaults fill the rest."""
    out: dict[str, Any] = session.model_dump(
        mode="json", by_alias=True, exclude_unset=True, exclude_none=True
    )
    if session.store is not None:
        out["store"] = absolute_path(session.store, base_dir)
    return out


def _skills(
    gateway: Gateway, base_dir: Path, secrets: SecretRenderer, diagnostics: list[Diagnostic]
) -> dict[str, Any]:
    skills = gateway.spec.skills
    out: dict[str, Any] = {}
    load: dict[str, Any] = {}
    # Plugin skill folders load at the extra tier right after load.extraDirs.
    extra = [absolute_path(d, base_dir) for d in (*skills.load.extra_dirs, *skills.roots.plugins)]
    if extra:
        load["extraDirs"] = extra
    if skills.load.allow_symlink_targets:
        load["allowSymlinkTargets"] = [absolute_path(d, base_dir) for d in skills.load.allow_symlink_targets]
    if skills.load.watch is not None:
        load["watch"] = skills.load.watch
    if load:
        out["load"] = load
    if skills.allow_bundled is not None:
        out["allowBundled"] = list(skills.allow_bundled)
    entries = {key: _entry(gateway, key, entry, base_dir, secrets) for key, entry in skills.entries.items()}
    if entries:
        out["entries"] = entries
    if "limits" in skills.model_fields_set:
        limits = skills.limits.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if limits:
            out["limits"] = limits
    for root in _FIXED_ROOTS:
        if getattr(skills.roots, root) is not None:
            diagnostics.append(
                Diagnostic(
                    Severity.INFO,
                    "render.skill-root-not-rendered",
                    f"the {root} skill root is where clawplane looks; OpenClaw finds its own {root} tier "
                    "and openclaw.json cannot point it elsewhere",
                    path=f"spec.skills.roots.{root}",
                    resource=gateway.key,
                )
            )
    return out


def _entry(
    gateway: Gateway, key: str, entry: SkillEntry, base_dir: Path, secrets: SecretRenderer
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    path = f"spec.skills.entries.{key}"
    if entry.enabled is not None:
        out["enabled"] = entry.enabled
    if entry.api_key is not None:
        api_key = secrets.render(
            entry.api_key, base_dir=base_dir, secret_input=True, resource=gateway.key, path=f"{path}.apiKey"
        )
        if api_key is not None:
            out["apiKey"] = literal_text(api_key) if isinstance(api_key, int | float | bool) else api_key
    env: dict[str, Any] = {}
    for name, value in entry.env.items():
        rendered = secrets.render(
            value, base_dir=base_dir, secret_input=False, resource=gateway.key, path=f"{path}.env.{name}"
        )
        if rendered is not None:
            # skills.entries.*.env holds strings only.
            env[name] = literal_text(rendered) if isinstance(rendered, int | float | bool) else rendered
    if env or entry.env:
        out["env"] = env
    if entry.config:
        out["config"] = dict(entry.config)
    return out
