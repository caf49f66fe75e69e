"""McpServer: one MCP server (OpenClaw's ``mcp.servers.<name>``)."""

from __future__ import annotations

import enum
from typing import Annotated, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import Field, StringConstraints, field_validator, model_validator

from clawplane.models.base import AgentId, Model, NonEmptyStr, Resource
from clawplane.models.openparts import OpenPart
from clawplane.models.values import SecretValue

DEFAULT_CONNECTION_TIMEOUT_MS = 30000
DEFAULT_REQUEST_TIMEOUT_MS = 60000


class Transport(enum.StrEnum):
    """How clawplane talks to the server."""

    STDIO = "stdio"
    SSE = "sse"
    STREAMABLE_HTTP = "streamable-http"


class Hosting(enum.StrEnum):
    """Who keeps a stdio server running."""

    CLAWPLANE = "clawplane"
    CONSUMER = "consumer"


class SessionMode(enum.StrEnum):
    """How clients of a hosted stdio server are isolated from one another."""

    PER_CLIENT = "perClient"
    SHARED = "shared"


class SessionAffinity(enum.StrEnum):
    """How the Service in front of several bridge replicas picks one (kubernetes driver)."""

    NONE = "None"
    CLIENT_IP = "ClientIP"


DEFAULT_MAX_SESSIONS = 32
MAX_REPLICAS = 50
DEFAULT_SESSION_IDLE_TTL_MS = 600_000


class ApprovalMode(enum.StrEnum):
    """Tool approval as Codex has it: ``approve`` never asks, ``prompt`` always asks, ``writes`` asks
    unless the tool is read-only, ``auto`` asks unless the tool's annotations say it is safe.
    OpenClaw has no ``writes``: openclaw.json gets ``prompt`` for it (never less strict)."""

    AUTO = "auto"
    PROMPT = "prompt"
    WRITES = "writes"
    APPROVE = "approve"


# OpenClaw's legacy ``type`` spellings and the transport each means.
LEGACY_TYPE_ALIASES: dict[str, Transport] = {
    "http": Transport.STREAMABLE_HTTP,
    "streamable-http": Transport.STREAMABLE_HTTP,
    "sse": Transport.SSE,
    "stdio": Transport.STDIO,
}

PositiveMs = Annotated[int, Field(gt=0, le=2_147_483_647)]

FilterPattern = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class ToolFilter(Model):
    """Which of the server's tools agents see, matched on raw MCP tool names."""

    OPENCLAW_ALIGNED: ClassVar[bool] = True

    include: Annotated[list[FilterPattern], Field(min_length=1)] | None = None
    """Only tools matching one of these names or ``*`` globs."""
    exclude: Annotated[list[FilterPattern], Field(min_length=1)] | None = None
    """Never tools matching one of these names or ``*`` globs (wins over include)."""


class CodexProjection(Model):
    """How the server is projected into Codex ``config.toml`` files."""

    OPENCLAW_ALIGNED: ClassVar[bool] = True

    agents: Annotated[list[AgentId], Field(min_length=1)] | None = None
    """Agent ids whose Codex config gets this server; omitted = every agent."""
    default_tools_approval_mode: ApprovalMode | None = None
    """Codex approval mode for this server's tools."""


DEFAULT_TOOL_APPROVAL_TIMEOUT_MS = 50_000

ToolGlob = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class ToolApproval(Model):
    """Which of the server's tools need an answer in clawplane's approval queue before they run."""

    tools: Annotated[dict[ToolGlob, ApprovalMode], Field(min_length=1)]
    """Raw tool names or ``*`` globs → Codex approval mode; an exact name wins over a glob, a longer glob over a shorter one. Unmatched tools are not held by clawplane."""
    timeout_ms: PositiveMs = DEFAULT_TOOL_APPROVAL_TIMEOUT_MS
    """How long a held call waits for an answer before it fails and the request expires; keep it below the consumers' request timeout (OpenClaw: 60000)."""


class McpClient(enum.StrEnum):
    """MCP clients clawplane writes a config file for (``out/clients/<client>/<agent>/<file>``)."""

    CLAUDE_CODE = "claude-code"
    CLAUDE_DESKTOP = "claude-desktop"
    VSCODE = "vscode"
    CURSOR = "cursor"
    GEMINI_CLI = "gemini-cli"


class ClientProjection(Model):
    """Which MCP clients' configs include this server, for which agents."""

    agents: Annotated[list[AgentId], Field(min_length=1)] | None = None
    """Agent ids whose client configs get this server; omitted = every agent that uses it."""
    targets: Annotated[list[McpClient], Field(min_length=1)] | None = None
    """Clients to write configs for; omitted = all of them."""


class OAuthIdentity(enum.StrEnum):
    """Whose OAuth credentials a remote server is called with."""

    SHARED = "shared"
    PER_REQUESTER = "per-requester"


def _url_of(value: str, *, https_path: bool) -> str:
    parts = urlsplit(value.strip())
    if https_path:
        if parts.scheme != "https" or not parts.netloc or parts.path in ("", "/"):
            raise ValueError("Expected an https:// URL with a path")
    elif parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("Expected http:// or https:// URL")
    return value.strip()


class McpOAuth(Model):
    """OAuth 2.1 for a remote MCP server (OpenClaw ``mcp.servers.<name>.oauth``)."""

    OPENCLAW_ALIGNED: ClassVar[bool] = True
    OWN: ClassVar[frozenset[str]] = frozenset({"clientId", "clientSecret"})

    identity: OAuthIdentity | None = None
    """``shared`` (default): operator-managed credentials; ``per-requester``: each sender connects their own account."""
    auth_profile_id: NonEmptyStr | None = None
    """OpenClaw auth profile holding the shared credentials (not with ``per-requester``)."""
    scope: NonEmptyStr | None = None
    """OAuth scopes to request, space-separated."""
    redirect_url: str | None = None
    """Redirect URL registered with the authorization server (http or https)."""
    client_metadata_url: str | None = None
    """Client ID metadata document URL (https, with a path)."""
    client_id: SecretValue | None = None
    """clawplane: a client registered with the authorization server beforehand (literal or ``valueFrom``); without one clawplane uses ``clientMetadataUrl`` or registers itself."""
    client_secret: SecretValue | None = None
    """clawplane: that client's secret (``valueFrom`` recommended); never rendered into openclaw.json."""

    @field_validator("redirect_url")
    @classmethod
    def _redirect(cls, value: str | None) -> str | None:
        return None if value is None else _url_of(value, https_path=False)

    @field_validator("client_metadata_url")
    @classmethod
    def _metadata(cls, value: str | None) -> str | None:
        return None if value is None else _url_of(value, https_path=True)


class KubernetesResources(Model):
    """Container resource requests and limits (kubernetes driver)."""

    requests: dict[str, str | int] = Field(default_factory=dict)
    """e.g. ``{cpu: 100m, memory: 128Mi}``."""
    limits: dict[str, str | int] = Field(default_factory=dict)
    """e.g. ``{memory: 256Mi}``."""


class McpServerSpec(OpenPart):
    """Desired configuration of one MCP server: clawplane's fields and every key of OpenClaw's
    ``mcp.servers.<name>``."""

    OWN: ClassVar[frozenset[str]] = frozenset({
        "type", "toolApproval", "clients", "hosting", "sessions", "maxSessions", "maxSessionsPerConsumer",
        "sessionIdleTtlMs", "image", "resources", "replicas", "sessionAffinity",
    })  # fmt: skip
    OPENCLAW_ALIGNED: ClassVar[bool] = True

    enabled: bool = True
    """``false`` keeps the declaration but runs and renders nothing."""
    transport: Transport | None = None
    """``stdio``, ``sse`` or ``streamable-http``; inferred when omitted (command → stdio, url → sse)."""
    type: str | None = None
    """Legacy alias of ``transport`` (``http``, ``streamable-http``, ``sse``, ``stdio``)."""
    command: str | None = None
    """Executable of a stdio server."""
    args: list[str] = Field(default_factory=list)
    """Arguments of a stdio server."""
    env: dict[str, SecretValue] = Field(default_factory=dict)
    """Extra environment for a stdio server; values may be ``valueFrom`` references."""
    cwd: str | None = None
    """Working directory of a stdio server; relative paths are relative to the resource file."""
    url: str | None = None
    """Endpoint of an sse or streamable-http server (http or https)."""
    headers: dict[str, SecretValue] = Field(default_factory=dict)
    """HTTP headers for a remote server; values may be ``valueFrom`` references."""
    connection_timeout_ms: PositiveMs = DEFAULT_CONNECTION_TIMEOUT_MS
    """How long connecting and initializing may take, in milliseconds."""
    request_timeout_ms: PositiveMs = DEFAULT_REQUEST_TIMEOUT_MS
    """How long one request may take, in milliseconds."""
    supports_parallel_tool_calls: bool = False
    """Whether agents may call this server's tools in parallel."""
    ssl_verify: bool | None = None
    """Verify TLS certificates of a remote server (default true)."""
    client_cert: str | None = None
    """Client certificate file for mutual TLS."""
    client_key: str | None = None
    """Client key file for mutual TLS."""
    auth: Literal["oauth"] | None = None
    """``oauth``: the remote server is called with OAuth 2.1 tokens (see ``oauth``)."""
    oauth: McpOAuth | None = None
    """OAuth settings of a remote server (``auth: oauth``)."""
    tool_filter: ToolFilter | None = None
    """Include/exclude lists applied to the server's raw tool names."""
    codex: CodexProjection | None = None
    """Codex projection settings."""
    tool_approval: ToolApproval | None = None
    """Tool calls through clawplane's endpoints that wait for an approval; also rendered as Codex per-tool ``approval_mode``."""
    clients: ClientProjection | None = None
    """Projections into MCP clients' own config files (Claude Code, Claude Desktop, VS Code, Cursor, Gemini CLI); absent = none."""
    hosting: Hosting = Hosting.CLAWPLANE
    """``clawplane`` keeps a stdio server running and exposes it over HTTP; ``consumer`` lets the agent runtime spawn it."""
    sessions: SessionMode = SessionMode.PER_CLIENT
    """Hosted servers: ``perClient`` gives every client session a process of its own; ``shared`` serves all clients from one process (only for servers that keep no per-client state)."""
    max_sessions: Annotated[int, Field(ge=1, le=10_000)] = DEFAULT_MAX_SESSIONS
    """Hosted servers: how many client sessions may be open at once. At the limit the least-recently-used idle session (no request in flight, no open stream) is closed to make room; when none is idle, one more is refused with an error."""
    max_sessions_per_consumer: Annotated[int, Field(ge=1, le=10_000)] | None = None
    """Hosted servers: how many of those sessions one consumer (one token: ``openclaw``, ``client:cursor:<agent>``, …) may hold; at its share its own least-recently-used idle session makes room, else it is refused, so no consumer can lock the others out. Absent: three quarters of ``maxSessions`` (rounded up)."""
    session_idle_ttl_ms: PositiveMs = DEFAULT_SESSION_IDLE_TTL_MS
    """Hosted servers: a client session with no request in flight and no open stream for this long after its last use is closed (and its process stopped); a ``ping`` is not a use."""
    image: str | None = None
    """Container image for the stdio server (kubernetes driver)."""
    resources: KubernetesResources | None = None
    """Container resources (kubernetes driver)."""
    replicas: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = 1
    """Hosted stdio servers on Kubernetes: bridge pods behind the Service. With more than one, a session stays on the replica that opened it (its ``Mcp-Session-Id`` names the replica, the others forward to it); a replica that goes away takes its sessions along, whose clients get 404 and initialize again; 2026-07-28 requests need no session and spread over all replicas. Ignored by ``clawplane run`` (one machine)."""
    session_affinity: SessionAffinity = SessionAffinity.NONE
    """Hosted stdio servers on Kubernetes: ``ClientIP`` also pins each client address to one replica in the Service (the fallback when replicas cannot reach each other; it stops stateless traffic from one client spreading). ``None`` (default) spreads requests and routes sessions by id."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("Expected http:// or https:// URL")
        return value.strip()

    @field_validator("command", "cwd")
    @classmethod
    def _strip(cls, value: str | None) -> str | None:
        return value.strip() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _transport_needs(self) -> McpServerSpec:
        transport = self.effective_transport
        if transport is Transport.STDIO and not self.command:
            raise ValueError('"stdio" transport requires a non-empty command')
        if transport in (Transport.SSE, Transport.STREAMABLE_HTTP) and not self.url:
            raise ValueError(f'"{transport.value}" transport requires a url')
        if transport is None:
            raise ValueError("an MCP server needs a command (stdio) or a url (sse/streamable-http)")
        if self.oauth is not None and self.oauth.identity is OAuthIdentity.PER_REQUESTER:
            if self.auth != "oauth":
                raise ValueError('oauth.identity "per-requester" requires auth: oauth')
            if self.oauth.auth_profile_id is not None:
                raise ValueError('oauth.identity "per-requester" cannot use oauth.authProfileId')
            if transport is Transport.STDIO or self.command or not self.url:
                raise ValueError('oauth.identity "per-requester" needs a remote server (url), not a command')
        return self

    @property
    def behind_endpoint(self) -> bool:
        """An enabled stdio server clawplane hosts: consumers reach it at the hosted endpoint."""
        return (
            self.enabled and self.effective_transport is Transport.STDIO and self.hosting is Hosting.CLAWPLANE
        )

    @property
    def effective_transport(self) -> Transport | None:
        """The transport clawplane will use: explicit, legacy alias, or inferred."""
        if self.transport is not None:
            return self.transport
        alias = LEGACY_TYPE_ALIASES.get((self.type or "").strip().lower())
        if alias is not None:
            return alias
        if self.command:
            return Transport.STDIO
        if self.url:
            return Transport.SSE
        return None


class McpServer(Resource):
    """An MCP server that agents can use."""

    KIND: ClassVar[str] = "McpServer"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("mcps", "mcp")
    PLURAL: ClassVar[str] = "mcpservers"

    kind: Literal["McpServer"]
    spec: McpServerSpec
    """Desired configuration."""


__all__ = [
    "ApprovalMode",
    "ClientProjection",
    "CodexProjection",
    "Hosting",
    "McpClient",
    "McpOAuth",
    "McpServer",
    "McpServerSpec",
    "OAuthIdentity",
    "SessionMode",
    "ToolApproval",
    "ToolFilter",
    "Transport",
]
_ = NonEmptyStr
