"""A typed client of a folder's supervisor: one method per operation of the control protocol.

Each method sends one request (``protocol.py``) over the control socket (``control.py``) and
returns the supervisor's final answer; progress events before it go to ``on_event``. Only the
connection is bounded by ``timeout``: an apply may take as long as its servers need, and
callers bound the whole exchange themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from clawplane.planning import Plan
from clawplane.workspace.control import ControlError, request
from clawplane.workspace.layout import Workspace
from clawplane.workspace.pidfile import SupervisorInfo, read_info
from clawplane.workspace.protocol import (
    Apply,
    Ping,
    Request,
    Respond,
    RotateTokens,
    Runtimes,
    Shutdown,
    encode,
)

OnEvent = Callable[[dict[str, Any]], None]


class SupervisorClient:
    """Talks to the supervisor listening on one control socket."""

    def __init__(self, socket: Path | str, *, timeout: float = 5.0) -> None:
        self.socket, self.timeout = Path(socket), timeout

    @classmethod
    def of(cls, info: SupervisorInfo, *, timeout: float = 5.0) -> SupervisorClient:
        """The client of the supervisor a pidfile names."""
        return cls(info.socket, timeout=timeout)

    async def call(self, message: Request, on_event: OnEvent | None = None) -> dict[str, Any]:
        """Send ``message``; its final answer (progress events go to ``on_event``).

        Raises:
            ControlError: No supervisor answers, or it closed the connection before answering.
        """
        async for event in request(self.socket, encode(message), timeout=self.timeout):
            if event.get("final"):
                return event
            if on_event is not None:
                on_event(event)
        raise ControlError("the supervisor closed the connection before answering")  # pragma: no cover

    async def ping(self) -> dict[str, Any]:
        """Its pid, endpoint, whether it watches and cleans, its loop state and degraded writes."""
        return await self.call(Ping())

    async def runtimes(self) -> dict[str, Any]:
        """The live report of every hosted server, under ``runtimes``."""
        return await self.call(Runtimes())

    async def apply(
        self,
        plan: Plan,
        *,
        env: dict[str, str | None],
        wait: bool = True,
        allow_mass_delete: bool = False,
        by: str = "unknown",
        approve_as: str | None = None,
        on_event: OnEvent | None = None,
    ) -> dict[str, Any]:
        """Carry out ``plan``: per-key results, failures, files written, what an approval holds."""
        message = Apply(
            plan.model_dump(mode="json"), env, wait=wait, allow_mass_delete=allow_mass_delete,
            by=by, approve_as=approve_as,
        )  # fmt: skip
        return await self.call(message, on_event)

    async def respond(self, approval_id: str, decision: str, *, by: str, reason: str = "") -> dict[str, Any]:
        """Answer an approval request; the answered request under ``approval``."""
        return await self.call(Respond(approval_id, decision, by=by, reason=reason))

    async def rotate_tokens(self, consumers: list[str] | None) -> dict[str, Any]:
        """New tokens for ``consumers`` (None: all): ``rotated``, ``written`` and a ``note``."""
        return await self.call(RotateTokens(consumers))

    async def shutdown(self) -> None:
        """Ask the supervisor to stop; it answers before it does."""
        await self.call(Shutdown())


async def answer(client: SupervisorClient, message: Request, *, timeout: float) -> dict[str, Any] | None:
    """The supervisor's answer when it is ``ok`` within ``timeout`` seconds, else None."""
    try:
        with anyio.fail_after(timeout):
            found = await client.call(message)
    except (ControlError, TimeoutError, OSError):
        return None
    return found if found.get("ok") else None


def ping(ws: Workspace, *, timeout: float = 2.0) -> dict[str, Any] | None:
    """The running supervisor's own answer (live loop state, degraded writes), or None."""
    info = read_info(ws)
    if info is None or not info.running():
        return None
    return anyio.run(lambda: answer(SupervisorClient.of(info, timeout=timeout), Ping(), timeout=timeout))
