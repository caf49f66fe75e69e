"""Calls through a connection: tools, and OpenClaw's resource and prompt utility tools.

A catalog entry of kind ``resources_list``/``resources_read``/``prompts_list``/``prompts_get``
is answered as OpenClaw's utility tools are: the server's answer as pretty-printed JSON
text (top-level ``_meta`` removed), also given as structured content.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import mcp_types as types

from clawplane.runtimes.catalog import ToolKind
from clawplane.runtimes.client.connection import Connection
from clawplane.runtimes.client.listing import ListLimits
from clawplane.runtimes.status import ToolResult

__all__ = ["call_tool", "run_utility", "utility_result"]


def _wire(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


async def call_tool(conn: Connection, tool: str, arguments: Mapping[str, Any] | None) -> ToolResult:
    """Call ``tool``; the result as plain JSON values."""
    result: types.CallToolResult = await conn.call_tool(
        tool, dict(arguments) if arguments is not None else None
    )
    return ToolResult(
        content=[_wire(block) for block in result.content],
        structured_content=result.structured_content,
        is_error=bool(result.is_error),
    )


def utility_result(value: dict[str, Any]) -> ToolResult:
    """A utility answer as OpenClaw gives it: pretty JSON text without top-level ``_meta``, and structured."""
    value.pop("_meta", None)
    return ToolResult(
        content=[{"type": "text", "text": json.dumps(value, indent=2, ensure_ascii=False)}],
        structured_content=value,
    )


def _error(message: str) -> ToolResult:
    return ToolResult(content=[{"type": "text", "text": message}], is_error=True)


async def run_utility(
    conn: Connection, kind: ToolKind, arguments: Mapping[str, Any] | None, limits: ListLimits
) -> ToolResult:
    """Answer a utility catalog entry (``kind`` is not ``tool``)."""
    args = dict(arguments or {})
    if kind is ToolKind.RESOURCES_LIST:
        resources = await conn.list_resources(limits)
        return utility_result({"resources": [_wire(r) for r in resources]})
    if kind is ToolKind.PROMPTS_LIST:
        prompts = await conn.list_prompts(limits)
        return utility_result({"prompts": [_wire(p) for p in prompts]})
    if kind is ToolKind.RESOURCES_READ:
        uri = args.get("uri")
        if not isinstance(uri, str):
            return _error("uri is required")
        read = await conn.request("resources/read", lambda: conn.client.read_resource(uri))
        return utility_result(_wire(read))
    name = args.get("name")
    if not isinstance(name, str):
        return _error("name is required")
    prompt_args = args.get("arguments")
    if prompt_args is not None and not (
        isinstance(prompt_args, dict) and all(isinstance(v, str) for v in prompt_args.values())
    ):
        return _error("arguments must be an object of strings")
    got = await conn.request("prompts/get", lambda: conn.client.get_prompt(name, prompt_args))
    return utility_result(_wire(got))
