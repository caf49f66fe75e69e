"""A handshake-era client session's view of a server that speaks only 2026-07-28 (MRTR bridging).

Every handshake-era session reads and writes its upstream through a ``HandshakeView``. While
the server accepts the ``initialize`` handshake it passes everything through untouched. A server
that refuses it (``-32601``, or ``-32022`` naming only 2026-07-28) is spoken to in its revision
on the client's behalf:

- the handshake is answered from ``server/discover`` (capabilities, ``serverInfo``, instructions)
  at the version the client asked for; ``notifications/initialized`` is not passed on;
- each request carries the 2026-07-28 envelope in ``_meta`` (that revision, the capabilities the
  client declared in ``initialize``); ``ping``, which the revision removed, is answered by a
  ``server/discover`` probe;
- an ``InputRequiredResult`` becomes the equivalent server→client requests (``elicitation/create``,
  ``sampling/createMessage``, ``roots/list``) on the call's stream; once the client has answered
  them all, the call is sent again with ``inputResponses`` and the ``requestState``, as the
  revision's retry rules have it, for as many rounds as the server asks. An answer that is an
  error fails the call with it.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS

from clawplane.runtimes.proxy.mux import Delivery, Link
from clawplane.runtimes.proxy.wire import (
    CLIENT_CAPABILITIES_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    Message,
    RequestId,
    is_request,
    is_response,
    params_of,
)

__all__ = ["HandshakeView"]

MODERN: Final = MODERN_PROTOCOL_VERSIONS[-1]
SERVER_INFO_META_KEY: Final = "io.modelcontextprotocol/serverInfo"
REFUSED_HANDSHAKE: Final = frozenset({-32601, -32022})
"""How a server that speaks only 2026-07-28 answers ``initialize``."""

Key = tuple[type, RequestId]


def _key(value: RequestId) -> Key:
    return (type(value), value)


@dataclass(slots=True)
class _Round:
    """One ``InputRequiredResult`` being answered by the client."""

    call: Message
    state: Any
    waiting: dict[Key, str] = field(default_factory=dict)  # our request id → its input key
    responses: dict[str, Any] = field(default_factory=dict)


class HandshakeView:
    """The upstream link of one handshake-era session (see the module docstring)."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self.modern = False
        self._initialize: Message | None = None
        self._capabilities: Any = {}
        self._discovering: set[Key] = set()  # initialize or ping ids answered by server/discover
        self._calls: dict[Key, Message] = {}  # request id → the request as the client sent it
        self._rounds: dict[Key, _Round] = {}  # request id → its input round
        self._asked: dict[Key, Key] = {}  # our server→client request id → the call it asks for
        self._ids = itertools.count(1)
        link.continues = self._continues

    def _continues(self, msg: Message) -> bool:
        """A refused ``initialize`` is asked again as ``server/discover``: the call goes on."""
        init = self._initialize
        return (
            not self.modern
            and init is not None
            and isinstance(msg.get("id"), int | str)
            and _key(msg["id"]) == _key(init["id"])
            and _refused(msg)
        )

    @property
    def reason(self) -> str | None:
        """Why the link ended, once it has."""
        return self.link.reason

    def withdraw(self, request_id: RequestId, reason: str) -> bool:
        """See ``Link.withdraw``."""
        return self.link.withdraw(request_id, reason)

    async def aclose(self) -> None:
        """See ``Link.aclose``."""
        await self.link.aclose()

    # -- client → server -------------------------------------------------------------------
    async def send(self, msg: Message, *, size: int = 0, headers: Mapping[str, str] | None = None) -> None:
        """A message of the client, for the server (``size`` and ``headers``: see ``Link.send``)."""
        if is_request(msg) and msg.get("method") == "initialize" and self._initialize is None:
            self._initialize = msg
            self._capabilities = params_of(msg).get("capabilities") or {}
        if is_request(msg) and self.link.telemetry is not None:
            self.link.observe(msg, size, headers)  # as the client asked it, whatever it becomes upstream
        if not self.modern:
            await self.link.send(msg)
            return
        if is_response(msg) and isinstance(msg.get("id"), int | str) and _key(msg["id"]) in self._asked:
            await self._answered(msg)
        elif is_request(msg) and msg.get("method") == "ping":
            self._discovering.add(_key(msg["id"]))
            await self.link.send(self._discover(msg["id"]))
        elif is_request(msg):
            self._calls[_key(msg["id"])] = msg
            await self.link.send(self._enveloped(msg))
        elif msg.get("method") != "notifications/initialized":
            await self.link.send(msg)

    def _discover(self, request_id: RequestId) -> Message:
        return self._enveloped({"jsonrpc": "2.0", "id": request_id, "method": "server/discover"})

    def _enveloped(self, msg: Message, **extra: Any) -> Message:
        params = {**params_of(msg), **extra}
        meta = params.get("_meta")
        envelope = {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_CAPABILITIES_META_KEY: self._capabilities}
        params["_meta"] = {**meta, **envelope} if isinstance(meta, dict) else envelope
        return {**msg, "params": params}

    async def _answered(self, msg: Message) -> None:
        call_key = self._asked.pop(_key(msg["id"]))
        round_ = self._rounds.get(call_key)
        if round_ is None:
            return
        input_key = round_.waiting.pop(_key(msg["id"]))
        if "error" in msg:  # the client could not answer: the call fails with its reason
            for other in round_.waiting:
                self._asked.pop(other, None)
            del self._rounds[call_key]
            self._calls.pop(call_key, None)
            await self._deliver_error(round_.call["id"], msg["error"])
            return
        round_.responses[input_key] = msg.get("result")
        if not round_.waiting:
            await self._retry(call_key, round_)

    async def _retry(self, call_key: Key, round_: _Round) -> None:
        del self._rounds[call_key]
        extra: dict[str, Any] = {"inputResponses": round_.responses}
        if round_.state is not None:
            extra["requestState"] = round_.state
        await self.link.send(self._enveloped(round_.call, **extra))

    async def _deliver_error(self, request_id: RequestId, error: Any) -> None:
        # Through the link's own queue, so the session reads it in order with the rest.
        self.link._deliver(Delivery({"jsonrpc": "2.0", "id": request_id, "error": error}))

    # -- server → client -------------------------------------------------------------------
    def __aiter__(self) -> AsyncIterator[Delivery]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Delivery]:
        async for delivery in self.link:
            for out in await self._from_server(delivery):
                yield out

    async def _from_server(self, delivery: Delivery) -> list[Delivery]:
        msg = delivery.message
        if not is_response(msg) or not isinstance(msg.get("id"), int | str):
            return [delivery]
        key = _key(msg["id"])
        init = self._initialize
        if not self.modern and init is not None and key == _key(init["id"]) and _refused(msg):
            self.modern = True
            self._discovering.add(key)
            await self.link.send(self._discover(init["id"]))
            return []
        if key in self._discovering:
            self._discovering.discard(key)
            return [Delivery(self._from_discovery(msg))]
        result = msg.get("result")
        if key in self._calls and isinstance(result, dict) and result.get("resultType") == "input_required":
            return await self._ask(key, result)
        self._calls.pop(key, None)
        return [delivery]

    def _from_discovery(self, msg: Message) -> Message:
        """The answer to the client's ``initialize`` or ``ping`` that ``server/discover`` gave."""
        result = msg.get("result")
        init = self._initialize
        if "error" in msg or not isinstance(result, dict) or init is None:
            return msg
        if msg["id"] != init["id"]:
            return {"jsonrpc": "2.0", "id": msg["id"], "result": {}}  # a ping
        asked = params_of(init).get("protocolVersion")
        answer: dict[str, Any] = {
            "protocolVersion": asked if asked in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION,
            "capabilities": result.get("capabilities") or {},
        }
        meta = result.get("_meta")
        info = meta.get(SERVER_INFO_META_KEY) if isinstance(meta, dict) else None
        answer["serverInfo"] = info or {"name": self.link.mux.name, "version": "unknown"}
        if isinstance(result.get("instructions"), str):
            answer["instructions"] = result["instructions"]
        return {"jsonrpc": "2.0", "id": msg["id"], "result": answer}

    async def _ask(self, call_key: Key, result: dict[str, Any]) -> list[Delivery]:
        call = self._calls[call_key]
        requests = result.get("inputRequests")
        round_ = self._rounds[call_key] = _Round(call, result.get("requestState"))
        out: list[Delivery] = []
        for input_key, request in requests.items() if isinstance(requests, dict) else ():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                continue
            ours = f"clawplane-input-{next(self._ids)}"
            round_.waiting[_key(ours)] = str(input_key)
            self._asked[_key(ours)] = call_key
            params = request.get("params") or {}
            question = {"jsonrpc": "2.0", "id": ours, "method": request["method"], "params": params}
            out.append(Delivery(question, call["id"]))
        if not round_.waiting:  # only requestState: call again at once
            await self._retry(call_key, round_)
        return out


def _refused(msg: Message) -> bool:
    error = msg.get("error")
    return isinstance(error, dict) and error.get("code") in REFUSED_HANDSHAKE
