"""The proxy's ASGI app: ``/mcp/<server>`` (and ``/mcp`` for a default server), ``/healthz``,
the dashboard's pages at ``/ui`` (``pages``: an app with its own cookie login), and other apps
mounted at path prefixes (``routes``: the control plane).

Every request first passes the guard's Host/Origin check, ``/healthz`` included. MCP
requests then need a bearer token that reaches the named server (401/403 otherwise);
``/healthz`` answers everyone with ``ok``/``unavailable`` only, and with the phase of each
server the caller's token reaches, its client sessions and (once any) the idle sessions ended
to make room for new ones. Bodies over 4 MiB are refused with 413 before
anything reads them, as the SDK's servers do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import anyio
import anyio.abc
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from clawplane.runtimes.proxy.front import ServerFront
from clawplane.runtimes.proxy.guard import Principal, RequestGuard, reply
from clawplane.runtimes.proxy.hosting import HostedDirectory

__all__ = ["PRINCIPAL_SCOPE_KEY", "ProxyApp", "Route"]

PRINCIPAL_SCOPE_KEY = "clawplane.principal"
"""Where a mounted route finds the authenticated caller's ``Principal`` in the ASGI scope."""


@dataclass(frozen=True, slots=True)
class Route:
    """An ASGI app mounted at a path prefix, behind the same Host/Origin and token checks.

    ``allows(principal, rest)`` decides whether the caller may use it (``rest``: the path
    after the prefix); a refusal is a 403 naming the consumer.
    """

    app: ASGIApp
    allows: Callable[[Principal, str], bool]


_MCP_PATH = re.compile(r"^/mcp(?:/(?P<name>[^/]+))?/?$")


class ProxyApp:
    """Routes requests to the fronts of the directory's hosted servers."""

    def __init__(
        self,
        directory: HostedDirectory,
        guard: RequestGuard,
        task_group: anyio.abc.TaskGroup,
        *,
        default: str | None = None,
    ) -> None:
        self.directory = directory
        self.guard = guard
        self._tg = task_group
        self._default = default
        self._fronts: dict[str, ServerFront] = {}
        self.pages: ASGIApp | None = None
        """Serves ``/ui`` after the Host/Origin check; it authenticates its callers itself."""
        self.routes: dict[str, Route] = {}
        """Path prefix (``/mcp/_clawplane``) → mounted app; matched before hosted servers."""
        self.asgi: Callable[[Scope, Receive, Send], object] = RequestBodyLimitMiddleware(
            self._handle, DEFAULT_MAX_REQUEST_BODY_SIZE
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        await self.asgi(scope, receive, send)  # type: ignore[misc]

    def front(self, name: str) -> ServerFront | None:
        """The front of hosted server ``name`` (made on first use), or None."""
        hosted = self.directory.hosted(name)
        if hosted is None:
            return None
        front = self._fronts.get(name)
        if front is None or front.hosted is not hosted:
            # A restarted runtime is a new hosted server: its old sessions died with it.
            front = self._fronts[name] = ServerFront(hosted, self._tg)
        return front

    def session_counts(self) -> dict[str, int]:
        """Open client sessions, by server."""
        return {name: len(front.sessions) for name, front in self._fronts.items()}

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not await self.guard.check_origin(scope, send):
            return
        path = scope.get("path", "")
        if self.pages is not None and (path == "/ui" or path.startswith("/ui/")):
            await self.pages(scope, receive, send)
            return
        if path in ("/healthz", "/health"):
            await self._health(scope, send)
            return
        if await self._route(path, scope, receive, send):
            return
        match = _MCP_PATH.match(path)
        name = (match.group("name") or self._default) if match else None
        if name is None:
            await reply(send, 404, {"error": f"nothing at {path}; MCP servers are at /mcp/<name>"})
            return
        principal = await self.guard.authenticate(scope, send)
        if principal is None:
            return
        if not principal.may_reach(name):
            await self.guard.forbid(send, principal, name)
            return
        front = self.front(name)
        if front is None:
            await reply(send, 404, {"error": f'no hosted MCP server "{name}" here'})
            return
        await front.handle(scope, receive, send, principal)

    async def _route(self, path: str, scope: Scope, receive: Receive, send: Send) -> bool:
        """Serve ``path`` with a mounted route, if one owns it."""
        for prefix, route in self.routes.items():
            if path != prefix and not path.startswith(prefix + "/"):
                continue
            principal = await self.guard.authenticate(scope, send)
            if principal is None:
                return True
            if not route.allows(principal, path[len(prefix) :].strip("/")):
                await self.guard.forbid(send, principal, path.removeprefix("/mcp/"))
                return True
            await route.app({**scope, PRINCIPAL_SCOPE_KEY: principal}, receive, send)
            return True
        return False

    async def _health(self, scope: Scope, send: Send) -> None:
        phases = dict(self.directory.health())
        ok = bool(phases) and all(phase == "ready" for phase in phases.values())
        body: dict[str, object] = {"status": "ok" if ok else "unavailable"}
        principal = self.guard.principal(scope)
        if principal is not None:  # only the servers this token reaches: names are not for everyone
            body["servers"] = {name: phase for name, phase in phases.items() if principal.may_reach(name)}
            sessions = self.session_counts()
            body["sessions"] = {name: count for name, count in sessions.items() if principal.may_reach(name)}
            evictions = {
                name: front.ledger.evictions
                for name, front in self._fronts.items()
                if front.ledger.evictions and principal.may_reach(name)
            }
            if evictions:  # the bridge has no status command: its health says what its limit cost
                body["sessionEvictions"] = evictions
        await reply(send, 200 if ok else 503, body)

    async def close(self) -> None:
        """End every client session."""
        for front in self._fronts.values():
            await front.close()
