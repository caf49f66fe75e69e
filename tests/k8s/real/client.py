"""A small synchronous client of a real API server: discovery, server-side apply, reads and waits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

JSON = dict[str, Any]
APPLY = "application/apply-patch+yaml"


class ApiError(Exception):
    """A request the API server refused: the HTTP status and its Status object."""

    def __init__(self, response: httpx.Response) -> None:
        self.status_code = response.status_code
        try:
            self.status: JSON = response.json()
        except ValueError:
            self.status = {"message": response.text}
        self.warnings = response.headers.get_list("warning")
        super().__init__(f"HTTP {self.status_code}: {self.status.get('message', response.text)}")


class Kube:
    """Requests with one bearer token, verified against the cluster's CA."""

    def __init__(self, url: str, ca: Path, token: str, *, manager: str = "clawplane-tests") -> None:
        self.url, self.ca, self.token, self.manager = url, ca, token, manager
        self.http = httpx.Client(
            base_url=url, verify=str(ca), headers={"Authorization": f"Bearer {token}"}, timeout=60
        )
        self._resources: dict[str, dict[str, JSON]] = {}

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    def __enter__(self) -> Kube:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request; an answer of 400 or more raises ApiError."""
        response = self.http.request(method, path, **kwargs)
        if response.status_code >= 400:
            raise ApiError(response)
        return response

    def _resource(self, api_version: str, kind: str) -> JSON:
        """The discovery entry of ``kind`` (re-read once when missing: CRDs arrive late)."""
        for attempt in range(2):
            if attempt or api_version not in self._resources:
                base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
                listed = self.request("GET", base).json()["resources"]
                self._resources[api_version] = {r["kind"]: r for r in listed if "/" not in r["name"]}
            if kind in self._resources[api_version]:
                return self._resources[api_version][kind]
        raise KeyError(f"{api_version} has no kind {kind}")

    def path(self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None,
             sub: str | None = None) -> str:  # fmt: skip
        """The URL path of a collection, an object or its subresource."""
        resource = self._resource(api_version, kind)
        base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        if resource["namespaced"] and namespace:
            base += f"/namespaces/{namespace}"
        path = f"{base}/{resource['name']}"
        if name:
            path += f"/{name}"
        if sub:
            path += f"/{sub}"
        return path

    def apply(self, obj: JSON, *, manager: str | None = None, force: bool = True, dry_run: bool = False,
              sub: str | None = None) -> JSON:  # fmt: skip
        """Server-side apply of ``obj`` as ``manager`` (this client's by default)."""
        meta = obj["metadata"]
        params = {"fieldManager": manager or self.manager, "force": str(force).lower()}
        if dry_run:
            params["dryRun"] = "All"
        path = self.path(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"], sub)
        body = httpx.Request("PATCH", "/", json=obj).content
        answer = self.request("PATCH", path, params=params, content=body, headers={"Content-Type": APPLY})
        result: JSON = answer.json()
        return result

    def create(self, obj: JSON) -> JSON:
        """POST ``obj`` to its collection."""
        meta = obj["metadata"]
        result: JSON = self.request(
            "POST", self.path(obj["apiVersion"], obj["kind"], meta.get("namespace")), json=obj
        ).json()
        return result

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> JSON | None:
        """The object, or None when there is none."""
        try:
            result: JSON = self.request("GET", self.path(api_version, kind, namespace, name)).json()
        except ApiError as err:
            if err.status_code == 404:
                return None
            raise
        return result

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> list[JSON]:
        """Every object of ``kind`` (in ``namespace``, or everywhere)."""
        items: list[JSON] = self.request("GET", self.path(api_version, kind, namespace)).json()["items"]
        return items

    def delete(self, api_version: str, kind: str, namespace: str | None, name: str) -> None:
        """Delete the object; gone already is fine."""
        try:
            self.request("DELETE", self.path(api_version, kind, namespace, name))
        except ApiError as err:
            if err.status_code != 404:
                raise
