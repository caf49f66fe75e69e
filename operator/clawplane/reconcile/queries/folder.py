"""The control plane's questions and answers as plain JSON-ready values (for MCP and dashboards).

``FolderQueries`` answers what the CLI answers, for callers that are not the CLI: what runs
(``status``), what the folder declares (``resources``, ``resource``), whether YAML is valid
(``validate``, diagnostics exactly as ``--format json``), what an apply would do now or with
some documents laid over the folder (``plan``), a field's documentation (``explain``), an
agent's tool catalog and skills, the event queue, the approval queue and the audit log.

The questions that take work (everything ``analysis.FolderAnalysis`` answers) are answered in
a worker process (``offload.QueryWorker``): the event loop that serves every hosted server and
``/healthz`` only waits for them. Each asker (``who``) has its share of that worker; beyond it a
question is refused with ``offload.BusyError``, which says when to retry.

Every answer is built from redacted data (specs, plans, runtime reports); bearer tokens are
scrubbed once more on the way out. What a caller can get wrong raises ``QueryError`` with the
reason, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from clawplane.approvals import Approval, ApprovalError
from clawplane.events import MAX_PAGE, MAX_WAIT_MS
from clawplane.reconcile.oversight import Oversight
from clawplane.reconcile.queries.analysis import SKILL_VIEWS, QueryError, plan_document, scrubbed
from clawplane.reconcile.queries.offload import Answer, BusyError, QueryWorker
from clawplane.reconcile.statusview import find_resource, folder_status
from clawplane.state import StateDB, StateError, store
from clawplane.workspace import Workspace

__all__ = [
    "SKILL_VIEWS",
    "Answer",
    "BusyError",
    "FolderQueries",
    "QueryError",
    "Responder",
    "plan_document",
    "scrubbed",
]

Responder = Callable[[str, str, str, str], Awaitable[Approval]]
"""(approval id, ``approve``|``reject``, who, reason) → the answered request."""


class FolderQueries:
    """Answers about one folder (see the module docstring)."""

    def __init__(
        self,
        ws: Workspace,
        db: StateDB,
        oversight: Oversight,
        respond: Responder,
        *,
        worker: QueryWorker | None = None,
    ) -> None:
        self.ws = ws
        self.db = db
        self.oversight = oversight
        self._respond = respond
        self.worker = worker or QueryWorker(ws)

    async def aclose(self) -> None:
        """End the worker process (the server is stopping)."""
        await self.worker.aclose()

    # -- what runs and what is declared -------------------------------------------------------
    async def status(self, name: str | None = None) -> dict[str, Any]:
        """The status document (``clawplane status --json``), with only resource ``name`` if given."""
        try:
            doc = await folder_status(self.ws)
        except StateError as exc:
            raise QueryError(str(exc)) from None
        if name is not None:
            entry = find_resource(doc, name)
            if entry is None:
                known = ", ".join(r["key"] for r in doc["resources"]) or "none"
                raise QueryError(f"no resource {name!r} in the state of this folder (known: {known})")
            doc["resources"] = [entry]
        return scrubbed(doc)

    async def ask(self, op: str, args: Mapping[str, Any], *, who: str | None = None) -> Answer:
        """A costly question (``analysis.FolderAnalysis.answer``), answered by the worker.

        Raises:
            BusyError: ``who`` asked more than its share, or the worker's queue is full.
            QueryError: It cannot be answered as asked (or failed, or ran out of time).
        """
        return await self.worker.ask(op, args, who=who)

    async def resources(
        self, kind: str | None = None, labels: Mapping[str, str] | None = None, *, who: str | None = None
    ) -> Answer:
        """What the folder declares (kind and label filters), each with its phase as last applied."""
        return await self.ask("resources", {"kind": kind, "labels": dict(labels or {}) or None}, who=who)

    async def resource(self, name: str, *, who: str | None = None) -> Answer:
        """One declared resource: its normalized spec (secrets redacted), file:line and status."""
        return await self.ask("resource", {"name": name}, who=who)

    async def agent_ids(self, *, who: str | None = None) -> tuple[str, ...]:
        """The ids of the folder's agents (none while it does not validate)."""
        answer = await self.ask("agent_ids", {}, who=who)
        return tuple(str(a) for a in answer.value.get("agents", ()))

    # -- validation and planning --------------------------------------------------------------
    async def validate(
        self,
        path: str | None = None,
        documents: Sequence[Mapping[str, Any]] | None = None,
        *,
        who: str | None = None,
    ) -> Answer:
        """Diagnostics of a path in the folder, or of YAML documents, as ``validate --format json``."""
        args = {"path": path, "documents": None if documents is None else [dict(d) for d in documents]}
        return await self.ask("validate", args, who=who)

    async def plan(
        self, documents: Sequence[Mapping[str, Any]] | None = None, *, who: str | None = None
    ) -> Answer:
        """What an apply would do now, or with ``documents`` laid over the folder (a dry run).

        A document replaces the folder's resource of the same kind and name; name its ``file``
        as it will be in the folder (paths inside it are relative to that file).
        """
        args = {"documents": None if documents is None else [dict(d) for d in documents]}
        return await self.ask("plan", args, who=who)

    def explain(self, target: str) -> dict[str, Any]:
        """A kind's or field's type, default, allowed values and description (``clawplane explain``)."""
        from clawplane.schema.explain import ExplainError, explain

        try:
            info = explain(target)
        except ExplainError as exc:
            hint = f"; did you mean: {', '.join(exc.suggestions)}?" if exc.suggestions else ""
            raise QueryError(f"{exc}{hint}") from None
        return dict(json.loads(json.dumps(info.to_dict(), default=str)))

    # -- agents -------------------------------------------------------------------------------
    async def agent_tools(self, agent: str, *, who: str | None = None) -> Answer:
        """An agent's merged MCP tool catalog, as ``agents/<id>/tools.json`` has it."""
        return await self.ask("agent_tools", {"agent": agent}, who=who)

    async def agent_skills(self, agent: str, view: str = "list", *, who: str | None = None) -> Answer:
        """An agent's skills: ``list`` (each skill's status), ``check`` (counts, reasons) or ``prompt``."""
        if view not in SKILL_VIEWS:
            raise QueryError(f"view must be one of {', '.join(SKILL_VIEWS)}")
        return await self.ask("agent_skills", {"agent": agent, "view": view}, who=who)

    # -- events, approvals, audit -------------------------------------------------------------
    async def events(self, cursor: int = 0, timeout_ms: int = 0, limit: int = 20) -> dict[str, Any]:
        """Events after ``cursor``, waiting up to ``timeout_ms`` (at most 60000) for the first."""
        if timeout_ms < 0 or timeout_ms > MAX_WAIT_MS:
            raise QueryError(f"timeout_ms must be between 0 and {MAX_WAIT_MS}")
        if limit < 1 or limit > MAX_PAGE:
            raise QueryError(f"limit must be between 1 and {MAX_PAGE}")
        page = await self.oversight.events.wait(max(cursor, 0), timeout=timeout_ms / 1000, limit=limit)
        return page.to_dict()

    def approvals(self, status: str | None = "pending", kind: str | None = None) -> dict[str, Any]:
        """Approval requests, newest first: pending ones by default, ``status="all"`` for every one."""
        statuses = None if status in (None, "all") else (status,)
        try:
            found = self.oversight.approvals.find(statuses=statuses, kind=kind)
        except ValueError as exc:
            raise QueryError(str(exc)) from None
        return {"approvals": [a.to_dict() for a in found]}

    async def respond(self, approval_id: str, decision: str, *, by: str, reason: str = "") -> dict[str, Any]:
        """Approve or reject a pending request (audited as ``by``)."""
        if decision not in ("approve", "reject"):
            raise QueryError("decision must be approve or reject")
        try:
            done = await self._respond(approval_id, decision, by, reason)
        except ApprovalError as exc:
            raise QueryError(str(exc)) from None
        return {"approval": done.to_dict()}

    def audit(self, limit: int = 20) -> dict[str, Any]:
        """Recent applies and approval answers, newest first: who, commit, plan hash, outcome."""
        entries = store.audit_entries(self.db, limit=max(1, min(limit, 200)))
        rows = [{
            "id": e.id, "startedAt": e.started_at, "finishedAt": e.finished_at, "user": e.user,
            "host": e.host, "commit": e.git_commit, "planHash": e.plan_hash, "actions": e.actions,
            "outcome": e.outcome, "detail": e.detail,
        } for e in entries]  # fmt: skip
        return scrubbed({"entries": rows})
