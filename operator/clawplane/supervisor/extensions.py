"""Services an entry point runs in the folder supervisor it starts.

The supervisor (``daemon.run_supervisor``) lives below the entry points, so it cannot import
them; an entry point that has something to serve on the supervisor's endpoint (``clawplane run``:
the control plane at ``/mcp/_clawplane``) passes it in ``SupervisorOptions.services``. A
service is an async context manager over a ``SupervisorContext``: it mounts its routes on
entry, runs its tasks while open, and unmounts on exit. The folder is watched once per
supervisor: a service that wants file changes subscribes (``on_files_changed``) instead of
running a watcher of its own (each one is a thread that wakes twenty times a second).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from clawplane.reconcile.localbackend import LocalBackend
from clawplane.reconcile.oversight import Oversight
from clawplane.runtimes.proxy import Route
from clawplane.state import StateDB
from clawplane.workspace import Workspace

__all__ = ["FileChanges", "SupervisorContext", "SupervisorService"]

FilesListener = Callable[[set[str]], None]


class FileChanges:
    """One watch of the folder, told to every listener (the loop, services)."""

    def __init__(self) -> None:
        self._listeners: list[FilesListener] = []

    @property
    def listening(self) -> bool:
        """True when someone wants the changes (the supervisor then watches the folder)."""
        return bool(self._listeners)

    def subscribe(self, listener: FilesListener) -> Callable[[], None]:
        """Call ``listener`` with the changed paths of every batch; returns the unsubscribe."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def __call__(self, paths: set[str]) -> None:
        for listener in list(self._listeners):
            listener(paths)


@dataclass(frozen=True)
class SupervisorContext:
    """What a service gets: the folder, its state, its queues and the hosted endpoint to mount on."""

    ws: Workspace
    db: StateDB
    oversight: Oversight
    backend: LocalBackend
    changes: FileChanges = field(default_factory=FileChanges)

    def on_files_changed(self, listener: FilesListener) -> Callable[[], None]:
        """Have ``listener`` told the changed paths of each batch of folder changes."""
        return self.changes.subscribe(listener)

    def mount(self, prefix: str, route: Route) -> None:
        """Serve ``route`` at ``prefix`` of the hosted endpoint."""
        self.backend.supervisor.mount(prefix, route)

    def unmount(self, prefix: str) -> None:
        """Stop serving ``prefix``."""
        self.backend.supervisor.unmount(prefix)


SupervisorService = Callable[[SupervisorContext], AbstractAsyncContextManager[None]]
