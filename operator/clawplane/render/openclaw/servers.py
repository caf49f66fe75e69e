"""McpServer resources → OpenClaw's ``mcp.servers.<name>`` entries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import (
    DEFAULT_CONNECTION_TIMEOUT_MS,
    DEFAULT_REQUEST_TIMEOUT_MS,
    ApprovalMode,
    Hosting,
    McpServer,
    Transport,
    ValueFrom,
)
from clawplane.render.finalize import finalize
from clawplane.render.paths import absolute_path, base_dir_of
from clawplane.render.secretvalues import SecretRenderer, Verbatim

OPENCLAW_MODE_FOR_WRITES = ApprovalMode.PROMPT.value
"""openclaw.json's mode for Codex's ``writes``, which OpenClaw lacks: ``prompt`` asks for every tool."""


class ServerEntries:
    """Finalized ``mcp.servers`` entries kept between renders, for servers that render purely.

    An entry that reads no secret (a disabled server, or one whose ``env``/``headers`` hold
    only literals) is a function of the resource, its folder and its hosted URL; the engine
    hands back the same resource object while its file is unchanged, so a large fleet is
    re-rendered only where it changed. Entries are shared between renders: read-only.
    """

    def __init__(self) -> None:
        self._kept: dict[str, tuple[McpServer, Path, str | None, Verbatim, tuple[Diagnostic, ...]]] = {}
        self._fresh: dict[str, tuple[McpServer, Path, str | None, Verbatim, tuple[Diagnostic, ...]]] = {}

    def begin(self) -> None:
        """Start a render: entries the last one did not use are dropped."""
        self._kept, self._fresh = self._fresh, {}

    def get(
        self, server: McpServer, base_dir: Path, url: str | None
    ) -> tuple[Verbatim, tuple[Diagnostic, ...]] | None:
        """The kept entry when nothing it depends on changed."""
        name = server.metadata.name
        hit = self._kept.get(name)
        # The same Path object is the common case; comparing Paths by value costs more.
        if (
            hit is None
            or hit[0] is not server
            or (hit[1] is not base_dir and hit[1] != base_dir)
            or hit[2] != url
        ):
            return None
        self._fresh[name] = hit
        return hit[3], hit[4]

    def put(
        self,
        server: McpServer,
        base_dir: Path,
        url: str | None,
        entry: dict[str, Any],
        diagnostics: Sequence[Diagnostic],
    ) -> Verbatim:
        """Keep a freshly rendered entry (finalized here, so the final pass skips it)."""
        kept = Verbatim(finalize(entry))
        self._fresh[server.name] = (server, base_dir, url, kept, tuple(diagnostics))
        return kept


def _pure(server: McpServer) -> bool:
    spec = server.spec
    if not spec.enabled:
        return True
    return not any(isinstance(v, ValueFrom) for v in (*spec.env.values(), *spec.headers.values()))


def render_servers(
    servers: Sequence[McpServer],
    *,
    hosted_urls: Mapping[str, str],
    base_dirs: Mapping[str, Path],
    secrets: SecretRenderer,
    diagnostics: list[Diagnostic],
    memo: ServerEntries | None = None,
    hosted_auth: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``mcp.servers``: hosted stdio servers point at the supervisor, the rest as declared.

    ``hosted_auth`` maps a hosted server to the ``Authorization`` header value its entry
    sends (the gateway's own bearer token); such entries are never memoized (tokens rotate).
    """
    out: dict[str, Any] = {}
    auths = hosted_auth or {}
    for server in servers:
        name = server.metadata.name  # looked up once: this loop runs for every server of a fleet
        base_dir = base_dir_of(server, base_dirs)
        url = hosted_urls.get(name)
        auth = auths.get(name) if auths and server.spec.behind_endpoint else None
        if memo is not None and auth is None and _pure(server):
            hit = memo.get(server, base_dir, url)
            if hit is not None:
                out[name], found = hit
                diagnostics.extend(found)
                continue
            fresh: list[Diagnostic] = []
            entry = _server(server, hosted_urls, base_dir, secrets, fresh)
            diagnostics.extend(fresh)
            if entry is not None:
                out[name] = memo.put(server, base_dir, url, entry, fresh)
            continue
        entry = _server(server, hosted_urls, base_dir, secrets, diagnostics)
        if entry is not None and auth is not None and "url" in entry:
            entry["headers"] = {"Authorization": auth}
        if entry is not None:
            out[name] = entry
    return out


def _server(
    server: McpServer,
    hosted_urls: Mapping[str, str],
    base_dir: Path,
    secrets: SecretRenderer,
    diagnostics: list[Diagnostic],
) -> dict[str, Any] | None:
    spec = server.spec
    transport = spec.effective_transport
    entry: dict[str, Any] = {}
    if not spec.enabled:
        return _disabled(server, base_dir, diagnostics)
    if transport is Transport.STDIO and spec.hosting is Hosting.CLAWPLANE:
        url = hosted_urls.get(server.name)
        if url is None:
            diagnostics.append(
                Diagnostic(
                    Severity.ERROR,
                    "render.no-hosted-url",
                    f"hosted MCP server {server.name!r} has no endpoint yet; left out of openclaw.json",
                    path="spec.hosting",
                    hint="start it under the supervisor first, or set hosting: consumer",
                    resource=server.key,
                )
            )
            return None
        entry.update({"transport": Transport.STREAMABLE_HTTP.value, "url": url})
    elif transport is Transport.STDIO:
        entry.update(_shape(server, base_dir))
        env = _secret_map(spec.env, "env", server, base_dir, secrets)
        if env or spec.env:
            entry["env"] = env
    else:
        entry.update(_shape(server, base_dir))
        headers = _secret_map(spec.headers, "headers", server, base_dir, secrets)
        if headers or spec.headers:
            entry["headers"] = headers
        entry.update(_tls(server, base_dir))
    entry.update(_common(server))
    return entry


def _disabled(server: McpServer, base_dir: Path, diagnostics: list[Diagnostic]) -> dict[str, Any]:
    """A disabled server keeps its declaration, but nothing is resolved for it."""
    spec = server.spec
    entry: dict[str, Any] = {"enabled": False, **_shape(server, base_dir)}
    stdio = spec.effective_transport is Transport.STDIO
    # A hosted server's environment belongs to the supervisor, never to openclaw.json.
    if not (stdio and spec.hosting is Hosting.CLAWPLANE):
        quiet = SecretRenderer(resolve_secrets=False)
        field, values = ("env", spec.env) if stdio else ("headers", spec.headers)
        rendered = _secret_map(values, field, server, base_dir, quiet)
        if values:
            entry[field] = rendered
        diagnostics.extend(
            Diagnostic(
                Severity.INFO, d.code, d.message + " (server disabled)", path=d.path, resource=d.resource
            )
            for d in quiet.diagnostics
        )
        if not stdio:
            entry.update(_tls(server, base_dir))
    entry.update(_common(server))
    return entry


def _shape(server: McpServer, base_dir: Path) -> dict[str, Any]:
    """How the server is reached, without any secret-capable value."""
    spec = server.spec
    if spec.effective_transport is Transport.STDIO:
        shape: dict[str, Any] = {"command": spec.command}
        if spec.args:
            shape["args"] = list(spec.args)
        if spec.cwd:
            shape["cwd"] = absolute_path(spec.cwd, base_dir)
        return shape
    transport = spec.effective_transport or Transport.SSE
    return {"url": spec.url, "transport": transport.value}


def _secret_map(
    values: Mapping[str, Any], field: str, server: McpServer, base_dir: Path, secrets: SecretRenderer
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        rendered = secrets.render(
            value, base_dir=base_dir, secret_input=False, resource=server.key, path=f"spec.{field}.{key}"
        )
        if rendered is not None:
            out[key] = rendered
    return out


def _tls(server: McpServer, base_dir: Path) -> dict[str, Any]:
    spec = server.spec
    out: dict[str, Any] = {}
    if spec.ssl_verify is not None:
        out["sslVerify"] = spec.ssl_verify
    if spec.client_cert:
        out["clientCert"] = absolute_path(spec.client_cert, base_dir)
    if spec.client_key:
        out["clientKey"] = absolute_path(spec.client_key, base_dir)
    return out


def _common(server: McpServer) -> dict[str, Any]:
    """Timeouts, parallelism, tool filter and Codex projection; defaults are left to OpenClaw."""
    spec = server.spec
    given = spec.model_fields_set
    out: dict[str, Any] = {}
    if "connection_timeout_ms" in given or spec.connection_timeout_ms != DEFAULT_CONNECTION_TIMEOUT_MS:
        out["connectionTimeoutMs"] = spec.connection_timeout_ms
    if "request_timeout_ms" in given or spec.request_timeout_ms != DEFAULT_REQUEST_TIMEOUT_MS:
        out["requestTimeoutMs"] = spec.request_timeout_ms
    if "supports_parallel_tool_calls" in given or spec.supports_parallel_tool_calls:
        out["supportsParallelToolCalls"] = spec.supports_parallel_tool_calls
    if spec.tool_filter is not None:
        out["toolFilter"] = spec.tool_filter.model_dump(mode="json", by_alias=True, exclude_none=True)
    if spec.codex is not None:
        codex = spec.codex.model_dump(mode="json", by_alias=True, exclude_none=True)
        if codex.get("defaultToolsApprovalMode") == ApprovalMode.WRITES.value:
            # OpenClaw has no "writes" (Codex's config.toml keeps it): never less strict.
            codex["defaultToolsApprovalMode"] = OPENCLAW_MODE_FOR_WRITES
        if codex:
            out["codex"] = codex
    if spec.auth is not None:
        out["auth"] = spec.auth
    if spec.oauth is not None:
        # clientId/clientSecret are clawplane's (its own login), never OpenClaw's.
        oauth = spec.oauth.model_dump(
            mode="json", by_alias=True, exclude_none=True, exclude={"client_id", "client_secret"}
        )
        if oauth:
            out["oauth"] = oauth
    return out
