"""The skill tiers OpenClaw uses implicitly, written out as Gateway ``skills.roots`` and ``agents.stateDir``.

See ``clawplane.interop.openclaw.env`` for where each folder comes from. Written per import:
``roots.managed`` (``<config dir>/skills``), ``roots.personal`` (only while the state dir is
the default one), ``roots.bundled`` (or a warning naming what to set), ``agents.stateDir``
(each agent's default agent dir, so its workshop tier, and default workspace), an Agent
``main`` when the config declares no agents (OpenClaw's implicit one), and an explicit
workspace wherever OpenClaw's default differs from ``<stateDir>/workspace[-<id>]``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from clawplane.interop.openclaw.env import OpenClawEnv
from clawplane.interop.report import ConfigPath, ImportReport

_IMPLICIT_AGENT = "main"


def openclaw_path(value: Any, env: OpenClawEnv | None, path: ConfigPath, report: ImportReport) -> Any:
    """A configured path as clawplane must write it (``~`` expanded when OPENCLAW_HOME moves the home)."""
    if env is None or not isinstance(value, str) or env.home == env.os_home:
        return value
    text = value.strip()
    if text != "~" and not text.startswith(("~/", "~\\")):
        return value
    expanded = env.user_path(text)
    report.info(
        "import.home-path",
        path,
        f"OPENCLAW_HOME makes OpenClaw expand {text!r} to {expanded}; written expanded, "
        "since clawplane expands ~ to HOME",
    )
    return expanded


def import_roots(
    config: Mapping[str, Any],
    env: OpenClawEnv,
    gateway: dict[str, Any],
    agents: dict[str, dict[str, Any]],
    report: ImportReport,
) -> None:
    """Add the implicit tiers to the Gateway spec (and agents) being imported."""
    _config_path_note(env, report)
    skills = gateway.setdefault("skills", {})
    roots = skills.setdefault("roots", {})
    roots["managed"] = env.managed_dir
    report.info("import.skills-root", ("skills",), f"managed skills tier: {env.managed_dir}")
    personal = env.personal_dir
    if personal is not None:
        roots["personal"] = personal
        report.info("import.skills-root", ("skills",), f"personal skills tier: {personal}")
    bundled, how = env.bundled_dir()
    if bundled is not None:
        roots["bundled"] = bundled
        report.info("import.skills-root", ("skills",), f"bundled skills tier: {bundled} (from {how})")
    else:
        report.warn(
            "import.bundled-unknown",
            ("skills",),
            "OpenClaw would load its bundled skills from its installed package, which is not "
            "installed here; the imported folder has no bundled tier",
            "set OPENCLAW_BUNDLED_SKILLS_DIR to the package's skills/ folder and import again, "
            "or set the Gateway's spec.skills.roots.bundled",
        )
    plugins = config.get("plugins")
    if not (isinstance(plugins, Mapping) and plugins.get("enabled") is False):
        report.warn(
            "import.plugin-skills",
            ("plugins",),
            "OpenClaw also loads the skills its enabled plugins ship (browser-automation and "
            "canvas by default); clawplane does not activate plugins, so they are not imported",
            "list those plugins' skills folders in the Gateway's spec.skills.roots.plugins, "
            "or set plugins.enabled: false",
        )
    gateway.setdefault("agents", {})["stateDir"] = env.state_dir
    report.info(
        "import.skills-root",
        ("agents",),
        f"OpenClaw state dir {env.state_dir}: agents without agentDir use "
        "<stateDir>/agents/<id>/agent/workshop-skills as their workshop tier",
    )
    _agents(config, env, gateway, agents, report)


def _config_path_note(env: OpenClawEnv, report: ImportReport) -> None:
    configured = (env.environ.get("OPENCLAW_CONFIG_PATH") or "").strip()
    if configured and env.user_path(configured) != os.path.normpath(env.config_path):
        report.warn(
            "import.config-path",
            (),
            f"OPENCLAW_CONFIG_PATH names {configured}, not the imported file; folders are "
            "derived as if OpenClaw read the imported file",
        )


def _agents(
    config: Mapping[str, Any],
    env: OpenClawEnv,
    gateway: Mapping[str, Any],
    agents: dict[str, dict[str, Any]],
    report: ImportReport,
) -> None:
    block = config.get("agents")
    block = block if isinstance(block, Mapping) else {}
    if not agents and "entries" not in block and "list" not in block:
        agents[_IMPLICIT_AGENT] = {}
        report.info(
            "import.implicit-agent",
            ("agents",),
            "no agents configured: OpenClaw runs the implicit agent 'main', imported as an Agent",
        )
    defaults = gateway.get("agents", {}).get("defaults", {})
    owner = _owner(block, agents)
    if owner is None or "workspace" in agents[owner]:
        return
    workspace = defaults.get("workspace") if isinstance(defaults, Mapping) else None
    sole = len(agents) == 1
    if workspace is None and sole and env.default_workspace == os.path.join(env.state_dir, "workspace"):
        return  # the adapter's <stateDir>/workspace is OpenClaw's default too
    if workspace is not None and sole:
        return  # the adapter gives a sole agent agents.defaults.workspace itself, as OpenClaw does
    agents[owner]["workspace"] = workspace if workspace is not None else env.default_workspace
    report.info(
        "import.workspace",
        ("agents", "entries", owner),
        f"OpenClaw gives {owner!r} the workspace {agents[owner]['workspace']}; written explicitly",
    )


def _owner(block: Mapping[str, Any], agents: Mapping[str, Any]) -> str | None:
    """The agent OpenClaw gives the shared workspace: a legacy ``default: true`` one, else the only one."""
    entries = block.get("entries")
    if block.get("ownership") != "explicit" and isinstance(entries, Mapping):
        marked = [k for k, v in entries.items() if isinstance(v, Mapping) and v.get("default") is True]
        if len(marked) == 1 and marked[0] in agents:
            return str(marked[0])
    return next(iter(agents)) if len(agents) == 1 else None
