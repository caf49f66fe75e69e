"""A reader cannot freeze the supervisor (issue 35, finding 5).

The quickstart is applied (a real supervisor); a consumer with only the ``read`` scope asks the
control plane (``/mcp/_clawplane``, raw JSON-RPC over real HTTP) for a plan of the folder with
15,000 McpServer documents laid over it (2 MB, under the 4 MiB body limit). On e089d0e that plan
ran on the supervisor's event loop for seconds, and ``/healthz`` (like every hosted server's
traffic) waited for it. Now it runs in the query worker: every ``/healthz`` poll made while it
runs answers within 100 ms of the slowest poll of a baseline measured the same way, just
before, in the same test (what the machine's load adds to a poll is in that baseline; what the
plan would add is not). The answer comes back bounded (the first changes, and how many there
are), or, on a machine too slow for it, as the clean time-limit error.

One consumer's flood of costly calls is refused with a JSON-RPC error that says when to retry,
while another consumer's call is answered meanwhile.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types.version import LATEST_MODERN_VERSION
from tests.integration.engine.conftest import Cli
from tests.integration.mcpserve.conftest import applied, endpoint
from tests.support.flood import flood_documents

pytestmark = pytest.mark.anyio

TOO_MANY_REQUESTS = -32029
MARGIN_S = 0.5
"""What the plan may add to a /healthz poll, over the slowest poll of the baseline."""
PACE_S = 0.02
FLOOD = 16
CALL_S = 600.0
"""A hang guard for one call (a large plan on a loaded 2-core machine)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Rig:
    folder: Path
    cli: Cli
    base: str

    def token(self, consumer: str) -> str:
        return self.cli("token", "show", str(self.folder), consumer).stdout.strip()


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    """An applied quickstart of its own: each test starts with whole shares of the query worker."""
    folder = tmp_path / "quickstart"
    with applied(folder) as cli:
        yield Rig(folder, cli, endpoint(folder))


def request(tool: str, arguments: dict[str, Any], request_id: int = 1) -> bytes:
    """One 2026-07-28 ``tools/call`` (no session to open first)."""
    meta = {PROTOCOL_VERSION_META_KEY: LATEST_MODERN_VERSION, CLIENT_CAPABILITIES_META_KEY: {}}
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": meta}}  # fmt: skip
    return json.dumps(body).encode()


def headers(token: str, tool: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream",
            "content-type": "application/json", "mcp-protocol-version": LATEST_MODERN_VERSION,
            "mcp-method": "tools/call", "mcp-name": tool}  # fmt: skip


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer of a response (JSON, or the last event of an SSE stream)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return dict(json.loads(response.content))
    events = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return dict(events[-1])


async def call(http: httpx.AsyncClient, url: str, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    with anyio.fail_after(CALL_S):
        response = await http.post(url, content=request(tool, arguments), headers=headers(token, tool))
    assert response.status_code == 200, response.text[:2000]
    return answer_of(response)


async def poll(http: httpx.AsyncClient) -> float:
    """One ``/healthz`` request: how long its answer took."""
    started = time.perf_counter()
    response = await http.get("/healthz")
    took = time.perf_counter() - started
    assert response.status_code in (200, 503), response.text
    return took


async def test_a_reader_cannot_freeze_the_supervisor(rig: Rig) -> None:
    url, token = f"{rig.base}/mcp/_clawplane", rig.token("reader")
    arguments = {"documents": flood_documents(15_000)}
    assert len(request("plan", arguments)) < 4 * 1024 * 1024
    limits = httpx.Limits(max_keepalive_connections=2)
    async with httpx.AsyncClient(base_url=rig.base, timeout=30, limits=limits) as poller, \
            httpx.AsyncClient(timeout=httpx.Timeout(30, read=CALL_S)) as caller:  # fmt: skip
        await poll(poller)  # the connection is open before anything is measured
        baseline = []
        for _ in range(50):
            baseline.append(await poll(poller))
            await anyio.sleep(PACE_S)
        box: list[dict[str, Any]] = []

        async def plan() -> None:
            box.append(await call(caller, url, token, "plan", arguments))

        during: list[float] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(plan)
            while not box:
                during.append(await poll(poller))
                await anyio.sleep(PACE_S)

    slowest, bound = max(during), max(baseline) + MARGIN_S
    summary = (f"{len(during)} polls while the plan ran: slowest {slowest * 1000:.0f} ms; baseline of "
               f"{len(baseline)}: slowest {max(baseline) * 1000:.0f} ms, bound {bound * 1000:.0f} ms")  # fmt: skip
    print(summary)
    assert slowest <= bound, summary
    assert len(during) >= 10, summary  # the plan ran for a while: the polls above were made meanwhile

    (answer,) = box
    result = answer.get("result")
    assert isinstance(result, dict), answer
    text = result["content"][0]["text"]
    if result.get("isError"):  # only a machine too slow for the time limit gets here
        assert "ran longer than" in text and "was stopped" in text, text
    else:
        truncated = result["structuredContent"]["truncated"]
        assert truncated["changes"] >= 15_000 and truncated["shownChanges"] < truncated["changes"], truncated
        assert len(text.encode()) <= 512 * 1024 and "clawplane plan" in text


async def test_one_consumer_s_flood_is_refused_while_another_is_answered(rig: Rig) -> None:
    url = f"{rig.base}/mcp/_clawplane"
    flooder, other = rig.token("reader"), rig.token("cli")
    heavy = {"documents": flood_documents(3_000)}
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(timeout=httpx.Timeout(30, read=CALL_S), limits=limits) as http:
        flood: list[dict[str, Any]] = []
        answered: list[dict[str, Any]] = []

        async def one() -> None:
            flood.append(await call(http, url, flooder, "validate", heavy))

        async with anyio.create_task_group() as tg:
            for _ in range(FLOOD):
                tg.start_soon(one)
            # Once a refusal says the flooder has its share in progress, the other consumer asks.
            with anyio.fail_after(CALL_S):
                while not any("error" in a for a in flood) and len(flood) < FLOOD:
                    await anyio.sleep(0.01)
            answered.append(await call(http, url, other, "validate", {"documents": flood_documents(1)}))

    refused = [a for a in flood if "error" in a]
    served = [a for a in flood if "result" in a]
    assert len(refused) + len(served) == FLOOD, flood
    assert len(refused) >= FLOOD // 2, f"{len(served)} of {FLOOD} calls at once were served"
    for answer in refused:
        error = answer["error"]
        assert error["code"] == TOO_MANY_REQUESTS, error
        assert "retry" in error["message"] and '"reader"' in error["message"], error
        assert error["data"]["retryAfterMs"] > 0 and error["data"]["limit"] == "in-progress", error
    for answer in served:
        assert answer["result"]["structuredContent"]["valid"] is True, answer
    (mine,) = answered
    assert "result" in mine and mine["result"]["structuredContent"]["valid"] is True, mine
