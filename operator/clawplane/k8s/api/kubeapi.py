"""A small async client for the Kubernetes REST API: JSON over httpx, nothing generated.

Writes that race with another writer answer 409 Conflict; ``update`` re-reads and
retries, and merge patches (which carry no resourceVersion) are simply re-sent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Generator
from dataclasses import dataclass
from typing import Any

import httpx

from clawplane import __version__
from clawplane.k8s.api.kubeconfig import Connection

CONFLICT_RETRIES = 5
LIST_PAGE = 500
"""Objects per list request (``limit``); a list of more follows ``continue`` tokens."""
FIELD_MANAGER = "clawplane-operator"
"""The name the API server records in managedFields for the operator's writes (from the User-Agent):
what a user's conflicting server-side apply names, instead of ``python-httpx``."""
Objects = list[dict[str, Any]]
"""A list of objects (an alias: ``KubeApi.list`` shadows the builtin inside the class)."""
MERGE = "application/merge-patch+json"


@dataclass(frozen=True, slots=True)
class Kind:
    """How to address one resource type: ``/apis/GROUP/VERSION/namespaces/NS/PLURAL``."""

    group: str
    version: str
    plural: str
    kind: str

    @property
    def api_version(self) -> str:
        """``group/version`` (or ``v1`` for the core group)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None, name: str | None = None, sub: str | None = None) -> str:
        """The REST path of the collection or of one object (and a subresource)."""
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        parts = [root]
        if namespace:
            parts.append(f"namespaces/{namespace}")
        parts.append(self.plural)
        if name:
            parts.append(name)
        if sub:
            parts.append(sub)
        return "/".join(parts)


DEPLOYMENTS = Kind("apps", "v1", "deployments", "Deployment")
SERVICES = Kind("", "v1", "services", "Service")
CONFIGMAPS = Kind("", "v1", "configmaps", "ConfigMap")
SECRETS = Kind("", "v1", "secrets", "Secret")
PODS = Kind("", "v1", "pods", "Pod")
NETWORK_POLICIES = Kind("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy")
LEASES = Kind("coordination.k8s.io", "v1", "leases", "Lease")
READ_METHODS = frozenset({"GET", "HEAD"})


class _TokenAuth(httpx.Auth):
    """Adds the current bearer token to each request (a rotated token file is picked up)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers.update(self.conn.headers())
        yield request


class ApiError(Exception):
    """The API server refused a request."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason


class KubeApi:
    """Async JSON calls against one API server.

    ``write_fence`` (when given) is asked before every write; a reason it returns refuses the
    write here, before it is sent (a standby or deposed leader must not touch the cluster).
    """

    def __init__(
        self, conn: Connection, *, timeout: float = 30.0, write_fence: Callable[[], str | None] | None = None
    ) -> None:
        self.conn = conn
        self.write_fence = write_fence
        self._client = httpx.AsyncClient(
            base_url=conn.server,
            auth=_TokenAuth(conn),
            verify=conn.ssl_context(),
            timeout=timeout,
            headers={"User-Agent": user_agent(conn.agent)},
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()

    async def _call(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        if self.write_fence is not None and method not in READ_METHODS:
            refusal = self.write_fence()
            if refusal is not None:
                raise ApiError(503, "NotLeader", refusal)
        resp = await self._client.request(method, path, **kw)
        if resp.status_code >= 400:
            raise _error(resp)
        body: dict[str, Any] = resp.json() if resp.content else {}
        return body

    async def get(self, kind: Kind, namespace: str | None, name: str) -> dict[str, Any] | None:
        """One object, or None when it does not exist."""
        try:
            return await self._call("GET", kind.path(namespace, name))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    async def list(
        self, kind: Kind, namespace: str | None, *, labels: str | None = None
    ) -> list[dict[str, Any]]:
        """Every object of ``kind`` in ``namespace`` (all namespaces when None)."""
        return (await self.list_versioned(kind, namespace, labels=labels))[0]

    async def list_versioned(
        self, kind: Kind, namespace: str | None, *, labels: str | None = None
    ) -> tuple[Objects, str]:
        """The objects and the list's resourceVersion (where a watch starts), read in pages.

        Pages of ``LIST_PAGE`` keep each answer bounded on a large cluster; all pages come from one
        snapshot. A continue token that expired mid-list (410 Gone) restarts the list once.
        """
        base = {"limit": str(LIST_PAGE), **({"labelSelector": labels} if labels else {})}
        for attempt in range(2):
            items: list[dict[str, Any]] = []
            params = dict(base)
            try:
                while True:
                    body = await self._call("GET", kind.path(namespace), params=params)
                    items += body.get("items") or []
                    meta = body.get("metadata") or {}
                    if not meta.get("continue"):
                        break
                    params["continue"] = str(meta["continue"])
            except ApiError as exc:
                if exc.status == 410 and "continue" in params and attempt == 0:
                    continue
                raise
            break
        for item in items:  # list items omit these; callers treat items like single objects
            item.setdefault("kind", kind.kind)
            item.setdefault("apiVersion", kind.api_version)
        return items, str((body.get("metadata") or {}).get("resourceVersion") or "")

    async def watch(
        self,
        kind: Kind,
        namespace: str | None,
        *,
        resource_version: str,
        labels: str | None = None,
        timeout_seconds: int = 300,
    ) -> AsyncIterator[dict[str, Any]]:
        """Watch events (``{"type", "object"}``) from ``resource_version`` until the server ends the watch.

        The selector is applied by the API server, so only matching objects cross the wire.
        """
        params = {
            "watch": "true",
            "resourceVersion": resource_version,
            "timeoutSeconds": str(timeout_seconds),
            "allowWatchBookmarks": "true",
        }
        if labels:
            params["labelSelector"] = labels
        timeout = httpx.Timeout(timeout_seconds + 30.0, connect=30.0)
        async with self._client.stream("GET", kind.path(namespace), params=params, timeout=timeout) as resp:
            if resp.status_code >= 400:
                await resp.aread()
                raise _error(resp)
            async for line in resp.aiter_lines():
                if line.strip():
                    event: dict[str, Any] = json.loads(line)
                    yield event

    async def create(self, kind: Kind, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
        """POST a new object."""
        return await self._call("POST", kind.path(namespace), json=obj)

    async def replace(
        self, kind: Kind, namespace: str, obj: dict[str, Any], *, dry_run: bool = False
    ) -> dict[str, Any]:
        """PUT ``obj`` (its resourceVersion guards against lost updates); a dry run stores nothing."""
        params = {"dryRun": "All"} if dry_run else None
        return await self._call("PUT", kind.path(namespace, obj["metadata"]["name"]), json=obj, params=params)

    async def patch(
        self, kind: Kind, namespace: str, name: str, patch: dict[str, Any], *, sub: str | None = None
    ) -> dict[str, Any]:
        """JSON merge patch; re-sent on 409 (a merge patch has no precondition to go stale)."""
        for attempt in range(CONFLICT_RETRIES):
            try:
                return await self._call(
                    "PATCH", kind.path(namespace, name, sub), json=patch, headers={"Content-Type": MERGE}
                )
            except ApiError as exc:
                if exc.status != 409 or attempt == CONFLICT_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    async def delete(self, kind: Kind, namespace: str, name: str) -> bool:
        """Delete (background propagation); False when it was already gone."""
        try:
            await self._call("DELETE", kind.path(namespace, name), json={"propagationPolicy": "Background"})
        except ApiError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    async def update(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        mutate: Callable[[dict[str, Any] | None], dict[str, Any] | None],
    ) -> dict[str, Any] | None:
        """Read, let ``mutate`` return the wanted object (None: leave as is), write; retry on 409."""
        for attempt in range(CONFLICT_RETRIES):
            current = await self.get(kind, namespace, name)
            wanted = mutate(current)
            if wanted is None:
                return current
            try:
                if current is None:
                    return await self.create(kind, namespace, wanted)
                wanted["metadata"]["resourceVersion"] = current["metadata"].get("resourceVersion")
                return await self.replace(kind, namespace, wanted)
            except ApiError as exc:
                if exc.status != 409 or attempt == CONFLICT_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")


def user_agent(agent: str = "") -> str:
    """``clawplane-operator/<version> (<agent>)``: the field manager stays the product name.

    The API server takes the field manager of a non-apply write from the User-Agent up to its
    first ``/``, so the details go in a comment after the version. Characters a comment cannot
    hold (parentheses, controls, non-ASCII) become ``_``.
    """
    base = f"{FIELD_MANAGER}/{__version__}"
    detail = "".join(c if " " <= c <= "~" and c not in "()\\" else "_" for c in agent)[:200]
    return f"{base} ({detail})" if detail else base


def _error(resp: httpx.Response) -> ApiError:
    try:
        body = resp.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    reason = str(body.get("reason") or resp.reason_phrase or "Error")
    message = str(body.get("message") or resp.text[:200])
    return ApiError(resp.status_code, reason, message)
