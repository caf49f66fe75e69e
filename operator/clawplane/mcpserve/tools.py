"""The control plane's MCP tools: names, schemas, the scope each needs, and what each answers.

Every tool answers with JSON, as ``structuredContent`` (checked against its ``outputSchema``)
and as the same JSON in a text block. Every tool needs the ``read`` scope; ``approvals_respond``
also needs ``approve``. Input schemas are strict (unknown arguments are refused).

The costly tools (validate, plan, the folder's resources, agents' catalogs) are answered by
the supervisor's query worker, within the calling consumer's share of it (``FolderQueries``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from clawplane.events import MAX_PAGE, MAX_WAIT_MS
from clawplane.reconcile.queries import MAX_DOCUMENTS, SKILL_VIEWS, Answer, FolderQueries

__all__ = ["APPROVE", "READ", "TOOLS", "Caller", "ToolDef"]

READ = "read"
APPROVE = "approve"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls: the consumer of the token (or the local user on stdio) and its scopes."""

    who: str
    scopes: frozenset[str]


Handler = Callable[[FolderQueries, Mapping[str, Any], Caller], Awaitable[dict[str, Any] | Answer]]
"""Answers a call: a value, or the worker's ``Answer`` (whose text is shown as the worker wrote it)."""


@dataclass(frozen=True, slots=True)
class ToolDef:
    """One tool of the control-plane server."""

    name: str
    title: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...]
    output: dict[str, Any]
    """The output schema's properties (the result is an object)."""
    handler: Handler
    scope: str = READ
    read_only: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def input_schema(self) -> dict[str, Any]:
        """The tool's JSON Schema for its arguments."""
        return {"type": "object", "properties": self.properties, "required": list(self.required),
                "additionalProperties": False}  # fmt: skip

    @property
    def output_schema(self) -> dict[str, Any]:
        """The tool's JSON Schema for its structured result."""
        return {"type": "object", "properties": self.output, "required": list(self.output)}


STR = {"type": "string"}
OBJ = {"type": "object"}
ARR = {"type": "array"}
DOCS = {
    "type": "array",
    "description": "YAML documents: each a text and the file it stands for (relative to the folder).",
    "items": {
        "type": "object",
        "properties": {"file": STR, "text": STR},
        "required": ["text"],
        "additionalProperties": False,
    },
    "minItems": 1,
    "maxItems": MAX_DOCUMENTS,
}


async def _status(q: FolderQueries, a: Mapping[str, Any], _c: Caller) -> dict[str, Any]:
    name = a.get("name")
    return await q.status(None if name is None else str(name))


async def _resources(q: FolderQueries, a: Mapping[str, Any], c: Caller) -> Answer:
    return await q.resources(a.get("kind"), a.get("labels"), who=c.who)


async def _resource(q: FolderQueries, a: Mapping[str, Any], c: Caller) -> Answer:
    return await q.resource(str(a["name"]), who=c.who)


async def _validate(q: FolderQueries, a: Mapping[str, Any], c: Caller) -> Answer:
    return await q.validate(a.get("path"), a.get("documents"), who=c.who)


async def _plan(q: FolderQueries, a: Mapping[str, Any], c: Caller) -> Answer:
    return await q.plan(a.get("documents"), who=c.who)


async def _explain(q: FolderQueries, a: Mapping[str, Any], _c: Caller) -> dict[str, Any]:
    return q.explain(str(a["field"]))


async def _agent_tools(q: FolderQueries, a: Mapping[str, Any], c: Caller) -> Answer:
    return await q.agent_tools(str(a["agent"]), who=c.who)


async def _agent_skills(q: FolderQueries, a: Mapping[str, Any], c: Caller) -> Answer:
    return await q.agent_skills(str(a["agent"]), str(a.get("view", "list")), who=c.who)


async def _events(q: FolderQueries, a: Mapping[str, Any], _c: Caller) -> dict[str, Any]:
    return await q.events(int(a.get("cursor", 0)), int(a.get("timeout_ms", 0)), int(a.get("limit", 20)))


async def _approvals(q: FolderQueries, a: Mapping[str, Any], _c: Caller) -> dict[str, Any]:
    return q.approvals(a.get("status", "pending"), a.get("kind"))


async def _respond(q: FolderQueries, a: Mapping[str, Any], c: Caller) -> dict[str, Any]:
    reason = str(a.get("reason", ""))
    return await q.respond(str(a["id"]), str(a["decision"]), by=f"mcp:{c.who}", reason=reason)


async def _audit(q: FolderQueries, a: Mapping[str, Any], _c: Caller) -> dict[str, Any]:
    return q.audit(int(a.get("limit", 20)))


TOOLS: tuple[ToolDef, ...] = (
    ToolDef(
        "status", "Status",
        "What runs now: every resource (or one) with its phase, conditions, tools, restarts and the "
        "last stderr lines, the supervisor and what its loop holds for approval.",
        {"name": {"type": "string", "description": "One resource: `notes` or `McpServer/notes`."}}, (),
        {"resources": ARR, "supervisor": OBJ}, _status,
    ),
    ToolDef(
        "resources_list", "List resources",
        "The resources the folder declares, with kind, labels, a one-line summary, file:line and phase.",
        {"kind": {"type": "string", "description": "Only this kind, e.g. McpServer."},
         "labels": {"type": "object", "additionalProperties": STR,
                    "description": "Only resources with these labels."}},
        (), {"resources": ARR}, _resources,
    ),
    ToolDef(
        "resource_get", "Get a resource",
        "One resource's normalized spec (secrets redacted), config hash, file:line and status.",
        {"name": {"type": "string", "description": "`notes` or `McpServer/notes`."}}, ("name",),
        {"key": STR, "spec": OBJ, "file": STR, "line": {"type": "integer"}}, _resource,
    ),
    ToolDef(
        "validate", "Validate",
        "Validate a path in the folder, or YAML documents, with every problem at file:line:col: the "
        "same JSON as `clawplane validate --format json` (over 512 KiB, the first diagnostics and a "
        "`truncated` count).",
        {"path": {"type": "string", "description": "A file or folder inside the folder."}, "documents": DOCS},
        (), {"valid": {"type": "boolean"}, "errors": {"type": "integer"}, "diagnostics": ARR}, _validate,
    ),
    ToolDef(
        "plan", "Plan",
        "Dry run: what `clawplane apply` would do now, or with the given YAML documents laid over the "
        "folder (a document replaces the resource of the same kind and name). Returns the plan JSON, "
        "its text, its hash and the actions an approval rule would hold. An answer over 512 KiB shows "
        "the first changes only (`truncated` says how many there are).",
        {"documents": DOCS}, (),
        {"plan": OBJ, "text": STR, "planHash": STR, "hasChanges": {"type": "boolean"}, "held": ARR}, _plan,
    ),
    ToolDef(
        "explain", "Explain a field",
        "A kind's or field's type, default, allowed values and description, like `kubectl explain`.",
        {"field": {"type": "string", "description": "KIND or KIND.field.path (mcpserver.spec.transport)."}},
        ("field",), {"kind": STR, "path": STR, "type": STR, "description": STR}, _explain,
    ),
    ToolDef(
        "agent_tools", "Agent tools",
        "An agent's merged MCP tool catalog, named `<server>__<tool>` as OpenClaw names them (tools.json).",
        {"agent": STR}, ("agent",), {"agent": STR, "count": {"type": "integer"}, "tools": ARR}, _agent_tools,
    ),
    ToolDef(
        "agent_skills", "Agent skills",
        "An agent's skills: `list` (every skill and why it is or is not ready), `check` (counts and "
        "reasons) or `prompt` (exactly the skills prompt text).",
        {"agent": STR, "view": {"type": "string", "enum": list(SKILL_VIEWS), "default": "list"}}, ("agent",),
        {"agent": STR}, _agent_skills,
    ),
    ToolDef(
        "events_wait", "Wait for events",
        "Reconcile events after a cursor (passes, phase changes, tool changes, diagnostics, approvals), "
        f"waiting up to timeout_ms (at most {MAX_WAIT_MS}) for the first. The newest 1,000 are kept; "
        "a `gap` says some after your cursor were dropped. Pass next_cursor back to continue.",
        {"cursor": {"type": "integer", "minimum": 0, "default": 0},
         "timeout_ms": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS, "default": 0},
         "limit": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 20}},
        (), {"events": ARR, "next_cursor": {"type": "integer"}}, _events,
    ),
    ToolDef(
        "approvals_list", "List approvals",
        "Approval requests, newest first: held plan actions (with their redacted diff) and held tool calls.",
        {"status": {"type": "string", "enum": ["pending", "approved", "rejected", "expired", "superseded",
                                               "applied", "cancelled", "all"], "default": "pending"},
         "kind": {"type": "string", "enum": ["plan", "tool"]}},
        (), {"approvals": ARR}, _approvals,
    ),
    ToolDef(
        "approvals_respond", "Answer an approval",
        "Approve or reject one pending request; approved plan actions are applied at once, an approved "
        "tool call runs. Needs the `approve` scope; every answer is audited.",
        {"id": STR, "decision": {"type": "string", "enum": ["approve", "reject"]}, "reason": STR},
        ("id", "decision"), {"approval": OBJ}, _respond, scope=APPROVE, read_only=False,
    ),
    ToolDef(
        "audit_list", "Audit log",
        "Recent applies and approval answers, newest first: who, git commit, plan hash and outcome.",
        {"limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 20}}, (), {"entries": ARR},
        _audit,
    ),
)  # fmt: skip
