"""The folder supervisor behind ``clawplane run``: runtimes, their HTTP endpoint, and applies.

One supervisor per folder (a lock in the state directory keeps it single). It owns
the hosted MCP runtimes and the loopback endpoint that exposes them, serves the
control socket (``ping``, ``apply``, ``shutdown``), and on exit tears every runtime
down and records them as stopped. At start it cleans up after a supervisor that died
without doing so (its recorded process groups are terminated).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import anyio

from clawplane.planning import Plan
from clawplane.reconcile.applier import ApplyContext, PlanRefusedError, apply_plan
from clawplane.reconcile.control import serve_control
from clawplane.reconcile.engine import Engine, InvalidFolderError
from clawplane.reconcile.localbackend import LocalBackend, open_local_backend
from clawplane.reconcile.processes import terminate_group
from clawplane.reconcile.supervisorfile import SupervisorInfo, write_info
from clawplane.reconcile.workspace import Workspace
from clawplane.runtimes import RuntimeSettings
from clawplane.state import FolderLock, StateDB, store, utcnow

Emit = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class SupervisorOptions:
    """How the supervisor listens and runs servers."""

    host: str = "127.0.0.1"
    port: int = 0
    settings: RuntimeSettings | None = None


def cleanup_stale_runtimes(db: StateDB) -> list[str]:
    """Terminate process groups a dead supervisor left behind; mark every runtime stopped."""
    cleaned = []
    for name, rt in store.load_observed(db).runtimes.items():
        if rt.pgid and terminate_group(rt.pgid):
            cleaned.append(name)
        if rt.phase != "stopped" or rt.pid is not None:
            store.put_runtime(db, replace(rt, phase="stopped", pid=None, pgid=None, updated_at=utcnow()))
    return cleaned


class _Handler:
    def __init__(self, ws: Workspace, db: StateDB, backend: LocalBackend, shutdown: anyio.Event) -> None:
        self.ws, self.db, self.backend, self.shutdown = ws, db, backend, shutdown
        self.engine = Engine(ws)
        self.busy = anyio.Lock()

    async def __call__(self, request: dict[str, Any], emit: Emit) -> dict[str, Any]:
        op = request.get("op")
        if op == "ping":
            return {"ok": True, "pid": os.getpid(), "endpoint": self.endpoint()}
        if op == "shutdown":
            return {"ok": True}  # the shutdown itself happens after this reply (see after_reply)
        if op == "apply":
            if self.busy.locked():
                return {
                    "ok": False,
                    "error": "another apply is running for this folder; try again when it ends",
                }
            async with self.busy:
                return await self._apply(request, emit)
        return {"ok": False, "error": f"unknown operation {op!r}"}

    def endpoint(self) -> str:
        return self.backend.endpoint.base_url if self.backend.endpoint else ""

    async def _apply(self, request: dict[str, Any], emit: Emit) -> dict[str, Any]:
        try:
            plan = Plan.model_validate(request["plan"])
            desired, _ = self.engine.load()
            self.engine.renderer.render(desired, self.engine.observe(self.db))
            desired = self.engine.with_skill_digests(desired)
        except InvalidFolderError as exc:
            return {"ok": False, "error": f"the folder does not validate ({exc}); nothing was changed"}
        ctx = ApplyContext(desired, self.db, self.backend, self.engine.renderer, self.ws.out_dir)
        try:
            result = await apply_plan(
                plan, ctx, allow_mass_delete=bool(request.get("allow_mass_delete")), emit=emit
            )
        except PlanRefusedError as exc:
            return {"ok": False, "refused": True, "error": str(exc)}
        return result.to_dict()


async def _watch_signals(received: AsyncIterator[int], shutdown: anyio.Event) -> None:
    async for _ in received:
        shutdown.set()
        return


async def run_supervisor(
    ws: Workspace,
    options: SupervisorOptions | None = None,
    *,
    on_ready: Callable[[SupervisorInfo], None] | None = None,
) -> None:
    """Run the folder's supervisor until SIGTERM/SIGINT or a ``shutdown`` request."""
    options = options or SupervisorOptions()
    lock = FolderLock(ws.state_dir, "supervisor.lock")
    lock.acquire()
    db = StateDB.open(ws.state_dir)
    shutdown = anyio.Event()

    def after_reply(request: dict[str, Any]) -> None:
        if request.get("op") == "shutdown":
            shutdown.set()

    try:
        cleanup_stale_runtimes(db)
        # Signals stay captured until teardown is over, so a second SIGTERM cannot orphan runtimes.
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
            backend_cm = open_local_backend(host=options.host, port=options.port, settings=options.settings)
            async with backend_cm as backend:
                handler = _Handler(ws, db, backend, shutdown)
                async with anyio.create_task_group() as tg:
                    await tg.start(partial(serve_control, ws.socket_path, handler, after_reply=after_reply))
                    info = SupervisorInfo(os.getpid(), str(ws.socket_path), handler.endpoint(), utcnow())
                    write_info(ws, info)
                    tg.start_soon(_watch_signals, received, shutdown)
                    if on_ready is not None:
                        on_ready(info)
                    await shutdown.wait()
                    tg.cancel_scope.cancel()
            # Leaving the backend tore every runtime down; record that.
            cleanup_stale_runtimes(db)
    finally:
        with contextlib.suppress(OSError):
            ws.pidfile.unlink()
        db.close()
        lock.release()
