"""The control plane on the folder supervisor's endpoint: ``/mcp/_clawplane`` (streamable HTTP).

The route needs a token with the ``read`` scope (``cli`` has read and approve, ``reader``
only read); ``approvals_respond`` also needs ``approve``. Answers are taken in the supervisor
itself, so an approved plan is applied at once. Its sessions are bounded as the hosted
endpoint's are (``Gateway.spec.endpoint.controlSessions``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio

from clawplane.mcpserve.folder import supervisor_server
from clawplane.mcpserve.tools import READ
from clawplane.reconcile.agents.endpoint import endpoint_limits
from clawplane.runtimes import Principal
from clawplane.runtimes.proxy import Route, serve_sdk_server
from clawplane.supervisor import SupervisorContext

__all__ = ["CONTROL_PATH", "control_endpoint"]

CONTROL_PATH = "/mcp/_clawplane"


def _allows(principal: Principal, rest: str) -> bool:
    return not rest and READ in principal.scopes


@contextlib.asynccontextmanager
async def control_endpoint(ctx: SupervisorContext) -> AsyncIterator[None]:
    """Serve the control plane at ``CONTROL_PATH`` while the context is open."""
    server = supervisor_server(ctx.ws, ctx.db, ctx.oversight)
    applied = ctx.backend.agents  # the applied Gateway's endpoint settings, with its session limits
    served = serve_sdk_server(
        server.server,
        where=f"the control plane {CONTROL_PATH}",
        limits=lambda: endpoint_limits(applied.endpoint.control_sessions),
        total_setting="Gateway spec.endpoint.controlSessions.maxSessions",
        share_setting="Gateway spec.endpoint.controlSessions.maxSessionsPerConsumer",
        telemetry=ctx.backend.supervisor.settings.telemetry,
        endpoint="control",
    )
    async with served as app, anyio.create_task_group() as tg:
        tg.start_soon(server.run_updates)
        # The plan resource changes with the files even when the loop does not watch them (apply):
        # the supervisor's one watch of the folder tells this too.
        unsubscribe = ctx.on_files_changed(lambda _paths: server.changed())
        ctx.mount(CONTROL_PATH, Route(app, _allows))
        try:
            yield
        finally:
            ctx.unmount(CONTROL_PATH)
            unsubscribe()
            tg.cancel_scope.cancel()
