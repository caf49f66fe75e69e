"""Change notifications from a server (tools, prompts, resources), in either protocol era.

Handshake-era servers (up to 2025-11-25) send ``notifications/*/list_changed`` on the
session; the SDK hands them to the client's ``message_handler``. At 2026-07-28 they only
travel on a ``subscriptions/listen`` stream, which ``Connection.follow_changes`` keeps open.
Both paths end in one ``ChangeFanout``, whose listeners (the runtime's catalog refresher,
the bridge's forwarders) must not block.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable

import mcp_types as types
from mcp.client.session import IncomingMessage
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ServerEvent,
    ToolsListChanged,
)

__all__ = ["Change", "ChangeFanout"]

logger = logging.getLogger(__name__)


class Change(enum.StrEnum):
    """What changed on the server."""

    TOOLS = "tools"
    PROMPTS = "prompts"
    RESOURCES = "resources"


Listener = Callable[[Change], None]

_NOTIFICATIONS: dict[type[object], Change] = {
    types.ToolListChangedNotification: Change.TOOLS,
    types.PromptListChangedNotification: Change.PROMPTS,
    types.ResourceListChangedNotification: Change.RESOURCES,
}
_EVENTS: dict[type[object], Change] = {
    ToolsListChanged: Change.TOOLS,
    PromptsListChanged: Change.PROMPTS,
    ResourcesListChanged: Change.RESOURCES,
}


class ChangeFanout:
    """Delivers each change to every subscribed listener."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add ``listener``; the returned function removes it again."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def publish(self, change: Change) -> None:
        """Tell every listener about ``change``."""
        for listener in list(self._listeners):
            listener(change)

    def publish_event(self, event: ServerEvent) -> None:
        """Publish a 2026-07-28 listen-stream event (resource updates are not followed)."""
        change = _EVENTS.get(type(event))
        if change is not None:
            self.publish(change)

    async def message_handler(self, message: IncomingMessage) -> None:
        """The ``Client`` message handler: publishes handshake-era list_changed notifications."""
        if isinstance(message, Exception):
            logger.debug("transport reported %r", message)
            return
        change = _NOTIFICATIONS.get(type(message))
        if change is not None:
            self.publish(change)
