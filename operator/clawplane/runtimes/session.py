"""The pieces of one runtime session: its process, its transport, its catalog, why it ended.

A session is one start of a server: for stdio, one process (with a watcher that ends the
session the moment the process exits, even during the handshake); for remote servers, one
connection. ``ServerRuntime`` strings these together; keeping them here keeps that class
about lifecycle and status.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

import anyio
import httpx2
from mcp.client._transport import TransportStreams

from clawplane.models import McpServerSpec, Transport
from clawplane.runtimes.catalog import ServerTools, build_server_tools
from clawplane.runtimes.client.connection import Connection
from clawplane.runtimes.client.listing import ListLimits
from clawplane.runtimes.client.remote import HttpOptions, sse_transport, streamable_http_transport
from clawplane.runtimes.errors import RequestFailedError
from clawplane.runtimes.launch import Launch
from clawplane.runtimes.process import ServerProcess, StderrLog, Teardown, open_process
from clawplane.runtimes.proxy import Mux, link_transport
from clawplane.runtimes.settings import RuntimeSettings

__all__ = ["SessionEnd", "exit_text", "list_catalog", "session_process", "session_transport"]

METHOD_NOT_FOUND = -32601


def exit_text(code: int | None) -> str:
    """How a process ended, in words."""
    if code is not None and code < 0:
        return f"process was killed by signal {-code}"
    return f"process exited with code {code}"


class SessionEnd:
    """Why the current session ended; the first reason given wins."""

    def __init__(self) -> None:
        self.over = anyio.Event()
        self.reason: str | None = None
        self.recycled = False
        self.ready_at: float | None = None
        """When the session became ready. Kept here, not returned: the exit watcher may cancel
        the serving code, and a cancelled session that had been ready is a crash, not a failed start."""

    def end(self, reason: str, *, recycled: bool = False) -> None:
        """Record ``reason`` (unless one is already recorded) and end the session."""
        if self.reason is None:
            self.reason, self.recycled = reason, recycled
        self.over.set()


@contextlib.asynccontextmanager
async def session_process(
    launch: Launch,
    session: SessionEnd,
    *,
    settings: RuntimeSettings,
    stderr_log: StderrLog,
    on_spawn: Callable[[ServerProcess], None],
    label: str = "",
) -> AsyncIterator[ServerProcess | None]:
    """The stdio server's process (None for remote servers) for the length of a session."""
    if launch.transport is not Transport.STDIO:
        yield None
        return
    teardown = Teardown(settings.stdin_close_grace, settings.terminate_grace, settings.kill_wait)
    async with open_process(
        launch.argv,
        env=launch.env,
        cwd=launch.cwd,
        stderr_log=stderr_log,
        teardown=teardown,
        adopt_orphans=settings.adopt_orphans,
        label=label,
        use_cgroup=settings.use_cgroups,
    ) as process:
        on_spawn(process)
        async with anyio.create_task_group() as tg:
            # An exit during the handshake must end the session now, not at the connect timeout.
            with anyio.CancelScope() as scope:
                tg.start_soon(_watch_exit, process, session, scope)
                yield process
            tg.cancel_scope.cancel()


async def _watch_exit(process: ServerProcess, session: SessionEnd, scope: anyio.CancelScope) -> None:
    await process.exited.wait()
    session.end(exit_text(process.returncode))
    scope.cancel()


def session_transport(
    launch: Launch, spec: McpServerSpec, mux: Mux | None, auth: httpx2.Auth | None = None
) -> AbstractAsyncContextManager[TransportStreams]:
    """The client transport of a session: a link of the primary process's mux, or an HTTP
    connection (``auth`` signs its requests: an ``auth: oauth`` server's OAuth client)."""
    if mux is not None:
        # Lowest priority: server requests go to the hosted endpoint's clients when they are busy.
        return link_transport(mux.open_link("clawplane", priority=0))
    cert: tuple[str, str] | str | None = None
    if spec.client_cert:
        cert = (spec.client_cert, spec.client_key) if spec.client_key else spec.client_cert
    options = HttpOptions(
        headers=launch.headers,
        connect_timeout=spec.connection_timeout_ms / 1000,
        verify=spec.ssl_verify is not False,
        cert=cert,
        auth=auth,
    )
    if launch.transport is Transport.SSE:
        return sse_transport(launch.url, options)
    return streamable_http_transport(launch.url, options)


async def list_catalog(
    conn: Connection,
    server: str,
    safe_server: str,
    spec: McpServerSpec,
    *,
    settings: RuntimeSettings,
    launch: str,
) -> ServerTools:
    """List the server's tools within OpenClaw's bounds and build its catalog.

    The listing gets 1.5 s unless ``requestTimeoutMs`` is set explicitly (OpenClaw's
    ``getCatalogListTimeoutMs``).

    Raises:
        ListingError: The listing broke a bound or took too long.
        RequestFailedError: tools/list failed.
    """
    explicit = "request_timeout_ms" in spec.model_fields_set
    limits = ListLimits(
        timeout=conn.request_timeout if explicit else settings.catalog_list_timeout,
        pages=settings.max_list_pages,
        items=settings.max_list_items,
        bytes=settings.max_list_bytes,
    )
    caps = conn.capabilities
    try:
        listed = await conn.list_tools(limits)
    except RequestFailedError as exc:
        # A resources- or prompts-only server may not implement tools/list at all.
        if exc.code != METHOD_NOT_FOUND or caps.tools is not None or not (caps.resources or caps.prompts):
            raise
        listed = []
    changing = (("tools", caps.tools), ("resources", caps.resources), ("prompts", caps.prompts))
    return build_server_tools(
        server,
        safe_server,
        [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listed],
        launch=launch,
        tool_filter=spec.tool_filter,
        resources=caps.resources is not None,
        prompts=caps.prompts is not None,
        list_changed=frozenset(kind for kind, cap in changing if cap is not None and cap.list_changed),
    )
