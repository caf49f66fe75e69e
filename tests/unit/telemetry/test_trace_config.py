"""Trace export configuration: off by default, the Gateway over ``OTEL_*``, secrets never shown.

The export itself runs against a real loopback OTLP receiver (and a closed port, for failures).
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest
from tests.support.otlp_receiver import otlp_receiver

from clawplane.models import TraceExport, ValueFrom
from clawplane.secrets import KNOWN, SecretError, SecretResolver
from clawplane.telemetry import TraceConfig, Tracing, trace_config
from clawplane.telemetry.otel import ENCODE_CHUNK, parse_headers, redact_endpoint

SECRET = "hdr-secret-8Hq2LmP0xV"


def resolver(**environ: str) -> SecretResolver:
    return SecretResolver(environ)


def test_off_without_a_gateway_setting_or_an_endpoint_in_the_environment() -> None:
    assert trace_config(None, {}) is None
    assert trace_config(None, {"OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER_ARG": "0.5"}) is None


def test_the_environments_endpoint_turns_it_on_and_its_values_apply() -> None:
    config = trace_config(
        None,
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/",
            "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=acme,Authorization=Bearer%20abc",
            "OTEL_SERVICE_NAME": "gw",
            "OTEL_TRACES_SAMPLER_ARG": "0.25",
        },
    )
    assert config == TraceConfig(
        endpoint="http://collector:4318/v1/traces",
        headers=(("authorization", "Bearer abc"), ("x-tenant", "acme")),
        sample_ratio=0.25,
        service_name="gw",
    )
    traces_only = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:4318/custom",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://o",
    }
    found = trace_config(None, traces_only)
    assert found is not None and found.endpoint == "http://t:4318/custom"


def test_sdk_disabled_wins_over_everything() -> None:
    declared = TraceExport(endpoint="http://127.0.0.1:4318/v1/traces")
    assert trace_config(declared, {"OTEL_SDK_DISABLED": "true"}) is None
    assert (
        trace_config(None, {"OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://o"}) is None
    )


def test_the_gateways_values_win_and_headers_merge(tmp_path: Path) -> None:
    declared = TraceExport.model_validate(
        {
            "endpoint": "https://traces.example/v1/traces",
            "serviceName": "declared",
            "sampleRatio": 0.1,
            "recordPayloads": True,
            "headers": {"Authorization": {"valueFrom": {"env": "TRACE_TOKEN"}}, "x-team": "blue"},
        }
    )
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other",
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=from-env,x-tenant=acme",
        "OTEL_SERVICE_NAME": "env",
        "OTEL_TRACES_SAMPLER_ARG": "0.9",
    }
    res = resolver(TRACE_TOKEN=SECRET)
    config = trace_config(declared, environ, lambda v: res.resolve(v, base_dir=tmp_path))
    assert config is not None
    assert config.endpoint == "https://traces.example/v1/traces"
    assert dict(config.headers) == {"authorization": SECRET, "x-tenant": "acme", "x-team": "blue"}
    assert (config.service_name, config.sample_ratio, config.record_payloads) == ("declared", 0.1, True)
    assert SECRET not in repr(config)  # header values are never shown
    # The credential is redacted wherever it is quoted; plain values are not secrets.
    assert KNOWN.redactor()(f"{SECRET} for team blue, tenant acme") == "<redacted> for team blue, tenant acme"


def test_credentials_from_the_environment_are_redacted_too() -> None:
    environ = {"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=env-key-5Rt9QzW2,x-region=north-7"}
    config = trace_config(None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", **environ})
    assert config is not None
    assert KNOWN.redactor()("env-key-5Rt9QzW2 in north-7") == "<redacted> in north-7"


def test_the_sampler_variables_set_the_ratio() -> None:
    on = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}

    def ratio(**environ: str) -> float:
        config = trace_config(None, {**on, **environ})
        assert config is not None
        return config.sample_ratio

    assert ratio() == 1.0
    assert ratio(OTEL_TRACES_SAMPLER="always_off", OTEL_TRACES_SAMPLER_ARG="0.5") == 0.0
    assert ratio(OTEL_TRACES_SAMPLER="parentbased_always_off") == 0.0
    assert ratio(OTEL_TRACES_SAMPLER="always_on", OTEL_TRACES_SAMPLER_ARG="0.5") == 1.0
    assert ratio(OTEL_TRACES_SAMPLER="parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG="0.2") == 0.2
    assert ratio(OTEL_TRACES_SAMPLER="traceidratio", OTEL_TRACES_SAMPLER_ARG="7") == 1.0  # out of range
    # The Gateway's sampleRatio wins over both.
    config = trace_config(TraceExport(sample_ratio=0.3), {**on, "OTEL_TRACES_SAMPLER": "always_off"})
    assert config is not None and config.sample_ratio == 0.3


def test_a_bearer_headers_credential_alone_is_redacted_too() -> None:
    environ = {"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20bearer-cred-9Kq3Wx7Z"}
    assert trace_config(None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", **environ}) is not None
    assert KNOWN.redactor()("refused bearer-cred-9Kq3Wx7Z") == "refused <redacted>"
    assert KNOWN.redactor()("Bearer is a word") == "Bearer is a word"


def test_a_declared_block_without_endpoint_uses_the_otlp_default() -> None:
    config = trace_config(TraceExport(), {})
    assert config is not None and config.endpoint == "http://localhost:4318/v1/traces"
    assert (config.service_name, config.sample_ratio, config.record_payloads) == ("clawplane", 1.0, False)


def test_an_unresolvable_header_is_an_error_naming_the_variable(tmp_path: Path) -> None:
    declared = TraceExport(
        headers={"Authorization": ValueFrom.model_validate({"valueFrom": {"env": "NOPE_TOKEN"}})}
    )
    with pytest.raises(SecretError, match="NOPE_TOKEN"):
        trace_config(declared, {}, lambda v: resolver().resolve(v, base_dir=tmp_path))


def test_header_parsing_and_endpoint_display() -> None:
    assert parse_headers("a=1, b = two%20words ,broken,=x") == {"a": "1", "b": "two words"}
    assert redact_endpoint("https://user:pw@host:4318/v1/traces?token=abc") == "https://host:4318/v1/traces"


def test_reconfiguring_swaps_the_provider_and_none_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    tracing = Tracing()
    assert tracing.tracer is None
    with otlp_receiver() as first, otlp_receiver() as second:
        tracing.configure(TraceConfig(endpoint=first.url))
        tracer = tracing.tracer
        assert tracer is not None
        tracing.configure(TraceConfig(endpoint=first.url))  # the same: kept
        assert tracing.tracer is tracer
        tracer.start_span("to-first").end()
        tracing.configure(TraceConfig(endpoint=second.url, service_name="again"))
        assert tracing.tracer is not None
        tracing.tracer.start_span("to-second").end()
        tracing.shutdown()
        first.wait_for(lambda spans: [s.name for s in spans] == ["to-first"])
        got = second.wait_for(lambda spans: [s.name for s in spans] == ["to-second"])
        assert got[0].resource["service.name"] == "again"
    assert tracing.tracer is None
    tracing.configure(None)
    assert tracing.tracer is None


def test_export_failures_are_logged_once_without_header_values(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    KNOWN.add(SECRET)
    tracing = Tracing()
    tracing.configure(
        TraceConfig(endpoint=f"http://127.0.0.1:{port}/v1/traces", headers=(("authorization", SECRET),))
    )
    assert tracing.tracer is not None
    with caplog.at_level(logging.DEBUG):
        for n in range(3):
            tracing.tracer.start_span(f"lost-{n}").end()
        tracing.shutdown()
    failures = [r for r in caplog.records if "could not export traces" in r.getMessage()]
    assert len(failures) == 1
    assert f"http://127.0.0.1:{port}/v1/traces" in failures[0].getMessage()
    assert SECRET not in caplog.text


def test_a_batch_encoded_in_chunks_reaches_the_collector_as_one_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch larger than ``ENCODE_CHUNK`` is encoded chunk by chunk (the interpreter lock offered
    between them) and sent as one request, every span in it and the declared header with it."""
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")  # one batch: the one shutdown sends
    count = ENCODE_CHUNK * 3 + 5
    tracing = Tracing()
    with otlp_receiver() as receiver:
        tracing.configure(TraceConfig(endpoint=receiver.url, headers=(("x-team", "blue"),)))
        assert tracing.tracer is not None
        for n in range(count):
            tracing.tracer.start_span(f"span-{n}").end()
        tracing.shutdown()
        got = receiver.wait_for(lambda spans: len(spans) >= count)
        bodies = list(receiver.bodies)
    assert sorted(s.name for s in got) == sorted(f"span-{n}" for n in range(count))
    assert len(bodies) == 1 and bodies[0][2].get("x-team") == "blue"
