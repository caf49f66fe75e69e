"""Probing a provider: list its models the way its API does, within the connection timeout.

``probe_provider`` never raises for anything a provider or a user can cause: a refused
connection, a slow or hung server, a bad key, a non-JSON answer, a missing secret all come
back as a ``ProbeResult`` with a reason (a condition reason: ``Unauthorized``, ``Timeout``,
``ConnectFailed``, …) and a message that says what happened and what to do. Secret values
are resolved through the caller's resolver, sent only in request headers (never in a URL)
and scrubbed from every message, in whatever form a server echoes them.
"""

from __future__ import annotations

import json
import os
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import httpx

from clawplane.models import ModelProviderSpec, ProviderAuth, SecretValue
from clawplane.naming import REDACTED, redact_url_userinfo
from clawplane.providers.apis import BadListing, DiscoveredModel, Listing, listing_for

Resolve = Callable[[SecretValue], Awaitable[str]]
"""Resolves a secret-capable value; raises an exception whose message names no value."""

MAX_PAGES = 50
MAX_BODY_BYTES = 8 * 1024 * 1024
_SNIPPET = 300
_MIN_SECRET = 4

Outcome = Literal["ready", "failed", "not-probed"]


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What one probe found; ``message`` is safe to show and store."""

    outcome: Outcome
    reason: str
    message: str
    models: tuple[DiscoveredModel, ...] = ()
    endpoint: str | None = None
    http_status: int | None = None
    elapsed_ms: int = 0

    @property
    def ready(self) -> bool:
        """True when the provider answered with a model listing."""
        return self.outcome == "ready"


class _Failed(Exception):
    def __init__(self, reason: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.reason, self.message, self.status = reason, message, status


@dataclass
class _Request:
    listing: Listing
    headers: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    verify: ssl.SSLContext | bool = True


async def probe_provider(spec: ModelProviderSpec, *, resolve: Resolve) -> ProbeResult:
    """List ``spec``'s models; every outcome, including failures, is a ``ProbeResult``."""
    skipped = _not_probed(spec)
    if skipped is not None:
        return skipped
    assert spec.base_url is not None
    listing = listing_for(spec.effective_api, spec.base_url)
    assert listing is not None
    endpoint = redact_url_userinfo(listing.url)[0]
    started = time.monotonic()
    request = _Request(listing)
    try:
        await _prepare(spec, request, resolve)
        timeout = spec.connection_timeout_ms / 1000
        with anyio.fail_after(timeout):
            models = await _list(spec, request, timeout)
    except _Failed as exc:
        return _result(
            "failed", exc.reason, _scrub(exc.message, request.secrets), endpoint, started, exc.status
        )
    except TimeoutError:
        message = (
            f"no complete answer from {endpoint} within {spec.connection_timeout_ms} ms; "
            "check that the server is up, or raise connectionTimeoutMs"
        )
        return _result("failed", "Timeout", message, endpoint, started)
    count = len(models)
    message = f"{count} model{'s' if count != 1 else ''} listed at {endpoint}"
    return _result("ready", "ModelsListed", message, endpoint, started, 200, models)


def _not_probed(spec: ModelProviderSpec) -> ProbeResult | None:
    def skip(reason: str, message: str) -> ProbeResult:
        return ProbeResult("not-probed", reason, message)

    if not spec.probe:
        return skip("ProbeDisabled", "probe: false; clawplane does not call this provider")
    if spec.base_url is None:
        return skip(
            "NoBaseUrl",
            "no baseUrl: OpenClaw uses the built-in endpoint of this provider, which clawplane does not "
            "probe; set baseUrl to have it checked",
        )
    api = spec.effective_api
    if listing_for(api, spec.base_url) is None:
        return skip(
            "ProbeUnsupported", f"clawplane cannot list the models of api {api.value}; set probe: false"
        )
    if spec.auth in (ProviderAuth.AWS_SDK, ProviderAuth.OAUTH):
        return skip(
            "ProbeUnsupported", f"auth {spec.auth.value} credentials live in OpenClaw; set probe: false"
        )
    tls = spec.request.tls if spec.request else None
    if tls is not None and (tls.cert is not None or tls.key is not None):
        return skip("ProbeUnsupported", "the probe does not present client certificates; set probe: false")
    return None


async def _prepare(spec: ModelProviderSpec, request: _Request, resolve: Resolve) -> None:
    """Resolve every credential the listing needs and build the request headers."""

    async def value(secret: SecretValue, where: str) -> str:
        try:
            text = await resolve(secret)
        except Exception as exc:  # the resolver's own errors name the reference, never a value
            raise _Failed("SecretUnresolved", f"{where}: {exc}") from None
        if len(text) >= _MIN_SECRET:
            request.secrets.append(text)
        return text

    key = await value(spec.api_key, "apiKey") if spec.api_key is not None else None
    bearer = bool(spec.auth_header) or spec.auth is ProviderAuth.TOKEN
    headers = request.listing.auth_headers(key, auth_header=bearer)
    for name, raw in spec.headers.items():
        headers[name] = await value(raw, f"headers.{name}")
    req = spec.request
    if req is not None:
        for name, raw in req.headers.items():
            headers[name] = await value(raw, f"request.headers.{name}")
        auth = req.auth
        if auth is not None and auth.mode == "authorization-bearer" and auth.token is not None:
            headers["Authorization"] = f"Bearer {await value(auth.token, 'request.auth.token')}"
        elif auth is not None and auth.mode == "header" and auth.header_name and auth.value is not None:
            headers[auth.header_name] = (auth.prefix or "") + await value(auth.value, "request.auth.value")
        if req.tls is not None and req.tls.insecure_skip_verify:
            request.verify = False
        elif req.tls is not None and req.tls.ca is not None:
            try:
                request.verify = ssl.create_default_context(cadata=await value(req.tls.ca, "request.tls.ca"))
            except (ssl.SSLError, ValueError) as exc:
                raise _Failed("TlsError", f"request.tls.ca is not a usable PEM certificate: {exc}") from None
    request.headers = {k: v for k, v in headers.items() if v != ""}


async def _list(spec: ModelProviderSpec, request: _Request, timeout: float) -> tuple[DiscoveredModel, ...]:
    proxy = spec.request.proxy if spec.request else None
    client = httpx.AsyncClient(
        headers={"Accept": "application/json", **request.headers},
        timeout=httpx.Timeout(timeout),
        verify=request.verify,
        follow_redirects=False,
        trust_env=proxy is not None and proxy.mode == "env-proxy",
        proxy=proxy.url if proxy is not None and proxy.mode == "explicit-proxy" else None,
    )
    listing = request.listing
    found: list[DiscoveredModel] = []
    seen: set[str] = set()
    query: dict[str, str] | None = listing.first_query()
    async with client:
        for _ in range(MAX_PAGES):
            if query is None:
                break
            try:
                page = listing.parse(await _get(client, listing.url, query))
            except BadListing as exc:
                where = redact_url_userinfo(listing.url)[0]
                raise _Failed(
                    "BadResponse", f"{where} did not answer with a model listing: {exc}", 200
                ) from None
            for model in page.models:
                if model.id not in seen:
                    seen.add(model.id)
                    found.append(model)
            query = page.next_query
        else:
            raise _Failed("BadResponse", f"the listing did not end after {MAX_PAGES} pages")
    return tuple(found)


async def _get(client: httpx.AsyncClient, url: str, query: Mapping[str, str]) -> Any:
    where = redact_url_userinfo(url)[0]
    try:
        async with client.stream("GET", url, params=dict(query)) as response:
            body = await _body(response)
    except httpx.ConnectError as exc:
        raise _Failed(
            "ConnectFailed", f"cannot connect to {where}: {_cause(exc)}; is the server running?"
        ) from None
    except httpx.TimeoutException:
        raise TimeoutError from None
    except httpx.HTTPError as exc:
        raise _Failed("ConnectFailed", f"request to {where} failed: {_cause(exc)}") from None
    except ssl.SSLError as exc:
        raise _Failed("TlsError", f"TLS with {where} failed: {exc}") from None
    status = response.status_code
    if status != 200:
        raise _Failed(*_http_failure(status, where, body), status=status)
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise _Failed("BadResponse", f"{where} did not answer with JSON: {_snippet(body)}", 200) from None


async def _body(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _Failed("BadResponse", f"the listing is larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB")
        chunks.append(chunk)
    return b"".join(chunks)


_HINTS = {
    401: ("Unauthorized", "check the API key (apiKey, or the variable or file its valueFrom names)"),
    403: ("Forbidden", "the key is valid but may not list models; check its permissions"),
    404: ("NotFound", "check baseUrl (OpenAI-compatible bases usually end in /v1) and api"),
    429: ("RateLimited", "the provider is rate limiting; clawplane probes again on the next pass"),
}


def _http_failure(status: int, where: str, body: bytes) -> tuple[str, str]:
    reason, hint = _HINTS.get(status, ("ServerError" if status >= 500 else "HttpError", ""))
    text = f"{where} answered HTTP {status}"
    snippet = _snippet(body)
    if snippet:
        text += f": {snippet}"
    return reason, f"{text}; {hint}" if hint else text


def _snippet(body: bytes) -> str:
    text = " ".join(body.decode("utf-8", errors="replace").split())
    return text if len(text) <= _SNIPPET else text[:_SNIPPET] + "…"


def _cause(exc: BaseException) -> str:
    """The innermost cause's text (``[Errno 111] Connection refused`` rather than httpx's wrapper)."""
    for _ in range(10):
        inner = exc.__cause__ or exc.__context__
        if inner is None:
            break
        exc = inner
    if isinstance(exc, OSError) and exc.errno:
        return os.strerror(exc.errno)
    return str(exc) or type(exc).__name__


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def _result(
    outcome: Outcome,
    reason: str,
    message: str,
    endpoint: str,
    started: float,
    status: int | None = None,
    models: tuple[DiscoveredModel, ...] = (),
) -> ProbeResult:
    elapsed = int((time.monotonic() - started) * 1000)
    return ProbeResult(outcome, reason, message, models, endpoint, status, elapsed)


__all__ = ["MAX_PAGES", "ProbeResult", "Resolve", "probe_provider"]
