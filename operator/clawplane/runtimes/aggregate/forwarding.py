"""Requests from the agent endpoint to its backend servers, passed through raw.

The server's error ``code``/``message``/``data`` reach the client unchanged, progress and
logging of a call go to that call, and a server's sampling, elicitation and roots requests go to
the client that made the call (or to ``asking`` for a 2026-07-28 call). Listings are followed
page by page (at most ``MAX_LIST_PAGES``).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

import anyio
import anyio.abc
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from clawplane.runtimes.aggregate.backend import Backend, BackendError, OnRequest, open_backend
from clawplane.runtimes.aggregate.changes import ChangeNotices
from clawplane.runtimes.aggregate.sessions import Downstream
from clawplane.runtimes.catalog import ServerTools, ToolEntry, build_server_tools
from clawplane.runtimes.proxy import DISCONNECTED_SCOPE_KEY, SERVER_UNAVAILABLE, Message
from clawplane.telemetry import TRACE_KEYS

__all__ = ["MAX_LIST_PAGES", "Forwarding"]

logger = logging.getLogger(__name__)

MAX_LIST_PAGES: Final = 50


class Forwarding(ChangeNotices):
    """Requests to one backend server of a downstream session, and the catalog over its listings."""

    async def _session_catalog(
        self, ctx: ServerRequestContext[Any, Any], downstream: Downstream
    ) -> Sequence[ToolEntry]:
        """The agent's catalog over this session's own upstream sessions (a perClient process may
        have tools the supervisor's does not), merged and filtered by the same code."""
        if downstream.catalog is not None:
            return downstream.catalog
        surfaces = self.catalogs.surfaces(downstream.agent)
        if surfaces is None:
            raise MCPError(
                types.INVALID_PARAMS, f'no agent "{downstream.agent}" has been applied in this folder'
            )
        self._catalog(downstream.agent)
        listed: list[ServerTools] = []
        complete = True
        for base in surfaces:
            try:
                tools = await self._list_all(ctx, downstream, base.server, "tools/list", "tools")
            except MCPError as exc:
                # An unavailable server contributes nothing for now, as in OpenClaw; asked again next time.
                logger.info(
                    "agent %s: %s is left out of the listing: %s", downstream.agent, base.server, exc.message
                )
                complete = False
                continue
            listed.append(
                build_server_tools(
                    base.server, base.safe_server, tools, launch=base.launch, tool_filter=base.tool_filter,
                    resources=base.resources, prompts=base.prompts, list_changed=base.list_changed,
                )
            )  # fmt: skip
        catalog = self.catalogs.merge(downstream.agent, listed)
        if complete:
            downstream.catalog = catalog
        return catalog

    async def _backend(self, downstream: Downstream, server: str) -> Backend:
        backend = downstream.backends.get(server)
        if backend is not None and backend._mux is not None:
            return backend
        lock = downstream.opening.setdefault(server, anyio.Lock())
        async with lock:
            backend = downstream.backends.get(server)
            if backend is not None and backend._mux is not None:
                return backend
            hosted = self.directory.hosted(server)
            if hosted is None or self._tg is None:
                raise BackendError(
                    SERVER_UNAVAILABLE, f'MCP server "{server}" is not hosted here (or stopped)'
                )
            where = f"/mcp/agents/{downstream.agent}"
            backend = await open_backend(
                self._tg,
                hosted,
                f"{downstream.consumer} via {where}",
                caller=downstream.consumer,
                endpoint=where,
                agent=downstream.agent,
                on_notice=lambda msg: self._notice(downstream, msg),
            )
            if downstream.log_level is not None:
                with contextlib.suppress(BackendError):  # a server without logging ignores it
                    await backend.request("logging/setLevel", {"level": downstream.log_level})
            downstream.backends[server] = backend
            return backend

    async def _request(
        self,
        ctx: ServerRequestContext[Any, Any],
        downstream: Downstream,
        server: str,
        method: str,
        params: dict[str, Any],
        *,
        asked: OnRequest | None = None,
    ) -> dict[str, Any]:
        """One request to one backend, with the call's progress, logging and server requests relayed
        (to ``asked`` instead when given: a 2026-07-28 call, whose client is asked by ``asking``)."""
        token = (ctx.meta or {}).get("progress_token") if ctx.meta is not None else None
        if token is not None:
            params = {**params, "_meta": {"progressToken": token}}

        async def on_message(msg: Message) -> None:
            raw = msg.get("params")
            p: dict[str, Any] = raw if isinstance(raw, dict) else {}
            if msg.get("method") == "notifications/progress" and token is not None:
                await ctx.session.report_progress(p.get("progress", 0), p.get("total"), p.get("message"))
            elif msg.get("method") == "notifications/message":
                await ctx.session.send_log_message(
                    p.get("level", "info"), p.get("data"), p.get("logger"), related_request_id=ctx.request_id
                )

        async def on_request(msg: Message) -> Message:
            try:
                result = await ctx.session._request_outbound.send_raw_request(
                    str(msg.get("method")), msg.get("params")
                )
            except MCPError as exc:
                error = exc.error.model_dump(mode="json", exclude_none=True)
                return {"jsonrpc": "2.0", "id": msg.get("id"), "error": error}
            except Exception as exc:  # no back-channel (2026-07-28), or the client went away
                why = f"the client cannot answer {msg.get('method')}: {exc}"
                return {"jsonrpc": "2.0", "id": msg.get("id"), "error": {"code": -32601, "message": why}}
            return {"jsonrpc": "2.0", "id": msg.get("id"), "result": result}

        async def relayed(msg: Message) -> None:
            with contextlib.suppress(Exception):  # a parked call's first exchange has ended
                await on_message(msg)

        scope = getattr(ctx.request, "scope", None)
        gone = scope.get(DISCONNECTED_SCOPE_KEY) if isinstance(scope, Mapping) else None
        try:
            backend = await self._backend(downstream, server)
            return await backend.request(
                method, params, on_message=on_message if asked is None else relayed,
                on_request=on_request if asked is None else asked,
                gone=gone if isinstance(gone, anyio.Event) else None, trace=_trace_context(ctx),
            )  # fmt: skip
        except BackendError as exc:
            raise MCPError(exc.code, exc.message, exc.data) from None
        finally:
            downstream.used = time.monotonic()

    async def _list_all(
        self, ctx: ServerRequestContext[Any, Any], downstream: Downstream, server: str, method: str, key: str
    ) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            result = await self._request(
                ctx, downstream, server, method, {"cursor": cursor} if cursor else {}
            )
            page = result.get(key)
            items.extend(i for i in page if isinstance(i, dict)) if isinstance(page, list) else None
            cursor = result.get("nextCursor") if isinstance(result.get("nextCursor"), str) else None
            if not cursor:
                break
        return items


def _trace_context(ctx: ServerRequestContext[Any, Any]) -> dict[str, str]:
    """The caller's W3C trace context, for telemetry only: the request's ``_meta`` first (it names
    this very message), else its HTTP headers (the backend request itself carries neither)."""
    meta = ctx.meta if isinstance(ctx.meta, Mapping) else {}
    found = {k: v for k in TRACE_KEYS if isinstance(v := meta.get(k), str)}
    headers = getattr(ctx.request, "headers", None)
    if "traceparent" not in found and isinstance(headers, Mapping):
        found = {k: v for k in TRACE_KEYS if isinstance(v := headers.get(k), str)}
    return found
