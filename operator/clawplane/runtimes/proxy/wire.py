"""Raw JSON-RPC messages as the proxy handles them: plain dicts, never re-modelled.

The proxy forwards what a client or server wrote, so it keeps messages as decoded JSON
and only reads the few members routing needs (``id``, ``method``, ``params._meta``).
Everything else — ``_meta`` keys it does not know, error ``data``, result fields of
protocol revisions newer than this SDK — passes through byte-for-byte in meaning.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from clawplane._utils.compactjson import compact

__all__ = [
    "Message",
    "RequestId",
    "decode_line",
    "encode",
    "error_response",
    "is_notification",
    "is_request",
    "is_response",
    "meta_of",
    "params_of",
    "progress_token",
    "with_trace_meta",
]

Message = dict[str, Any]
RequestId = int | str

PROGRESS_TOKEN = "progressToken"
SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"
PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"


def is_request(msg: Mapping[str, Any]) -> bool:
    """A request: a method and an id."""
    return "method" in msg and "id" in msg


def is_notification(msg: Mapping[str, Any]) -> bool:
    """A notification: a method and no id."""
    return "method" in msg and "id" not in msg


def is_response(msg: Mapping[str, Any]) -> bool:
    """A result or an error answering a request."""
    return "method" not in msg and ("result" in msg or "error" in msg)


def params_of(msg: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` when it is an object, else an empty dict."""
    params = msg.get("params")
    return params if isinstance(params, dict) else {}


def meta_of(msg: Mapping[str, Any]) -> dict[str, Any] | None:
    """``params._meta`` when it is an object."""
    params = msg.get("params")
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    return meta if isinstance(meta, dict) else None


def progress_token(msg: Mapping[str, Any]) -> RequestId | None:
    """The request's progress token (``params._meta.progressToken``), if it has one."""
    meta = meta_of(msg)
    token = meta.get(PROGRESS_TOKEN) if meta else None
    return token if isinstance(token, int | str) and not isinstance(token, bool) else None


def with_trace_meta(msg: Message, carrier: Mapping[str, str] | None) -> Message:
    """``msg`` with ``carrier`` (W3C ``traceparent``/``tracestate``) in its ``params._meta``, replacing
    the client's (MCP's convention for trace context); unchanged without a carrier."""
    if not carrier:
        return msg
    params = params_of(msg)
    meta = {k: v for k, v in (meta_of(msg) or {}).items() if k not in ("traceparent", "tracestate")}
    return {**msg, "params": {**params, "_meta": {**meta, **carrier}}}


def error_response(request_id: RequestId | None, code: int, message: str, data: Any = None) -> Message:
    """A JSON-RPC error answering ``request_id``."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def encode(msg: Mapping[str, Any]) -> bytes:
    """One message as a compact UTF-8 JSON line (with its newline)."""
    return compact(msg).encode("utf-8") + b"\n"


def decode_line(line: bytes) -> Message | None:
    """A stdout line as a JSON-RPC message, or None when it is not one."""
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return None
    if not ("method" in msg or "result" in msg or "error" in msg):
        return None
    return msg
