"""Client input for a handshake-era server asked by a 2026-07-28 client (MRTR bridging).

A handshake-era server asks for input mid-call with a server→client request
(``elicitation/create``, ``sampling/createMessage``, ``roots/list``) and waits for the answer.
A 2026-07-28 client cannot answer one: it has no session to answer on; the revision asks for
input with an ``InputRequiredResult`` instead, and the client calls again with
``inputResponses`` and the echoed ``requestState``. The proxy bridges the two:

- the server's request ends the client's HTTP exchange with an ``InputRequiredResult`` whose
  ``inputRequests`` holds it (under ``INPUT_KEYS``' key for its method) and whose
  ``requestState`` names the *parked* call: its link to the server stays open, the call still
  running upstream, its server request unanswered;
- the client's retry (same method, that ``requestState``, from the same consumer) resumes it:
  the response it carries goes to the server as the answer to its request, and the retry's
  HTTP exchange carries on with the call (more rounds, notifications, the result);
- a retry without the response asks again (a new ``requestState``, the same request); a call
  nobody resumes within ``PARK_TTL_S`` is cancelled upstream (its server request is answered
  with an error), as is a consumer's oldest when it has ``PARKED_PER_CONSUMER`` waiting.

Only ``requestState`` values the proxy minted (``STATE_PREFIX``) are taken; any other belongs
to a 2026-07-28 server and passes through untouched.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc

from clawplane.runtimes.proxy.mux import Link
from clawplane.runtimes.proxy.wire import Message, RequestId, error_response, params_of

__all__ = [
    "INPUT_KEYS",
    "PARKED_PER_CONSUMER",
    "PARK_TTL_S",
    "STATE_PREFIX",
    "InputRequiredError",
    "Parked",
    "Parking",
    "answer_for",
    "declined",
]

INPUT_KEYS: Final = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling",
                     "roots/list": "roots"}  # fmt: skip
"""Server→client requests that become ``inputRequests`` entries, and the key each gets (also the
client capability it needs)."""
STATE_PREFIX: Final = "clawplane-input."
PARK_TTL_S: Final = 300.0
"""How long a parked call waits for the client to call again (a person may be answering)."""
PARKED_PER_CONSUMER: Final = 32
"""Calls one consumer may have waiting for input: a newer one ends its oldest, so questions a
client abandons hold no more upstream calls than this (as sessions: ``maxSessions``)."""
INVALID_REQUEST = -32600
"""What an SDK client answers a request it has no capability for; the proxy answers alike."""


class InputRequiredError(Exception):
    """A retry names a parked call that cannot be resumed; ``str()`` says why and what to do."""


@dataclass(eq=False)
class Parked:
    """One call waiting upstream for the client's input."""

    link: Link
    consumer: str
    method: str
    server_request: Message
    """The server's request, as it sent it (its ``id`` is the server's)."""
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    @property
    def key(self) -> str:
        """Its key in ``inputRequests``/``inputResponses``."""
        return INPUT_KEYS[str(self.server_request.get("method"))]

    def result(self, state: str) -> dict[str, Any]:
        """The ``InputRequiredResult`` that asks the client for this input."""
        request = {"method": self.server_request["method"], "params": params_of(self.server_request)}
        return {"resultType": "input_required", "inputRequests": {self.key: request}, "requestState": state}


class Parking:
    """The parked calls of one hosted server (see the module docstring)."""

    def __init__(
        self,
        task_group: anyio.abc.TaskGroup,
        *,
        ttl: float = PARK_TTL_S,
        per_consumer: int = PARKED_PER_CONSUMER,
    ) -> None:
        self._tg = task_group
        self._ttl = ttl
        self._per_consumer = per_consumer
        self._parked: dict[str, Parked] = {}

    def __len__(self) -> int:
        return len(self._parked)

    def park(self, parked: Parked) -> str:
        """Hold ``parked`` until the client calls again (ending the consumer's oldest parked call
        when it has ``per_consumer`` already); returns its ``requestState``."""
        mine = [state for state, held in self._parked.items() if held.consumer == parked.consumer]
        for oldest in mine[: max(0, len(mine) - self._per_consumer + 1)]:
            ended = self._parked.pop(oldest)
            ended.scope.cancel()
            self._tg.start_soon(ended.link.aclose)
        state = STATE_PREFIX + secrets.token_urlsafe(18)
        parked.scope = anyio.CancelScope()  # a call asked again is parked anew
        self._parked[state] = parked
        self._tg.start_soon(self._expire, state, parked)
        return state

    async def _expire(self, state: str, parked: Parked) -> None:
        with parked.scope:
            await anyio.sleep(self._ttl)
            if self._parked.pop(state, None) is parked:
                # The call ends upstream; the mux answers the server's request with an error.
                await parked.link.aclose()

    def resume(self, request: Message, consumer: str) -> Parked | None:
        """The parked call ``request`` resumes (None: it names none of ours, forward it as it is).

        Raises:
            InputRequiredError: Its ``requestState`` is ours but unknown (expired, used, or
                another consumer's), or the retry is not of the method that was asked.
        """
        state = params_of(request).get("requestState")
        if not (isinstance(state, str) and state.startswith(STATE_PREFIX)):
            return None
        parked = self._parked.get(state)
        if parked is None or parked.consumer != consumer:
            raise InputRequiredError(
                "requestState names no call waiting for input here: it expired (after "
                f"{self._ttl:g} s), was used already, or belongs to another client; call "
                f"{request.get('method')} again without requestState and inputResponses"
            )
        if parked.method != request.get("method"):
            raise InputRequiredError(
                f"requestState belongs to a {parked.method} call, not {request.get('method')}; "
                "retry the original request with it"
            )
        del self._parked[state]
        parked.scope.cancel()
        return parked

    async def close(self) -> None:
        """End every parked call (the endpoint is stopping)."""
        parked, self._parked = list(self._parked.values()), {}
        for one in parked:
            one.scope.cancel()
            await one.link.aclose()


def answer_for(parked: Parked, request: Message) -> Message | None:
    """The response to the server's request that the retry carries (None: it carries none)."""
    responses = params_of(request).get("inputResponses")
    response = responses.get(parked.key) if isinstance(responses, dict) else None
    if not isinstance(response, dict):
        return None
    server_id: RequestId = parked.server_request["id"]
    return {"jsonrpc": "2.0", "id": server_id, "result": response}


def declined(server_request: Message, capabilities: Any) -> Message | None:
    """The error the server gets when the client did not declare the capability its request
    needs (the client would be asked for what it said it cannot do); None when it did."""
    capability = INPUT_KEYS[str(server_request.get("method"))]
    if isinstance(capabilities, dict) and isinstance(capabilities.get(capability), dict):
        return None
    method = server_request["method"]
    why = f"the client did not declare the {capability} capability, so it cannot answer {method}"
    return error_response(server_request["id"], INVALID_REQUEST, why)
