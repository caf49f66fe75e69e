"""A 2026-07-28 request: one self-contained POST, forwarded to the server's primary process.

The HTTP rules are the SDK's for this revision, checked here because the upstream only
sees stdio: POST only (405), ``Accept`` (406), one request or notification per body (a
batch or a posted response is ``INVALID_REQUEST``), routing headers that agree with the
body (``HEADER_MISMATCH``), and ``Mcp-Param-*`` headers that agree with the called
tool's schema. An unknown protocol version is refused with ``UNSUPPORTED_PROTOCOL_VERSION``
(-32022, HTTP 400) naming the versions served, under the request's id. ``initialize`` was
removed in this revision and is answered ``METHOD_NOT_FOUND`` (404) here: over stdio the
server would take it for a handshake. For a server that speaks only the handshake era the
proxy answers ``server/discover`` from its ``initialize`` answer and ``subscriptions/listen``
with its list changes, and forwards the rest as they are (such a server ignores the envelope in
``_meta``). A notification is acknowledged with 202
and dropped, as an SDK server does: this revision has no client notifications on this wire.

The answer comes back as ``application/json`` when it arrives before anything else and
within ``SSE_DEFER_S``; otherwise the response becomes an SSE stream carrying the
request's notifications (progress, logging, ``subscriptions/listen`` frames) and then the
response, with keep-alive comments while it waits. A client that disconnects cancels its
request upstream. A handshake-era server that asks for client input mid-call gets it through
an ``InputRequiredResult`` and the client's retry (``inputs``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
from mcp.server.streamable_http import check_accept_headers
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
    unsupported_protocol_version_rejection,
    validate_mcp_param_headers,
)
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from clawplane._utils.compactjson import compact
from clawplane.runtimes.proxy.eras.inputs import (
    INPUT_KEYS,
    InputRequiredError,
    Parked,
    Parking,
    answer_for,
    declined,
)
from clawplane.runtimes.proxy.eras.sse import read_body
from clawplane.runtimes.proxy.guard import Principal
from clawplane.runtimes.proxy.hosting import SERVER_UNAVAILABLE, Hosted, UnavailableError
from clawplane.runtimes.proxy.mux import Delivery, Link, UpstreamGoneError
from clawplane.runtimes.proxy.wire import (
    CLIENT_CAPABILITIES_META_KEY,
    SUBSCRIPTION_ID_META_KEY,
    Message,
    RequestId,
    error_response,
    is_request,
    is_response,
    meta_of,
    params_of,
)
from clawplane.telemetry import TRACE_KEYS

__all__ = ["SSE_DEFER_S", "handle_modern"]

logger = logging.getLogger(__name__)

SSE_DEFER_S: Final = 15.0
"""How long an answer may take before the response commits to SSE (the SDK's ping interval)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
HEADER_MISMATCH = -32020
METHOD_NOT_FOUND = -32601
REMOVED_METHODS: Final = frozenset({"initialize"})
CACHEABLE_METHODS: Final = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)
"""Methods whose 2026-07-28 results carry cache hints (``ttlMs``, ``cacheScope``)."""
SPOKEN_FOR: Final = frozenset({"server/discover", "subscriptions/listen"})
"""What the proxy answers itself for a server that speaks only the handshake era."""
LIST_CHANGES: Final = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}
"""A handshake-era server's list changes, and the listen filter flag that asks for each."""
"""Handshake-era methods a stdio server would still serve if the proxy passed them on."""
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]


def _status_of(msg: Message) -> int:
    error = msg.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return ERROR_CODE_HTTP_STATUS.get(error["code"], 200)
    return 200


async def _json(send: Send, msg: Message, status: int | None = None) -> None:
    data = compact(msg).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status or _status_of(msg), "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def _empty(send: Send, status: int, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers or []})
    await send({"type": "http.response.body", "body": b""})


def _sse(msg: Message) -> bytes:
    data = compact(msg)
    return f"event: message\r\ndata: {data}\r\n\r\n".encode()


def _rejection(rejection: InboundLadderRejection, request_id: Any) -> Message:
    return error_response(request_id, rejection.code, rejection.message, rejection.data)


async def handle_modern(
    hosted: Hosted, scope: Scope, receive: Receive, send: Send, principal: Principal, parking: Parking
) -> None:
    """Serve one 2026-07-28 request of ``hosted`` (see the module docstring)."""
    request = Request(scope, receive)
    if request.method != "POST":
        await _empty(send, 405, [(b"allow", b"POST")])
        return
    has_json, has_sse = check_accept_headers(request)
    if not has_json or not has_sse:
        await _empty(send, 406)
        return
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        await _empty(send, 415)
        return
    body = await read_body(receive)
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        await _json(send, error_response(None, PARSE_ERROR, "Parse error"), 400)
        return
    if isinstance(decoded, dict) and "id" not in decoded:
        rejection = unsupported_protocol_version_rejection(
            request.headers.get(MCP_PROTOCOL_VERSION_HEADER, "")
        )
        if rejection is not None:
            await _json(send, _rejection(rejection, None))
        elif isinstance(decoded.get("method"), str):
            await _empty(send, 202)
        else:
            await _json(
                send,
                error_response(
                    None, INVALID_REQUEST, "Body must be a single JSON-RPC request or notification object"
                ),
                400,
            )
        return
    if not _is_request(decoded):
        await _json(
            send,
            error_response(
                None, INVALID_REQUEST, "Body must be a single JSON-RPC request or notification object"
            ),
            400,
        )
        return
    duplicated = find_duplicated_routing_header(request.headers.items())
    if duplicated is not None:
        await _json(
            send,
            error_response(decoded["id"], HEADER_MISMATCH, f"{duplicated} header appears more than once"),
        )
        return
    verdict = classify_inbound_request(decoded, headers=dict(request.headers))
    if isinstance(verdict, InboundLadderRejection):
        await _json(send, _rejection(verdict, decoded["id"]))
        return
    if decoded["method"] in REMOVED_METHODS:
        await _json(send, error_response(decoded["id"], METHOD_NOT_FOUND, "Method not found"))
        return
    rejection = _param_headers_rejection(hosted, decoded, request.headers)
    if rejection is not None:
        await _json(send, _rejection(rejection, decoded["id"]))
        return
    discovery = hosted.handshake_discovery() if decoded["method"] in SPOKEN_FOR else None
    if discovery is not None and decoded["method"] == "server/discover":
        # A handshake-era server would refuse these two: the proxy speaks for it.
        await _json(send, {"jsonrpc": "2.0", "id": decoded["id"], "result": dict(discovery)})
        return
    if discovery is not None:
        await _listen_to_handshake_server(hosted, decoded, receive, send)
        return
    try:
        parked = parking.resume(decoded, principal.consumer)
    except InputRequiredError as exc:
        await _json(send, error_response(decoded["id"], INVALID_PARAMS, str(exc)))
        return
    wire = _Wire(len(body), request.headers.get(MCP_PROTOCOL_VERSION_HEADER), trace_context(request.headers))
    await _forward(hosted, decoded, receive, send, principal, parking, parked, wire)


@dataclass(frozen=True, slots=True)
class _Wire:
    """What telemetry records of the HTTP request a call came in."""

    size: int
    revision: str | None
    trace: dict[str, str]


def trace_context(headers: Mapping[str, str]) -> dict[str, str]:
    """The W3C trace context headers among ``headers``."""
    return {key: value for key in TRACE_KEYS if (value := headers.get(key)) is not None}


def _is_request(decoded: Any) -> bool:
    return (
        isinstance(decoded, dict)
        and decoded.get("jsonrpc") == "2.0"
        and isinstance(decoded.get("method"), str)
        and isinstance(decoded.get("id"), int | str)
        and not isinstance(decoded.get("id"), bool)
        and (decoded.get("params") is None or isinstance(decoded.get("params"), dict))
    )


def _param_headers_rejection(
    hosted: Hosted, decoded: Message, headers: Mapping[str, str]
) -> InboundLadderRejection | None:
    if decoded.get("method") != "tools/call":
        return None
    params = decoded.get("params") or {}
    name, arguments = params.get("name"), params.get("arguments") or {}
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return None
    schema = hosted.tool_input_schema(name)
    if schema is None:
        return None
    return validate_mcp_param_headers(schema, arguments, headers)


async def _forward(
    hosted: Hosted,
    decoded: Message,
    receive: Receive,
    send: Send,
    principal: Principal,
    parking: Parking,
    parked: Parked | None,
    wire: _Wire,
) -> None:
    if parked is None:
        gate = hosted.call_gate(principal.consumer)
        telemetry = hosted.telemetry
        site = hosted.call_site("hosted", principal.consumer, revision=wire.revision) if telemetry else None
        try:
            mux = await hosted.primary()
            link = mux.open_link(
                f"request {decoded['id']!r}", tool_allowed=hosted.tool_allowed, gate=gate, site=site,
                telemetry=telemetry,
            )  # fmt: skip
        except (UnavailableError, UpstreamGoneError) as exc:
            await _json(send, error_response(decoded["id"], SERVER_UNAVAILABLE, str(exc)), 503)
            return
        first = decoded
    else:
        link = parked.link
        answer = answer_for(parked, decoded)
        if answer is None:  # the retry carries no answer: ask again
            again = parked.result(parking.park(parked))
            await _json(send, {"jsonrpc": "2.0", "id": decoded["id"], "result": again})
            return
        first = answer
    capabilities = (meta_of(decoded) or {}).get(CLIENT_CAPABILITIES_META_KEY)

    async def ask(server_request: Message) -> Message | None:
        """The client's ``InputRequiredResult`` for a server's request (None: refused upstream)."""
        refusal = declined(server_request, capabilities)
        if refusal is not None:
            await link.send(refusal)
            return None
        asking = Parked(link, principal.consumer, str(decoded["method"]), server_request)
        return {"jsonrpc": "2.0", "id": decoded["id"], "result": asking.result(parking.park(asking))}

    waiting = False
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_watch_disconnect, receive, tg.cancel_scope)
            await link.send(first, size=wire.size, headers=wire.trace)
            waiting = await _answer(link, decoded["id"], str(decoded["method"]), send, ask)
            tg.cancel_scope.cancel()
    finally:
        # A request still pending here was abandoned by its client: the link cancels it upstream.
        # One waiting for the client's input stays open until it is resumed or expires.
        if not waiting:
            await link.aclose()


async def _listen_to_handshake_server(hosted: Hosted, decoded: Message, receive: Receive, send: Send) -> None:
    """``subscriptions/listen`` for a server that speaks only the handshake era: acknowledged here,
    then the list changes it announces (to every party of its process) that the filter asks for,
    as frames of this stream. Resource updates need a handshake subscription and are not sent."""
    raw = params_of(decoded).get("notifications")
    wanted: dict[str, Any] = raw if isinstance(raw, dict) else {}
    named = {SUBSCRIPTION_ID_META_KEY: decoded["id"]}
    try:
        # Lowest priority: never the party a server's own request is routed to.
        link = (await hosted.primary()).open_link(f"listen {decoded['id']!r}", priority=-1)
    except (UnavailableError, UpstreamGoneError) as exc:
        await _json(send, error_response(decoded["id"], SERVER_UNAVAILABLE, str(exc)), 503)
        return
    acknowledged = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                    "params": {"_meta": named, "notifications": wanted}}  # fmt: skip
    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
    await send({"type": "http.response.body", "body": _sse(acknowledged), "more_body": True})
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_watch_disconnect, receive, tg.cancel_scope)
            while not link.closed.is_set():
                delivery = await _next(link, SSE_DEFER_S)
                if delivery is None:
                    await send({"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True})
                    continue
                flag = LIST_CHANGES.get(str(delivery.message.get("method")))
                if flag is not None and wanted.get(flag):
                    frame = {**delivery.message, "params": {**params_of(delivery.message), "_meta": named}}
                    await send({"type": "http.response.body", "body": _sse(frame), "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})  # the server is gone
            tg.cancel_scope.cancel()
    finally:
        await link.aclose()


async def _next(link: Any, timeout: float) -> Delivery | None:
    with anyio.move_on_after(timeout):
        try:
            delivery: Delivery = await link.receive()
            return delivery
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            reason = link.reason or "the server closed the connection"
            return Delivery(error_response(None, -32603, f"MCP server ended the request: {reason}"))
    return None


Ask = Callable[[Message], Awaitable[Message | None]]
"""A server's request for client input → the ``InputRequiredResult`` response for the client
(the call parked), or None when it was refused upstream instead."""


async def _answer(link: Link, request_id: RequestId, method: str, send: Send, ask: Ask) -> bool:
    """Send the link's answer to the request; True when it ended asking the client for input."""
    delivery = await _next(link, SSE_DEFER_S)
    final, asked = await _final(delivery, request_id, method, ask)
    while final is None and delivery is not None and _is_input_request(delivery.message):
        delivery = await _next(link, SSE_DEFER_S)  # refused upstream: the answer may still be plain JSON
        final, asked = await _final(delivery, request_id, method, ask)
    if final is not None:
        await _json(send, final)
        return asked
    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
    while final is None:
        if delivery is None:
            await send({"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True})
        elif not _is_input_request(delivery.message):  # one refused upstream is nothing for the client
            await send({"type": "http.response.body", "body": _sse(delivery.message), "more_body": True})
        delivery = await _next(link, SSE_DEFER_S)
        final, asked = await _final(delivery, request_id, method, ask)
    await send({"type": "http.response.body", "body": _sse(final), "more_body": False})
    return asked


def _is_input_request(msg: Message) -> bool:
    return is_request(msg) and msg.get("method") in INPUT_KEYS


def _completed(result: dict[str, Any], method: str) -> dict[str, Any]:
    """A handshake-era server's result as 2026-07-28 requires it (SDK clients refuse it otherwise):
    with ``resultType``, and for lists and reads the cache hints of a result that may not be kept."""
    out = {**result, "resultType": "complete"}
    if method in CACHEABLE_METHODS:
        out.setdefault("ttlMs", 0)
        out.setdefault("cacheScope", "private")
    return out


async def _final(
    delivery: Delivery | None, request_id: RequestId, method: str, ask: Ask
) -> tuple[Message | None, bool]:
    """The message that ends the exchange, if ``delivery`` makes one, and whether it asks for input:
    the response (under the request's own id: a resumed call's link knows only the first one's),
    or the client's question for a server's request."""
    if delivery is None:
        return None, False
    if is_response(delivery.message):
        response = {**delivery.message, "id": request_id}
        result = response.get("result")
        if isinstance(result, dict) and "resultType" not in result:
            response["result"] = _completed(result, method)
        return response, False
    if _is_input_request(delivery.message):
        question = await ask(delivery.message)
        return question, question is not None
    return None, False


async def _watch_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive()).get("type") != "http.disconnect":
        pass
    scope.cancel()
