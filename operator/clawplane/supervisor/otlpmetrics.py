"""The supervisor's metric export over OTLP, following the Gateway each pass (or apply) reads.

``Gateway.spec.observability.metrics`` wins over ``OTEL_*`` of the supervisor's environment
(``telemetry.metricexport``); metrics go to the traces' collector, with its headers. A header
whose ``valueFrom`` cannot be resolved keeps the export as it was; export on without a collector
turns it off. Either is said once; header values are never logged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping

from clawplane.desired import DesiredState
from clawplane.models import Observability
from clawplane.secrets import SecretError, SecretResolver
from clawplane.supervisor.traces import gateway_resolver
from clawplane.telemetry import MetricExporter, metric_config
from clawplane.telemetry.metricexport import NoCollectorError

__all__ = ["metrics_follower"]

log = logging.getLogger("clawplane.reconcile.daemon")


def metrics_follower(
    exporter: MetricExporter, resolver: SecretResolver, environ: Mapping[str, str] | None = None
) -> Callable[[DesiredState], None]:
    """What configures ``exporter`` from a pass's desired state (its Gateway and the environment)."""
    said: list[str] = []

    def say(message: str, level: int) -> None:
        if said != [message]:
            log.log(level, "%s", message)
            said[:] = [message]

    def follow(desired: DesiredState) -> None:
        gateway = desired.gateway
        observability = gateway.spec.observability if gateway is not None else Observability()
        resolve = gateway_resolver(desired, resolver)
        try:
            config = metric_config(observability, os.environ if environ is None else environ, resolve)
        except SecretError as exc:
            say(
                f"metrics: a header of {gateway.key if gateway else 'the Gateway'} "
                f"spec.observability.traces cannot be resolved ({exc}); the metric export stays as it "
                "was: set the variable or file it names",
                logging.ERROR,
            )
            return
        except NoCollectorError as exc:
            say(f"metrics: {exc}", logging.WARNING)
            config = None
        else:
            said.clear()
        exporter.configure(config)

    return follow
