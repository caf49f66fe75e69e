"""Where the supervisor serves hosted servers: a stable address that rendered configs can keep.

The port comes from, in order: ``run --port`` (when not 0), ``Gateway.spec.endpoint.port``
(when not 0), the port the folder's supervisor used last time (kept in the state
database), else any free port. An asked-for port that is taken is an error naming it;
the remembered one falls back to a free port with a warning, since every rendered config
then changes.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from pathlib import Path

from clawplane.models import Gateway
from clawplane.runtimes import PortInUseError
from clawplane.runtimes.proxy import bind
from clawplane.state import StateDB, store
from clawplane.validation import validate_paths

__all__ = ["ENDPOINT_PORT_KEY", "EndpointChoice", "bind_endpoint", "declared_endpoint"]

log = logging.getLogger("clawplane.reconcile.endpoint")  # the name log readers know it by

ENDPOINT_PORT_KEY = "endpoint_port"


@dataclass(frozen=True, slots=True)
class EndpointChoice:
    """The bound socket and where its port came from."""

    sock: socket.socket
    host: str
    port: int
    source: str  # "flag" | "gateway" | "remembered" | "free"
    note: str | None = None


def declared_endpoint(folder: Path) -> tuple[str, int] | None:
    """``Gateway.spec.endpoint`` of a folder that validates, when it names a port."""
    result = validate_paths([folder])
    if not result.ok:
        return None
    for placed in result.resources:
        resource = placed.resource
        if isinstance(resource, Gateway) and resource.spec.endpoint.port:
            return resource.spec.endpoint.host, resource.spec.endpoint.port
    return None


def bind_endpoint(folder: Path, db: StateDB, *, host: str, port: int, host_given: bool) -> EndpointChoice:
    """Bind the hosted endpoint's socket (see the module docstring) and remember its port.

    Raises:
        PortInUseError: A port given by flag or Gateway is taken.
    """
    declared = declared_endpoint(folder)
    if declared is not None and not host_given:
        host = declared[0]
    remembered = store.get_meta(db, ENDPOINT_PORT_KEY)
    if port:
        source = "flag"
    elif declared is not None:
        port, source = declared[1], "gateway"
    elif remembered and remembered.isdigit() and int(remembered) > 0:
        port, source = int(remembered), "remembered"
    else:
        source = "free"
    note = None
    try:
        sock = bind(host, port)
    except PortInUseError:
        if source != "remembered":
            raise
        sock = bind(host, 0)
        note = (
            f"port {port}, used by this folder last time, is taken; hosted servers moved to port "
            f"{sock.getsockname()[1]}, so the rendered configs change and consumers must reload them"
        )
        log.warning("%s", note)
        source = "free"
    bound = int(sock.getsockname()[1])
    store.set_meta(db, ENDPOINT_PORT_KEY, str(bound))
    return EndpointChoice(sock, host, bound, source, note)
