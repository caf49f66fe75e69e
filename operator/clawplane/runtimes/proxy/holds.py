"""Waiting for an approval's verdict on one held ``tools/call`` of a ``Link`` (see ``gate``, ``mux``).

While the call waits its caller gets ``notifications/progress`` (when it sent a progress token),
the call's telemetry records the hold, and the link knows how to withdraw it (``Link.holds``,
``Link.departures``). What the verdict leads to (forward, refuse) is the mux's to do.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio

from clawplane.runtimes.proxy.gate import GatedCall, Verdict
from clawplane.runtimes.proxy.links import Delivery, Link, request_key
from clawplane.runtimes.proxy.wire import PROGRESS_TOKEN, Message, error_response, progress_token

__all__ = ["INTERNAL_ERROR", "await_verdict"]

logger = logging.getLogger(__name__)

INTERNAL_ERROR = -32603


async def await_verdict(
    link: Link, msg: Message, call: GatedCall, scope: anyio.CancelScope, server: str
) -> Verdict | None:
    """The gate's verdict on held call ``msg`` of ``link``; None when the wait was withdrawn (the
    caller cancelled or left) or failed (then the caller already has the error)."""
    assert link.gate is not None
    request_id, token = msg["id"], progress_token(msg)

    async def progress(done: float, total: float | None, message: str) -> None:
        if token is None:
            return
        params: dict[str, Any] = {PROGRESS_TOKEN: token, "progress": done, "message": message}
        if total is not None:
            params["total"] = total
        notice = {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
        link._deliver(Delivery(notice, request_id))

    verdict = None
    observed = link.calls.get(request_key(request_id)) if link.calls else None
    if observed is not None:
        observed.holding()
    try:
        with scope:
            verdict = await link.gate.gate.hold(call, progress)
    except Exception as exc:  # a broken queue must fail the call, not the server's other parties
        logger.exception("%s: holding %s for an approval failed", server, call.tool)
        failed = error_response(request_id, INTERNAL_ERROR, f"could not hold the call for an approval: {exc}")
        link._deliver(Delivery(failed))
    finally:
        link.holds.pop(request_key(request_id), None)
        link.departures.pop(request_key(request_id), None)
    if observed is not None:
        observed.released("withdrawn" if verdict is None else "approved" if verdict.proceed else "refused")
    return verdict
