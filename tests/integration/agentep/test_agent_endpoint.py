"""``/mcp/agents/<agent>`` over real stdio fixture servers and real HTTP, with the SDK client, both eras.

The folder (``conftest.AGENTS``) hosts ``fix`` (the normal fixture, three tools filtered),
``conf`` (the conformance fixture, ``sessions: shared``), ``moving`` (changes its tools) and
``other`` (no agent uses it); agent ``alpha`` has the first three and denies two tools,
``beta`` only ``fix``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import psutil
import pytest
from mcp.shared.exceptions import MCPError
from tests.fixtures.servers.helpers import START_TIMEOUT
from tests.integration.agentep.conftest import agent_client, endpoint, token, tools_json
from tests.integration.engine.conftest import Cli
from tests.integration.mcpserve.conftest import control
from tests.integration.mcpserve.test_approvals import _head
from tests.integration.mcpserve.test_tools import call, schemas_of

pytestmark = pytest.mark.anyio
MODES = ("auto", "legacy")  # auto negotiates 2026-07-28, legacy the handshake era
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", MODES)
async def test_tools_are_the_agents_catalog_as_tools_json_names_them(
    agents: tuple[Path, Cli], mode: str
) -> None:
    folder, cli = agents
    for agent in ("alpha", "beta"):
        async with agent_client(folder, cli, agent, mode=mode) as client:
            listed = (await client.list_tools()).tools
        rows = tools_json(folder, agent)
        assert [t.name for t in listed] == [r["name"] for r in rows]
        assert [t.description for t in listed] == [r["description"] for r in rows]
    names = {r["name"] for r in tools_json(folder, "alpha")}
    # toolFilter of fix, tools.deny of alpha, and a server alpha does not use stay out.
    assert {"fix__echo", "conf__test_simple_text", "moving__add_tool", "fix__resources_list"} <= names
    assert not names & {"fix__env", "fix__cwd", "conf__test_audio_content", "conf__json_schema_2020_12_tool"}
    assert not any(n.startswith("other__") for n in names)
    assert {r["name"] for r in tools_json(folder, "beta")} == {n for n in names if n.startswith("fix__")}


@pytest.mark.parametrize("mode", MODES)
async def test_calls_reach_the_right_backend_with_progress_logging_and_errors(
    agents: tuple[Path, Cli], mode: str
) -> None:
    folder, cli = agents
    progress: list[float] = []
    logs: list[Any] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    opt_in = {"log_level": "info"} if mode == "auto" else {}
    async with agent_client(folder, cli, "alpha", mode=mode, logging_callback=on_log, **opt_in) as client:
        assert _text(await client.call_tool("fix__echo", {"message": "hi"})) == "echo: hi"
        assert (
            _text(await client.call_tool("conf__test_simple_text", {}))
            == "This is a simple text response for testing."
        )
        await client.call_tool("conf__test_tool_with_progress", {}, progress_callback=on_progress)
        assert progress == [0, 50, 100]
        await client.call_tool("conf__test_tool_with_logging", {})
        assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]
        failed = await client.call_tool("conf__test_error_handling", {})
        assert failed.is_error is True
        # A JSON-RPC error of the server keeps its code and message.
        with pytest.raises(MCPError) as raised:
            await client.call_tool("fix__fail", {"message": "kaput"})
        assert (raised.value.code, raised.value.message) == (-32000, "kaput")
        # Filtered, denied and foreign tools are unknown here.
        for name in ("fix__env", "conf__test_audio_content", "other__echo", "echo"):
            with pytest.raises(MCPError) as unknown:
                await client.call_tool(name, {})
            assert unknown.value.code == types.INVALID_PARAMS and name in unknown.value.message


@pytest.mark.parametrize("mode", MODES)
async def test_a_servers_error_data_reaches_the_client(agents: tuple[Path, Cli], mode: str) -> None:
    folder, cli = agents
    async with agent_client(folder, cli, "alpha", mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("waits__fail_with_data", {"message": "carried"})
    assert (raised.value.code, raised.value.message) == (-32050, "carried")
    assert raised.value.data == {"detail": "kept", "n": 7}


async def _answer_form(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"username": "ada"})


async def _answer_sampling(ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="sure"),
                                     model="test")  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
async def test_a_backends_questions_reach_clients_of_both_eras(agents: tuple[Path, Cli], mode: str) -> None:
    """The conformance fixture's backend session (handshake era) asks mid-call for elicitation and
    sampling: a handshake-era client gets the requests, a 2026-07-28 client an ``InputRequiredResult``
    whose answer, sent with the retry, goes back to the backend as the response (MRTR bridging)."""
    folder, cli = agents
    async with agent_client(folder, cli, "alpha", mode=mode, elicitation_callback=_answer_form,
                            sampling_callback=_answer_sampling) as client:  # fmt: skip
        elicited = await client.call_tool("conf__test_elicitation", {"message": "who?"})
        sampled = await client.call_tool("conf__test_sampling", {"prompt": "hello"})
    assert _text(elicited) == 'User response: action=accept, content={"username": "ada"}'
    assert _text(sampled) == "LLM response: sure"


async def test_a_cancelled_call_is_cancelled_upstream(agents: tuple[Path, Cli]) -> None:
    folder, cli = agents
    started = anyio.Event()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        started.set()

    async with agent_client(folder, cli, "alpha", mode="legacy") as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: client.call_tool("waits__hold", {}, progress_callback=on_progress))
            with anyio.fail_after(START_TIMEOUT):
                await started.wait()  # the server is running the call
            tg.cancel_scope.cancel()  # the client sends notifications/cancelled
        # It reaches the server when the endpoint leaves the call's link: wait until it has.
        with anyio.fail_after(START_TIMEOUT):
            while "cancelled" not in _text(await client.call_tool("waits__recall", {})):
                await anyio.sleep(0.05)
        # The session's own process (perClient) saw exactly this one cancellation.
        assert _text(await client.call_tool("waits__recall", {})) == '["cancelled"]'


@pytest.mark.parametrize("mode", MODES)
async def test_utility_tools_resources_and_prompts_are_merged_under_the_prefixes(
    agents: tuple[Path, Cli], mode: str
) -> None:
    folder, cli = agents
    async with agent_client(folder, cli, "alpha", mode=mode) as client:
        listed = await client.call_tool("fix__resources_list", {})
        assert listed.structured_content is not None
        assert [r["uri"] for r in listed.structured_content["resources"]] == ["fixture://greeting"]
        read = await client.call_tool("fix__resources_read", {"uri": "fixture://greeting"})
        assert "hello from fix" in _text(read)
        prompt = await client.call_tool(
            "fix__prompts_get", {"name": "summarize", "arguments": {"topic": "x"}}
        )
        assert "Summarize x." in _text(prompt)

        resources = {(r.uri, r.name) for r in (await client.list_resources()).resources}
        assert {
            ("fixture://greeting", "fix__greeting"),
            ("test://static-text", "conf__static-text"),
        } <= resources
        # moving lists the same URI: it is listed under both names and read from the first server by name.
        assert ("fixture://greeting", "moving__greeting") in resources
        greeting = (await client.read_resource("fixture://greeting")).contents[0]
        assert isinstance(greeting, types.TextResourceContents) and greeting.text == "hello from fix"
        templated = (await client.read_resource("test://template/42/data")).contents[0]
        assert isinstance(templated, types.TextResourceContents) and '"id": "42"' in templated.text
        with pytest.raises(MCPError):
            await client.read_resource("nowhere://at-all")

        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert {"fix__summarize", "conf__test_simple_prompt", "conf__test_prompt_with_arguments"} <= prompts
        got = await client.get_prompt("fix__summarize", {"topic": "y"})
        message = got.messages[0].content
        assert isinstance(message, types.TextContent) and message.text == "Summarize y."


async def test_each_downstream_session_gets_its_own_per_client_process(agents: tuple[Path, Cli]) -> None:
    folder, cli = agents
    async with (
        agent_client(folder, cli, "alpha", mode="legacy") as one,
        agent_client(folder, cli, "alpha", mode="legacy") as two,
    ):
        first = int(_text(await one.call_tool("fix__pid", {})))
        assert int(_text(await one.call_tool("fix__pid", {}))) == first
        second = int(_text(await two.call_tool("fix__pid", {})))
        assert first != second
    # The sessions ended (the client deletes them): their processes are torn down.
    for pid in (first, second):
        with pytest.raises(psutil.NoSuchProcess):
            psutil.Process(pid).wait(timeout=START_TIMEOUT)
            psutil.Process(pid)


@pytest.mark.parametrize("mode", MODES)
async def test_a_backend_sessions_list_change_reaches_its_downstream_session(
    agents: tuple[Path, Cli], mode: str
) -> None:
    folder, cli = agents
    changed = anyio.Event()
    name = f"grown_{mode}"

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with agent_client(folder, cli, "alpha", mode=mode, message_handler=on_message) as client:
        before = {t.name for t in (await client.list_tools()).tools}
        assert f"moving__{name}" not in before
        if mode == "auto":
            async with client.listen(tools_list_changed=True) as subscription:
                await client.call_tool("moving__add_tool", {"name": name})
                with anyio.fail_after(START_TIMEOUT):
                    event = await subscription.__anext__()
            assert type(event).__name__ == "ToolsListChanged"
        else:
            await client.call_tool("moving__add_tool", {"name": name})
            with anyio.fail_after(START_TIMEOUT):
                await changed.wait()
        after = {t.name for t in (await client.list_tools()).tools}
        assert after == before | {f"moving__{name}"}
        assert _text(await client.call_tool(f"moving__{name}", {})) == name


async def test_an_applied_policy_change_reaches_the_agents_sessions(agents: tuple[Path, Cli]) -> None:
    folder, cli = agents
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    resources = folder / "resources.yaml"
    original = resources.read_text()
    async with agent_client(folder, cli, "beta", mode="legacy", message_handler=on_message) as client:
        assert "fix__echo" in {t.name for t in (await client.list_tools()).tools}
        resources.write_text(
            original.replace("  mcpServers: [fix]\n", "  mcpServers: [fix]\n  tools: {deny: [fix__echo]}\n")
        )
        try:
            assert cli("apply", str(folder), "--yes").returncode == 0
            with anyio.fail_after(START_TIMEOUT):
                await changed.wait()
            names = {t.name for t in (await client.list_tools()).tools}
            assert "fix__echo" not in names and "fix__add" in names
            assert names == {r["name"] for r in tools_json(folder, "beta")}
        finally:
            resources.write_text(original)
            assert cli("apply", str(folder), "--yes").returncode == 0


def test_an_agent_token_reaches_only_its_own_endpoint(agents: tuple[Path, Cli]) -> None:
    folder, cli = agents
    base = endpoint(folder)
    alpha = token(cli, folder, "agent:alpha")

    def post(path: str, bearer: str | None, **headers: str) -> httpx.Response:
        sent = dict(HEADERS, **headers)
        if bearer is not None:
            sent["Authorization"] = f"Bearer {bearer}"
        return httpx.post(base + path, json=INIT, headers=sent, timeout=60)

    assert post("/mcp/agents/alpha", alpha).status_code == 200
    for path in ("/mcp/agents/beta", "/mcp/fix", "/mcp/other", "/mcp/_clawplane"):
        refused = post(path, alpha)
        assert refused.status_code == 403, path
        assert 'consumer "agent:alpha"' in refused.json()["error"]["message"]
    for consumer in ("openclaw", "cli", "reader", "agent:beta"):
        assert post("/mcp/agents/alpha", token(cli, folder, consumer)).status_code == 403, consumer
    assert post("/mcp/agents/alpha", None).status_code == 401
    assert post("/mcp/agents/alpha", alpha + "x").status_code == 401
    assert post("/mcp/agents/alpha", alpha, Host="evil.example").status_code == 421
    assert post("/mcp/agents/alpha", alpha, Origin="https://evil.example").status_code == 403
    # An agent nobody applied is not there, whoever asks.
    assert post("/mcp/agents/nobody", alpha).status_code == 403
    # The alias for clients that only take URLs ending in /mcp (the MCP Inspector CLI).
    assert post("/mcp/agents/alpha/mcp", alpha).status_code == 200
    assert post("/mcp/agents/beta/mcp", alpha).status_code == 403


def test_agent_tokens_are_listed_and_rotated_like_the_others(agents: tuple[Path, Cli]) -> None:
    folder, cli = agents
    listed = {row["consumer"]: row["servers"] for row in cli.json("token", "list", str(folder), "--json")}
    assert listed["agent:alpha"] == ["agents/alpha"] and listed["agent:beta"] == ["agents/beta"]
    before = token(cli, folder, "agent:beta")
    assert cli("token", "rotate", str(folder), "agent:beta").returncode == 0
    after = token(cli, folder, "agent:beta")
    assert after != before
    url = endpoint(folder) + "/mcp/agents/beta"
    sent = dict(HEADERS, Authorization=f"Bearer {before}")
    assert httpx.post(url, json=INIT, headers=sent, timeout=60).status_code == 401
    sent["Authorization"] = f"Bearer {after}"
    assert httpx.post(url, json=INIT, headers=sent, timeout=60).status_code == 200


async def _requested(operator: Any, schemas: dict[str, Any], cursor: int) -> tuple[str, int]:
    for _ in range(10):  # each wait is at most 60 s; a loaded box may need several
        page = await call(operator, schemas, "events_wait", cursor=cursor, timeout_ms=60000, limit=50)
        for event in page["events"]:
            if event["type"] == "approval_requested":
                return str(event["subject"]), int(event["cursor"])
        cursor = page["next_cursor"]
    raise AssertionError("no approval_requested event")


@pytest.mark.timeout(600)
async def test_a_gated_tool_waits_for_an_answer_given_in_another_mcp_session(
    agents: tuple[Path, Cli],
) -> None:
    folder, cli = agents
    box: list[types.CallToolResult] = []
    async with (
        control("http", folder, cli) as operator,
        agent_client(folder, cli, "alpha", mode="legacy", read_timeout_seconds=300) as caller,
    ):
        schemas = await schemas_of(operator)
        cursor = await _head(operator, schemas)

        async def gated_call(a: int) -> None:
            box.append(await caller.call_tool("fix__add", {"a": a, "b": 1}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(gated_call, 2)
            first, cursor = await _requested(operator, schemas, cursor)
            (listed,) = (await call(operator, schemas, "approvals_list"))["approvals"]
            assert listed["id"] == first and listed["subject"]["tool"] == "add"
            assert listed["subject"]["caller"] == "agent:alpha"
            assert listed["subject"]["endpoint"] == "/mcp/agents/alpha"
            assert not box  # still waiting
            await call(operator, schemas, "approvals_respond", id=first, decision="approve", reason="ok")
        assert not box[0].is_error and _text(box[0]) == "3"

        async with anyio.create_task_group() as tg:
            tg.start_soon(gated_call, 5)
            second, cursor = await _requested(operator, schemas, cursor)
            await call(operator, schemas, "approvals_respond", id=second, decision="reject", reason="not now")
        assert box[1].is_error and f"approval {second}" in _text(box[1]) and "not now" in _text(box[1])
