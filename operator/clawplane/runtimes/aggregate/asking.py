"""Client input for a backend's call made by a 2026-07-28 client of an agent endpoint (MRTR bridging).

Backend sessions speak the handshake era: a backend asks for input mid-call with a
server→client request and waits. A 2026-07-28 client has no channel for one; it is asked with an
``InputRequiredResult`` and calls again with ``inputResponses`` and the ``requestState``. So a
2026-07-28 ``tools/call`` runs its backend call as an ``AskedCall`` in the endpoint's task group:
the handler waits for the call's result or its first question; a question ends the handler with
an ``InputRequiredResult`` (the call parked under a ``requestState`` minted here, bound to the
consumer); the retry answers the question and waits again, for as many rounds as the backend
asks. A call nobody resumes within ``PARK_TTL_S`` is cancelled upstream, as is a consumer's
oldest parked call when it has ``PARKED_PER_CONSUMER``.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.exceptions import MCPError

from clawplane.runtimes.proxy import (
    INPUT_KEYS,
    PARK_TTL_S,
    PARKED_PER_CONSUMER,
    STATE_PREFIX,
    Message,
    declined,
)

__all__ = ["AskedCall", "AskedCalls", "Outcome", "ResumeError"]

logger = logging.getLogger(__name__)

_BUFFER: Final = 16
INTERNAL_ERROR: Final = -32603


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a call comes to next: its result, its error, or a backend's question (one is set)."""

    result: dict[str, Any] | None = None
    error: MCPError | None = None
    question: Message | None = None

    @property
    def key(self) -> str:
        """The question's key in ``inputRequests``/``inputResponses``."""
        assert self.question is not None
        return INPUT_KEYS[str(self.question.get("method"))]


class ResumeError(Exception):
    """A ``requestState`` of ours names no parked call of this consumer; ``str()`` says what to do."""


@dataclass(eq=False)
class AskedCall:
    """One backend call, run apart from the HTTP exchanges that wait for it."""

    consumer: str
    capabilities: Any
    _outcomes: tuple[MemoryObjectSendStream[Outcome], MemoryObjectReceiveStream[Outcome]] = field(
        default_factory=lambda: anyio.create_memory_object_stream[Outcome](_BUFFER)
    )
    _answers: dict[Any, anyio.Event] = field(default_factory=dict)
    _answered: dict[Any, Message] = field(default_factory=dict)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    question: Message | None = None
    """The question the client is being asked now."""

    async def ask(self, msg: Message) -> Message:
        """The backend's question: refused when the client cannot answer it, else asked and awaited."""
        refusal = declined(msg, self.capabilities)
        if refusal is not None:
            return refusal
        answered = self._answers[msg["id"]] = anyio.Event()
        await self._outcomes[0].send(Outcome(question=msg))
        await answered.wait()
        return self._answered.pop(msg["id"])

    def answer(self, response: Message) -> None:
        """The client's answer to the current question."""
        event = self._answers.pop(response["id"], None)
        if event is not None:
            self._answered[response["id"]] = response
            event.set()

    async def next(self) -> Outcome:
        """Wait for the call's result, error or next question."""
        return await self._outcomes[1].receive()


class AskedCalls:
    """The parked calls of one agent endpoint (see the module docstring)."""

    def __init__(self, task_group: anyio.abc.TaskGroup, *, ttl: float = PARK_TTL_S) -> None:
        self._tg = task_group
        self._ttl = ttl
        self._parked: dict[str, AskedCall] = {}
        self.per_consumer = PARKED_PER_CONSUMER

    def start(
        self, run: Callable[[Callable[[Message], Awaitable[Message]]], Awaitable[dict[str, Any]]],
        consumer: str, capabilities: Any,
    ) -> AskedCall:  # fmt: skip
        """Run ``run(on_request)`` apart; its outcomes come through ``AskedCall.next``."""
        call = AskedCall(consumer, capabilities)

        async def running() -> None:
            with call.scope:
                try:
                    outcome = Outcome(result=await run(call.ask))
                except MCPError as exc:  # the backend's error, as the handler raises it
                    outcome = Outcome(error=exc)
                except Exception as exc:  # never the endpoint's task group: this call fails alone
                    logger.exception("a parked call failed")
                    outcome = Outcome(error=MCPError(INTERNAL_ERROR, f"the call failed: {exc}"))
                await call._outcomes[0].send(outcome)

        self._tg.start_soon(running)
        return call

    def park(self, call: AskedCall, question: Message) -> str:
        """Hold ``call`` while its client answers ``question``; returns the ``requestState``."""
        call.question = question
        mine = [state for state, held in self._parked.items() if held.consumer == call.consumer]
        for oldest in mine[: max(0, len(mine) - self.per_consumer + 1)]:
            self._parked.pop(oldest).scope.cancel()  # its backend call ends upstream
        state = STATE_PREFIX + secrets.token_urlsafe(18)
        self._parked[state] = call
        self._tg.start_soon(self._expire, state, call)
        return state

    async def _expire(self, state: str, call: AskedCall) -> None:
        await anyio.sleep(self._ttl)
        if self._parked.pop(state, None) is call:
            call.scope.cancel()  # leaving the backend's link cancels the call upstream

    def resume(self, state: str, consumer: str) -> AskedCall:
        """The parked call ``state`` names.

        Raises:
            ResumeError: None of this consumer's calls waits under it (expired, used, foreign).
        """
        call = self._parked.pop(state, None)
        if call is None or call.consumer != consumer:
            raise ResumeError(
                f"requestState names no call waiting for input here: it expired (after {self._ttl:g} s), "
                "was used already, or belongs to another client; call the tool again without "
                "requestState and inputResponses"
            )
        return call
