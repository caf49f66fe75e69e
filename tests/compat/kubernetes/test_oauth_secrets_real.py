"""A McpServer's OAuth login as a Secret on the real API server (``k8s/oauthsecrets.py``).

What ``clawplane login --kubernetes`` writes (owned by the McpServer, labelled, one data key
per part of the credential), what the operator reads back, and its write-back of refreshed
tokens: never over a newer login (409) nor after a logout (404), re-reading instead.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube

from clawplane.k8s.api.kubeapi import KubeApi
from clawplane.k8s.api.kubeconfig import load_connection
from clawplane.k8s.objects.children import Owner
from clawplane.k8s.objects.oauthsecrets import (
    SecretCredentials,
    SecretRows,
    oauth_secret_name,
    with_header_secrets,
    with_oauth_secrets,
)
from clawplane.k8s.objects.secretrefs import SecretReader
from clawplane.models import McpServerSpec
from clawplane.runtimes.oauth.storage import CredentialStorage

URL = "https://mcp.example/mcp"
ACCESS, REFRESH = "canary-access-4c1f", "canary-refresh-9b7e"


def _server(admin: Kube, namespace: str, name: str = "notes") -> Owner:
    cr = admin.apply({
        "apiVersion": "clawplane.dev/v1alpha1", "kind": "McpServer",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"url": URL, "transport": "streamable-http", "auth": "oauth"},
    })  # fmt: skip
    return Owner("McpServer", name, cr["metadata"]["uid"])


def _api(cluster: RealCluster, tmp: Path) -> KubeApi:
    config = cluster.write_kubeconfig(tmp / "admin.kubeconfig", cluster.admin_token, "admin")
    return KubeApi(load_connection(str(config)))


async def _login(api: KubeApi, namespace: str, owner: Owner, access: str, refresh: str) -> None:
    """What ``clawplane login --kubernetes`` stores once the flow got its tokens."""
    rows = SecretRows(api, namespace, "notes")
    await rows.load()
    storage = CredentialStorage(rows, "notes", URL)
    storage.start_login("http://127.0.0.1:1/callback")
    await storage.set_client_info(
        OAuthClientInformationFull(client_id="cid", redirect_uris=["http://127.0.0.1:1/callback"])
    )  # type: ignore[list-item]
    await storage.set_tokens(OAuthToken(access_token=access, refresh_token=refresh, expires_in=300))
    assert await rows.flush(owner=owner)


def _data(admin: Kube, namespace: str) -> dict[str, Any] | None:
    found = admin.get("v1", "Secret", namespace, oauth_secret_name("notes"))
    if found is None:
        return None
    return {k: base64.b64decode(v).decode() for k, v in found["data"].items()} | {"_meta": found["metadata"]}


def test_a_login_is_a_secret_owned_by_its_server(
    real_cluster: RealCluster, admin: Kube, namespace: str, tmp_path: Path
) -> None:
    owner = _server(admin, namespace)

    async def main() -> None:
        api = _api(real_cluster, tmp_path)
        try:
            await _login(api, namespace, owner, ACCESS, REFRESH)
            again = SecretRows(api, namespace, "notes")
            found = await again.load()
            assert found is not None and found.url == URL and found.expires_at is not None
            storage = CredentialStorage(again, "notes", URL)
            tokens = await storage.get_tokens()
            assert tokens is not None and (tokens.access_token, tokens.refresh_token) == (ACCESS, REFRESH)
            # A login stored for another URL is for another resource: never presented.
            assert not CredentialStorage(again, "notes", "https://other.example/mcp").logged_in
        finally:
            await api.aclose()

    anyio.run(main)
    data = _data(admin, namespace)
    assert data is not None
    meta = data.pop("_meta")
    assert meta["name"] == "clawplane-oauth-notes"
    assert meta["labels"]["app.kubernetes.io/managed-by"] == "clawplane"
    assert meta["annotations"]["clawplane.dev/mcpserver"] == "notes"
    assert [(r["kind"], r["name"], r["uid"]) for r in meta["ownerReferences"]] == [
        ("McpServer", "notes", owner.uid)
    ]
    assert set(data) == {"url", "tokens.json", "expires-at.json", "client.json"}
    assert json.loads(data["tokens.json"])["access_token"] == ACCESS
    # Only the data holds a token: not a label, annotation or field manager's record.
    assert ACCESS not in json.dumps(meta) and REFRESH not in json.dumps(meta)


def test_the_write_back_never_replaces_a_newer_login_nor_undoes_a_logout(
    real_cluster: RealCluster,
    admin: Kube,
    namespace: str,
    tmp_path: Path,
) -> None:
    owner = _server(admin, namespace)
    source_outcomes: list[bool] = []

    async def main() -> None:
        api = _api(real_cluster, tmp_path)
        source = SecretCredentials(api, namespace)
        assert source.login_command("notes") == f"clawplane login --kubernetes {namespace} notes"
        try:
            # Nobody logged in: a session finds nothing and writes nothing.
            async with source.open("notes") as rows:
                assert rows is not None and rows.get("notes") is None
            assert _data(admin, namespace) is None

            await _login(api, namespace, owner, "first-access", "first-refresh")
            # The operator's session refreshes: the new tokens are written back when it ends.
            async with source.open("notes") as rows:
                session = CredentialStorage(rows, "notes", URL)
                assert session.logged_in
                await session.set_tokens(
                    OAuthToken(access_token="refreshed", refresh_token="r2", expires_in=300)
                )
            stored = _data(admin, namespace)
            assert stored is not None and json.loads(stored["tokens.json"])["access_token"] == "refreshed"

            # A newer login lands while a session holds the old one: the session's write-back is a 409.
            held = SecretRows(api, namespace, "notes")
            await held.load()
            await _login(api, namespace, owner, "newest", "r3")
            await CredentialStorage(held, "notes", URL).set_tokens(
                OAuthToken(access_token="stale", expires_in=60)
            )
            source_outcomes.append(await held.flush())
            assert held.superseded
            assert (held.get("notes") or pytest.fail("re-read")).document["tokens"][
                "access_token"
            ] == "newest"

            # A logout while a session holds the login: its write-back does not bring it back.
            held = SecretRows(api, namespace, "notes")
            await held.load()
            assert await SecretRows(api, namespace, "notes").remove()
            await CredentialStorage(held, "notes", URL).set_tokens(
                OAuthToken(access_token="zombie", expires_in=60)
            )
            source_outcomes.append(await held.flush())
            assert held.superseded and held.get("notes") is None
        finally:
            await api.aclose()

    anyio.run(main)
    assert source_outcomes == [False, False]
    final = _data(admin, namespace)
    assert final is None


def test_a_preregistered_clients_secret_is_read_from_the_namespace(
    real_cluster: RealCluster, admin: Kube, namespace: str, tmp_path: Path
) -> None:
    """What login and the operator's probe resolve: header and OAuth client ``secretKeyRef``s."""
    admin.apply({
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "notes-client", "namespace": namespace},
        "stringData": {"id": "cid-1", "secret": "client-secret-1", "key": "k-1"},
    })  # fmt: skip
    ref = {"valueFrom": {"secretKeyRef": {"name": "notes-client", "key": "secret"}}}
    spec = McpServerSpec.model_validate({
        "url": URL, "transport": "streamable-http", "auth": "oauth",
        "headers": {"X-Key": {"valueFrom": {"secretKeyRef": {"name": "notes-client", "key": "key"}}}},
        "oauth": {"clientId": {"valueFrom": {"secretKeyRef": {"name": "notes-client", "key": "id"}}}, "clientSecret": ref},
    })  # fmt: skip
    gone = {"valueFrom": {"secretKeyRef": {"name": "gone", "key": "k"}}}
    missing = McpServerSpec.model_validate({"url": URL, "auth": "oauth", "oauth": {"clientSecret": gone}})

    async def main() -> None:
        api = _api(real_cluster, tmp_path)
        try:
            reader = SecretReader(api, namespace)
            resolved = await with_oauth_secrets(reader, await with_header_secrets(reader, spec))
            assert resolved.headers == {"X-Key": "k-1"}
            assert resolved.oauth is not None
            assert (resolved.oauth.client_id, resolved.oauth.client_secret) == ("cid-1", "client-secret-1")
            with pytest.raises(LookupError, match="gone"):
                await with_oauth_secrets(reader, missing)
        finally:
            await api.aclose()

    anyio.run(main)
