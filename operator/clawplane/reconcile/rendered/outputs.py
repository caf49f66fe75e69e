"""Desired + observed state → every rendered file, as text keyed by its path under the out dir.

Files: ``openclaw.json``; per agent ``agents/<id>/skills-prompt.txt``, ``snapshot.json``
and ``tools.json``; per agent with projected servers ``codex/<id>/config.toml`` and
``clients/<client>/<id>/<file>`` (Claude Code, Claude Desktop, VS Code, Cursor, Gemini CLI). Skill
snapshots come from ``clawplane.skills`` (its engine caches scans between passes), tool
catalogs from the observed tool surfaces, hosted server URLs from the runtime records.
Nothing here writes to disk except materialising inline Skill resources as SKILL.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawplane.desired import DesiredState
from clawplane.diagnostics import Diagnostic
from clawplane.models import Agent, Gateway, McpServer, Skill
from clawplane.naming import ToolPolicyLayer
from clawplane.reconcile.agents.catalog import agent_layers, catalog_rows, filter_catalog, recorded_surfaces
from clawplane.reconcile.rendered.jsontext import IndentedJson
from clawplane.render import (
    AgentEntries,
    RenderedChecks,
    ServerEntries,
    projected_into,
    render_codex_config,
    render_openclaw_config,
)
from clawplane.render.clients import render_client_configs
from clawplane.runtimes import merge_catalog
from clawplane.skills import INLINE_SKILLS_DIR, AgentSnapshot, GatewaySkills, Host, Placed, SkillsEngine
from clawplane.state import OPENCLAW, ObservedState, agent_access, agent_consumer, codex_consumer
from clawplane.workspace import Workspace

AuthHeader = Callable[[str, str], str | None]
"""(consumer, hosted server) → the ``Authorization`` header value its config sends."""
UNISSUED = "<issued by the next apply>"


def _json(doc: Any) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@dataclass
class OutputRenderer:
    """Renders a folder's outputs; keeps the skills engine's caches between calls."""

    ws: Workspace
    environ: Mapping[str, str] | None = None
    secret_key_refs_as_env: bool = False
    """Kubernetes: render secretKeyRefs as env references and list them in ``gateway-secret-env.json``."""
    skills_state_dir: Path | None = None
    """Kubernetes: where inline Skill resources are written (``<dir>/inline-skills``), a path the
    gateway pod sees too, so prompt locations are right there (default: the state dir)."""
    auth_header: AuthHeader | None = None
    """How hosted servers are authenticated in rendered configs (default: the consumer's token)."""
    engine: SkillsEngine = field(default_factory=SkillsEngine)
    snapshots: dict[str, AgentSnapshot] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    access: dict[str, set[str]] = field(default_factory=dict)
    """Consumer → hosted servers its rendered config reaches (from the last render)."""
    missing_tokens: set[str] = field(default_factory=set)
    """Consumers the last render needed a token for and found none (apply issues them)."""
    _snapshot_text: dict[str, tuple[str, str]] = field(default_factory=dict)
    _server_entries: ServerEntries = field(default_factory=ServerEntries)
    _agent_entries: AgentEntries = field(default_factory=AgentEntries)
    _rendered_checks: RenderedChecks = field(default_factory=RenderedChecks)
    _setup: GatewaySkills | None = None
    _host: Host | None = None
    _tools_text: IndentedJson = field(default_factory=lambda: IndentedJson([()]))
    _openclaw_text: IndentedJson = field(
        default_factory=lambda: IndentedJson([("mcp", "servers"), ("agents", "entries"), ("channels",)])
    )

    def render(
        self,
        desired: DesiredState,
        observed: ObservedState,
        *,
        expected_urls: Mapping[str, str] | None = None,
    ) -> dict[str, str]:
        """Every output file's content, by path relative to the out dir.

        ``expected_urls`` are where hosted servers that have no endpoint yet will be served
        (a plan renders what apply will write, so it lists every file).
        """
        self.diagnostics = []
        self._openclaw_text.begin_pass()
        self._tools_text.begin_pass()
        base_dirs = {key: r.base_dir for key, r in desired.resources.items()}
        hosted = dict(expected_urls or {})
        hosted.update({name: rt.endpoint for name, rt in observed.runtimes.items() if rt.endpoint})
        servers: list[McpServer] = desired.servers
        self.access, self.missing_tokens = {}, set()
        auth = self._auth(observed)
        hosted_servers = [s for s in servers if s.spec.behind_endpoint and s.name in hosted] if hosted else []
        secret_env: dict[str, tuple[str, str]] | None = {} if self.secret_key_refs_as_env else None
        rendered = render_openclaw_config(
            gateway=desired.gateway,
            servers=servers,
            agents=desired.agent_models,
            channels=desired.channels,
            hosted_urls=hosted,
            base_dirs=base_dirs,
            environ=self.environ,
            secret_env=secret_env,
            server_memo=self._server_entries,
            agent_memo=self._agent_entries,
            check_memo=self._rendered_checks,
            hosted_auth=auth(OPENCLAW, hosted_servers),
            providers=desired.providers,
        )
        self.diagnostics.extend(rendered.diagnostics)
        config = rendered.config
        if not self.secret_key_refs_as_env and desired.of_type(Skill):
            config = with_extra_skill_dir(config, str(self.ws.state_dir / INLINE_SKILLS_DIR))
        files = {"openclaw.json": self._openclaw_text.dumps(config) + "\n"}
        if secret_env:
            env = [
                {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}
                for name, (secret, key) in sorted(secret_env.items())
            ]
            files["gateway-secret-env.json"] = _json(env)
        self.snapshots = self._snapshots(desired)
        views = {name.lower(): view for name, view in desired.agents.items()}
        by_name = {s.metadata.name: s for s in servers}  # not the property: once per server of a fleet
        # Looked up once: per agent, these scans made a render quadratic in agents x resources.
        gateway = desired.gateway
        agent_models: dict[str, Agent] = {}
        for model in desired.agent_models:
            agent_models.setdefault(model.name.lower(), model)  # the first declared wins
        for agent_id, snapshot in sorted(self.snapshots.items()):
            view = views.get(agent_id)
            server_names = list(view.servers) if view else []
            files[f"agents/{agent_id}/skills-prompt.txt"] = snapshot.prompt.text
            # Compact JSON: the C encoder is ~10x faster than an indented dump on large fleets.
            files[f"agents/{agent_id}/snapshot.json"] = self._snapshot_json(agent_id, snapshot)
            self._agent_endpoint_access(agent_id, observed)
            layers = agent_layers(gateway, agent_models.get(agent_id))
            catalog = self._agent_catalog(server_names, layers, desired, observed)
            files[f"agents/{agent_id}/tools.json"] = self._tools_text.dumps(catalog) + "\n"
            # Only servers whose tools are known: unknown ones must not become "no tools enabled".
            discovered = {
                n: [t.raw_name for t in observed.tools_observed[n]]
                for n in server_names
                if n in observed.tools_observed
            }
            codex = render_codex_config(
                agent_id,
                [by_name[n] for n in server_names if n in by_name],
                hosted_urls=hosted,
                base_dirs=base_dirs,
                discovered_tools=discovered,
                environ=self.environ,
                hosted_auth=auth(
                    codex_consumer(agent_id),
                    [s for s in hosted_servers if s.name in server_names and projected_into(s, agent_id)],
                ),
            )
            self.diagnostics.extend(codex.diagnostics)
            if "[mcp_servers" in codex.text:
                files[f"codex/{agent_id}/config.toml"] = codex.text
            clients, problems = render_client_configs(
                agent_id,
                [by_name[n] for n in server_names if n in by_name],
                hosted_urls=hosted,
                base_dirs=base_dirs,
                discovered_tools=discovered,
                auth=auth,
            )
            self.diagnostics.extend(problems)
            files.update(clients)
        return files

    def _agent_endpoint_access(self, agent_id: str, observed: ObservedState) -> None:
        """The agent's own token reaches its aggregated endpoint, ``/mcp/agents/<id>``, and nothing else."""
        if self.auth_header is not None:  # Kubernetes: no aggregated endpoint there
            return
        consumer = agent_consumer(agent_id)
        if consumer not in observed.tokens:
            self.missing_tokens.add(consumer)
        self.access.setdefault(consumer, set()).add(agent_access(agent_id))

    def _agent_catalog(
        self,
        server_names: list[str],
        layers: list[ToolPolicyLayer],
        desired: DesiredState,
        observed: ObservedState,
    ) -> list[dict[str, Any]]:
        """The agent's catalog as OpenClaw builds it, from the surfaces recorded at the last apply."""
        entries = merge_catalog(recorded_surfaces(server_names, desired, observed))
        return catalog_rows(filter_catalog(entries, layers), observed)

    def _auth(self, observed: ObservedState) -> Callable[[str, Iterable[McpServer]], dict[str, str]]:
        def headers(consumer: str, servers: Iterable[McpServer]) -> dict[str, str]:
            out: dict[str, str] = {}
            for server in servers:
                header = self.auth_header(consumer, server.name) if self.auth_header else None
                if header is None and self.auth_header is None:
                    token = observed.tokens.get(consumer)
                    if token is None:
                        self.missing_tokens.add(consumer)
                    header = f"Bearer {token or UNISSUED}"
                if header is not None:
                    out[server.name] = header
                    self.access.setdefault(consumer, set()).add(server.name)
            return out

        return headers

    def _snapshots(self, desired: DesiredState) -> dict[str, AgentSnapshot]:
        def placed(kind: type[Any]) -> list[Placed[Any]]:
            return [Placed(r.resource, r.base_dir) for r in desired.of_type(kind)]

        gateways: list[Placed[Gateway]] = placed(Gateway)
        agents: list[Placed[Agent]] = placed(Agent)
        skills: list[Placed[Skill]] = placed(Skill)
        setup = GatewaySkills.from_resources(
            gateways[0] if gateways else None, agents, skills, self.skills_state_dir or self.ws.state_dir
        )
        if self._setup is not None:
            setup.adopt(self._setup)  # what unchanged resources gave last render
        self._setup = setup
        self.diagnostics.extend(setup.materialize())
        self.engine.cache.begin_pass()  # many agents share roots: check each root once per render
        host = Host.current()
        if self.environ is not None:
            host = Host(
                env=self.environ,
                path=self.environ.get("PATH", host.path),
                platform=host.platform,
                home=host.home,
                cwd=host.cwd,
            )
        if self._host == host:
            host = self._host  # an equal host keeps its identity, so caches compare by `is`
        self._host = host
        out: dict[str, AgentSnapshot] = {}
        for agent in agents:
            agent_id = agent.resource.name.lower()
            inputs, problems = setup.inputs_for(agent_id, host)
            self.diagnostics.extend(problems)
            result = self.engine.evaluate(inputs)
            self.diagnostics.extend(result.diagnostics)
            out[agent_id] = result.snapshot
        return out

    def _snapshot_json(self, agent_id: str, snapshot: AgentSnapshot) -> str:
        cached = self._snapshot_text.get(agent_id)
        if cached is not None and cached[0] == snapshot.content_hash:
            return cached[1]
        text = snapshot.compact_json() + "\n"
        self._snapshot_text[agent_id] = (snapshot.content_hash, text)
        return text

    def agent_status(self, agent_id: str) -> dict[str, Any]:
        """Status fields for an Agent resource from the last render."""
        snapshot = self.snapshots.get(agent_id.lower())
        if snapshot is None:
            return {}
        return {
            "skills": len(snapshot.prompt.skills),
            "eligibleSkills": sum(1 for s in snapshot.skills if s.eligible and not s.blocked_by_agent_filter),
            "promptChars": snapshot.prompt.chars,
            "promptFormat": snapshot.prompt.format,
            "snapshotHash": snapshot.content_hash,
        }


def with_extra_skill_dir(config: Mapping[str, Any], directory: str) -> dict[str, Any]:
    """``config`` with ``directory`` appended to ``skills.load.extraDirs`` (a copy; nothing shared).

    Inline Skill resources are written there; without it a real OpenClaw reading this
    openclaw.json would never find them. OpenClaw loads them at the extra tier, the lowest
    (clawplane ranks them with the managed tier): only a skill of the same name elsewhere
    can tell the two apart.
    """
    skills = dict(config.get("skills") or {})
    load = dict(skills.get("load") or {})
    dirs = list(load.get("extraDirs") or [])
    if directory not in dirs:
        dirs.append(directory)
    load["extraDirs"] = dirs
    skills["load"] = load
    return {**config, "skills": skills}


__all__ = ["OutputRenderer", "Path"]
