"""Agent resources → OpenClaw's ``agents.entries``, ownership and default agent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import Agent, Gateway, McpServer, ModelChoice, OpenPart, ToolPolicy, ValueFrom
from clawplane.naming import TOOL_NAME_SEPARATOR, assign_server_names
from clawplane.render.finalize import finalize
from clawplane.render.openclaw.keys import KeyRenderer
from clawplane.render.paths import absolute_path, base_dir_of
from clawplane.render.secretvalues import SecretRenderer, Verbatim
from clawplane.schema.openclaw import ANY, Node, child, node_at


def agent_id(name: str) -> str:
    """OpenClaw's canonical id of an agent (ids are case-insensitive and stored lower-case)."""
    return name.strip().lower()


def default_agent(gateway: Gateway | None, agents: Sequence[Agent]) -> str | None:
    """The agent that answers unbound channels: the Gateway's choice, else ``main``, else the only one."""
    ids = [agent_id(a.name) for a in agents]
    chosen = gateway.spec.agents.default_agent if gateway is not None else None
    if chosen:
        return agent_id(chosen)
    if "main" in ids:
        return "main"
    return ids[0] if len(ids) == 1 else None


class AgentEntries:
    """``agents.entries`` entries kept between renders, as built and as finalized.

    An entry is a function of the agent, its folder and the servers hidden from it; the
    engine hands back the same Agent object while its file is unchanged, so a fleet's
    entries are rebuilt only where it changed. Kept entries are shared between renders:
    read-only (mention patterns go into a copy), which is what lets ``finalized`` know an
    entry by its identity and hand back the very object the last render wrote.
    """

    def __init__(self) -> None:
        self._kept: dict[str, tuple[Agent, Path, list[str], dict[str, Any], tuple[Diagnostic, ...]]] = {}
        self._fresh: dict[str, tuple[Agent, Path, list[str], dict[str, Any], tuple[Diagnostic, ...]]] = {}
        self._final_kept: dict[str, tuple[dict[str, Any], Verbatim]] = {}
        self._final_fresh: dict[str, tuple[dict[str, Any], Verbatim]] = {}

    def begin(self) -> None:
        """Start a render: entries the last one did not use are dropped."""
        self._kept, self._fresh = self._fresh, {}
        self._final_kept, self._final_fresh = self._final_fresh, {}

    def entry(
        self,
        agent: Agent,
        base_dir: Path,
        hidden: list[str],
        diagnostics: list[Diagnostic],
        secrets: SecretRenderer,
    ) -> dict[str, Any]:
        """The agent's entry (read-only), built again only when something it depends on changed."""
        key = agent_id(agent.metadata.name)
        if has_references(agent):
            # A reference may read a file or a Secret that changed: never kept.
            return _agent_entry(agent, base_dir, hidden, diagnostics, secrets)
        hit = self._kept.get(key)
        if (
            hit is not None
            and hit[0] is agent
            and (hit[1] is base_dir or hit[1] == base_dir)
            and hit[2] == hidden
        ):
            self._fresh[key] = hit
            diagnostics.extend(hit[4])
            return hit[3]
        found: list[Diagnostic] = []
        built = _agent_entry(agent, base_dir, hidden, found, secrets)
        diagnostics.extend(found)
        self._fresh[key] = (agent, base_dir, hidden, built, tuple(found))
        return built

    def finalized(self, key: str, entry: dict[str, Any]) -> Verbatim:
        """``entry`` finalized; the same object as last render's when ``entry`` is the same kept entry."""
        hit = self._final_kept.get(key)
        if hit is None or hit[0] is not entry:
            hit = (entry, Verbatim(finalize(entry)))
        self._final_fresh[key] = hit
        return hit[1]


def render_agents(
    agents: Sequence[Agent],
    *,
    servers: Sequence[McpServer],
    base_dirs: Mapping[str, Path],
    diagnostics: list[Diagnostic],
    memo: AgentEntries | None = None,
    secrets: SecretRenderer | None = None,
) -> dict[str, dict[str, Any]]:
    """``agents.entries``: one entry per agent, keyed by its canonical id.

    With a ``memo`` the entries may be shared with other renders: change only copies.
    """
    secrets = secrets if secrets is not None else SecretRenderer(resolve_secrets=False)
    names = [s.metadata.name for s in servers]  # not the property: a fleet has 1,000s of servers
    safe = dict(zip(names, assign_server_names(names), strict=True))
    enabled = [name for name, s in zip(names, servers, strict=True) if s.spec.enabled]
    entries: dict[str, dict[str, Any]] = {}
    for agent in agents:
        base_dir = base_dir_of(agent, base_dirs)
        uses = agent.spec.mcp_servers
        hidden = [] if uses is None else [safe[name] for name in enabled if name not in uses]
        if memo is not None:
            entries[agent_id(agent.name)] = memo.entry(agent, base_dir, hidden, diagnostics, secrets)
        else:
            entries[agent_id(agent.name)] = _agent_entry(agent, base_dir, hidden, diagnostics, secrets)
    return entries


def has_references(agent: Agent) -> bool:
    """Whether any OpenClaw key of the agent holds a ``valueFrom`` reference."""
    return _holds_reference(agent.spec)


def _holds_reference(value: Any) -> bool:
    if isinstance(value, ValueFrom):
        return True
    if isinstance(value, OpenPart):
        return any(_holds_reference(v) for v in value.openclaw_keys.values()) or any(
            _holds_reference(getattr(value, name)) for name in type(value).model_fields
        )
    if isinstance(value, dict):
        return any(_holds_reference(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_reference(v) for v in value)
    return False


def _agent_entry(
    agent: Agent, base_dir: Path, hidden: list[str], diagnostics: list[Diagnostic], secrets: SecretRenderer
) -> dict[str, Any]:
    entry = _entry(agent, base_dir, diagnostics, secrets)
    if hidden:
        _deny_servers(entry, agent, hidden, diagnostics)
    return entry


AGENT_NODE: tuple[str, ...] = ("agents", "entries", "*")


def _entry(
    agent: Agent, base_dir: Path, diagnostics: list[Diagnostic], secrets: SecretRenderer
) -> dict[str, Any]:
    spec = agent.spec
    node = node_at(AGENT_NODE) or {}
    keys = KeyRenderer(secrets=secrets, base_dir=base_dir, resource=agent.key)
    # OpenClaw's keys written by name first; the typed fields below are rendered over them.
    entry: dict[str, Any] = keys.keys(spec, node, "")
    if spec.description is not None:
        entry["description"] = spec.description
    if spec.skills is not None:
        entry["skills"] = list(spec.skills)
    if spec.skills_limits is not None:
        limits = keys.part(spec.skills_limits, _under(node, "skillsLimits"), "skillsLimits")
        if limits:
            entry["skillsLimits"] = limits
    if spec.workspace is not None:
        entry["workspace"] = absolute_path(spec.workspace, base_dir)
    if spec.agent_dir is not None:
        entry["agentDir"] = absolute_path(spec.agent_dir, base_dir)
    if isinstance(spec.model, ModelChoice):
        entry["model"] = keys.part(spec.model, _under(node, "model"), "model")
    elif spec.model is not None:
        entry["model"] = spec.model
    if spec.tools is not None:
        tools = render_tool_policy(
            spec.tools,
            resource=agent.key,
            path="spec.tools",
            diagnostics=diagnostics,
            keys=keys,
            node=_under(node, "tools"),
        )
        if tools:
            entry["tools"] = tools
    return entry


def _under(node: Node, key: str) -> Node:
    return child(node, key) or ANY


def render_tool_policy(
    policy: ToolPolicy,
    *,
    resource: str,
    path: str,
    diagnostics: list[Diagnostic],
    keys: KeyRenderer | None = None,
    node: Node | None = None,
) -> dict[str, Any]:
    """A tool policy as OpenClaw writes it (``allow`` and ``alsoAllow`` cannot both be set)."""
    keys = (
        keys
        if keys is not None
        else KeyRenderer(
            secrets=SecretRenderer(resolve_secrets=False), base_dir=Path.cwd(), resource=resource
        )
    )
    out: dict[str, Any] = keys.part(policy, node, path.removeprefix("spec."))
    if "allow" in out and "alsoAllow" in out:
        diagnostics.append(
            Diagnostic(
                Severity.ERROR,
                "render.tools-allow-conflict",
                "OpenClaw rejects allow and alsoAllow in the same tool policy; alsoAllow left out",
                path=f"{path}.alsoAllow",
                hint="merge alsoAllow into allow, or drop allow and use profile + alsoAllow",
                resource=resource,
            )
        )
        del out["alsoAllow"]
    return out


def _deny_servers(
    entry: dict[str, Any], agent: Agent, hidden: list[str], diagnostics: list[Diagnostic]
) -> None:
    # OpenClaw has no per-agent server list, but MCP tools (named <server>__<tool>) go through
    # the agent's tool policy, where deny always wins.
    tools = entry.setdefault("tools", {})
    deny = list(tools.get("deny", []))
    deny.extend(p for p in (f"{name}{TOOL_NAME_SEPARATOR}*" for name in hidden) if p not in deny)
    tools["deny"] = deny
    diagnostics.append(
        Diagnostic(
            Severity.INFO,
            "render.agent-servers-as-deny",
            f"agent {agent.name!r} uses only {sorted(agent.spec.mcp_servers or [])}; "
            f"the other servers' tools are denied in its tool policy",
            path="spec.mcpServers",
            resource=agent.key,
        )
    )
