"""Drive clawplane's MCP client for the conformance suite's client scenarios.

``conformance client --command "python -m tests.support.conformance_client" --scenario S``
starts a scenario server and runs this with its URL; the suite's README says what the
client learns from the environment: ``MCP_CONFORMANCE_SCENARIO`` (the scenario),
``MCP_CONFORMANCE_CONTEXT`` (JSON the scenario hands over, e.g. ``toolCalls`` to make or
OAuth client credentials) and ``MCP_CONFORMANCE_PROTOCOL_VERSION`` (the revision run).

Everything goes through the product's one client, ``clawplane.runtimes.client.connection.
open_connection`` over ``runtimes.client.remote``'s streamable HTTP transport, answering input
requests with ``runtimes.elicitation.accept_defaults``: this module only decides what a
scenario asks to be done (which tools to call with which arguments). ``auth/*`` scenarios go
to ``tests.support.conformance_auth``. Exit 0 when the flow ran, 1 (with the cause on
stderr) when it did not.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio

if not __package__:  # run as a script: make ``tests.support`` importable, as with ``-m``
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from clawplane.runtimes.client.connection import Connection, describe_error, open_connection
from clawplane.runtimes.client.elicitation import accept_defaults
from clawplane.runtimes.client.listing import ListLimits
from clawplane.runtimes.client.remote import HttpOptions, streamable_http_transport

CONNECT_TIMEOUT = 10.0
REQUEST_TIMEOUT = 30.0
LIMITS = ListLimits(timeout=REQUEST_TIMEOUT)
_SAMPLES: dict[str, Any] = {"string": "sample", "integer": 1, "number": 1, "boolean": True}

Flow = Callable[[Connection, dict[str, Any]], Awaitable[None]]


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool whose scenario names none: a sample value for each required property."""
    properties = schema.get("properties") or {}
    args: dict[str, Any] = {}
    for name in schema.get("required") or ():
        kind = str((properties.get(name) or {}).get("type"))
        args[name] = _SAMPLES.get(kind, {} if kind == "object" else [])
    return args


async def _tools(conn: Connection) -> dict[str, dict[str, Any]]:
    return {tool.name: tool.input_schema for tool in await conn.list_tools(LIMITS)}


async def list_only(conn: Connection, context: dict[str, Any]) -> None:
    """List the tools (the scenario judges what the listing did, or the handshake)."""
    await _tools(conn)


async def call_every_tool(conn: Connection, context: dict[str, Any]) -> None:
    """Call each listed tool, with the arguments the context names or sample ones."""
    named = {c["name"]: c.get("arguments") or {} for c in context.get("toolCalls") or ()}
    for name, schema in (await _tools(conn)).items():
        await conn.call_tool(name, named.get(name, sample_arguments(schema)))


async def call_context_tools(conn: Connection, context: dict[str, Any]) -> None:
    """Make exactly the ``toolCalls`` the scenario's context lists, in order."""
    await _tools(conn)  # a tool's x-mcp-header annotations are learnt from its listing
    for call in context.get("toolCalls") or ():
        await conn.call_tool(call["name"], call.get("arguments") or {})


async def add_numbers(conn: Connection, context: dict[str, Any]) -> None:
    """``tools_call``: add two numbers with the server's ``add_numbers``."""
    await _tools(conn)
    await conn.call_tool("add_numbers", {"a": 2, "b": 3})


async def echo_schema(conn: Connection, context: dict[str, Any]) -> None:
    """``json-schema-2020-12-preservation``: send the focal tool's schema back as received."""
    tools = await _tools(conn)
    await conn.call_tool("json_schema_echo", {"schema": tools["json_schema_2020_12_tool"]})


async def everything(conn: Connection, context: dict[str, Any]) -> None:
    """``http-standard-headers``: every tool, then every resource and prompt the server offers."""
    await call_every_tool(conn, context)
    caps = conn.capabilities
    client = conn.client
    if caps.resources is not None:
        for resource in await conn.list_resources(LIMITS):
            await conn.request("resources/read", partial(client.read_resource, resource.uri))
    if caps.prompts is not None:
        for prompt in await conn.list_prompts(LIMITS):
            await conn.request("prompts/get", partial(client.get_prompt, prompt.name))


FLOWS: dict[str, Flow] = {
    "initialize": list_only,
    "json-schema-ref-no-deref": list_only,
    "request-metadata": call_every_tool,
    "tools_call": add_numbers,
    "elicitation-sep1034-client-defaults": call_every_tool,
    "sse-retry": call_every_tool,
    "sep-2322-client-request-state": call_every_tool,
    "json-schema-2020-12-preservation": echo_schema,
    "http-standard-headers": everything,
    "http-custom-headers": call_context_tools,
    "http-invalid-tool-headers": call_every_tool,
}


async def run(url: str, scenario: str, context: dict[str, Any]) -> None:
    """Connect to ``url`` with clawplane's client and run the scenario's flow."""
    flow = FLOWS.get(scenario, call_every_tool)
    transport = streamable_http_transport(url, HttpOptions(headers={}, connect_timeout=CONNECT_TIMEOUT))
    async with open_connection(
        transport,
        server=f"conformance {scenario}",
        connect_timeout=CONNECT_TIMEOUT,
        request_timeout=REQUEST_TIMEOUT,
        elicitation=accept_defaults,
    ) as conn:
        await flow(conn, context)


def main(argv: list[str] | None = None) -> int:
    """``conformance_client.py URL``: run the scenario the environment names against URL."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: conformance_client.py URL", file=sys.stderr)
        return 2
    url = args[0]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if scenario.startswith("auth/"):
        # OAuth lives in its own module, imported only for the scenarios that need it.
        from tests.support.conformance_auth import main as auth_main

        sys.exit(auth_main(url, scenario, context))
    try:
        anyio.run(run, url, scenario, context)
    except Exception as exc:  # the suite reads the exit code; the cause goes to its log
        print(f"conformance client ({scenario}): {describe_error(exc)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
