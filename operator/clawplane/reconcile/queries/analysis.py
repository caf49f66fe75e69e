"""The questions about a folder that take work: validation, plans, its resources, agents' catalogs.

``FolderAnalysis`` answers them synchronously from the folder and the state database, as
plain JSON-ready values; ``FolderQueries`` has them answered in a worker process
(``queryworker``), so a large question never holds up the supervisor's event loop. A path from
a caller must stay inside the folder. What a caller can get wrong raises ``QueryError`` with the
reason, never a traceback.

Answers go back to the event loop, which parses them and hands them on, so ``answer_text``
bounds them: a plan or a validation (whose size a caller's documents decide) to
``MAX_ANSWER_BYTES``, cutting its changes or diagnostics (the cut is said in ``truncated``);
the other answers (whose size the folder decides) to ``MAX_LISTING_BYTES``, refused above.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from clawplane.approvals import held_actions, rules_of
from clawplane.diagnostics import format_json
from clawplane.planning import render_plan
from clawplane.reconcile.engine import Engine, InvalidFolderError, Planned
from clawplane.secrets import scrub_tokens
from clawplane.state import StateDB, store
from clawplane.validation import ValidationResult, validate_paths, validate_texts
from clawplane.validation.summary import summarize
from clawplane.workspace import Workspace

__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_DOCUMENTS",
    "MAX_LISTING_BYTES",
    "SKILL_VIEWS",
    "FolderAnalysis",
    "QueryError",
    "answer_text",
    "plan_document",
    "scrubbed",
]

SKILL_VIEWS = ("list", "check", "prompt")
MAX_ANSWER_BYTES: Final = 512 * 1024
"""The largest plan or validation handed back to the event loop (parsing it there must stay quick)."""
MAX_LISTING_BYTES: Final = 2 * 1024 * 1024
"""The largest other answer (a folder's resources, an agent's catalog)."""
MAX_DOCUMENTS: Final = 256
"""How many documents one ``validate`` or ``plan`` question may lay over the folder."""
_TEXT_CUT = "\n… (cut: the answer is limited to {limit} KiB; `clawplane plan {folder}` shows all of it)\n"


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


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def _fits(text: str, limit: int) -> bool:
    return len(text.encode("utf-8")) <= limit


def _cut_plan(doc: dict[str, Any], limit: int, folder: str) -> str:
    """The plan answer within ``limit`` bytes: the first changes and outputs that fit, noops left out."""
    plan = dict(doc["plan"])
    changes = [c for c in plan.get("changes") or () if c.get("action") != "noop"]
    outputs = [c for c in plan.get("outputs") or () if c.get("action") != "noop"]
    head = str(doc.get("text", ""))[: limit // 4]
    shown_text = head[: head.rfind("\n") + 1] + _TEXT_CUT.format(limit=limit // 1024, folder=folder)
    keep = max(len(changes), len(outputs))
    while True:
        cut = {
            **doc,
            "plan": {**plan, "changes": changes[:keep], "outputs": outputs[:keep]},
            "text": shown_text,
            "truncated": {
                "changes": len(changes), "outputs": len(outputs),
                "shownChanges": min(keep, len(changes)), "shownOutputs": min(keep, len(outputs)),
                "why": f"the whole answer is over {limit // 1024} KiB; noop entries are left out and only "
                       f"the first changes are shown; `clawplane plan {folder}` shows all of them",
            },
        }  # fmt: skip
        answer = _pretty(cut)
        if _fits(answer, limit) or keep == 0:
            return answer
        keep //= 2


def _cut_validation(doc: dict[str, Any], limit: int, folder: str) -> str:
    """The validation answer within ``limit`` bytes: counts kept, the first diagnostics that fit."""
    diagnostics = list(doc.get("diagnostics") or ())
    keep = len(diagnostics)
    while True:
        cut = {**doc, "diagnostics": diagnostics[:keep], "truncated": {
            "diagnostics": len(diagnostics), "shown": keep,
            "why": f"the whole answer is over {limit // 1024} KiB; `clawplane validate {folder}` lists all",
        }}  # fmt: skip
        answer = _pretty(cut)
        if _fits(answer, limit) or keep == 0:
            return answer
        keep //= 2


def answer_text(op: str, doc: dict[str, Any], *, folder: str, limit: int = MAX_ANSWER_BYTES) -> str:
    """``doc`` as the JSON text handed back (indented, as the MCP tools show it): a plan or a validation
    cut to ``limit`` bytes, another answer refused over ``MAX_LISTING_BYTES``.

    Raises:
        QueryError: An answer that cannot be cut is too large.
    """
    if op not in ("plan", "validate"):
        limit = max(limit, MAX_LISTING_BYTES)
    # The compact form is measured first (the C encoder): an answer over the limit compact is cut
    # without first being written out indented, which takes seconds for a large plan.
    text = json.dumps(doc, ensure_ascii=False, sort_keys=True, default=str)
    if _fits(text, limit):
        text = _pretty(doc)
    if _fits(text, limit):
        return text
    if op == "plan":
        return _cut_plan(doc, limit, folder)
    if op == "validate":
        return _cut_validation(doc, limit, folder)
    size = len(text.encode("utf-8")) // 1024
    raise QueryError(
        f"the answer is {size} KiB, over the {limit // 1024} KiB one answer may be; ask for less (a kind, a "
        f"label, one resource) or use the CLI in {folder}"
    )


class FolderAnalysis:
    """Answers about one folder that take work (see the module docstring)."""

    def __init__(self, ws: Workspace, db: StateDB) -> None:
        self.ws = ws
        self.db = db
        self.engine = Engine(ws)  # its own caches: questions never disturb the loop's engine

    def _validated(self) -> ValidationResult:
        result = validate_paths([self.ws.folder], cache=self.engine.validation_cache)
        if not result.ok:
            raise QueryError(
                f"the folder does not validate ({len(result.diagnostics.errors)} error(s)); "
                "the validate tool lists them"
            )
        return result

    # -- what is declared ---------------------------------------------------------------------
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

    def agent_ids(self) -> dict[str, Any]:
        """The ids of the folder's agents (none while it does not validate)."""
        try:
            desired, _ = self.engine.load()
        except InvalidFolderError:
            return {"agents": []}
        return {"agents": sorted(a.name.lower() for a in desired.agent_models)}

    # -- validation and planning --------------------------------------------------------------
    def _inside(self, path: str) -> Path:
        folder = self.ws.folder.resolve()
        target = (folder / path).resolve()
        if target != folder and folder not in target.parents:
            raise QueryError(f"{path!r} is outside the folder {folder}; only its own files can be read")
        return target

    def _texts(self, documents: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        if len(documents) > MAX_DOCUMENTS:
            raise QueryError(
                f"{len(documents)} documents is more than the {MAX_DOCUMENTS} one question may lay over the "
                "folder; put several YAML documents in one text (separated by ---)"
            )
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

    # -- one entry point for the worker -------------------------------------------------------
    def answer(self, op: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to question ``op`` with ``args`` (the worker's one entry point).

        Raises:
            QueryError: The question cannot be answered as asked.
        """
        if op == "validate":
            return self.validate(args.get("path"), args.get("documents"))
        if op == "plan":
            return self.plan(args.get("documents"))
        if op == "resources":
            return self.resources(args.get("kind"), args.get("labels"))
        if op == "resource":
            return self.resource(str(args["name"]))
        if op == "agent_tools":
            return self.agent_tools(str(args["agent"]))
        if op == "agent_skills":
            return self.agent_skills(str(args["agent"]), str(args.get("view", "list")))
        if op == "agent_ids":
            return self.agent_ids()
        raise QueryError(f"no question {op!r}")
