"""What every client projection shares: which servers an agent's client gets, and how it reaches each.

A server reaches a client in one of three ways:
- hosted (``hosting: clawplane`` stdio): streamable HTTP at clawplane's hosted endpoint, with
  the consumer's own bearer token (consumer id ``client:<client>:<agent>``, see
  ``hosted_auth_header``); the endpoint applies the server's ``toolFilter`` itself;
- consumer stdio: the client spawns ``command``/``args`` with ``env``;
- remote: the server's own ``url`` (sse or streamable HTTP) with its ``headers``.

Secrets stay references in the client's own syntax: each client module passes a ``Refs`` that
turns ``valueFrom.env`` (and, where the client has prompts, other references) into its text;
a reference the client cannot express is left out with an error diagnostic. A ``toolFilter``
on a server the client reaches directly is a client setting only where the client has one
(Gemini CLI); elsewhere the server is left out rather than exposing tools the filter hides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import Hosting, McpClient, McpServer, SecretValue, Transport, ValueFrom, literal_text
from clawplane.render.paths import absolute_path, base_dir_of


def consumer_id(client: McpClient, agent_id: str) -> str:
    """The consumer id under which a client projection authenticates to hosted servers."""
    return f"client:{client.value}:{agent_id.lower()}"


def hosted_auth_header(consumer: str, tokens: Mapping[str, str] | None) -> str | None:
    """The ``Authorization`` value ``consumer`` sends to clawplane's hosted endpoint; None without a token.

    ``tokens`` maps consumer ids (``openclaw``, ``codex:<agent>``, ``client:<client>:<agent>``)
    to that consumer's own bearer token, as the token plumbing provides them.
    """
    token = (tokens or {}).get(consumer)
    return f"Bearer {token}" if token else None


@dataclass(frozen=True)
class Reach:
    """How one client reaches one server."""

    name: str
    kind: Literal["stdio", "http", "sse"]
    hosted: bool = False
    command: str = ""
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: Mapping[str, SecretValue] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, SecretValue] = field(default_factory=dict)
    server: McpServer | None = None


AuthFor = Callable[[str, Sequence[McpServer]], Mapping[str, str]]
"""``(consumer id, hosted servers its config reaches) → Authorization value per server name``."""

RefText = Callable[[ValueFrom, str], str | None]
"""A reference in the client's syntax (``path`` names the field), or None when it has none."""


@dataclass
class ClientContext:
    """One agent's projection into one client."""

    client: McpClient
    agent_id: str
    hosted_urls: Mapping[str, str]
    base_dirs: Mapping[str, Path]
    discovered_tools: Mapping[str, Sequence[str]] | None = None
    auth: Mapping[str, str] = field(default_factory=dict)
    """``Authorization`` value per hosted server name, for this consumer."""
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def consumer(self) -> str:
        """This projection's consumer id."""
        return consumer_id(self.client, self.agent_id)

    def diag(
        self, severity: Severity, code: str, server: McpServer, message: str, path: str, hint: str = ""
    ) -> None:
        """Record a problem with ``server``'s entry in this client's file."""
        self.diagnostics.append(
            Diagnostic(
                severity,
                code,
                f"{self.client.value} config of agent {self.agent_id}: {server.name}: {message}",
                path=path,
                hint=hint,
                resource=server.key,
            )
        )

    def values(
        self, server: McpServer, values: Mapping[str, SecretValue], field_name: str, ref: RefText
    ) -> dict[str, str]:
        """``env``/``headers`` as text: literals as written, references in the client's syntax."""
        out: dict[str, str] = {}
        for key, value in values.items():
            path = f"spec.{field_name}.{key}"
            if not isinstance(value, ValueFrom):
                out[key] = literal_text(value)
                continue
            text = ref(value, path)
            if text is None:
                self.diag(
                    Severity.ERROR,
                    "render.client-secret-unrenderable",
                    server,
                    f"{field_name}.{key} left out: {self.client.value} has no syntax for this reference",
                    path,
                    "use valueFrom.env (the client reads the variable from its environment)",
                )
            else:
                out[key] = text
        return out


def projected(server: McpServer, agent_id: str, client: McpClient) -> bool:
    """True when ``server`` declares a projection into ``client`` for ``agent_id``."""
    clients = server.spec.clients
    if clients is None or not server.spec.enabled:
        return False
    if clients.targets is not None and client not in clients.targets:
        return False
    return clients.agents is None or agent_id.lower() in {a.lower() for a in clients.agents}


def reach(server: McpServer, ctx: ClientContext, *, filters_tools: bool = False) -> Reach | None:
    """How ``ctx``'s client reaches ``server``, or None (with a diagnostic) when it cannot."""
    spec = server.spec
    transport = spec.effective_transport
    if transport is Transport.STDIO and spec.hosting is Hosting.CLAWPLANE:
        url = ctx.hosted_urls.get(server.name)
        if url is None:
            ctx.diag(
                Severity.ERROR,
                "render.no-hosted-url",
                server,
                "hosted server has no endpoint yet; left out",
                "spec.hosting",
                "start it under the supervisor first, or set hosting: consumer",
            )
            return None
        auth = ctx.auth.get(server.name)
        headers: dict[str, SecretValue] = {"Authorization": auth} if auth else {}
        return Reach(server.name, "http", hosted=True, url=url, headers=headers, server=server)
    if spec.tool_filter is not None and not filters_tools:
        ctx.diag(
            Severity.WARNING,
            "render.client-tool-filter",
            server,
            f"{ctx.client.value} cannot filter a server's tools, and this one has a toolFilter; "
            "left out rather than expose the tools it hides",
            "spec.toolFilter",
            "host it with clawplane (hosting: clawplane), whose endpoint applies the filter",
        )
        return None
    if transport is Transport.STDIO:
        base = base_dir_of(server, ctx.base_dirs)
        return Reach(
            server.name,
            "stdio",
            command=spec.command or "",
            args=tuple(spec.args),
            cwd=absolute_path(spec.cwd, base) if spec.cwd else None,
            env=spec.env,
            server=server,
        )
    kind: Literal["http", "sse"] = "sse" if transport is Transport.SSE else "http"
    return Reach(server.name, kind, url=spec.url or "", headers=spec.headers, server=server)


def hosted_servers(
    servers: Sequence[McpServer], agent_id: str, client: McpClient, hosted_urls: Mapping[str, str]
) -> list[McpServer]:
    """The hosted servers ``client``'s config for ``agent_id`` reaches (what its token must reach)."""
    return [
        s
        for s in servers
        if projected(s, agent_id, client)
        and s.name in hosted_urls
        and s.spec.effective_transport is Transport.STDIO
        and s.spec.hosting is Hosting.CLAWPLANE
    ]


def reaches(servers: Sequence[McpServer], ctx: ClientContext, *, filters_tools: bool = False) -> list[Reach]:
    """Every server projected into ``ctx``'s client, sorted by name, as the client reaches it."""
    out = []
    for server in sorted(servers, key=lambda s: s.name):
        if projected(server, ctx.agent_id, ctx.client):
            found = reach(server, ctx, filters_tools=filters_tools)
            if found is not None:
                out.append(found)
    return out
