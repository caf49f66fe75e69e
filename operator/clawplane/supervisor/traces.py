"""The supervisor's trace export, following the Gateway each pass (or apply) reads.

``Gateway.spec.observability.traces`` wins over ``OTEL_*`` of the supervisor's environment
(``telemetry.otel``). A header whose ``valueFrom`` cannot be resolved keeps the export as it
was and says so once; header values are never logged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping

from clawplane.desired import DesiredState
from clawplane.models import SecretValue
from clawplane.secrets import SecretError, SecretResolver
from clawplane.telemetry import Tracing, trace_config

__all__ = ["gateway_resolver", "tracing_follower"]

log = logging.getLogger("clawplane.reconcile.daemon")


def gateway_resolver(desired: DesiredState, resolver: SecretResolver) -> Callable[[SecretValue], str]:
    """What reads a ``valueFrom`` of the pass's Gateway (relative files from its folder)."""
    gateways = desired.of_kind("Gateway")
    base_dir = gateways[0].base_dir if gateways else desired.folder

    def resolve(value: SecretValue) -> str:
        return resolver.resolve(value, base_dir=base_dir)

    return resolve


def tracing_follower(
    tracing: Tracing, resolver: SecretResolver, environ: Mapping[str, str] | None = None
) -> Callable[[DesiredState], None]:
    """What configures ``tracing`` from a pass's desired state (its Gateway and the environment)."""
    said: list[str] = []

    def follow(desired: DesiredState) -> None:
        gateway = desired.gateway
        declared = gateway.spec.observability.traces if gateway is not None else None
        resolve = gateway_resolver(desired, resolver)
        try:
            config = trace_config(declared, os.environ if environ is None else environ, resolve)
        except SecretError as exc:
            message = (
                f"traces: a header of {gateway.key if gateway else 'the Gateway'} "
                f"spec.observability.traces cannot be resolved ({exc}); the trace export stays as it "
                "was: set the variable or file it names"
            )
            if said != [message]:
                log.error("%s", message)
                said[:] = [message]
            return
        said.clear()
        tracing.configure(config)

    return follow
