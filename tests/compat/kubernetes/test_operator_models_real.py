"""The operator sets a ModelProvider's conditions as the local engine does, reading its key from a Secret.

On the real API server, the operator under the chart's identity (tests/k8s/real/operator_cluster.py);
the model server is the project's fake OpenAI-compatible provider on loopback.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.fixtures.providers.fake_provider import FakeProvider
from tests.k8s.cluster import GATEWAY, NS, b64
from tests.k8s.operator_run import condition, is_true, until
from tests.k8s.real.operator_cluster import RealOperatorCluster as Cluster

KEY = "sk-canary-k8s-5e8f21"
pytestmark = pytest.mark.compat


def llm_secret(key: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "llm", "namespace": NS},
        "data": {"api-key": b64(key)},
    }


def provider(base_url: str) -> dict[str, Any]:
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "ModelProvider",
        "metadata": {"name": "local", "namespace": NS},
        "spec": {
            "baseUrl": base_url,
            "apiKey": {"valueFrom": {"secretKeyRef": {"name": "llm", "key": "api-key"}}},
            "connectionTimeoutMs": 5000,
            "models": [{"id": "llama-3.1-8b"}],
        },
    }


def _provider_ready(cluster: Cluster, generation: int) -> dict[str, Any]:
    return until(
        cluster.emu,
        f"ModelProvider Ready at generation {generation}",
        lambda: (
            (obj := cluster.get("modelproviders", "local")) is not None
            and is_true(obj, "Ready", generation=generation)
            and obj
        ),
    )


def test_provider_conditions_secret_env_and_rotation(cluster: Cluster) -> None:
    with FakeProvider(key=KEY, models=["llama-3.1-8b", "llama-3.1-70b"]) as fake:
        for obj in (llm_secret(KEY), provider(fake.base_url), GATEWAY):
            cluster.emu.apply_object(obj)
        obj = _provider_ready(cluster, 1)
        status = obj["status"]
        assert status["models"] == ["llama-3.1-8b", "llama-3.1-70b"] and status["modelCount"] == 2
        cond = condition(obj, "ModelsDiscovered")
        assert cond is not None and cond["status"] == "True" and cond["reason"] == "ModelsListed"
        gw = until(cluster.emu, "gateway ConfigMap", lambda: cluster.get("configmaps", "clawplane-gateway-default"))
        rendered = json.loads(gw["data"]["openclaw.json"])
        api_key = rendered["models"]["providers"]["local"]["apiKey"]
        assert api_key["source"] == "env" and api_key["id"].startswith("CLAWPLANE_SECRET_LLM_API_KEY_")
        env = json.loads(gw["data"]["secret-env.json"])
        assert {"name": api_key["id"], "valueFrom": {"secretKeyRef": {"name": "llm", "key": "api-key"}}} in env

        # The Secret rotates but the provider still wants the old key: Ready=False with the cause.
        cluster.emu.apply_object(llm_secret("sk-rotated-but-wrong"))
        failed = until(
            cluster.emu,
            "Ready=False after rotation",
            lambda: (c := condition(cluster.get("modelproviders", "local"), "Ready"))
            and c["status"] == "False"
            and c,
        )
        assert failed["reason"] == "Unauthorized" and "<redacted>" in failed["message"]
        fake.key = "sk-rotated-but-wrong"
        until(cluster.emu, "Ready again", lambda: is_true(cluster.get("modelproviders", "local"), "Ready"))
        everything = json.dumps([cluster.emu.list(k, NS) for k in ("modelproviders", "configmaps")])
        assert KEY not in everything and "sk-rotated-but-wrong" not in everything
