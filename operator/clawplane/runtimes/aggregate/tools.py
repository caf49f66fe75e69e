"""The agent endpoint's tools: the agent's merged catalog, calls forwarded to their servers.

A ``<server>__resources_*``/``<server>__prompts_*`` entry is answered as OpenClaw's utility tools
are. A 2026-07-28 call whose server asks the client something returns an
``InputRequiredResult`` and goes on with the client's retry (``asking``).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

from clawplane.runtimes.aggregate.asking import Outcome, ResumeError
from clawplane.runtimes.aggregate.backend import OnRequest
from clawplane.runtimes.aggregate.forwarding import Forwarding
from clawplane.runtimes.aggregate.sessions import Downstream
from clawplane.runtimes.catalog import ToolEntry, ToolKind
from clawplane.runtimes.client.calls import utility_result
from clawplane.runtimes.proxy import STATE_PREFIX

__all__ = ["ToolMethods"]


class ToolMethods(Forwarding):
    """``tools/list`` and ``tools/call`` over the agent's merged catalog."""

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        agent, consumer = self._agent(ctx)
        self._catalog(agent)
        downstream = self._downstream(ctx, agent, consumer)  # it hears of list changes from now on
        return types.ListToolsResult(tools=[_tool(e) for e in await self._session_catalog(ctx, downstream)])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        agent, consumer = self._agent(ctx)
        self._catalog(agent)
        downstream = self._downstream(ctx, agent, consumer)
        entry = next((e for e in await self._session_catalog(ctx, downstream) if e.name == params.name), None)
        if entry is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        arguments = dict(params.arguments or {})
        if entry.kind is ToolKind.TOOL and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await self._call_asking(ctx, downstream, entry, params, consumer)
        if entry.kind is ToolKind.TOOL:
            result = await self._request(
                ctx, downstream, entry.server, "tools/call", {"name": entry.tool, "arguments": arguments}
            )
            return types.CallToolResult.model_validate(result, by_name=False)
        return await self._utility(ctx, downstream, entry, arguments)

    async def _call_asking(
        self,
        ctx: ServerRequestContext[Any, Any],
        downstream: Downstream,
        entry: ToolEntry,
        params: types.CallToolRequestParams,
        consumer: str,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """A 2026-07-28 call: the backend's questions become ``InputRequiredResult`` (``asking``)."""
        asking = self._asking
        if asking is None:
            raise MCPError(types.INTERNAL_ERROR, "the agent endpoint is stopping")
        state = params.request_state
        if state is not None and state.startswith(STATE_PREFIX):
            try:
                call = asking.resume(state, consumer)
            except ResumeError as exc:
                raise MCPError(types.INVALID_PARAMS, str(exc)) from None
            question = call.question
            assert question is not None
            answer = (params.input_responses or {}).get(Outcome(question=question).key)
            if answer is None:  # asked again: the same question
                return _input_required(Outcome(question=question), asking.park(call, question))
            response = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
            call.answer({"jsonrpc": "2.0", "id": question["id"], "result": response})
        else:
            request = {"name": entry.tool, "arguments": dict(params.arguments or {})}
            declared = ctx.session.client_capabilities
            capabilities = {} if declared is None else declared.model_dump(by_alias=True, exclude_none=True)

            def run(asked: OnRequest) -> Awaitable[dict[str, Any]]:
                return self._request(ctx, downstream, entry.server, "tools/call", request, asked=asked)

            call = asking.start(run, consumer, capabilities)
        try:
            outcome = await call.next()
        except BaseException:  # the client left before an answer or a question: the call ends upstream
            call.scope.cancel()
            raise
        if outcome.question is not None:
            return _input_required(outcome, asking.park(call, outcome.question))
        if outcome.error is not None:
            raise outcome.error
        return types.CallToolResult.model_validate(outcome.result, by_name=False)

    async def _utility(
        self,
        ctx: ServerRequestContext[Any, Any],
        downstream: Downstream,
        entry: ToolEntry,
        args: dict[str, Any],
    ) -> types.CallToolResult:
        """A ``resources_*``/``prompts_*`` entry, answered as OpenClaw's utility tools are."""
        server = entry.server
        try:
            if entry.kind is ToolKind.RESOURCES_LIST:
                value = {
                    "resources": await self._list_all(ctx, downstream, server, "resources/list", "resources")
                }
            elif entry.kind is ToolKind.PROMPTS_LIST:
                value = {"prompts": await self._list_all(ctx, downstream, server, "prompts/list", "prompts")}
            elif entry.kind is ToolKind.RESOURCES_READ:
                uri = args.get("uri")
                if not isinstance(uri, str) or not uri.strip():
                    return _tool_error("uri is required")
                value = await self._request(ctx, downstream, server, "resources/read", {"uri": uri.strip()})
            else:
                name = args.get("name")
                if not isinstance(name, str) or not name.strip():
                    return _tool_error("name is required")
                arguments = args.get("arguments") if isinstance(args.get("arguments"), dict) else None
                request = {"name": name.strip(), **({"arguments": arguments} if arguments else {})}
                value = await self._request(ctx, downstream, server, "prompts/get", request)
        except MCPError as exc:
            return _tool_error(exc.message)
        result = utility_result(value)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=block["text"]) for block in result.content],
            structured_content=result.structured_content,
        )


_INPUT_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)


def _input_required(outcome: Outcome, state: str) -> types.InputRequiredResult:
    """The ``InputRequiredResult`` that asks the client the backend's question."""
    question = outcome.question
    assert question is not None
    asked = {"method": question["method"], "params": question.get("params") or {}}
    request = _INPUT_REQUEST.validate_python(asked)
    return types.InputRequiredResult(input_requests={outcome.key: request}, request_state=state)


def _tool(entry: ToolEntry) -> types.Tool:
    data: dict[str, Any] = {
        "name": entry.name,
        "description": entry.description,
        "inputSchema": dict(entry.input_schema) or {"type": "object"},
    }
    if entry.title:
        data["title"] = entry.title
    if entry.annotations:
        data["annotations"] = dict(entry.annotations)
    return types.Tool.model_validate(data, by_name=False)


def _tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)
