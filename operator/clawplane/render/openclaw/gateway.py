"""The Gateway → OpenClaw's top-level sections: typed settings and every section named by OpenClaw's keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import Gateway, SessionConfig, SkillEntry, literal_text
from clawplane.render.openclaw.agents import render_tool_policy
from clawplane.render.openclaw.keys import KeyRenderer
from clawplane.render.paths import absolute_path
from clawplane.render.secretvalues import SecretRenderer
from clawplane.schema.openclaw import node_at

# Skill tiers OpenClaw derives itself (state dir, package, home); openclaw.json cannot move them.
_FIXED_ROOTS = ("bundled", "workshop", "managed", "personal")


def render_gateway(
    gateway: Gateway, *, base_dir: Path, secrets: SecretRenderer, diagnostics: list[Diagnostic]
) -> dict[str, Any]:
    """The Gateway's sections of openclaw.json (without ``spec.config``, merged later)."""
    spec = gateway.spec
    keys = KeyRenderer(secrets=secrets, base_dir=base_dir, resource=gateway.key)
    # Sections named by OpenClaw's keys first: the typed ones below are merged over them.
    out: dict[str, Any] = keys.keys(spec, node_at(()), "")
    skills = _skills(gateway, base_dir, secrets, diagnostics, keys)
    if skills:
        out["skills"] = skills
    defaults = spec.agents.defaults
    agent_defaults: dict[str, Any] = keys.keys(defaults, node_at(("agents", "defaults")), "agents.defaults")
    if defaults.skills is not None:
        agent_defaults["skills"] = list(defaults.skills)
    if defaults.workspace is not None:
        agent_defaults["workspace"] = absolute_path(defaults.workspace, base_dir)
    if defaults.model is not None:
        agent_defaults["model"] = keys.typed(
            defaults.model, node_at(("agents", "defaults", "model")) or {}, "agents.defaults.model"
        )
    agents = keys.keys(spec.agents, node_at(("agents",)), "agents")
    if agent_defaults:
        agents["defaults"] = agent_defaults
    if agents:
        out["agents"] = agents
    mcp = keys.keys(spec.mcp, node_at(("mcp",)), "mcp")
    if spec.mcp.session_idle_ttl_ms is not None:
        mcp["sessionIdleTtlMs"] = spec.mcp.session_idle_ttl_ms
    if mcp:
        out["mcp"] = mcp
    plugins = keys.part(spec.plugins, node_at(("plugins",)), "plugins")
    if plugins:
        out["plugins"] = plugins
    tools = render_tool_policy(
        spec.tools,
        resource=gateway.key,
        path="spec.tools",
        diagnostics=diagnostics,
        keys=keys,
        node=node_at(("tools",)),
    )
    if tools:
        out["tools"] = tools
    if spec.session is not None:
        out["session"] = _session(spec.session, base_dir, keys)
    for section, part in (("approvals", spec.approvals), ("secrets", spec.secrets)):
        rendered = keys.keys(part, node_at((section,)), section)
        if rendered:
            out[section] = rendered
    return out


def _session(session: SessionConfig, base_dir: Path, keys: KeyRenderer) -> dict[str, Any]:
    """The session policy as written: only the fields set, so OpenClaw's defaults fill the rest."""
    out: dict[str, Any] = keys.part(session, node_at(("session",)), "session", exclude_unset=True)
    if session.store is not None:
        out["store"] = absolute_path(session.store, base_dir)
    return out


def _skills(
    gateway: Gateway,
    base_dir: Path,
    secrets: SecretRenderer,
    diagnostics: list[Diagnostic],
    keys: KeyRenderer,
) -> dict[str, Any]:
    skills = gateway.spec.skills
    out: dict[str, Any] = keys.keys(skills, node_at(("skills",)), "skills")
    load: dict[str, Any] = keys.keys(skills.load, node_at(("skills", "load")), "skills.load")
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
    entries = {
        key: _entry(gateway, key, entry, base_dir, secrets, keys) for key, entry in skills.entries.items()
    }
    if entries:
        out["entries"] = entries
    if "limits" in skills.model_fields_set:
        limits = keys.part(skills.limits, node_at(("skills", "limits")), "skills.limits", exclude_unset=True)
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
    gateway: Gateway, key: str, entry: SkillEntry, base_dir: Path, secrets: SecretRenderer, keys: KeyRenderer
) -> dict[str, Any]:
    path = f"spec.skills.entries.{key}"
    out: dict[str, Any] = keys.keys(entry, node_at(("skills", "entries", "*")), path.removeprefix("spec."))
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
        out["config"] = keys.value(
            entry.config,
            node_at(("skills", "entries", "*", "config")) or {},
            f"{path.removeprefix('spec.')}.config",
        )
    return out
