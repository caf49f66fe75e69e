"""``clawplane bridge`` counts what it carries on ``/metrics``, behind the same token as its MCP endpoint.

A real bridge process serves a real stdio fixture server; real SDK clients call through it, and
the exposition is read back with ``prometheus_client``'s parser under the names the folder
supervisor uses (one Grafana dashboard reads both).
"""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from tests.fixtures.servers.helpers import TOKEN, authed, bridge_process, script

pytestmark = pytest.mark.anyio


def parse(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_the_bridge_serves_its_call_metrics_to_its_token_holder() -> None:
    async with bridge_process(sys.executable, script("proxy"), args=["--name", "notes"]) as (_bridge, url):
        parts = urlsplit(url)
        metrics_url = f"{parts.scheme}://{parts.netloc}/metrics"
        async with authed(url, mode="legacy") as client:
            for n in range(4):
                await client.call_tool("echo", {"message": f"m{n}"})
            async with httpx.AsyncClient(timeout=30) as http:
                refused = await http.get(metrics_url)
                wrong = await http.get(metrics_url, headers={"Authorization": "Bearer not-the-token"})
                answered = await http.get(metrics_url, headers={"Authorization": f"Bearer {TOKEN}"})

    assert refused.status_code == 401 and wrong.status_code in (401, 403)
    assert "clawplane_mcp" not in refused.text + wrong.text
    assert answered.status_code == 200 and answered.headers["content-type"].startswith("text/plain")
    samples = parse(answered.text)
    labels = (
        ("endpoint", "hosted"),
        ("method", "tools/call"),
        ("outcome", "ok"),
        ("server", "notes"),
        ("tool", "echo"),
    )
    assert samples[("clawplane_mcp_request_duration_seconds_count", labels)] == 4
    # The session the client holds is counted while it is open.
    assert samples[("clawplane_mcp_sessions", (("endpoint", "hosted"), ("server", "notes")))] == 1
