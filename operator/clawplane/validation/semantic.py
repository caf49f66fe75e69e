"""Cross-resource and policy checks on validated resources.

Runs after every document passed structural validation, so it can look at the
whole set: duplicates, references, blocked environment names, literal secrets,
channel policies, MCP server names that would collide after sanitizing, model
providers (``validation.providers``) and model references (``validation.modelrefs``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from operator import is_

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import AGENT_ID_RE, Agent, Channel, DmPolicy, Gateway, McpServer, Resource, ValueFrom
from clawplane.naming import (
    ENDPOINT_SERVER_NAMES,
    assign_server_names,
    is_blocked_env_name,
    is_reserved_server_name,
    is_sensitive_key,
    redact_url_userinfo,
)
from clawplane.validation.modelrefs import check_model_refs
from clawplane.validation.openclaw.secretvalues import openclaw_secret_values
from clawplane.validation.providers import VALUE_FROM_HINT, check_providers
from clawplane.validation.rawrefs import RawResource
from clawplane.validation.result import LoadedResource
from clawplane.validation.suggest import did_you_mean

E, W = Severity.ERROR, Severity.WARNING


@dataclass
class SemanticMemo:
    """What ``check_all`` keeps between passes over one folder (a validation cache holds it).

    A validation cache hands back the same resource object while its file is unchanged, so
    identity is the cheap "nothing changed" test for what depends on one resource alone.
    The set-wide checks (duplicates, references, name collisions, providers, model
    references) depend on the whole set: they are reused when every resource's
    ``_set_facts`` equals the last pass's, and either they found nothing then or every
    resource is the very same object (a diagnostic names where its resource is written).
    """

    resources: dict[int, tuple[LoadedResource, tuple[Diagnostic, ...], object]] = field(default_factory=dict)
    """Per resource object: its own checks' findings and its set-wide facts."""
    items: list[LoadedResource] = field(default_factory=list)
    facts: list[object] | None = None
    """Every resource's set-wide facts, in order; None when the last set-wide result is not reusable."""
    set_wide: list[Diagnostic] = field(default_factory=list)

    def set_wide_of(self, items: list[LoadedResource], facts: list[object]) -> list[Diagnostic] | None:
        """The last pass's set-wide findings, if they hold for ``items`` (with these ``facts``)."""
        if self.facts is None or facts != self.facts:
            return None
        if self.set_wide and not (len(items) == len(self.items) and all(map(is_, items, self.items))):
            return None
        return self.set_wide


def check_all(
    resources: list[LoadedResource],
    *,
    invalid: Iterable[RawResource] = (),
    memo: SemanticMemo | None = None,
) -> list[Diagnostic]:
    """Every semantic check over the whole set; ``invalid`` holds resources that failed validation.

    Those still count as declared, and their own references are checked from the raw document.
    ``memo``, kept from the last call on the same folder, spares work for what did not change
    (see ``SemanticMemo``); it is updated to hold exactly this set's resources.
    """
    raws = list(invalid)
    known = memo.resources if memo is not None else {}
    fresh: dict[int, tuple[LoadedResource, tuple[Diagnostic, ...], object]] = {}
    for item in resources:
        hit = known.get(id(item))
        if hit is None or hit[0] is not item:
            hit = (item, tuple(_one_resource(item)), _set_facts(item.resource))
        fresh[id(item)] = hit
    facts = [fresh[id(item)][2] for item in resources]
    # Raw documents of invalid resources are new objects each pass: never reuse around them.
    reused = memo.set_wide_of(resources, facts) if memo is not None and not raws else None
    out = list(reused) if reused is not None else _set_wide(resources, raws)
    if memo is not None:
        memo.resources = fresh
        memo.items = list(resources)
        memo.facts = None if raws else facts
        memo.set_wide = out[:]
    for item in resources:
        out.extend(fresh[id(item)][1])
    return out


def _set_facts(res: Resource) -> object:
    """All that the set-wide checks (``_set_wide``) read of ``res``: equal facts, equal findings.

    A set-wide check that comes to read more of a resource must add it here, or its findings
    go stale while only that field changes.
    """
    meta = res.metadata
    if isinstance(res, McpServer):
        codex = res.spec.codex
        return (type(res), res.kind, meta.namespace, meta.name, codex.agents if codex is not None else None)
    if isinstance(res, Agent):
        return (type(res), res.kind, meta.namespace, meta.name, res.spec.mcp_servers, res.spec.model)
    if isinstance(res, Channel):
        return (type(res), res.kind, meta.namespace, meta.name, res.spec.agent)
    return res  # Gateways and providers feed checks that read most of them: all of it


def _set_wide(resources: list[LoadedResource], raws: list[RawResource]) -> list[Diagnostic]:
    """The checks that look at the whole set."""
    out: list[Diagnostic] = []
    for check in (_duplicates, _gateways, _server_names, _agent_ids):
        out.extend(check(resources))
    out.extend(_references(resources, raws))
    for raw in raws:
        url = raw.value(("spec", "url")) if raw.kind == "McpServer" else None
        if isinstance(url, str):
            out.extend(_url_credentials(raw, url))
    out.extend(check_providers(resources))
    out.extend(check_model_refs(resources, invalid=raws))
    return out


def _one_resource(item: LoadedResource) -> Iterator[Diagnostic]:
    """The checks that need only this resource."""
    res = item.resource
    if isinstance(res, McpServer):
        yield from _server_env(item, res)
        yield from _server_secrets(item, res)
    elif isinstance(res, Channel):
        yield from _channel_policy(item, res)
    if isinstance(res, Channel | Gateway | Agent | McpServer):
        yield from _openclaw_literal_secrets(item, res)
    if isinstance(res, Gateway):
        yield from _metrics_collector(item, res)
        for key, entry in res.spec.skills.entries.items():
            base = ("spec", "skills", "entries", key)
            yield from _literal_secrets(item, entry.env, (*base, "env"))
            if entry.api_key is not None and not isinstance(entry.api_key, ValueFrom):
                yield item.diagnostic(
                    W,
                    "secret.literal",
                    "apiKey holds a literal secret",
                    (*base, "apiKey"),
                    hint=_VALUE_FROM_HINT,
                )


_VALUE_FROM_HINT = VALUE_FROM_HINT
_COLLECTOR_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")


def _metrics_collector(item: LoadedResource, gateway: Gateway) -> Iterator[Diagnostic]:
    """``metrics.export: true`` with nowhere to export to (``telemetry.metricexport`` decides the same).

    The environment read is this process's: the supervisor's when it validates a pass, the
    shell's for ``clawplane validate`` (the hint says where it must be set).
    """
    observability = gateway.spec.observability
    traces = observability.traces
    if not observability.metrics.export or (traces is not None and traces.endpoint is not None):
        return
    if any(os.environ.get(name, "").strip() for name in _COLLECTOR_VARIABLES):
        return
    yield item.diagnostic(
        W,
        "metrics.no-collector",
        "metrics.export is on but no collector is set, so metrics will not be exported",
        ("spec", "observability", "metrics", "export"),
        hint="set spec.observability.traces.endpoint (e.g. http://127.0.0.1:4318/v1/traces; metrics go to "
        "its /v1/metrics), or OTEL_EXPORTER_OTLP_ENDPOINT in the supervisor's environment",
    )


def _by_kind(resources: Iterable[LoadedResource], kind: str) -> Iterator[LoadedResource]:
    return (r for r in resources if r.resource.kind == kind)


def _duplicates(resources: list[LoadedResource]) -> Iterator[Diagnostic]:
    seen: dict[tuple[str, str | None, str], LoadedResource] = {}
    for item in resources:
        meta = item.resource.metadata
        key = (item.resource.kind, meta.namespace, meta.name)
        if key in seen:
            first = seen[key].at(("metadata", "name"))
            yield item.diagnostic(
                E,
                "resource.duplicate",
                f"duplicate {item.key} (first defined at {first})",
                ("metadata", "name"),
                hint="rename one of them or delete the duplicate",
            )
        else:
            seen[key] = item


def _gateways(resources: list[LoadedResource]) -> Iterator[Diagnostic]:
    gateways = list(_by_kind(resources, "Gateway"))
    for extra in gateways[1:]:
        yield extra.diagnostic(
            E,
            "gateway.multiple",
            f"more than one Gateway (first is {gateways[0].key} at {gateways[0].at(())})",
            ("metadata", "name"),
            hint="merge the settings into a single Gateway",
        )


def _references(resources: list[LoadedResource], invalid: list[RawResource]) -> Iterator[Diagnostic]:
    # Resources that failed validation still count as declared: their own errors say enough.
    agents = {r.resource.name.lower() for r in _by_kind(resources, "Agent")}
    agents |= {r.name.lower() for r in invalid if r.kind == "Agent"}
    servers = {r.resource.name for r in _by_kind(resources, "McpServer")}
    servers |= {r.name for r in invalid if r.kind == "McpServer"}
    known = {"Agent": agents, "McpServer": servers}
    for raw in invalid:
        for kind, name, path in raw.references():
            wanted = name.lower() if kind == "Agent" else name
            if wanted not in known[kind]:
                yield _missing(raw, kind, name, path, known[kind])
    uses = {
        r.resource.name.lower(): r.resource.spec.mcp_servers
        for r in _by_kind(resources, "Agent")
        if isinstance(r.resource, Agent)
    }
    for item in resources:
        res = item.resource
        if isinstance(res, McpServer) and res.spec.codex and res.spec.codex.agents:
            for i, agent in enumerate(res.spec.codex.agents):
                path = ("spec", "codex", "agents", i)
                if agent.lower() not in agents:
                    yield _missing(item, "Agent", agent, path, agents)
                elif (servers_of := uses.get(agent.lower())) is not None and res.name not in servers_of:
                    yield item.diagnostic(
                        W,
                        "codex.agent-without-server",
                        f"Agent {agent!r} does not use MCP server {res.name!r} (its mcpServers leave it "
                        "out), so its Codex config will not include it",
                        path,
                        hint=f"add {res.name!r} to Agent {agent}'s mcpServers, or remove {agent!r} here",
                    )
        elif isinstance(res, Agent):
            for i, server in enumerate(res.spec.mcp_servers or []):
                if server not in servers:
                    yield _missing(item, "McpServer", server, ("spec", "mcpServers", i), servers)
        elif isinstance(res, Channel):
            if res.spec.agent and res.spec.agent.lower() not in agents:
                yield _missing(item, "Agent", res.spec.agent, ("spec", "agent"), agents)
        elif isinstance(res, Gateway):
            default = res.spec.agents.default_agent
            if default and default.lower() not in agents:
                yield _missing(item, "Agent", default, ("spec", "agents", "defaultAgent"), agents)


def _missing(
    item: LoadedResource | RawResource, kind: str, name: str, path: tuple[str | int, ...], known: set[str]
) -> Diagnostic:
    guess = did_you_mean(name, sorted(known))
    article = "an" if kind[0] in "AEIOU" else "a"
    hint = (
        f"did you mean {guess!r}?"
        if guess
        else f"declare {article} {kind} named {name!r} or remove the reference"
    )
    return item.diagnostic(E, "ref.unresolved", f"{kind} {name!r} is not declared", path, hint=hint)


def _server_names(resources: list[LoadedResource]) -> Iterator[Diagnostic]:
    servers = list(_by_kind(resources, "McpServer"))
    for item in servers:
        if is_reserved_server_name(item.resource.name):
            yield item.diagnostic(
                E,
                "mcp.reserved-name",
                f"MCP server name {item.resource.name!r} is reserved",
                ("metadata", "name"),
                hint="rename the server",
            )
        elif item.resource.name in ENDPOINT_SERVER_NAMES:
            yield item.diagnostic(
                E,
                "mcp.reserved-name",
                f"MCP server name {item.resource.name!r} is reserved: /mcp/{item.resource.name}/<agent> "
                "is each agent's aggregated endpoint on the supervisor",
                ("metadata", "name"),
                hint="rename the server",
            )
    safe = assign_server_names([s.resource.name for s in servers])
    for item, final in zip(servers, safe, strict=True):
        name = item.resource.name
        if final.lower() != name.lower():
            base = assign_server_names([name])[0]
            if base.lower() != final.lower():
                yield item.diagnostic(
                    W,
                    "mcp.name-collision",
                    f"MCP server {name!r} sanitizes to {base!r}, which another server already uses; "
                    f"its tools will be prefixed {final!r}",
                    ("metadata", "name"),
                    hint="rename one of the servers so their sanitized names differ",
                )


def _agent_ids(resources: list[LoadedResource]) -> Iterator[Diagnostic]:
    seen: dict[str, LoadedResource] = {}
    for item in _by_kind(resources, "Agent"):
        name = item.resource.name
        if not AGENT_ID_RE.match(name):
            yield item.diagnostic(
                E,
                "agent.invalid-id",
                f"{name!r} is not a valid agent id",
                ("metadata", "name"),
                hint="agent ids match ^[a-z0-9][a-z0-9_-]{0,63}$",
            )
        lowered = name.lower()
        if lowered in seen and seen[lowered].resource.name != name:
            yield item.diagnostic(
                E,
                "agent.id-collision",
                f"agent ids are case-insensitive: {name!r} and {seen[lowered].resource.name!r} collide",
                ("metadata", "name"),
                hint="rename one of the agents",
            )
        seen.setdefault(lowered, item)


def _server_env(item: LoadedResource, res: McpServer) -> Iterator[Diagnostic]:
    for key in res.spec.env:
        if is_blocked_env_name(key):
            yield item.diagnostic(
                E,
                "mcp.env-blocked",
                f"env {key.strip()!r} is blocked for stdio servers (OpenClaw drops it at startup)",
                ("spec", "env", key),
                key=True,
                hint="remove it; variables that change how interpreters, linkers or shells start "
                "are not allowed",
            )


def _server_secrets(item: LoadedResource, res: McpServer) -> Iterator[Diagnostic]:
    yield from _literal_secrets(item, res.spec.env, ("spec", "env"))
    yield from _literal_secrets(item, res.spec.headers, ("spec", "headers"))
    if res.spec.url:
        yield from _url_credentials(item, res.spec.url)


def _url_credentials(item: LoadedResource | RawResource, url: str) -> Iterator[Diagnostic]:
    redacted, had_userinfo = redact_url_userinfo(url)
    if had_userinfo:
        yield item.diagnostic(
            W,
            "secret.url-userinfo",
            f"url {redacted} carries credentials",
            ("spec", "url"),
            hint="move the credentials into headers with valueFrom; clawplane shows this url redacted",
        )


def _openclaw_literal_secrets(item: LoadedResource, res: Resource) -> Iterator[Diagnostic]:
    """Literals in OpenClaw's secret fields (SecretInputs such as ``botToken``) or under secret names."""
    typed = (("spec", "env"), ("spec", "headers"), ("spec", "skills", "entries"))
    for found in openclaw_secret_values(res):
        if isinstance(found.value, ValueFrom) or any(("spec", *found.path)[: len(t)] == t for t in typed):
            continue
        text = str(found.value)
        if text.strip() and not text.startswith("$"):
            where = ".".join(map(str, found.path))
            yield item.diagnostic(
                W,
                "secret.literal",
                f"{where} holds a literal secret value",
                ("spec", *found.path),
                hint=_VALUE_FROM_HINT,
            )


def _literal_secrets(
    item: LoadedResource, values: Mapping[str, object], base: tuple[str, ...]
) -> Iterator[Diagnostic]:
    for key, value in values.items():
        if isinstance(value, ValueFrom) or not is_sensitive_key(key):
            continue
        text = str(value)
        if text.strip() and not text.startswith("$"):
            yield item.diagnostic(
                W,
                "secret.literal",
                f"{base[-1]}.{key} holds a literal secret value",
                (*base, key),
                hint=_VALUE_FROM_HINT,
            )


def _channel_policy(item: LoadedResource, res: Channel) -> Iterator[Diagnostic]:
    spec, ch = res.spec, res.spec.type
    if spec.dm_policy is DmPolicy.OPEN and "*" not in [str(a) for a in spec.allow_from]:
        yield item.diagnostic(
            W,
            "channel.open-without-wildcard",
            f'{ch}: dmPolicy "open" but allowFrom does not include "*"; all DMs will be dropped',
            ("spec", "dmPolicy"),
            hint='add "*" to allowFrom, or use dmPolicy: allowlist',
        )
    if spec.dm_policy is DmPolicy.ALLOWLIST and not spec.allow_from:
        yield item.diagnostic(
            W,
            "channel.empty-allowlist",
            f'{ch}: dmPolicy "allowlist" but allowFrom is empty; all DMs will be dropped',
            ("spec", "dmPolicy"),
            hint="list the senders in allowFrom, or use dmPolicy: pairing",
        )
