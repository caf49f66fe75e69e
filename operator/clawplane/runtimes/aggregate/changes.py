"""What the agent endpoint tells its clients of changes: list changes and resource updates.

``notifications/tools/list_changed`` (and the resources and prompts ones) go to the agent's
sessions, and to its 2026-07-28 change streams (``subscriptions/listen``), whenever its catalog
or skills change (``change_event``) or a backend session announces a change.
"""

from __future__ import annotations

from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)

from clawplane.runtimes.aggregate import skills as skills_ext
from clawplane.runtimes.aggregate.sessions import Downstream, EndpointSessions, catalog_digest
from clawplane.runtimes.proxy import Message

__all__ = ["LIST_CHANGED", "ChangeNotices"]

LIST_CHANGED: Final[dict[str, type[ToolsListChanged | ResourcesListChanged | PromptsListChanged]]] = {
    "notifications/tools/list_changed": ToolsListChanged,
    "notifications/resources/list_changed": ResourcesListChanged,
    "notifications/prompts/list_changed": PromptsListChanged,
}


class ChangeNotices(EndpointSessions):
    """List changes and resource updates told to the agent's sessions and change streams."""

    async def _follow_changes(self) -> None:
        while True:
            changed = self.change_event()  # taken first: a change while announcing is not missed
            for agent in sorted({d.agent for d in self._downstreams.values()} | set(self._digests)):
                digest = catalog_digest(
                    self._catalog(agent, strict=False), skills_ext.skills_key(self.catalogs, agent)
                )
                before = self._digests.get(agent)
                self._digests[agent] = digest
                if before is None or before == digest:
                    continue
                for downstream in self._downstreams.values():
                    if downstream.agent == agent:
                        downstream.catalog = None
                if before[0] != digest[0]:
                    await self._announce(agent, "notifications/tools/list_changed")
                if before[1] != digest[1] or before[3] != digest[3]:
                    await self._announce(agent, "notifications/resources/list_changed")
                if before[2] != digest[2]:
                    await self._announce(agent, "notifications/prompts/list_changed")
            await changed.wait()

    async def _announce(self, agent: str, method: str, only: Downstream | None = None) -> None:
        bus = self._buses.get(agent)
        if bus is not None:
            await bus[0].publish(LIST_CHANGED[method]())
        for downstream in [only] if only is not None else list(self._downstreams.values()):
            if downstream.agent != agent or downstream.connection is None:
                continue
            connection = downstream.connection()
            if connection is not None:
                await connection.notify(method, None)

    async def _updated(self, downstream: Downstream, params: dict[str, Any]) -> None:
        uri = params.get("uri")
        if not isinstance(uri, str):
            return
        bus = self._buses.get(downstream.agent)
        if bus is not None:
            await bus[0].publish(ResourceUpdated(uri))
        connection = downstream.connection() if downstream.connection is not None else None
        if connection is not None:
            await connection.notify("notifications/resources/updated", params)

    def _notice(self, downstream: Downstream, msg: Message) -> None:
        method = msg.get("method")
        if method == "notifications/resources/updated" and self._tg is not None:
            raw = msg.get("params")
            params: dict[str, Any] = raw if isinstance(raw, dict) else {}
            self._tg.start_soon(self._updated, downstream, params)
        if method == "notifications/tools/list_changed":
            downstream.catalog = None
        if method in LIST_CHANGED and self._tg is not None:
            # Sent from the relay task: the client's stream must not block the backend's reader.
            self._tg.start_soon(self._announce, downstream.agent, str(method), downstream)

    async def _on_listen(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        agent, _ = self._agent(ctx)
        self._catalog(agent)
        if agent not in self._buses:
            bus = InMemorySubscriptionBus()
            self._buses[agent] = (bus, ListenHandler(bus))
        return await self._buses[agent][1](ctx, params)
