"""One upstream session of one hosted server, held for one downstream session of an agent endpoint.

The session is the hosted server's own ``session_upstream``: with ``sessions: perClient`` a
process of its own (started for this downstream session, torn down with it), with ``shared``
the server's shared handshake-era process. clawplane hand-shakes it (handshake era: the
upstream is a stdio process) and then sends each downstream request as raw JSON-RPC over a
fresh mux ``Link``, so everything the server answers — results with fields this SDK does not
model, error ``code``/``message``/``data`` — comes back as the server wrote it. A link is per
request: what the server sends for it (progress, logging, sampling/elicitation/roots
requests) reaches only that request, and leaving the link (the downstream request was
cancelled) sends ``notifications/cancelled`` upstream. When the downstream client disconnects
(``gone``), a call still held for an approval dies with it (``Link.withdraw``).

Every proxied request of the agent endpoint, ``tools/call`` included, goes through
``Backend.request``, which hands it to ``Link.send`` and so to ``Mux._request`` — the same
function every request of the hosted endpoint (both eras) passes, where the server's
``toolFilter`` refuses hidden tools and its ``toolApproval`` gate (``CallGate``, for the
calling consumer on ``/mcp/agents/<agent>``) holds calls that need an answer.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any, Final

import anyio
import anyio.abc
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from clawplane import __version__
from clawplane.runtimes.proxy import (
    SERVER_UNAVAILABLE,
    Hosted,
    Link,
    Message,
    Mux,
    UnavailableError,
    UpstreamGoneError,
    error_response,
    is_request,
    is_response,
)

__all__ = ["Backend", "BackendError", "OnMessage", "OnRequest"]

logger = logging.getLogger(__name__)

INITIALIZE_TIMEOUT_S: Final = 60.0
METHOD_NOT_FOUND: Final = -32601

OnMessage = Callable[[Message], Awaitable[None]]
"""Receives a notification the server sent for a request (progress, logging)."""
OnRequest = Callable[[Message], Awaitable[Message]]
"""Answers a request the server sent while serving one (sampling, elicitation, roots)."""
OnNotice = Callable[[Message], None]
"""Receives a notification that belongs to no request (list changes, resource updates); must not block."""


class BackendError(Exception):
    """A JSON-RPC error from the server, or why it could not be reached (``code``, ``message``, ``data``)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


async def _refuse(msg: Message) -> Message:
    return error_response(msg.get("id"), METHOD_NOT_FOUND, f"{msg.get('method')} is not available here")


class Backend:
    """A hand-shaken upstream session of ``hosted`` (see the module docstring)."""

    def __init__(
        self,
        hosted: Hosted,
        label: str,
        *,
        caller: str = "",
        endpoint: str = "",
        agent: str | None = None,
        on_notice: OnNotice | None = None,
    ) -> None:
        self.hosted = hosted
        self.agent = agent
        """The agent whose endpoint this session serves (telemetry records its calls as the agent's)."""
        self.label = label
        self.caller = caller
        """The consumer whose calls these are (the server's ``toolApproval`` gate holds them as its)."""
        self.endpoint = endpoint
        self._on_notice = on_notice
        self._mux: Mux | None = None
        self._stack = AsyncExitStack()
        self._control: Link | None = None
        self._scope = anyio.CancelScope()
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[anyio.Event, list[Message]]] = {}
        self.initialize_result: Mapping[str, Any] = {}

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Open and hand-shake the upstream, then relay its notifications until ``close``.

        Raises:
            BackendError: The server could not be started or did not hand-shake (before ``started``).
        """
        started = False
        try:
            with self._scope:
                async with self.hosted.session_upstream(self.label) as mux:
                    self._mux = mux
                    try:
                        self._control = mux.open_link(f"{self.label} (session)", priority=0)
                        await self._handshake()
                    except UpstreamGoneError as exc:
                        raise BackendError(
                            SERVER_UNAVAILABLE, f'MCP server "{self.hosted.name}": {exc}'
                        ) from None
                    started = True
                    task_status.started()
                    await self._relay(self._control)
        except (UnavailableError, UpstreamGoneError, BackendError, OSError) as exc:
            if not started:
                raise
            logger.info("%s: upstream session of %s ended: %s", self.label, self.hosted.name, exc)
        finally:
            self._mux = None

    async def _relay(self, control: Link) -> None:
        try:
            async for delivery in control:
                msg = delivery.message
                if is_response(msg):
                    waiting = self._waiting.pop(msg["id"], None) if isinstance(msg.get("id"), int) else None
                    if waiting is not None:
                        waiting[1].append(msg)
                        waiting[0].set()
                elif self._on_notice is not None:
                    self._on_notice(msg)
        finally:
            with anyio.CancelScope(shield=True):
                await control.aclose()

    async def _handshake(self) -> None:
        params = {
            "protocolVersion": LATEST_HANDSHAKE_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "clawplane-agent-endpoint", "version": __version__},
        }
        with anyio.fail_after(INITIALIZE_TIMEOUT_S):
            self.initialize_result = await self.request("initialize", params)
        assert self._control is not None
        await self._control.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def session_request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """A request whose effect outlives it (``resources/subscribe``): sent on the session's own link,
        which receives what it starts (``notifications/resources/updated``) for as long as the session lasts.

        Raises:
            BackendError: The server answered with an error, or went away first.
        """
        control = self._control
        if control is None or self._mux is None:
            raise BackendError(SERVER_UNAVAILABLE, f'MCP server "{self.hosted.name}" is not connected')
        request_id = next(self._ids)
        done: tuple[anyio.Event, list[Message]] = (anyio.Event(), [])
        self._waiting[request_id] = done
        try:
            await control.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)})
            with anyio.move_on_after(INITIALIZE_TIMEOUT_S):
                await done[0].wait()
        finally:
            self._waiting.pop(request_id, None)
        if not done[1]:
            raise BackendError(SERVER_UNAVAILABLE, f'MCP server "{self.hosted.name}" did not answer {method}')
        return _result(self.hosted.name, done[1][0])

    def close(self) -> None:
        """End the session (a perClient process is torn down)."""
        self._scope.cancel()

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        *,
        on_message: OnMessage | None = None,
        on_request: OnRequest | None = None,
        gone: anyio.Event | None = None,
        trace: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Send one request and return its result; what the server sends for it goes to the callbacks.

        ``gone`` is set when the downstream client disconnected: a call still held for an
        approval is withdrawn then (and answered with the gate's refusal). ``trace`` is the
        caller's W3C trace context, for telemetry (not forwarded).

        Raises:
            BackendError: The server answered with an error, or went away first.
        """
        mux = self._mux
        if mux is None:
            raise BackendError(SERVER_UNAVAILABLE, f'MCP server "{self.hosted.name}" is not connected')
        try:
            gate = self.hosted.call_gate(self.caller, endpoint=self.endpoint or None)
            telemetry = self.hosted.telemetry
            site = self.hosted.call_site("agent", self.caller, agent=self.agent) if telemetry else None
            link = mux.open_link(
                self.label, tool_allowed=self.hosted.tool_allowed, gate=gate, site=site, telemetry=telemetry
            )
        except UpstreamGoneError as exc:
            raise BackendError(SERVER_UNAVAILABLE, f'MCP server "{self.hosted.name}": {exc}') from None
        msg: Message = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            msg["params"] = dict(params)
        try:
            await link.send(msg, headers=trace)
            async with anyio.create_task_group() as tg:
                if gone is not None:
                    tg.start_soon(_withdraw_when_gone, gone, link)
                answer = await self._answer(mux, link, on_message, on_request)
                tg.cancel_scope.cancel()
            if isinstance(answer, Exception):
                raise answer  # raised out here: inside the task group it would come wrapped in a group
            return answer
        finally:
            # Still pending here: the downstream request was cancelled; leaving cancels it upstream.
            with anyio.CancelScope(shield=True):
                await link.aclose()

    async def _answer(
        self, mux: Mux, link: Link, on_message: OnMessage | None, on_request: OnRequest | None
    ) -> dict[str, Any] | Exception:
        """The request's result (or what failed), relaying what the server sends for it meanwhile."""
        try:
            async for delivery in link:
                item = delivery.message
                if is_response(item):
                    return _result(self.hosted.name, item)
                if is_request(item):
                    await link.send(await (on_request or _refuse)(item))
                elif on_message is not None:
                    await on_message(item)
        except Exception as exc:  # handed back, to be raised outside the task group
            return exc
        reason = link.reason or mux.gone or "the connection closed"
        return BackendError(SERVER_UNAVAILABLE, f'MCP server "{self.hosted.name}" went away: {reason}')


async def _withdraw_when_gone(gone: anyio.Event, link: Link) -> None:
    await gone.wait()
    link.withdraw(1, "the caller's HTTP request disconnected before an answer")


def _result(server: str, msg: Message) -> dict[str, Any]:
    error = msg.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        raise BackendError(
            code if isinstance(code, int) else -32603, str(error.get("message", "")), error.get("data")
        )
    result = msg.get("result")
    if not isinstance(result, dict):
        raise BackendError(-32603, f'MCP server "{server}" answered with a result that is not an object')
    return result


async def open_backend(
    tg: anyio.abc.TaskGroup,
    hosted: Hosted,
    label: str,
    *,
    caller: str = "",
    endpoint: str = "",
    agent: str | None = None,
    on_notice: OnNotice | None = None,
) -> Backend:
    """Start a ``Backend`` in ``tg`` and wait for its handshake.

    Raises:
        BackendError: The server is not ready, could not start, or did not hand-shake.
    """
    backend = Backend(hosted, label, caller=caller, endpoint=endpoint, agent=agent, on_notice=on_notice)
    try:
        await tg.start(backend.run)
    except UnavailableError as exc:
        raise BackendError(SERVER_UNAVAILABLE, str(exc)) from None
    except TimeoutError:
        raise BackendError(
            SERVER_UNAVAILABLE, f'MCP server "{hosted.name}" did not answer initialize in time'
        ) from None
    return backend
