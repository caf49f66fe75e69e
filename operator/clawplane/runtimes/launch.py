"""What it takes to start one server, resolved from its spec right before it starts.

Secret references (``valueFrom``) come resolved from the compiled desired state
(``resolved``: the very values its config hash was computed from, so a restart after a crash
starts the same server and a rotated value arrives with a new hash); without them (a probe
from the command line, the standalone bridge) they are resolved here by ``SecretResolver``
over ``environ``. A header value with a line break is refused without quoting it.

A stdio server gets a minimal environment (the variables the MCP SDKs pass: HOME, LOGNAME,
PATH, SHELL, TERM, USER) plus its declared ``env``, minus the names OpenClaw blocks for
startup safety (dropped with a warning, as OpenClaw does); the spawn adds the supervisor's
mark (``marks.MARK_ENV``), by which a later supervisor finds what a killed one left. A
relative ``cwd`` is relative to the folder of the resource's file. An ``auth: oauth`` server's
``Launch`` carries its OAuth settings, the pre-registered client's id and secret resolved.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from clawplane.models import McpServerSpec, OAuthIdentity, SecretValue, Transport
from clawplane.naming import is_blocked_env_name
from clawplane.runtimes.errors import StartError
from clawplane.runtimes.oauth import OAuthSettings
from clawplane.runtimes.redaction import Redactor, describe_launch
from clawplane.secrets import ResolvedSecrets, SecretError, SecretResolver

__all__ = ["DEFAULT_INHERITED_ENV", "Launch", "prepare_launch"]

DEFAULT_INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""Variables a stdio server inherits from clawplane (the MCP SDKs' ``getDefaultEnvironment``)."""


@dataclass(frozen=True, slots=True)
class Launch:
    """A server's resolved start parameters; ``redact`` hides the secrets they contain."""

    transport: Transport
    description: str
    argv: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    redact: Redactor = field(default_factory=Redactor)
    warnings: tuple[str, ...] = ()
    oauth: OAuthSettings | None = None
    """Set for ``auth: oauth`` servers: their OAuth settings, client secret resolved."""


def _oauth_client(spec: McpServerSpec) -> dict[str, SecretValue]:
    oauth = spec.oauth
    if spec.auth != "oauth" or oauth is None:
        return {}
    pairs = (("clientId", oauth.client_id), ("clientSecret", oauth.client_secret))
    return {key: value for key, value in pairs if value is not None}


def _oauth_settings(spec: McpServerSpec, client: Mapping[str, str]) -> OAuthSettings | None:
    if spec.auth != "oauth":
        return None
    oauth = spec.oauth
    return OAuthSettings(
        scope=oauth.scope if oauth else None,
        client_metadata_url=oauth.client_metadata_url if oauth else None,
        client_id=client.get("clientId"),
        client_secret=client.get("clientSecret"),
        redirect_url=oauth.redirect_url if oauth else None,
        per_requester=bool(oauth and oauth.identity is OAuthIdentity.PER_REQUESTER),
    )


def _default_env(environ: Mapping[str, str]) -> dict[str, str]:
    # Exported shell functions ("() { ...") are a known injection vector; never pass them on.
    return {k: environ[k] for k in DEFAULT_INHERITED_ENV if k in environ and not environ[k].startswith("()")}


def _resolve(
    server: str,
    field: str,
    values: Mapping[str, SecretValue],
    base_dir: Path,
    environ: Mapping[str, str],
    resolved: ResolvedSecrets | None,
) -> dict[str, str]:
    resolver = SecretResolver(environ)
    out: dict[str, str] = {}
    try:
        for key, value in values.items():
            path = f"{field}/{key}"
            if resolved is not None and path in resolved:
                out[key] = resolved.value(path)
            else:
                out[key] = resolver.resolve(value, base_dir=base_dir)
    except SecretError as exc:
        raise StartError(f'MCP server "{server}": {field} {key}: {exc}') from None
    return out


def _check_headers(server: str, headers: Mapping[str, str]) -> None:
    for key, value in headers.items():
        if "\r" in value or "\n" in value or "\0" in value:
            raise StartError(
                f'MCP server "{server}": header {key} contains a line break or NUL, which HTTP forbids; '
                "check the secret (a file reference keeps only its trailing newline stripped)"
            )


def _cwd(spec: McpServerSpec, base_dir: Path) -> Path | None:
    if not spec.cwd:
        return None
    path = Path(os.path.expanduser(spec.cwd))
    return path if path.is_absolute() else base_dir / path


def prepare_launch(
    server: str,
    spec: McpServerSpec,
    *,
    base_dir: Path,
    environ: Mapping[str, str] | None = None,
    inherit_environment: bool = False,
    resolved: ResolvedSecrets | None = None,
) -> Launch:
    """Resolve ``spec`` into start parameters.

    ``inherit_environment`` starts a stdio server from the whole of ``environ`` instead of
    the minimal default (the standalone bridge, whose container environment is the server's).

    Raises:
        StartError: A secret reference cannot be resolved, or the spec has no usable transport.
    """
    env_source = os.environ if environ is None else environ
    transport = spec.effective_transport
    description = describe_launch(spec)
    if transport is Transport.STDIO and spec.command:
        declared = _resolve(server, "env", spec.env, base_dir, env_source, resolved)
        env = dict(env_source) if inherit_environment else _default_env(env_source)
        warnings: list[str] = []
        for key, value in declared.items():
            if is_blocked_env_name(key):
                warnings.append(f'env "{key}" is blocked for stdio startup safety and was ignored')
                continue
            env[key] = value
        return Launch(
            transport=transport,
            description=description,
            argv=(spec.command, *spec.args),
            env=env,
            cwd=_cwd(spec, base_dir),
            redact=Redactor.for_values(spec.env, declared),
            warnings=tuple(warnings),
        )
    if transport in (Transport.SSE, Transport.STREAMABLE_HTTP) and spec.url:
        headers = _resolve(server, "headers", spec.headers, base_dir, env_source, resolved)
        client = _oauth_client(spec)
        client_values = _resolve(server, "oauth", client, base_dir, env_source, resolved)
        redact = Redactor.for_values(
            {**spec.headers, **{f"oauth/{k}": v for k, v in client.items()}},
            {**headers, **{f"oauth/{k}": v for k, v in client_values.items()}},
        )
        try:
            _check_headers(server, headers)
        except StartError as exc:
            raise StartError(redact(str(exc))) from None
        return Launch(
            transport=transport,
            description=description,
            url=spec.url,
            headers=headers,
            redact=redact,
            oauth=_oauth_settings(spec, client_values),
        )
    raise StartError(f'MCP server "{server}" has neither a command nor a url')
