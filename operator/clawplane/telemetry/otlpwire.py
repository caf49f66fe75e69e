"""OTLP trace messages written directly in protobuf's wire format, for the spans of proxied calls.

Every call through the proxy makes two spans or more; through the SDK each costs a span object
(ids, sampler, attribute checks) and then an encoding pass, about 130 microseconds a call on the
span worker, which shares the interpreter lock with the proxy. A call's spans are known whole
when they are made (they are made after it ended), so they are written here straight as the
bytes of ``opentelemetry.proto.trace.v1.Span``: attribute key/value pairs repeat from call to
call and are encoded once (``attribute``). The field numbers are those of opentelemetry-proto
1.x (``trace.proto``, ``common.proto``, ``resource.proto``, ``trace_service.proto``); the tests
decode what is written here with opentelemetry-proto itself.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Final

__all__ = [
    "KIND_CLIENT",
    "KIND_INTERNAL",
    "KIND_SERVER",
    "STATUS_ERROR",
    "attribute",
    "attributes",
    "export_request",
    "span",
]

KIND_INTERNAL: Final = 1
KIND_SERVER: Final = 2
KIND_CLIENT: Final = 3
STATUS_ERROR: Final = 2

_VARINT, _FIXED64, _LEN = 0, 1, 2
_CACHED_CHARS = 128
AttributeValue = str | bool | int | float


def _varint(value: int) -> bytes:
    out = bytearray()
    value &= 0xFFFFFFFFFFFFFFFF  # int64: a negative number is its two's complement, 10 bytes
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _tag(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _bytes(field: int, payload: bytes) -> bytes:
    return _tag(field, _LEN) + _varint(len(payload)) + payload


def _text(field: int, text: str) -> bytes:
    return _bytes(field, text.encode("utf-8", "surrogatepass"))


def _any_value(value: AttributeValue) -> bytes:
    if isinstance(value, bool):
        return _tag(2, _VARINT) + (b"\x01" if value else b"\x00")
    if isinstance(value, int):
        return _tag(3, _VARINT) + _varint(value)
    if isinstance(value, float):
        return _tag(4, _FIXED64) + struct.pack("<d", value)
    return _text(1, value)


def _key_value(key: str, value: AttributeValue) -> bytes:
    """A ``KeyValue``, length-prefixed as a repeated field's element is."""
    pair = _text(1, key) + _bytes(2, _any_value(value))
    return _varint(len(pair)) + pair


@lru_cache(maxsize=8192)
def _cached(key: str, kind: str, value: AttributeValue) -> bytes:
    return _key_value(key, value)


def attribute(key: str, value: AttributeValue) -> bytes:
    """One ``KeyValue`` (common.proto), length-prefixed: an element of a repeated ``attributes`` field."""
    if isinstance(value, str) and len(value) > _CACHED_CHARS:  # a payload: written, never kept
        return _key_value(key, value)
    return _cached(key, type(value).__name__, value)  # True and 1 are equal keys otherwise


def attributes(field: int, pairs: Mapping[str, AttributeValue]) -> bytes:
    """The repeated ``KeyValue`` field ``field`` holding ``pairs``."""
    return b"".join(_tag(field, _LEN) + attribute(key, value) for key, value in pairs.items())


def span(
    *,
    trace_id: int,
    span_id: int,
    parent_span_id: int | None,
    name: str,
    kind: int,
    start_ns: int,
    end_ns: int,
    attrs: Mapping[str, AttributeValue],
    trace_state: str = "",
    status_code: int = 0,
    status_message: str = "",
) -> bytes:
    """One ``Span`` (trace.proto)."""
    parts = [
        _bytes(1, trace_id.to_bytes(16, "big")),
        _bytes(2, span_id.to_bytes(8, "big")),
    ]
    if trace_state:
        parts.append(_text(3, trace_state))
    if parent_span_id:
        parts.append(_bytes(4, parent_span_id.to_bytes(8, "big")))
    parts += [
        _text(5, name),
        _tag(6, _VARINT) + _varint(kind),
        _tag(7, _FIXED64) + struct.pack("<Q", start_ns),
        _tag(8, _FIXED64) + struct.pack("<Q", end_ns),
        attributes(9, attrs),
    ]
    if status_code:
        status = (
            (_text(2, status_message) if status_message else b"") + _tag(3, _VARINT) + _varint(status_code)
        )
        parts.append(_bytes(15, status))
    return b"".join(parts)


def export_request(
    resource: Mapping[str, AttributeValue], scope: str, version: str, spans: Iterable[bytes]
) -> bytes:
    """An ``ExportTraceServiceRequest`` of ``spans``, all from one resource and scope."""
    scope_bytes = _text(1, scope) + _text(2, version)
    scope_spans = _bytes(1, scope_bytes) + b"".join(_bytes(2, one) for one in spans)
    resource_spans = _bytes(1, attributes(1, resource)) + _bytes(2, scope_spans)
    return _bytes(1, resource_spans)
