"""The rendered openclaw.json checked against OpenClaw's schema, each problem traced to its resource.

``clawplane validate`` checks what every resource declares; this is the last word on what
clawplane actually wrote (its own additions included: hosted endpoints, deny lists, route
bindings, secret providers). A failure here means rendering produced something OpenClaw would
refuse, and it is reported against the resource whose entry holds it.

A fleet's entries (``mcp.servers.<name>``, ``agents.entries.<id>``) are checked one by one and
remembered by identity between renders (the renderer hands back the same object for an
unchanged entry), so a re-plan checks only what changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import Agent, Channel, Gateway, McpServer, ModelProvider, Resource
from clawplane.schema.openclaw import OPENCLAW_VERSION, config_schema, node_at
from clawplane.schema.openclaw.check import Issue, check
from clawplane.schema.openclaw.refinements import refine
from clawplane.validation.openclaw.projection import deferred_substitutions

PathT = tuple[str | int, ...]
_FLEETS: tuple[tuple[str, str], ...] = (("mcp", "servers"), ("agents", "entries"))


class RenderedChecks:
    """Issues of fleet entries, kept between renders while the entry object is the same."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[object, list[Issue]]] = {}
        self._fresh: dict[int, tuple[object, list[Issue]]] = {}

    def begin(self) -> None:
        """Start a render: what the last one did not see again is dropped."""
        self._kept, self._fresh = self._fresh, {}

    def entry(self, value: Any, node: Mapping[str, Any]) -> list[Issue]:
        """The issues of one entry (checked again only when it is a new object)."""
        hit = self._kept.get(id(value))
        if hit is None or hit[0] is not value:
            hit = (value, check(value, dict(node), deferred=deferred_substitutions(value)))
        self._fresh[id(value)] = hit
        return hit[1]


def check_rendered(
    config: Mapping[str, Any],
    *,
    gateway: Gateway | None,
    servers: Sequence[McpServer],
    agents: Sequence[Agent],
    channels: Sequence[Channel],
    providers: Sequence[ModelProvider],
    memo: RenderedChecks | None = None,
) -> list[Diagnostic]:
    """Every place the rendered config fails OpenClaw's schema, as errors on the resources behind them."""
    memo = memo if memo is not None else RenderedChecks()
    memo.begin()
    owners = _Owners(gateway, servers, agents, channels, providers)
    found: list[Diagnostic] = []
    rest: dict[str, Any] = dict(config)
    for section, key in _FLEETS:
        block = config.get(section)
        entries = block.get(key) if isinstance(block, Mapping) else None
        if not isinstance(entries, Mapping):
            continue
        node = node_at((section, key, "*")) or {}
        for name, value in entries.items():
            for issue in memo.entry(value, node):
                found.append(owners.diagnostic((section, key, name, *issue.path), issue))
        rest[section] = {**dict(block or {}), key: {}}
    unchecked = [tuple(p.split(".")) for p in gateway.spec.config_unchecked] if gateway is not None else []
    issues = check(rest, config_schema(), deferred=deferred_substitutions(rest))
    issues += refine(config, whole=True)
    for issue in issues:
        # Keys of a newer OpenClaw, passed through on purpose (the Gateway's spec.configUnchecked).
        if not any(issue.path[: len(p)] == p for p in unchecked):
            found.append(owners.diagnostic(issue.path, issue))
    return found


class _Owners:
    """Which resource wrote each part of openclaw.json."""

    def __init__(
        self,
        gateway: Gateway | None,
        servers: Sequence[McpServer],
        agents: Sequence[Agent],
        channels: Sequence[Channel],
        providers: Sequence[ModelProvider],
    ) -> None:
        self.gateway = gateway
        self.by_prefix: dict[tuple[str, str, str], Resource] = {}
        for server in servers:
            self.by_prefix[("mcp", "servers", server.name)] = server
        for agent in agents:
            self.by_prefix[("agents", "entries", agent.name.strip().lower())] = agent
        for channel in channels:
            self.by_prefix.setdefault(("channels", channel.spec.type, ""), channel)
        for provider in providers:
            self.by_prefix[("models", "providers", provider.name)] = provider

    def diagnostic(self, path: PathT, issue: Issue) -> Diagnostic:
        dotted = ".".join(map(str, path))
        owner: Resource | None = None
        spec_path: PathT = path
        if len(path) >= 3:
            owner = self.by_prefix.get((str(path[0]), str(path[1]), str(path[2])))
            spec_path = path[3:]
        if owner is None and len(path) >= 2 and path[0] == "channels":
            owner = self.by_prefix.get(("channels", str(path[1]), ""))
            spec_path = path[2:]
        if owner is None:
            owner, spec_path = self.gateway, path
        return Diagnostic(
            Severity.ERROR,
            "render.openclaw-schema",
            f"rendered openclaw.json fails OpenClaw {OPENCLAW_VERSION}'s schema at {dotted}: {issue.message}",
            path=".".join(("spec", *map(str, spec_path))) if owner is not None else dotted,
            hint=issue.hint or "clawplane should have refused this at validate; please report it",
            resource=owner.key if owner is not None else "",
        )
