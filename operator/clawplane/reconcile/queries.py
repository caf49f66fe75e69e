"""The control plane's questions and answers as plain JSON-ready values (for MCP and dashboards).

``FolderQueries`` answers what the CLI answers, for callers that are not the CLI: what runs
(``status``), what the folder declares (``resources``, ``resource``), whether YAML is valid
(``validate``, diagnostics exactly as ``--format json``), what an apply would do now or with
some documents laid over the folder (``plan``), a field's documentation (``explain``), an
agent's tool catalog and skills, the event queue, the approval queue and the audit log.

Every answer is built from redacted data (specs, plans, runtime reports); bearer tokens are
scrubbed once more on the way out. A path from a caller must stay inside the folder. What a
caller can get wrong raises ``QueryError`` with the reason, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from clawplane.approvals import Approval, ApprovalError, held_actions, rules_of
from clawplane.diagnostics import format_json
from clawplane.events import MAX_PAGE, MAX_WAIT_MS
from clawplane.planning import render_plan
from clawplane.reconcile.engine import Engine, InvalidFolderError, Planned
from clawplane.reconcile.oversight import Oversight
from clawplane.reconcile.statusview import find_resource, folder_status
from clawplane.reconcile.workspace import Workspace
from clawplane.secrets import scrub_tokens
from clawplane.state import StateDB, StateError, store
from clawplane.validation import ValidationResult, validate_paths, validate_texts
from clawplane.validation.summary import summarize

__all__ = ["FolderQueries", "QueryError", "Responder", "plan_document", "scrubbed"]

Responder = Callable[[str, str, str, str], Awaitable[Approval]]
"""(approval id, ``approve``|``reject``, who, reason) → the answered request."""
SKILL_VIEWS = ("list", "check", "prompt")


class QueryError(Exception):
    """A question that cannot be answered as asked; the message says why and what to do."""


def scrubbed(value: Mapping[str, Any]) -> dict[str, Any]:
    """``value`` with every bearer token replaced, however deep."""
    return dict(json.loads(scrub_tokens(json.dumps(value, default=str))))


def plan_document(planned: Planned) -> dict[str, Any]:
    """A plan as the ``plan`` question answers it: JSON, ``clawplane plan``'s text, hash, held actions."""
    plan = planned.plan
    held = held_actions(plan, planned.desired, planned.observed, rules_of(planned.desired.gateway))
    doc = json.loads(plan.to_json())
    return scrubbed({
        "plan": doc, "text": render_plan(plan), "planHash": plan.plan_hash(),
        "hasChanges": plan.has_changes, "summary": plan.summary().model_dump(),
        "held": [h.to_dict() for h in held],
    })  # fmt: skip


class FolderQueries:
    """Answers about one folder (see the module docstring)."""

    def __init__(self, ws: Workspace, db: StateDB, oversight: Oversight, respond: Responder) -> None:
        self.ws = ws
        self.db = db
        self.oversight = oversight
        self._respond = respond
        self.engine = Engine(ws)  # its own caches: questions never disturb the loop's engine

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

    def _validated(self) -> ValidationResult:
        result = validate_paths([self.ws.folder], cache=self.engine.validation_cache)
        if not result.ok:
            raise QueryError(
                f"the folder does not validate ({len(result.diagnostics.errors)} error(s)); "
                "the validate tool lists them"
            )
        return result

    def resources(self, kind: str | None = None, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
        """What the folder declares (kind and label filters), each with its phase as last applied."""
        observed = store.load_observed(self.db)
        rows = []
        for item in self._validated().resources:
            res = item.resource
            if kind is not None and res.kind.lower() != kind.lower():
                continue
            if labels and any(res.metadata.labels.get(k) != v for k, v in labels.items()):
                continue
            record = observed.resources.get(res.key)
            rows.append({
                "key": res.key, "kind": res.kind, "name": res.name, "labels": dict(res.metadata.labels),
                "summary": summarize(res), "file": item.source.file, "line": item.source.line,
                "phase": record.phase if record is not None else "NotApplied",
            })  # fmt: skip
        return scrubbed({"resources": rows})

    def resource(self, name: str) -> dict[str, Any]:
        """One declared resource: its normalized spec (secrets redacted), file:line and status."""
        try:
            desired, _ = self.engine.load()
        except InvalidFolderError as exc:
            raise QueryError(f"the folder does not validate ({exc}); the validate tool lists why") from None
        matches = [d for d in desired.resources.values() if name in (d.key, d.name)]
        if len(matches) != 1:
            known = ", ".join(desired.resources) or "none"
            what = "several resources are" if matches else "no resource is"
            raise QueryError(f"{what} called {name!r}; use Kind/name (declared: {known})")
        d = matches[0]
        item = next(i for i in self._validated().resources if i.key == d.key)
        record = store.load_resource(self.db, d.key)
        return scrubbed({
            "key": d.key, "kind": d.kind, "name": d.name, "labels": dict(d.resource.metadata.labels),
            "spec": d.spec, "configHash": d.config_hash, "file": item.source.file, "line": item.source.line,
            "status": None if record is None else {"phase": record.phase, "conditions": record.conditions,
                                                   **record.status},
        })  # fmt: skip

    # -- validation and planning --------------------------------------------------------------
    def _inside(self, path: str) -> Path:
        folder = self.ws.folder.resolve()
        target = (folder / path).resolve()
        if target != folder and folder not in target.parents:
            raise QueryError(f"{path!r} is outside the folder {folder}; only its own files can be read")
        return target

    def _texts(self, documents: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        texts = []
        for i, doc in enumerate(documents):
            text, name = doc.get("text"), doc.get("file") or f"document-{i + 1}.yaml"
            if not isinstance(text, str) or not isinstance(name, str):
                raise QueryError(f"documents[{i}] needs a text (YAML) and may name its file")
            texts.append((str(self._inside(name)), text))
        return texts

    def validate(
        self, path: str | None = None, documents: Sequence[Mapping[str, Any]] | None = None
    ) -> dict[str, Any]:
        """Diagnostics of a path in the folder, or of YAML documents, as ``validate --format json``."""
        if (path is None) == (documents is None):
            raise QueryError("give either a path (in the folder) or documents (YAML text), not both")
        if documents is not None:
            result = validate_texts(self._texts(documents))
        else:
            target = self._inside(path or ".")
            if not target.exists():
                raise QueryError(f"no such file or folder in the folder: {path}")
            result = validate_paths([target])
        text = format_json(result.diagnostics, files=len(result.files), resources=len(result.resources))
        return scrubbed(json.loads(text))

    def plan(self, documents: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """What an apply would do now, or with ``documents`` laid over the folder (a dry run).

        A document replaces the folder's resource of the same kind and name; name its ``file``
        as it will be in the folder (paths inside it are relative to that file).
        """
        texts = self._texts(documents) if documents else None

        def overlay(result: ValidationResult) -> ValidationResult:
            assert texts is not None
            merged = validate_texts(texts, over=result, roots=[self.ws.folder])
            if not merged.ok:
                raise InvalidFolderError(merged.diagnostics)
            return merged

        try:
            planned = self.engine.plan(self.db, patch=overlay if texts else None)
        except InvalidFolderError as exc:
            diagnostics = [d.to_dict() for d in exc.diagnostics.sorted()]
            raise QueryError(
                f"the folder{' with the documents' if texts else ''} does not validate: "
                + "; ".join(f"{d['file']}:{d['line']}: {d['message']}" for d in diagnostics[:5])
            ) from None
        return plan_document(planned)

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
    def _rendered(self, agent: str) -> tuple[str, dict[str, str]]:
        try:
            desired, _ = self.engine.load()
        except InvalidFolderError as exc:
            raise QueryError(f"the folder does not validate ({exc})") from None
        files = self.engine.renderer.render(desired, self.engine.observe(self.db))
        agent_id = agent.strip().lower()
        if agent_id not in self.engine.renderer.snapshots:
            known = ", ".join(sorted(self.engine.renderer.snapshots)) or "none"
            raise QueryError(f"no agent {agent!r} in the folder (agents: {known})")
        return agent_id, files

    def agent_tools(self, agent: str) -> dict[str, Any]:
        """An agent's merged MCP tool catalog, as ``agents/<id>/tools.json`` has it."""
        agent_id, files = self._rendered(agent)
        tools = json.loads(files[f"agents/{agent_id}/tools.json"])
        return scrubbed({"agent": agent_id, "count": len(tools), "tools": tools})

    def agent_skills(self, agent: str, view: str = "list") -> dict[str, Any]:
        """An agent's skills: ``list`` (each skill's status), ``check`` (counts, reasons) or ``prompt``."""
        from clawplane.skills.report import check_document, list_document

        if view not in SKILL_VIEWS:
            raise QueryError(f"view must be one of {', '.join(SKILL_VIEWS)}")
        agent_id, _ = self._rendered(agent)
        snapshot = self.engine.renderer.snapshots[agent_id]
        diagnostics = self.engine.renderer.diagnostics
        if view == "prompt":
            prompt = snapshot.prompt
            return {"agent": agent_id, "text": prompt.text, "chars": prompt.chars,
                    "skills": list(prompt.skills)}  # fmt: skip
        doc = list_document(snapshot, diagnostics, eligible_only=False) if view == "list" else \
            check_document(snapshot, diagnostics)  # fmt: skip
        return scrubbed({"agent": agent_id, **doc})

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
