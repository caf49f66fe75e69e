"""Tool calls that wait for an approval before the proxy forwards them.

A hosted server's ``toolApproval`` says which of its tools need an answer first. The proxy
only knows *that* a call waits (``CallGate.held``) and hands it to a ``ToolGate``, which
holds it until someone answers (clawplane's approval queue: ``approvals.ToolCallApprovals``,
injected by the supervisor, because the queue lives above this layer). While it waits the
gate reports progress, which the proxy sends to the caller as ``notifications/progress``
when the call carried a progress token. A cancelled wait (the caller sent
``notifications/cancelled`` or went away) must withdraw the request: the gate sees it as
cancellation of ``hold``, with the cause in the call's ``Departure``. A caller that is gone
while its session lives on (its HTTP request disconnected) is told through the ``Departure``
alone: the gate withdraws the request and answers a refusal, kept for a client that resumes.

Without a queue (``clawplane bridge`` in a pod has no state database) a gated call is
refused, never forwarded: an approval rule that cannot be enforced fails closed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from clawplane.runtimes.proxy.wire import Message, RequestId

__all__ = [
    "APPROVAL_META_KEY",
    "CallGate",
    "Departure",
    "GatedCall",
    "Progress",
    "ToolGate",
    "Verdict",
    "refusal_result",
    "refusing_gate",
]

APPROVAL_META_KEY = "dev.clawplane/approval"
"""``_meta`` key of a refused call's result: the approval id, its status and how to answer."""

Progress = Callable[[float, float | None, str], Awaitable[None]]
"""``(progress, total, message)`` → report that the call still waits."""


@dataclass(eq=False)
class Departure:
    """Whether the caller of a held call is gone, and why (set once, by the proxy)."""

    event: anyio.Event = field(default_factory=anyio.Event)
    reason: str = ""

    @property
    def gone(self) -> bool:
        """True once the caller left."""
        return self.event.is_set()

    def leave(self, reason: str) -> None:
        """The caller is gone because of ``reason`` (the first cause given is kept)."""
        if not self.event.is_set():
            self.reason = reason
            self.event.set()


@dataclass(frozen=True, slots=True)
class GatedCall:
    """One tool call that waits for an answer."""

    server: str
    tool: str
    arguments: Mapping[str, Any]
    caller: str
    """Who called: the consumer the token belongs to."""
    rule: str
    """The ``toolApproval.tools`` pattern that governs the tool."""
    mode: str
    """Its Codex approval mode."""
    timeout_s: float
    """How long the call may wait for an answer."""
    endpoint: str = ""
    """Where it was called (``/mcp/<server>``, ``/mcp/agents/<agent>``)."""
    departure: Departure = field(default_factory=Departure)
    """Set by the proxy when the caller went away while the call waited."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """How a held call ends: forwarded, or refused with a message for the caller."""

    proceed: bool
    approval_id: str = ""
    status: str = ""
    """The request's final status (approved, rejected, expired, cancelled…)."""
    message: str = ""
    """For the caller when refused: what happened and how to get the call approved."""


class ToolGate(Protocol):
    """Holds gated calls until they are answered (see the module docstring)."""

    async def hold(self, call: GatedCall, progress: Progress) -> Verdict:
        """Wait for an answer to ``call``; cancelling the wait withdraws its request."""
        ...


@dataclass(frozen=True, slots=True)
class CallGate:
    """What a link consults for each ``tools/call``: which calls wait, and who holds them."""

    server: str
    caller: str
    rule_for: Callable[[str], tuple[str, str, float] | None]
    """Raw tool name → ``(pattern, mode, timeout_s)`` when a call to it must wait, else None."""
    gate: ToolGate
    endpoint: str = ""

    def held(self, tool: str, arguments: Mapping[str, Any]) -> GatedCall | None:
        """The call as the gate holds it, or None when it goes straight through."""
        rule = self.rule_for(tool)
        if rule is None:
            return None
        pattern, mode, timeout_s = rule
        return GatedCall(
            self.server, tool, dict(arguments), self.caller, pattern, mode, timeout_s, self.endpoint
        )


class _Refusing:
    async def hold(self, call: GatedCall, progress: Progress) -> Verdict:
        return Verdict(
            proceed=False,
            status="refused",
            message=(
                f'Tool "{call.tool}" of MCP server "{call.server}" needs an approval (toolApproval '
                f'rule "{call.rule}": {call.mode}), and this endpoint has no approval queue to hold '
                "it in (clawplane bridge, as in Kubernetes pods, cannot hold calls); it was not run. "
                "Call it through `clawplane run`'s endpoint, or change spec.toolApproval"
            ),
        )


refusing_gate: ToolGate = _Refusing()
"""The gate of an endpoint without an approval queue: every gated call is refused."""


def refusal_result(request_id: RequestId, verdict: Verdict) -> Message:
    """The answer to a refused call: a tool result with ``isError``, so the model reads why.

    A JSON-RPC error would be shown by most clients as a transport failure ("MCP error
    -32xxx") and retried or dropped; a tool error result reaches the model verbatim, and an
    agent can tell the user which approval to answer.
    """
    meta = {APPROVAL_META_KEY: {"id": verdict.approval_id, "status": verdict.status}}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {
            "content": [{"type": "text", "text": verdict.message}],
            "isError": True,
            "resultType": "complete",
            "_meta": meta,
        },
    }
