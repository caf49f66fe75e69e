"""The OTLP trace messages clawplane writes by hand decode with opentelemetry-proto as meant."""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from clawplane.telemetry import otlpwire as wire


def _value(value: AnyValue) -> object:
    return getattr(value, value.WhichOneof("value") or "string_value")


def test_spans_written_by_hand_decode_field_for_field() -> None:
    long_text = "x" * 500 + "é"
    attrs = {"s": "tools/call", "t": True, "f": False, "i": 120, "neg": -5, "d": 0.25, "long": long_text}
    server = wire.span(
        trace_id=0x4BF92F3577B34DA6A3CE929D0E0E4736, span_id=0x00F067AA0BA902B7, parent_span_id=0xB7AD6B7169203331,
        name="tools/call echo", kind=wire.KIND_SERVER, start_ns=1_700_000_000_123_456_789,
        end_ns=1_700_000_000_223_456_789, attrs=attrs, trace_state="k=v",
        status_code=wire.STATUS_ERROR, status_message="says no",
    )  # fmt: skip
    root = wire.span(
        trace_id=1, span_id=2, parent_span_id=None, name="approval hold", kind=wire.KIND_INTERNAL,
        start_ns=5, end_ns=6, attrs={},
    )  # fmt: skip
    body = wire.export_request({"service.name": "clawplane", "n": 3}, "clawplane", "0.1.0", [server, root])
    request = ExportTraceServiceRequest.FromString(body)
    (resource_spans,) = request.resource_spans
    assert {kv.key: _value(kv.value) for kv in resource_spans.resource.attributes} == {
        "service.name": "clawplane",
        "n": 3,
    }
    (scope_spans,) = resource_spans.scope_spans
    assert (scope_spans.scope.name, scope_spans.scope.version) == ("clawplane", "0.1.0")
    first, second = scope_spans.spans
    assert first.trace_id.hex() == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert (first.span_id.hex(), first.parent_span_id.hex()) == ("00f067aa0ba902b7", "b7ad6b7169203331")
    assert (first.name, first.kind, first.trace_state) == ("tools/call echo", 2, "k=v")
    assert (first.start_time_unix_nano, first.end_time_unix_nano) == (1_700_000_000_123_456_789, 1_700_000_000_223_456_789)
    assert {kv.key: _value(kv.value) for kv in first.attributes} == attrs
    assert (first.status.code, first.status.message) == (2, "says no")
    assert second.trace_id == (1).to_bytes(16, "big") and second.parent_span_id == b""
    assert (second.kind, second.status.code, list(second.attributes)) == (1, 0, [])


def test_a_bool_attribute_is_never_the_cached_int_of_equal_value() -> None:
    assert wire.attribute("a", 1) != wire.attribute("a", True)
