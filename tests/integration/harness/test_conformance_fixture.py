"""The conformance fixture server speaks both protocol eras over stdio and resumes streams over HTTP.

The official suite (tests/compat/test_conformance_suite.py) only drives it over HTTP in the
handshake era; clawplane's proxy hosts it over stdio and the SDK's own clients negotiate
2026-07-28, so both eras are checked here with the real Python SDK client.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.subscriptions import ResourceUpdated
from tests.fixtures.servers.helpers import START_TIMEOUT
from tests.support.conformance import FIXTURE, fixture_http, probe_resumption

pytestmark = [
    pytest.mark.anyio,
    # Sampling, elicitation and logging are deprecated as of 2026-07-28 but still part of the protocol.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

FIXTURE_TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    "test_reconnection",
    "update_watched_resource",
    "test_missing_capability",
    "test_header_param",
}


async def sampled(ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    prompt = params.messages[0].content
    text = prompt.text if isinstance(prompt, types.TextContent) else "?"
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"sampled {text}"), model="test"
    )


async def elicited(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    assert isinstance(params, types.ElicitRequestFormParams)
    fields = params.requested_schema["properties"]
    return types.ElicitResult(
        action="accept", content={name: f"<{name}>" for name in fields if name == "username"}
    )


def client(mode: str, **kwargs: Any) -> Client:
    params = StdioServerParameters(command=sys.executable, args=[str(FIXTURE)])
    return Client(
        params,
        mode=mode,
        sampling_callback=sampled,
        elicitation_callback=elicited,
        read_timeout_seconds=START_TIMEOUT,
        **kwargs,
    )


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_stdio_fixture_serves_every_fixture_in_both_eras(mode: str, version: str) -> None:
    logs: list[tuple[str, Any]] = []
    progress: list[float] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append((params.level, params.data))

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    # 2026-07-28 delivers notifications/message only to requests that opt in with a level.
    opt_in = {"log_level": "info"} if mode == "auto" else {}
    async with client(mode, logging_callback=on_log, **opt_in) as c:
        assert c.protocol_version == version
        assert c.server_info.title == "clawplane conformance fixture"
        caps = c.server_capabilities
        assert caps.logging is not None and caps.completions is not None
        assert caps.resources is not None and caps.resources.subscribe is True

        assert {t.name for t in (await c.list_tools()).tools} == FIXTURE_TOOLS
        schema = next(
            t for t in (await c.list_tools()).tools if t.name == "json_schema_2020_12_tool"
        ).input_schema
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["additionalProperties"] is False and "address" in schema["$defs"]

        # Client input: a request mid-call (handshake era) or an InputRequiredResult round (2026-07-28).
        result = await c.call_tool("test_sampling", {"prompt": "hello"})
        assert result.content[0].text == "LLM response: sampled hello"  # type: ignore[union-attr]
        result = await c.call_tool("test_elicitation", {"message": "who?"})
        assert result.content[0].text == 'User response: action=accept, content={"username": "<username>"}'  # type: ignore[union-attr]

        await c.call_tool("test_tool_with_logging", {})
        assert logs == [
            ("info", "Tool execution started"),
            ("info", "Tool processing data"),
            ("info", "Tool execution completed"),
        ]
        await c.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        assert progress == [0, 50, 100]

        error = await c.call_tool("test_error_handling", {})
        assert error.is_error is True
        template = await c.read_resource("test://template/42/data")
        assert '"id": "42"' in template.contents[0].text  # type: ignore[union-attr]
        completion = await c.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "pa"},
        )
        assert completion.completion.values == ["paris", "park", "party"]


async def test_resource_updates_reach_handshake_subscribers() -> None:
    updated = anyio.Event()
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            seen.append(message.params.uri)
            updated.set()

    async with client("legacy", message_handler=on_message) as c:
        await c.session.subscribe_resource("test://watched-resource")
        await c.call_tool("update_watched_resource", {"text": "second"})
        with anyio.fail_after(START_TIMEOUT):
            await updated.wait()
        assert seen == ["test://watched-resource"]
        assert (await c.read_resource("test://watched-resource")).contents[0].text == "second"  # type: ignore[union-attr]

        # After unsubscribing no more updates are sent; a ping round trip flushes anything in flight.
        await c.session.unsubscribe_resource("test://watched-resource")
        await c.call_tool("update_watched_resource", {"text": "third"})
        await c.session.send_ping()
        assert seen == ["test://watched-resource"]


async def test_resource_updates_reach_modern_listeners() -> None:
    async with client("auto") as c:
        assert c.protocol_version == "2026-07-28"
        async with c.listen(resource_subscriptions=["test://watched-resource"]) as sub:
            await c.call_tool("update_watched_resource", {"text": "second"})
            with anyio.fail_after(START_TIMEOUT):
                event = await sub.__anext__()
        assert event == ResourceUpdated(uri="test://watched-resource")


async def test_set_level_filters_handshake_logs() -> None:
    logs: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(str(params.data))

    async with client("legacy", logging_callback=on_log) as c:
        await c.session.set_logging_level("warning")
        await c.call_tool("test_tool_with_logging", {})
        assert logs == []
        await c.session.set_logging_level("debug")
        await c.call_tool("test_tool_with_logging", {})
        assert len(logs) == 3


def test_http_fixture_resumes_a_closed_stream_with_last_event_id(tmp_path: Path) -> None:
    with fixture_http(tmp_path) as url:
        probe = probe_resumption(url)
    assert probe.post_status == 200
    priming = probe.priming
    assert priming is not None and priming.retry == 500, probe.post_events
    # The tool closed its stream mid-call: the POST stream ends with the priming event only ...
    assert [e.id for e in probe.post_events] == [priming.id]
    assert not probe.result_on_post
    # ... and the resumed GET delivers the result.
    assert probe.get_status == 200
    assert probe.resumed_result is not None
    assert probe.resumed_result["result"]["content"][0]["text"] == "Reconnection test completed successfully."
