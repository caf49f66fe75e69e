"""The namespace Gateway's ``spec.observability`` as bridge pods take it: ``clawplane bridge`` flags and env.

Traces: ``--traces-endpoint`` (the declared one, else the OTLP default ``http://localhost:4318/v1/traces``:
a collector beside the pod), ``--service-name``, ``--trace-sample-ratio``, ``--trace-payloads``,
and each header as ``--trace-header NAME=VAR`` with ``VAR`` in the container env: from its Secret
by ``secretKeyRef`` (``optional``, so a Secret not there yet costs the header, not the server; the
Gateway reports it missing and the pods roll when it appears), or a plain literal inline. Nothing
secret is ever literal in the pod spec: a header the pod cannot read — ``valueFrom.env`` or
``valueFrom.file`` name the operator's own environment and files, a literal under a credential's
name would be written into the Deployment — is left out and reported (``problems``: cause and fix).
Metrics: ``metrics.export`` adds ``--metrics-export`` (``--no-metrics-export`` when false), pushed to
the traces' collector, or without ``traces`` to the OTLP default beside the pod
(``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``); ``intervalSeconds`` adds ``--metrics-interval``.
Audit: ``audit.enabled`` adds ``--audit-log`` (one JSON line per tool call in ``kubectl logs``),
``exportLogs`` adds ``--audit-export-logs``. ``digest`` is what the pods' config hash folds in.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from clawplane.models import Observability, ValueFrom, literal_text
from clawplane.naming import is_sensitive_key

__all__ = [
    "DEFAULT_METRICS_ENDPOINT",
    "DEFAULT_TRACES_ENDPOINT",
    "HEADER_ENV",
    "BridgeObservability",
    "bridge_observability",
]

DEFAULT_TRACES_ENDPOINT = "http://localhost:4318/v1/traces"
DEFAULT_METRICS_ENDPOINT = "http://localhost:4318/v1/metrics"
HEADER_ENV = "CLAWPLANE_TRACE_HEADER_{}"
"""The container env variable holding the value of the n-th trace header (the bridge reads it, the server
does not inherit it)."""


@dataclass(frozen=True, slots=True)
class BridgeObservability:
    """What each bridge pod of the namespace is given for traces and the audit trail."""

    args: tuple[str, ...] = ()
    env: tuple[dict[str, Any], ...] = ()
    problems: tuple[str, ...] = ()
    """Trace headers left out, each with why and what to write instead."""

    @property
    def digest(self) -> str:
        """A digest of the flags and env (Secret values are folded in by the caller's Secret digest)."""
        text = json.dumps([list(self.args), list(self.env)], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def bridge_observability(observability: Observability | None) -> BridgeObservability:
    """The bridge flags and env for ``observability`` (None: no Gateway, the defaults)."""
    observability = observability or Observability()
    args: list[str] = []
    env: list[dict[str, Any]] = []
    problems: list[str] = []
    traces = observability.traces
    if traces is not None:
        args += ["--traces-endpoint", traces.endpoint or DEFAULT_TRACES_ENDPOINT]
        if traces.service_name:
            args += ["--service-name", traces.service_name]
        if traces.sample_ratio is not None:
            args += ["--trace-sample-ratio", repr(traces.sample_ratio)]
        if traces.record_payloads:
            args.append("--trace-payloads")
        for name, value in sorted(traces.headers.items()):
            var = HEADER_ENV.format(len(env))
            entry, problem = _header_env(name, value, var)
            if entry is None:
                problems.append(problem)
                continue
            env.append(entry)
            args += ["--trace-header", f"{name}={var}"]
    metrics = observability.metrics
    if metrics.export is not None:
        args.append("--metrics-export" if metrics.export else "--no-metrics-export")
        if metrics.export and traces is None:
            env.append({"name": "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "value": DEFAULT_METRICS_ENDPOINT})
    if metrics.interval_seconds is not None:
        args += ["--metrics-interval", str(metrics.interval_seconds)]
    audit = observability.audit
    if audit.enabled:
        args.append("--audit-log")
        if audit.export_logs:
            args.append("--audit-export-logs")
    return BridgeObservability(tuple(args), tuple(env), tuple(problems))


def _header_env(name: str, value: Any, var: str) -> tuple[dict[str, Any] | None, str]:
    """The env entry carrying header ``name``'s value, or None and why it cannot be carried."""
    where = f"spec.observability.traces.headers.{name}"
    if not isinstance(value, ValueFrom):
        if is_sensitive_key(name):
            return None, (
                f"{where} is a literal credential and would be written into every bridge pod's spec; "
                "it is not sent from bridge pods: put it in a Secret and use valueFrom.secretKeyRef"
            )
        return {"name": var, "value": literal_text(value)}, ""
    ref = value.value_from.secret_key_ref
    if ref is None:
        source = "env" if value.value_from.env is not None else "file"
        return None, (
            f"{where}: valueFrom.{source} reads the operator's own {source}s, which bridge pods cannot; "
            "it is not sent from bridge pods: use valueFrom.secretKeyRef"
        )
    secret = {"name": ref.name, "key": ref.key, "optional": True}
    return {"name": var, "valueFrom": {"secretKeyRef": secret}}, ""
