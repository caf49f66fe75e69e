"""The CRDs' CEL rules refuse on the real API server what ``clawplane validate`` refuses, in its words."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from tests.k8s.real.client import ApiError, Kube

from clawplane.models import McpServerSpec

API = "clawplane.dev/v1alpha1"
pytestmark = pytest.mark.compat


def _validate_says(spec: dict[str, Any]) -> str:
    """What the model (and so ``clawplane validate``) says of ``spec``."""
    with pytest.raises(ValidationError) as refused:
        McpServerSpec.model_validate(spec)
    return str(refused.value.errors()[0]["msg"]).removeprefix("Value error, ")


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"transport": "stdio"}, "spec.command"),
        ({"transport": "stdio", "command": ""}, "spec.command"),
        ({"transport": "sse"}, "spec.url"),
        ({"transport": "streamable-http", "command": "npx"}, "spec.url"),
        ({"args": ["x"]}, "spec"),
    ],
)
def test_a_server_validate_refuses_is_refused_by_the_api_server_in_the_same_words(
    admin: Kube, namespace: str, spec: dict[str, Any], field: str
) -> None:
    said = _validate_says(spec)
    obj = {
        "apiVersion": API,
        "kind": "McpServer",
        "metadata": {"name": "bad", "namespace": namespace},
        "spec": spec,
    }
    with pytest.raises(ApiError) as refused:
        admin.apply(obj)
    assert refused.value.status_code == 422, refused.value.status
    causes = {(c.get("field"), c["message"]) for c in refused.value.status["details"]["causes"]}
    assert any(f == field and said in message for f, message in causes), (said, causes)


@pytest.mark.parametrize(
    "spec",
    [
        {"transport": "stdio", "command": "npx"},
        {"command": "npx"},
        {"url": "http://notes.example.test/sse"},
        {"transport": "streamable-http", "url": "http://notes.example.test/mcp"},
        {"type": "http", "url": "http://notes.example.test/mcp"},
    ],
)
def test_what_validate_accepts_the_rules_accept(admin: Kube, namespace: str, spec: dict[str, Any]) -> None:
    McpServerSpec.model_validate(spec)
    obj = {
        "apiVersion": API,
        "kind": "McpServer",
        "metadata": {"name": "fine", "namespace": namespace},
        "spec": spec,
    }
    assert admin.apply(obj)["metadata"]["name"] == "fine"
