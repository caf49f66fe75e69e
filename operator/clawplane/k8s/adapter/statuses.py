"""The ``.status`` of each custom resource, from the engine's records and this pass's problems.

``observedGeneration`` is the generation whose spec is running: a resource that fell
back to its last accepted spec reports that older generation, with ``Accepted=False``
saying why the new one was refused. Conditions say what is true in the cluster:
a child the API server refused is ``ChildRejected`` (its message verbatim), a foreign
object in the way is ``Conflict``; a remote or consumer-run server is ``Programmed``
once it is in openclaw.json, whether or not the operator could reach it; ``toolCount``
counts the ``tools`` listed beside it; an Agent is Ready only when its servers are.
"""

from __future__ import annotations

from typing import Any

from clawplane.k8s.adapter.materialize import Problem
from clawplane.k8s.objects.converge import ChildProblem
from clawplane.reconcile.conditions import Cond, merge
from clawplane.state import ResourceRecord, ToolRecord

STATUS_KEYS = (
    "observedGeneration",
    "phase",
    "conditions",
    "configHash",
    "tools",
    "toolCount",
    "filteredTools",
    "restarts",
    "endpoint",
    "runtime",
    "skills",
    "eligibleSkills",
    "promptChars",
    "promptFormat",
    "snapshotHash",
    "api",
    "models",
    "modelCount",
    "missingModels",
    "probe",
    "lastError",
    "message",
)


def _set(conditions: list[dict[str, Any]], cond: Cond, generation: int) -> list[dict[str, Any]]:
    """``conditions`` with ``cond`` replacing the one of its type (transition time kept if unchanged)."""
    prior = [c for c in conditions if c["type"] == cond.type]
    fresh = merge(prior, [cond], generation=generation)[0]
    if not prior:
        return [*conditions, fresh]
    return [fresh if c["type"] == cond.type else c for c in conditions]


def _rejected(problem: Problem, generation: int, prior: list[dict[str, Any]]) -> dict[str, Any]:
    refs = problem.reason == "RefNotFound"
    conds = [
        Cond("Accepted", refs, "Valid" if refs else "Invalid", "" if refs else problem.message),
        Cond(
            "ResolvedRefs",
            not refs,
            "AllResolved" if not refs else "RefNotFound",
            problem.message if refs else "",
        ),
        Cond("Programmed", False, problem.reason, problem.message),
        Cond("Ready", False, problem.reason, problem.message),
    ]
    return {
        "observedGeneration": generation,
        "phase": "Invalid" if not refs else "Pending",
        "conditions": merge(prior, conds, generation=generation),
        "message": problem.message,
    }


def build_status(
    cr: dict[str, Any],
    record: ResourceRecord | None,
    *,
    problem: Problem | None,
    accepted_generation: int | None,
    secret_problems: list[str],
    tools: list[ToolRecord],
    child_problem: ChildProblem | None = None,
    servers: dict[str, ResourceRecord | None] | None = None,
    last_good: str | None = None,
) -> dict[str, Any]:
    """The status to write for ``cr`` (``servers``: an Agent's servers and their records).

    ``last_good`` says which ConfigMap keeps serving the resource's last good content while
    a reference is broken: ``ResolvedRefs=False``, but ``Programmed`` stays True (LastGood).
    """
    generation = int(cr["metadata"].get("generation") or 1)
    prior = list((cr.get("status") or {}).get("conditions") or [])
    if record is None or accepted_generation is None:
        assert problem is not None or record is None
        refused = _rejected(problem or Problem("Invalid", "not reconciled yet"), generation, prior)
        if last_good is not None and problem is not None and problem.reason == "RefNotFound":
            serving = Cond("Programmed", True, "LastGood", last_good)
            refused["conditions"] = _set(refused["conditions"], serving, generation)
            refused["message"] = f"{problem.message}; {last_good}"
        return refused
    running = accepted_generation
    conditions = [{**c, "observedGeneration": running} for c in _carry(prior, record.conditions)]
    status: dict[str, Any] = {
        "observedGeneration": running,
        "phase": record.phase,
        "configHash": record.config_hash,
        **{k: v for k, v in record.status.items() if k in STATUS_KEYS},
    }
    if record.kind == "McpServer":
        status["tools"] = sorted(t.safe_name for t in tools)
        status["toolCount"] = len(status["tools"])
        conditions = _rendered(conditions, record, running)
    if record.kind == "Agent" and servers:
        conditions = _servers_ready(conditions, servers, running)
        status["phase"] = "Ready" if _is_true(conditions, "Ready") else "Pending"
    if last_good is not None:  # this resource is fine; what it renders lost a reference elsewhere
        conditions = _set(conditions, Cond("ResolvedRefs", False, "RefNotFound", last_good), running)
        conditions = _set(conditions, Cond("Programmed", True, "LastGood", last_good), running)
        conditions = _set(conditions, Cond("Ready", False, "RefNotFound", last_good), running)
        status["message"] = last_good
    if child_problem is not None:
        for ctype in ("Programmed", "Ready"):
            conditions = _set(
                conditions, Cond(ctype, False, child_problem.reason, child_problem.message), running
            )
        status["phase"] = "Failed"
        status["message"] = child_problem.message
    if secret_problems:
        message = "; ".join(secret_problems)
        conditions = _set(conditions, Cond("ResolvedRefs", False, "SecretNotFound", message), running)
        status["message"] = message
    if problem is not None:
        conditions = _set(conditions, Cond("Accepted", False, problem.reason, problem.message), generation)
        status["message"] = (
            f"running generation {running}; generation {generation} refused: {problem.message}"
        )
    status["conditions"] = conditions
    return status


def _is_true(conditions: list[dict[str, Any]], ctype: str) -> bool:
    return any(c["type"] == ctype and c["status"] == "True" for c in conditions)


def _rendered(
    conditions: list[dict[str, Any]], record: ResourceRecord, generation: int
) -> list[dict[str, Any]]:
    """A remote or consumer-run server is programmed once rendered, even when the operator cannot reach it."""
    runtime = record.status.get("runtime")
    if runtime not in ("remote", "probed") or _is_true(conditions, "Programmed"):
        return conditions
    reached = next((c.get("message") for c in conditions if c["type"] == "Ready"), "") or ""
    detail = f"; the operator could not reach it: {reached}" if reached else ""
    return _set(
        conditions, Cond("Programmed", True, "Rendered", f"rendered into openclaw.json{detail}"), generation
    )


def _servers_ready(
    conditions: list[dict[str, Any]], servers: dict[str, ResourceRecord | None], generation: int
) -> list[dict[str, Any]]:
    """An Agent is Ready when every server it uses is Ready (disabled ones do not count)."""
    waiting = [
        f"McpServer {name} is {(rec.phase if rec else 'not reconciled yet')}"
        for name, rec in sorted(servers.items())
        if rec is None or rec.phase not in ("Ready", "Disabled")
    ]
    if not waiting:
        return conditions
    return _set(conditions, Cond("Ready", False, "ServersNotReady", "; ".join(waiting)), generation)


def _carry(prior: list[dict[str, Any]], now: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Engine conditions, keeping the cluster's transition times when the status did not change."""
    before = {c.get("type"): c for c in prior}
    out = []
    for cond in now:
        old = before.get(cond["type"])
        if old is not None and old.get("status") == cond["status"] and old.get("lastTransitionTime"):
            cond = {**cond, "lastTransitionTime": old["lastTransitionTime"]}
        out.append(cond)
    return out


def with_condition(status: dict[str, Any], cr: dict[str, Any], approved: Cond | None) -> dict[str, Any]:
    """``status`` with the resource's ``Approved`` condition: this pass's, else an earlier True one.

    A held resource the plan never applied (a held create) is ``Held``: accepted, and neither
    programmed nor ready, for the reason its request gives.
    """
    prior = next((c for c in (cr.get("status") or {}).get("conditions") or () if c.get("type") == "Approved"),
                 None)  # fmt: skip
    if approved is None and prior is not None and prior.get("status") == "True":
        approved = Cond("Approved", True, str(prior.get("reason")), str(prior.get("message") or ""))
    if approved is None:
        return status
    generation = int(status.get("observedGeneration") or cr["metadata"].get("generation") or 1)
    before = [c for c in (cr.get("status") or {}).get("conditions") or () if c.get("type") == "Approved"]
    fresh = merge(before, [approved], generation=generation)[0]
    conditions = [c for c in status.get("conditions") or () if c.get("type") != "Approved"]
    if not approved.status and "configHash" not in status:
        # Never applied (a held create): valid, and not programmed because it waits, not "Invalid".
        held = [Cond("Accepted", True, "Valid"), Cond("Programmed", False, approved.reason, approved.message),
                Cond("Ready", False, approved.reason, approved.message)]  # fmt: skip
        conditions = [c for c in conditions if c.get("type") not in {h.type for h in held}]
        prior = list((cr.get("status") or {}).get("conditions") or ())
        conditions = [*merge(prior, held, generation=generation), *conditions]
        return {**status, "phase": "Held", "message": approved.message, "conditions": [*conditions, fresh]}
    return {**status, "conditions": [*conditions, fresh]}


def status_patch(current: dict[str, Any] | None, wanted: dict[str, Any]) -> dict[str, Any] | None:
    """A merge patch from ``current`` to ``wanted`` over the keys clawplane owns; None if equal."""
    current = current or {}
    patch: dict[str, Any] = {k: v for k, v in wanted.items() if current.get(k) != v}
    for key in STATUS_KEYS:
        if key in current and key not in wanted:
            patch[key] = None
    return patch or None
