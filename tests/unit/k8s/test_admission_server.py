"""The webhook's HTTP handling: Host check, malformed reviews, and the AdmissionReview answer.

The namespace listing is a stand-in (``Listing``) here: these tests are about the request
handling; tests/compat/kubernetes/test_admission_real.py runs the same code with a real API server.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from clawplane.k8s.adapter.reconciler import CRD_KINDS
from clawplane.k8s.admission.server import Webhook, _hostname
from clawplane.k8s.admission.settings import Target, WebhookOptions
from clawplane.k8s.api.kubeapi import ApiError

API = "clawplane.dev/v1alpha1"


class Listing:
    """Answers ``list`` with fixed objects (or fails as an API server can)."""

    def __init__(self, objects: list[dict[str, Any]], fail: bool = False) -> None:
        self.objects, self.fail = objects, fail

    async def list(self, kind: Any, namespace: str) -> list[dict[str, Any]]:
        if self.fail:
            raise ApiError(503, "ServiceUnavailable", "etcd is down")
        return [o for o in self.objects if o["kind"] == kind.kind]


def review(obj: dict[str, Any], operation: str = "CREATE", namespace: str = "team") -> dict[str, Any]:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u-1", "operation": operation, "namespace": namespace, "object": obj}}  # fmt: skip


def server(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "McpServer", "metadata": {"name": name, "namespace": "team"}, "spec": spec}


async def _client(listing: Listing, namespaces: tuple[str, ...] = ()) -> TestClient[Any, Any]:
    options = WebhookOptions(port=1, target=Target(url="https://127.0.0.1:1"), namespaces=namespaces)
    hook = Webhook(listing, list(CRD_KINDS.values()), options)  # type: ignore[arg-type]
    app = web.Application(client_max_size=1024 * 1024)
    app.router.add_post("/validate", hook.handle)
    client: TestClient[Any, Any] = TestClient(TestServer(app, host="127.0.0.1"))
    await client.start_server()
    return client


@pytest.mark.anyio
async def test_a_refusal_is_an_admission_review_with_the_uid_and_clawplanes_words() -> None:
    client = await _client(Listing([]))
    try:
        bad = server("bad", command="node", env={"LD_PRELOAD": "/x.so"})
        answer = await client.post("/validate", json=review(bad), headers={"Host": "127.0.0.1:9443"})
        body = await answer.json()
        assert answer.status == 200 and body["kind"] == "AdmissionReview"
        response = body["response"]
        assert response["uid"] == "u-1" and response["allowed"] is False
        assert response["status"]["code"] == 422
        assert response["status"]["message"].startswith("clawplane: error[mcp.env-blocked] at spec.env.LD_PRELOAD")
        fine = await client.post("/validate", json=review(server("ok", command="node")), headers={"Host": "127.0.0.1"})
        assert (await fine.json())["response"] == {"uid": "u-1", "allowed": True}
        deleting = await client.post("/validate", json=review(bad, "DELETE"), headers={"Host": "127.0.0.1"})
        assert (await deleting.json())["response"]["allowed"] is True
    finally:
        await client.close()


@pytest.mark.anyio
async def test_an_unknown_host_and_a_malformed_review_are_refused() -> None:
    client = await _client(Listing([]))
    try:
        other = await client.post("/validate", json=review(server("x", command="n")), headers={"Host": "evil.example"})
        assert other.status == 421
        page = await client.post(
            "/validate", json=review(server("x", command="n")), headers={"Host": "127.0.0.1", "Origin": "https://evil.example"}
        )
        assert page.status == 403
        for body in (b"not json", b"[]", json.dumps({"request": {"uid": 7}}).encode(), b'{"request": "x"}'):
            answer = await client.post("/validate", data=body, headers={"Host": "127.0.0.1"})
            assert answer.status == 400, body
        huge = await client.post("/validate", data=b" " * (2 * 1024 * 1024), headers={"Host": "127.0.0.1"})
        assert huge.status == 413
    finally:
        await client.close()


@pytest.mark.anyio
async def test_when_the_namespace_cannot_be_listed_the_object_is_checked_alone() -> None:
    client = await _client(Listing([], fail=True))
    try:
        bad = server("bad", command="node", env={"LD_PRELOAD": "/x.so"})
        answer = await client.post("/validate", json=review(bad), headers={"Host": "127.0.0.1"})
        assert (await answer.json())["response"]["allowed"] is False
    finally:
        await client.close()


@pytest.mark.anyio
async def test_a_namespace_this_operator_does_not_watch_is_not_its_to_judge() -> None:
    client = await _client(Listing([]), namespaces=("team-a",))
    try:
        bad = server("bad", command="node", env={"LD_PRELOAD": "/x.so"})
        answer = await client.post("/validate", json=review(bad, namespace="team-b"), headers={"Host": "127.0.0.1"})
        assert (await answer.json())["response"]["allowed"] is True
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("header", "name"),
    [("127.0.0.1:9443", "127.0.0.1"), ("Hook.Ops.svc", "hook.ops.svc"), ("[::1]:443", "::1"), ("[::1]", "::1"), ("::1", "::1")],
)
def test_the_host_check_reads_names_with_and_without_ports(header: str, name: str) -> None:
    assert _hostname(header) == name
