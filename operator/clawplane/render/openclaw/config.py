"""Typed resources → the ``openclaw.json`` that OpenClaw 2026.9.6 accepts.

Mapping, in short: the Gateway gives the top-level ``skills``, ``agents.defaults``,
``mcp.sessionIdleTtlMs``, ``plugins``, ``tools``, ``session`` and ``models.mode`` (its raw
``spec.config`` is merged underneath); McpServers give ``mcp.servers``; ModelProviders give
``models.providers``; Agents give ``agents.entries`` (plus
``agents.ownership: "explicit"`` for a fleet); Channels give ``channels.<type>``, route
``bindings`` and mention patterns. What OpenClaw cannot express is reported as a
diagnostic next to the config, never dropped silently. Secret handling is described in
``clawplane.render.secretvalues``; every literal is escaped against OpenClaw's ``${VAR}``
substitution (``clawplane.naming.envsubst``), except ``spec.config``, which is raw
OpenClaw config and is written as given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from clawplane.diagnostics import Diagnostic
from clawplane.models import Agent, Channel, Gateway, McpServer, ModelProvider
from clawplane.render.finalize import finalize
from clawplane.render.merge import merge_raw_config
from clawplane.render.openclaw.agents import AgentEntries, default_agent, render_agents
from clawplane.render.openclaw.channels import render_channels
from clawplane.render.openclaw.check import RenderedChecks, check_rendered
from clawplane.render.openclaw.gateway import render_gateway
from clawplane.render.openclaw.models import render_models
from clawplane.render.openclaw.servers import ServerEntries, render_servers
from clawplane.render.paths import base_dir_of
from clawplane.render.secretvalues import SecretRenderer


class RenderedConfig(NamedTuple):
    """A rendered openclaw.json (as data) and what could not be expressed in it."""

    config: dict[str, Any]
    diagnostics: list[Diagnostic]


def render_openclaw_config(
    *,
    gateway: Gateway | None,
    servers: Sequence[McpServer],
    agents: Sequence[Agent],
    channels: Sequence[Channel],
    hosted_urls: Mapping[str, str],
    base_dirs: Mapping[str, Path],
    resolve_secrets: bool = False,
    environ: Mapping[str, str] | None = None,
    secret_env: dict[str, tuple[str, str]] | None = None,
    server_memo: ServerEntries | None = None,
    agent_memo: AgentEntries | None = None,
    hosted_auth: Mapping[str, str] | None = None,
    providers: Sequence[ModelProvider] = (),
    check_memo: RenderedChecks | None = None,
) -> RenderedConfig:
    """Render openclaw.json; ``hosted_urls`` by server name, ``base_dirs`` by ``Kind/name``.

    ``hosted_auth`` gives each hosted server's ``Authorization`` header (the gateway's token).

    With ``secret_env`` (Kubernetes), secretKeyRefs become env references and the dict is
    filled with variable → (Secret, key) for the gateway pod's ``env``. A ``server_memo``
    kept by the caller between renders spares re-rendering unchanged servers, an ``agent_memo``
    unchanged agents, a ``check_memo`` the schema checks of unchanged entries.
    """
    if server_memo is not None:
        server_memo.begin()
    if agent_memo is not None:
        agent_memo.begin()
    diagnostics: list[Diagnostic] = []
    secrets = SecretRenderer(resolve_secrets=resolve_secrets, environ=environ, secret_env=secret_env)
    config: dict[str, Any] = {}
    if gateway is not None:
        config = render_gateway(
            gateway, base_dir=base_dir_of(gateway, base_dirs), secrets=secrets, diagnostics=diagnostics
        )
    mcp_servers = render_servers(
        servers,
        hosted_urls=hosted_urls,
        base_dirs=base_dirs,
        secrets=secrets,
        diagnostics=diagnostics,
        memo=server_memo,
        hosted_auth=hosted_auth,
    )
    if mcp_servers:
        config.setdefault("mcp", {})["servers"] = mcp_servers
    models = render_models(gateway, providers, base_dirs=base_dirs, secrets=secrets, diagnostics=diagnostics)
    if models:
        config["models"] = models
    _agents(config, gateway, servers, agents, base_dirs, diagnostics, agent_memo, secrets)
    ids = list(config.get("agents", {}).get("entries", {}))
    rendered = render_channels(
        channels,
        agent_ids=ids,
        default_agent=default_agent(gateway, agents),
        base_dirs=base_dirs,
        secrets=secrets,
        diagnostics=diagnostics,
    )
    if rendered.channels:
        config["channels"] = {**config.get("channels", {}), **rendered.channels}
    if rendered.bindings:
        # The Gateway's own rules (acp bindings, peer routes) come first; a channel's route after them.
        config["bindings"] = [*config.get("bindings", []), *rendered.bindings]
    for agent, patterns in rendered.agent_mentions.items():
        # Into a copy: an entry may be shared with other renders (``AgentEntries``).
        entry = config["agents"]["entries"][agent] = dict(config["agents"]["entries"][agent])
        entry["groupChat"] = {**entry.get("groupChat", {}), "mentionPatterns": patterns}
    if rendered.global_mentions:
        messages = config.setdefault("messages", {})
        messages["groupChat"] = {**messages.get("groupChat", {}), "mentionPatterns": rendered.global_mentions}
    if secrets.providers:
        section = config.setdefault("secrets", {})
        section["providers"] = {**section.get("providers", {}), **dict(sorted(secrets.providers.items()))}
    diagnostics.extend(secrets.diagnostics)
    if agent_memo is not None and "entries" in config.get("agents", {}):
        # An unchanged entry keeps its finalized object, so its text is reused as well.
        section = config["agents"]
        section["entries"] = {key: agent_memo.finalized(key, e) for key, e in section["entries"].items()}
    final = finalize(config)
    if gateway is not None and gateway.spec.config:
        final, found = merge_raw_config(gateway.spec.config, final, resource=gateway.key)
        diagnostics.extend(found)
    diagnostics.extend(
        check_rendered(
            final,
            gateway=gateway,
            servers=servers,
            agents=agents,
            channels=channels,
            providers=providers,
            memo=check_memo,
        )
    )
    return RenderedConfig(final, diagnostics)


def _agents(
    config: dict[str, Any],
    gateway: Gateway | None,
    servers: Sequence[McpServer],
    agents: Sequence[Agent],
    base_dirs: Mapping[str, Path],
    diagnostics: list[Diagnostic],
    memo: AgentEntries | None,
    secrets: SecretRenderer,
) -> None:
    if not agents:
        return
    section = config.setdefault("agents", {})
    entries = render_agents(
        agents, servers=servers, base_dirs=base_dirs, diagnostics=diagnostics, memo=memo, secrets=secrets
    )
    section["entries"] = entries
    explicit_default = gateway is not None and gateway.spec.agents.default_agent is not None
    if len(entries) > 1:
        # OpenClaw requires the marker for a fleet; it then routes only through bindings and
        # the system agent (a legacy `default: true` is refused next to it).
        section["ownership"] = "explicit"
    chosen = default_agent(gateway, agents)
    if chosen is not None and chosen in entries and (explicit_default or len(entries) > 1):
        section.setdefault("defaults", {})["systemAgent"] = {"agentId": chosen}
