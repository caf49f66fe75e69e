"""Several downstream parties over one upstream server connection, each seeing only its own traffic.

A ``Mux`` owns one upstream ``Channel`` (a stdio server's pipes) and hands out ``Link``
objects. Each link behaves like a private connection to the server:

- requests get fresh upstream ids and their responses come back with the link's own
  ids; a progress token is kept verbatim unless another pending request already uses it,
  in which case it is swapped for a unique one upstream and restored on the way back;
- ``notifications/progress`` go to the request that owns the token, frames of a
  2026-07-28 ``subscriptions/listen`` stream (``_meta.subscriptionId``) to the listen
  request that opened them (with the link's id; matched by value, so a server that echoes
  the id as a string still reaches its listener; acknowledgement and filters untouched),
  ``notifications/resources/updated`` to the links subscribed to that URI, and
  ``notifications/cancelled`` from the server to the link that holds the cancelled request;
- a server→client request (sampling, elicitation, roots) goes to the link whose request
  is being served — the newest pending request of the highest-priority link, because
  stdio carries no "related request" field — and the answer goes back verbatim;
- logging goes with the request being served, or to everyone when none is; list-change
  notifications go to everyone;
- a ``tools/call`` that the link's ``CallGate`` holds is not written upstream until its gate
  lets it go (``gate``): meanwhile the caller gets ``notifications/progress`` (when it sent a
  progress token), and a ``notifications/cancelled`` for it, or the link leaving, ends the
  wait, which withdraws the approval request; a refused call is answered with the gate's
  tool error result. ``Link.withdraw`` tells the gate that a call's caller is gone while the
  link lives on (its HTTP request disconnected): the gate withdraws the request and refuses.

``Delivery.related`` names the downstream request a message belongs to, so an HTTP
transport can put it on that request's response stream (or on the standalone stream).

With ``share_initialize`` (one long-lived process shared by many handshake-era
clients), only the first ``initialize`` and ``notifications/initialized`` reach the
server; later clients get the recorded result. Subscriptions are reference-counted so
one client's unsubscribe does not end another's.
"""

from __future__ import annotations

import copy
import itertools
import logging
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.abc

from clawplane.runtimes.proxy.channel import Channel, ChannelClosedError
from clawplane.runtimes.proxy.gate import CallGate, GatedCall, refusal_result
from clawplane.runtimes.proxy.holds import INTERNAL_ERROR, await_verdict
from clawplane.runtimes.proxy.links import (
    Delivery,
    Key,
    Link,
    Pending,
    UpstreamGoneError,
    as_upstream_id,
    busiest,
    cancelled_notice,
    filter_tools,
    request_key,
)
from clawplane.runtimes.proxy.wire import (
    PROGRESS_TOKEN,
    SUBSCRIPTION_ID_META_KEY,
    Message,
    RequestId,
    error_response,
    is_notification,
    is_request,
    is_response,
    meta_of,
    params_of,
    progress_token,
    with_trace_meta,
)
from clawplane.telemetry import UPSTREAM_CONTEXT, CallSite, CallTelemetry, Outcome

__all__ = ["Delivery", "Link", "Mux", "UpstreamGoneError"]

logger = logging.getLogger(__name__)

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
_LINK_BUFFER = 4096


class Mux:
    """Links over one upstream channel (see the module docstring)."""

    def __init__(
        self,
        channel: Channel,
        *,
        name: str,
        share_initialize: bool = False,
        describe_end: Callable[[], str] | None = None,
    ) -> None:
        self.name = name
        self.share_initialize = share_initialize
        self._channel = channel
        self._describe_end = describe_end or (lambda: "the connection closed")
        self._ids = itertools.count(1)
        self._seq = itertools.count()
        self._links: list[Link] = []
        self._pending: dict[int, Pending] = {}
        self._tokens: dict[Key, int] = {}
        self._server_requests: dict[Key, Link] = {}
        self._subscriptions: dict[str, set[Link]] = {}
        self._initialize: Message | None = None  # the recorded initialize result (share_initialize)
        self._initializing: anyio.Event | None = None
        self._initialized_sent = False
        self.gone: str | None = None
        self.ended = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None

    # -- links -----------------------------------------------------------------------------
    def open_link(
        self,
        label: str,
        *,
        priority: int = 1,
        tool_allowed: Callable[[str], bool] | None = None,
        gate: CallGate | None = None,
        site: CallSite | None = None,
        telemetry: CallTelemetry | None = None,
    ) -> Link:
        """A new party; lower ``priority`` parties get server requests only when no other is busy.
        Its requests are reported to ``telemetry`` as coming from ``site``, when both are given."""
        if self.gone is not None:
            raise UpstreamGoneError(self.gone)
        send, receive = anyio.create_memory_object_stream[Delivery](_LINK_BUFFER)
        link = Link(self, label, priority, send, receive, tool_allowed, gate, site=site, telemetry=telemetry)
        self._links.append(link)
        return link

    @property
    def links(self) -> int:
        """How many parties are attached."""
        return len(self._links)

    async def _detach(self, link: Link) -> None:
        if link not in self._links:
            link._end(link.reason or "closed")
            return
        self._links.remove(link)
        link._end(link.reason or "closed")
        for departure in list(link.departures.values()):
            departure.leave(f"the caller went away ({link.label} ended before an answer)")
        for scope in list(link.holds.values()):
            scope.cancel()
        if self.gone is not None:
            return
        outgoing: list[Message] = []
        for upstream_id in list(link.pending.values()):
            pending = self._pending.get(upstream_id)
            if pending is not None and not pending.cancelled:
                pending.cancelled = True
                outgoing.append(cancelled_notice(upstream_id, "the client went away"))
        link.pending.clear()
        for key, owner in list(self._server_requests.items()):
            if owner is link:
                del self._server_requests[key]
                outgoing.append(error_response(key[1], INTERNAL_ERROR, "the client went away"))
        for uri, members in list(self._subscriptions.items()):
            if link in members:
                members.discard(link)
                if not members:
                    del self._subscriptions[uri]
                    outgoing.append(self._own_request("resources/unsubscribe", {"uri": uri}))
        for msg in outgoing:
            await self._write(msg)

    # -- downstream → upstream -------------------------------------------------------------
    async def _from_link(
        self, link: Link, msg: Message, size: int = 0, headers: Mapping[str, str] | None = None
    ) -> None:
        if link.telemetry is not None and is_request(msg):
            link.observe(msg, size, headers)  # answered through the link's deliveries, whoever answers
        if self.gone is not None:
            if is_request(msg):
                link._deliver(Delivery(self._gone_error(msg["id"])))
            return
        if is_request(msg):
            await self._request(link, msg)
        elif is_notification(msg):
            await self._notification(link, msg)
        elif is_response(msg):
            key = request_key(msg["id"]) if isinstance(msg.get("id"), int | str) else None
            if key is not None and self._server_requests.get(key) is link:
                del self._server_requests[key]
                await self._write(msg)
            else:
                logger.debug("%s: dropping a response to no request of %s", self.name, link.label)

    async def _request(self, link: Link, msg: Message) -> None:
        method = msg.get("method")
        params = params_of(msg)
        if method == "initialize" and self.share_initialize and await self._answer_initialize(link, msg):
            return
        if method == "tools/call" and link.tool_allowed is not None:
            tool = params.get("name")
            if isinstance(tool, str) and not link.tool_allowed(tool.strip()):
                self._refuse(link, error_response(msg["id"], INVALID_PARAMS, f"Unknown tool: {tool}"))
                return
        if method == "tools/call" and link.gate is not None and isinstance(params.get("name"), str):
            arguments = params.get("arguments")
            held = link.gate.held(params["name"].strip(), arguments if isinstance(arguments, dict) else {})
            if held is not None:
                self._hold(link, msg, held)
                return
        await self._forward(link, msg)

    async def _forward(self, link: Link, msg: Message) -> None:
        method = msg.get("method")
        params = params_of(msg)
        if (
            method in ("resources/subscribe", "resources/unsubscribe")
            and isinstance(params.get("uri"), str)
            and self._subscription_handled_locally(link, method, params["uri"], msg["id"])
        ):
            return
        upstream_id = next(self._ids)
        pending = Pending(link, msg["id"], str(method), next(self._seq))
        out = dict(msg, id=upstream_id)
        token = progress_token(msg)
        if token is not None:
            out, pending.token = self._claim_token(out, token, upstream_id)
        self._pending[upstream_id] = pending
        link.pending[request_key(msg["id"])] = upstream_id
        observed = link.calls.get(request_key(msg["id"])) if link.calls else None
        if observed is not None:
            observed.forwarded()
            # While tracing is on, the server's request carries the CLIENT span's context (MCP's
            # ``params._meta`` convention); off, the request passes as the client wrote it.
            out = with_trace_meta(out, observed.state.get(UPSTREAM_CONTEXT))
        if method == "initialize" and self.share_initialize and self._initializing is None:
            self._initializing = anyio.Event()
        await self._write(out)

    @staticmethod
    def _refuse(link: Link, answer: Message) -> None:
        """Answer a request the proxy does not forward (a filtered tool, a refused approval)."""
        call = link.calls.pop(request_key(answer["id"]), None) if link.calls else None
        if call is not None:
            call.finish(answer, Outcome.REFUSED)
        link._deliver(Delivery(answer))

    def _hold(self, link: Link, msg: Message, call: GatedCall) -> None:
        key = request_key(msg["id"])
        if self._tg is None or key in link.holds:
            why = "is already waiting for an approval" if key in link.holds else "is not running"
            link._deliver(Delivery(error_response(msg["id"], INTERNAL_ERROR, f"request {msg['id']!r} {why}")))
            return
        scope = link.holds[key] = anyio.CancelScope()
        link.departures[key] = call.departure
        self._tg.start_soon(self._held, link, msg, call, scope)

    async def _held(self, link: Link, msg: Message, call: GatedCall, scope: anyio.CancelScope) -> None:
        """Wait for the gate's answer to one call, then forward it or answer the refusal."""
        verdict = await await_verdict(link, msg, call, scope, self.name)
        request_id = msg["id"]
        if verdict is None or link.closed.is_set():
            link.abandon(request_id, Outcome.CANCELLED)
            return  # withdrawn: cancelled by the caller, or the caller went away
        if not verdict.proceed:
            self._refuse(link, refusal_result(request_id, verdict))
        elif self.gone is not None:
            link._deliver(Delivery(self._gone_error(request_id)))
        else:
            await self._forward(link, msg)

    def _claim_token(
        self, out: Message, token: RequestId, upstream_id: int
    ) -> tuple[Message, tuple[RequestId, RequestId]]:
        if request_key(token) not in self._tokens:
            self._tokens[request_key(token)] = upstream_id
            return out, (token, token)
        # Another pending request uses this token: swap it for one only this request has.
        unique = f"clawplane-progress-{upstream_id}"
        out = copy.deepcopy(out)
        out["params"]["_meta"][PROGRESS_TOKEN] = unique
        self._tokens[request_key(unique)] = upstream_id
        return out, (unique, token)

    async def _answer_initialize(self, link: Link, msg: Message) -> bool:
        """Answer a later client's initialize from the recorded one; False to forward it."""
        if self._initialize is None and self._initializing is not None:
            await self._initializing.wait()
        if self._initialize is None:
            return False
        link._deliver(Delivery({**self._initialize, "id": msg["id"]}))
        return True

    def _subscription_handled_locally(self, link: Link, method: str, uri: str, request_id: RequestId) -> bool:
        members = self._subscriptions.setdefault(uri, set())
        if method == "resources/subscribe":
            already = bool(members)
            members.add(link)
        else:
            members.discard(link)
            already = bool(members)
            if not members:
                del self._subscriptions[uri]
        if already:
            link._deliver(Delivery({"jsonrpc": "2.0", "id": request_id, "result": {}}))
        return already

    async def _notification(self, link: Link, msg: Message) -> None:
        method = msg.get("method")
        params = params_of(msg)
        if method == "notifications/initialized" and self.share_initialize:
            if self._initialized_sent:
                return
            self._initialized_sent = True
        if method == "notifications/cancelled":
            request_id = params.get("requestId")
            hold = link.holds.get(request_key(request_id)) if isinstance(request_id, int | str) else None
            if hold is not None and isinstance(request_id, int | str):
                link.withdraw(request_id, "the caller cancelled the call (notifications/cancelled)")
                hold.cancel()  # the server never saw the call: nothing to tell it
                return
            upstream_id = (
                link.pending.get(request_key(request_id)) if isinstance(request_id, int | str) else None
            )
            if upstream_id is None:
                return
            pending = self._pending.get(upstream_id)
            if pending is not None:
                pending.cancelled = True
            link.abandon(request_id, Outcome.CANCELLED)
            msg = dict(msg, params=dict(params, requestId=upstream_id))
        await self._write(msg)

    def _own_request(self, method: str, params: dict[str, Any]) -> Message:
        upstream_id = next(self._ids)
        self._pending[upstream_id] = Pending(None, None, method, next(self._seq))
        return {"jsonrpc": "2.0", "id": upstream_id, "method": method, "params": params}

    async def _write(self, msg: Message) -> None:
        try:
            await self._channel.send(msg)
        except ChannelClosedError as exc:
            self._fail(str(exc))

    # -- upstream → downstream -------------------------------------------------------------
    async def run(self) -> None:
        """Read the server's messages and route them, until its output ends."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                async for msg in self._channel.messages():
                    self._route(msg, self._channel.last_size)
            finally:
                self._fail(self._describe_end())
                self._tg = None
                tg.cancel_scope.cancel()

    def _route(self, msg: Message, size: int = 0) -> None:
        if is_response(msg):
            self._response(msg, size)
        elif is_request(msg):
            self._server_request(msg)
        elif is_notification(msg):
            self._server_notification(msg)

    def _response(self, msg: Message, size: int = 0) -> None:
        upstream_id = msg.get("id")
        pending = self._pending.pop(upstream_id, None) if isinstance(upstream_id, int) else None
        if pending is None:
            return
        if pending.token is not None:
            self._tokens.pop(request_key(pending.token[0]), None)
        link = pending.link
        if link is None:
            return
        if pending.downstream_id is not None:
            link.pending.pop(request_key(pending.downstream_id), None)
        if pending.method == "initialize" and self.share_initialize and "result" in msg:
            self._initialize = {k: v for k, v in msg.items() if k != "id"}
        if pending.method == "initialize" and self._initializing is not None:
            self._initializing.set()
        if pending.method == "resources/subscribe" and "error" in msg:
            self._drop_subscription(link, msg)
        if pending.method == "tools/list" and link.tool_allowed is not None:
            msg = filter_tools(msg, link.tool_allowed)
        if not pending.cancelled:
            link._deliver(Delivery({**msg, "id": pending.downstream_id}, size=size))

    def _drop_subscription(self, link: Link, msg: Message) -> None:
        for uri, members in list(self._subscriptions.items()):
            members.discard(link)
            if not members:
                del self._subscriptions[uri]

    def _busy(self) -> tuple[Link, RequestId] | None:
        """The link and request the server is most likely working for right now."""
        return busiest(self._pending.values())

    def _server_request(self, msg: Message) -> None:
        busy = self._busy()
        target = busy[0] if busy else max(self._links, key=lambda link: link.priority, default=None)
        if target is None:
            method = msg.get("method")
            self._reply_later(
                error_response(msg["id"], METHOD_NOT_FOUND, f"no client is connected to answer {method}")
            )
            return
        self._server_requests[request_key(msg["id"])] = target
        target._deliver(Delivery(msg, busy[1] if busy else None))

    def _reply_later(self, msg: Message) -> None:
        # Routing runs inside the reader, which must never wait on the server's stdin.
        if self._tg is not None:
            self._tg.start_soon(self._write, msg)

    def _server_notification(self, msg: Message) -> None:
        method = msg.get("method")
        params = params_of(msg)
        if method == "notifications/progress":
            token = params.get(PROGRESS_TOKEN)
            upstream_id = self._tokens.get(request_key(token)) if isinstance(token, int | str) else None
            pending = self._pending.get(upstream_id) if upstream_id is not None else None
            if pending is not None and pending.link is not None and pending.token is not None:
                out = dict(msg, params=dict(params, progressToken=pending.token[1]))
                pending.link._deliver(Delivery(out, pending.downstream_id))
            return
        if method == "notifications/cancelled":
            request_id = params.get("requestId")
            owner = (
                self._server_requests.pop(request_key(request_id), None)
                if isinstance(request_id, int | str)
                else None
            )
            if owner is not None:
                owner._deliver(Delivery(msg))
            return
        meta = meta_of(msg)
        if meta is not None and SUBSCRIPTION_ID_META_KEY in meta:
            self._listen_frame(msg, meta)
            return
        if method == "notifications/resources/updated":
            uri = params.get("uri")
            for link in list(self._subscriptions.get(uri, ())) if isinstance(uri, str) else ():
                link._deliver(Delivery(msg))
            return
        if method == "notifications/message":
            busy = self._busy()
            if busy is not None:
                busy[0]._deliver(Delivery(msg, busy[1]))
                return
        for link in list(self._links):
            link._deliver(Delivery(msg))

    def _listen_frame(self, msg: Message, meta: dict[str, Any]) -> None:
        upstream_id = as_upstream_id(meta.get(SUBSCRIPTION_ID_META_KEY))
        pending = self._pending.get(upstream_id) if upstream_id is not None else None
        if pending is None or pending.link is None or pending.cancelled:
            return
        out = copy.deepcopy(msg)
        out["params"]["_meta"][SUBSCRIPTION_ID_META_KEY] = pending.downstream_id
        pending.link._deliver(Delivery(out, pending.downstream_id))

    # -- the end ---------------------------------------------------------------------------
    def _gone_error(self, request_id: RequestId) -> Message:
        return error_response(request_id, INTERNAL_ERROR, f'MCP server "{self.name}" is gone: {self.gone}')

    def _fail(self, reason: str) -> None:
        if self.gone is not None:
            return
        self.gone = reason
        for pending in self._pending.values():
            if pending.link is not None and not pending.cancelled and pending.downstream_id is not None:
                pending.link._deliver(Delivery(self._gone_error(pending.downstream_id)))
        self._pending.clear()
        self._tokens.clear()
        self._server_requests.clear()
        if self._initializing is not None:
            self._initializing.set()
        for link in self._links:
            link._end(reason)
        self.ended.set()
