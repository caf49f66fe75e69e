"""The folder supervisor's ``/metrics``: what its hosted and agent endpoints carried, by endpoint.

``clawplane run --detach`` on a folder of real stdio fixture servers and agents; real SDK clients
call a hosted server (``/mcp/waits``, with the ``openclaw`` token) and an agent endpoint
(``/mcp/agents/alpha``, with the agent's token); ``/metrics`` is fetched over HTTP with the ``cli``
token and parsed with ``prometheus_client``'s parser.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from tests.fixtures.servers.helpers import authed
from tests.integration.agentep.conftest import agent_client, endpoint, token, write_folder
from tests.integration.engine.conftest import Cli, processes_under
from tests.integration.runloop.conftest import Loop, wait_for

pytestmark = pytest.mark.anyio
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[Loop]:
    folder = tmp_path / "folder"
    write_folder(folder)
    cli = Cli(folder)
    try:
        started = cli("run", str(folder), "--detach", "--resync-interval", "2")
        assert started.returncode == 0, started.stdout + started.stderr
        yield Loop(folder, cli)
    finally:
        cli("down", str(folder))
        for proc in processes_under(folder):
            proc.kill()


def parse(text: str) -> Samples:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def calls(samples: Samples, **labels: str) -> float:
    key = ("clawplane_mcp_request_duration_seconds_count", tuple(sorted(labels.items())))
    return samples.get(key, 0.0)


async def test_metrics_count_hosted_and_agent_calls_apart(loop: Loop) -> None:
    folder, cli = loop.folder, loop.cli
    loop.wait_settled()
    async with authed(
        f"{endpoint(folder)}/mcp/waits", token(cli, folder, "openclaw"), mode="legacy"
    ) as hosted:
        for n in range(2):
            await hosted.call_tool("echo", {"message": f"h{n}"})
    async with agent_client(folder, cli, "alpha", mode="legacy") as agent:
        for n in range(3):
            await agent.call_tool("waits__echo", {"message": f"a{n}"})
        during = parse(loop.metrics())
    after = parse(loop.metrics())

    tool = {"method": "tools/call", "tool": "echo", "outcome": "ok", "server": "waits"}
    assert calls(after, endpoint="hosted", **tool) == 2
    assert calls(after, endpoint="agent", **tool) == 3
    # The agent endpoint's session was open while the client was, and counted as one.
    assert during[("clawplane_mcp_sessions", (("endpoint", "agent"), ("server", "")))] == 1
    # The loop's own metrics share the registry.
    assert any(name == "clawplane_reconciles_total" for name, _ in after)


async def test_a_drift_the_loop_repairs_is_counted_and_the_plan_size_returns_to_zero(loop: Loop) -> None:
    """A server's tools change upstream (its primary process, via a 2026-07-28 call): the loop's next
    pass plans and applies ``tools-drifted``; the repair is counted by its reason."""
    folder, cli = loop.folder, loop.cli
    settled = loop.wait_settled()
    before = parse(loop.metrics())
    async with authed(
        f"{endpoint(folder)}/mcp/moving", token(cli, folder, "openclaw"), mode="auto"
    ) as client:
        assert client.protocol_version == "2026-07-28"
        await client.call_tool("add_tool", {"name": "appeared"})
    loop.wait_settled(after=settled["reconciles"])
    repaired = ("clawplane_drift_repairs_total", (("reason", "tools-drifted"),))

    def counted() -> Samples | None:
        found = parse(loop.metrics())
        return found if found.get(repaired, 0.0) >= 1 else None

    wait_for("the drift repair to be counted", counted)
    loop.wait_settled(after=loop.reconciles())  # a pass after the repair, which finds nothing to do
    after = parse(loop.metrics())
    assert before.get(repaired, 0.0) == 0 and after[repaired] == 1
    assert after[("clawplane_plan_actions", ())] == 0
