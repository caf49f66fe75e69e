"""Where the dashboard reads from: a folder's supervisor (``clawplane run``) or a namespace of the operator.

The pages ask a ``Source`` the same questions either way: the recorded state (its state
database), what runs right now, what the reconcile loop last saw, what an apply would do now
(``plan``, the same answer as ``clawplane plan`` and the MCP ``plan`` tool), the audit log,
and the event and approval queues. ``LocalSource`` answers for a folder's supervisor;
``clawplane k8s run`` brings its own for a namespace (``k8s/dashboard.py``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import anyio

from clawplane.approvals import Approval
from clawplane.reconcile.oversight import Oversight
from clawplane.reconcile.queries import FolderQueries
from clawplane.reconcile.statusview import status_document
from clawplane.runtimes import TokenTable
from clawplane.state import StateDB, store
from clawplane.supervisor import PagesContext, live_reports
from clawplane.telemetry import CallSeries
from clawplane.workspace import Workspace, read_loop_status

__all__ = ["LocalSource", "Source"]


class Source(ABC):
    """What one dashboard shows and answers through (see the module docstring)."""

    ws: Workspace
    """Its folder (for the operator: the namespace's resources written out) and rendered files."""
    db: StateDB
    oversight: Oversight
    tokens: TokenTable
    """Who may log in: a token's ``read`` scope to look, ``approve`` to answer."""
    shutdown: anyio.Event
    """Set when the dashboard's process stops: live streams end then."""
    label: str
    """What the pages say they show (``folder /path`` or ``namespace ns``)."""

    @abstractmethod
    def status(self) -> dict[str, Any]:
        """The status document (``clawplane status --json``'s resources) as true now."""

    @abstractmethod
    def live(self) -> dict[str, dict[str, Any]]:
        """What each runtime reports right now, by server (empty where nothing runs here)."""

    @abstractmethod
    def sessions(self) -> dict[str, int]:
        """Client sessions by server."""

    @abstractmethod
    def endpoint(self) -> str:
        """The base URL its servers are reached at ('' when none)."""

    @abstractmethod
    def loop(self) -> dict[str, Any]:
        """What the reconcile loop last saw (``loop.json``'s fields: folderValid, diagnostics, ...)."""

    def traffic(self) -> CallSeries | None:
        """The last hour of calls per server and agent, where this process carries them (None: its
        servers' traffic goes elsewhere, as a namespace's goes through its bridge pods)."""
        return None

    def plan(self) -> dict[str, Any]:
        """What an apply would do now, planned in this process (raises ``QueryError``); a source that
        plans elsewhere overrides ``planned`` instead."""
        raise NotImplementedError

    async def planned(self, who: str | None = None) -> dict[str, Any]:
        """What an apply would do now, as the MCP ``plan`` tool answers (raises ``QueryError``);
        ``who`` asks (its share of the query worker is counted)."""
        return self.plan()

    def audit(self, limit: int = 50) -> dict[str, Any]:
        """Recent applies, newest first (as the MCP ``audit`` tool answers)."""
        return self.queries().audit(limit)

    def respond(self, approval_id: str, decision: str, *, by: str, reason: str) -> Approval:
        """Answer an approval (raises ``ApprovalError``)."""
        return self.oversight.respond(approval_id, decision, by=by, reason=reason)

    def queries(self) -> FolderQueries:
        """The shared question answerer over this source's folder and state."""
        found: FolderQueries | None = getattr(self, "_queries", None)
        if found is None:

            async def respond(approval_id: str, decision: str, by: str, reason: str) -> Approval:
                return self.respond(approval_id, decision, by=by, reason=reason)

            found = FolderQueries(self.ws, self.db, self.oversight, respond)
            self._queries = found
        return found


class LocalSource(Source):
    """A folder's supervisor: runtimes live from its backend, the loop from ``loop.json``."""

    def __init__(self, ctx: PagesContext) -> None:
        self.ctx = ctx
        self.ws, self.db, self.oversight, self.shutdown = ctx.ws, ctx.db, ctx.oversight, ctx.shutdown
        self.tokens = ctx.backend.tokens
        self.label = f"Folder {ctx.ws.folder}"

    def status(self) -> dict[str, Any]:
        """Recorded state, hosted servers overlaid with what the supervisor reports now."""
        return status_document(store.load_observed(self.db), live=self.live())

    def live(self) -> dict[str, dict[str, Any]]:
        """Reports of the supervisor's runtimes."""
        return live_reports(self.ctx.backend)

    def sessions(self) -> dict[str, int]:
        """Sessions of the hosted endpoint."""
        return self.ctx.backend.supervisor.session_counts()

    def endpoint(self) -> str:
        """The hosted endpoint's base URL."""
        endpoint = self.ctx.backend.supervisor.endpoint
        return endpoint.base_url if endpoint else ""

    def loop(self) -> dict[str, Any]:
        """The loop's state now: a page refreshed on a pass's event sees that pass, not the one before."""
        if self.ctx.loop is not None:
            return self.ctx.loop.to_dict()
        return read_loop_status(self.ws) or {}

    def traffic(self) -> CallSeries | None:
        """The series the supervisor's proxy feeds (None: it was started without one)."""
        telemetry = self.ctx.backend.supervisor.settings.telemetry
        return telemetry.find(CallSeries) if telemetry is not None else None

    async def planned(self, who: str | None = None) -> dict[str, Any]:
        """A fresh plan of the folder, made by the query worker (the loop's engine is not disturbed,
        and the event loop does not wait on it)."""
        return (await self.queries().plan(who=who)).value
