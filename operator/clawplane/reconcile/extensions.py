"""Services an entry point adds to the folder supervisors this process runs.

The supervisor (``daemon.run_supervisor``) lives below the entry points, so it cannot import
them; an entry point that has something to serve on the supervisor's endpoint (``mcpserve``:
the control plane at ``/mcp/_clawplane``) provides it here before the supervisor starts. A
service is an async context manager over a ``SupervisorContext``: it mounts its routes on
entry, runs its tasks while open, and unmounts on exit.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from clawplane.reconcile.localbackend import LocalBackend
from clawplane.reconcile.oversight import Oversight
from clawplane.reconcile.workspace import Workspace
from clawplane.runtimes.proxy import Route
from clawplane.state import StateDB

__all__ = ["SupervisorContext", "SupervisorService", "provide", "provided"]


@dataclass(frozen=True)
class SupervisorContext:
    """What a service gets: the folder, its state, its queues and the hosted endpoint to mount on."""

    ws: Workspace
    db: StateDB
    oversight: Oversight
    backend: LocalBackend

    def mount(self, prefix: str, route: Route) -> None:
        """Serve ``route`` at ``prefix`` of the hosted endpoint."""
        self.backend.supervisor.mount(prefix, route)

    def unmount(self, prefix: str) -> None:
        """Stop serving ``prefix``."""
        self.backend.supervisor.unmount(prefix)


SupervisorService = Callable[[SupervisorContext], AbstractAsyncContextManager[None]]
_PROVIDED: list[SupervisorService] = []


def provide(service: SupervisorService) -> None:
    """Run ``service`` in every supervisor this process starts from now on (once per service)."""
    if service not in _PROVIDED:
        _PROVIDED.append(service)


def provided() -> tuple[SupervisorService, ...]:
    """The services provided so far."""
    return tuple(_PROVIDED)
