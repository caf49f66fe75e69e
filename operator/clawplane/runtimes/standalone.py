"""The standalone bridge: one stdio server served over streamable HTTP (``clawplane bridge``).

This is the container entrypoint of the Kubernetes driver: ``clawplane bridge --host 0.0.0.0
-- COMMAND ARGS…``. It runs exactly one child, serves it at ``/mcp`` (and ``/healthz``), never
restarts it and returns the child's exit code when the child exits (Kubernetes restarts the
container). The child gets the bridge's whole environment, which is the container's. When
the bridge runs as PID 1 it also reaps orphaned descendants, as an init process must.
Cancelling ``run_bridge`` (the CLI does on SIGTERM/SIGINT) tears the child down cleanly.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import anyio

from clawplane.models import McpServerSpec
from clawplane.runtimes import reaping
from clawplane.runtimes.bridge import BridgeEndpoint, serve
from clawplane.runtimes.settings import RuntimeSettings
from clawplane.runtimes.status import Phase
from clawplane.runtimes.supervisor import Supervisor

__all__ = ["run_bridge"]

_REAP_SECONDS = 1.0


async def _reaper(supervisor: Supervisor, name: str) -> None:
    while True:
        await anyio.sleep(_REAP_SECONDS)
        pid = supervisor.status(name).pid
        reaping.reap_orphans({pid} if pid is not None else set())


async def run_bridge(
    command: Sequence[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    name: str | None = None,
    settings: RuntimeSettings | None = None,
    on_ready: Callable[[BridgeEndpoint], None] | None = None,
) -> int:
    """Serve ``command`` until it exits; returns its exit code (0 when it ended cleanly).

    ``on_ready`` is called with the endpoint once the socket listens (the child may still be
    starting; ``/healthz`` says when it is ready).

    Raises:
        OSError: The address cannot be bound.
    """
    server = name or Path(command[0]).name or "server"
    spec = McpServerSpec(command=command[0], args=list(command[1:]))
    bridge_settings = replace(settings or RuntimeSettings(), max_restarts=0, inherit_environment=True)
    async with Supervisor(settings=bridge_settings) as supervisor:
        await supervisor.ensure(server, spec, config_hash="bridge", base_dir=Path.cwd())
        async with (
            serve(supervisor, host=host, port=port, default=server) as endpoint,
            anyio.create_task_group() as tg,
        ):
            if os.getpid() == 1:
                tg.start_soon(_reaper, supervisor, server)
            if on_ready is not None:
                on_ready(endpoint)
            status = await supervisor.wait_until(server, lambda s: s.phase is Phase.FAILED)
            tg.cancel_scope.cancel()
    code = status.exit_code
    if code is None:
        return 1  # it never started
    return code if code >= 0 else 128 - code
