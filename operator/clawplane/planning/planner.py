"""(desired, observed) → Plan. Pure: no I/O, no clock except the timestamp passed in.

Rules, per resource key:
- not observed → create;
- config hash changed → replace for a hosted or probed server (its process must
  restart), update for everything else; the reason says whether spec fields or only
  referenced secrets changed;
- unchanged, but a hosted runtime is missing, crashed or its supervisor is gone →
  replace; a paused server whose retry time has passed → replace;
- unchanged, but the server's tool surface drifted from what catalogs were built
  from, or was never discovered → update;
- unchanged, but a model provider's last probe failed → update (probe again);
- observed but no longer declared → delete.
Outputs (rendered files) are compared by content hash. Model references that a probed
provider's listing lacks become warnings (``planning.models``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from clawplane.desired import DesiredResource, DesiredState, RuntimeMode
from clawplane.planning.diff import field_changes
from clawplane.planning.models import listed_models, model_refs, model_warnings
from clawplane.planning.plan import ActionType, Change, FieldChange, Plan, PlanWarning, Reason, ReasonCode
from clawplane.state import ObservedState, ResourceRecord, ToolRecord

R = ReasonCode
CRASHED_PHASES = frozenset({"crashed", "failed", "backoff", "stopped"})


class PlanMemo:
    """What a long-lived planner may reuse between plans.

    A new resource's change (a create with its field diff) depends on its compiled form
    alone, and the compiler hands back the same object for an unchanged resource. So does
    an applied resource's no-op (it was applied at the compiled form's hash); its reasons to
    act, read from the observed state, are found again each plan.
    """

    def __init__(self) -> None:
        self.created: dict[str, tuple[DesiredResource, Change]] = {}
        self.steady: dict[str, tuple[DesiredResource, Change]] = {}
        """No-op changes: a no-op's hashes are both the compiled form's."""
        self.outputs: dict[tuple[str, str | None, str | None], Change] = {}


def make_plan(
    desired: DesiredState,
    observed: ObservedState,
    *,
    outputs: Mapping[str, str],
    created_at: str,
    now: datetime | None = None,
    mass_delete_share: float = 0.5,
    memo: PlanMemo | None = None,
) -> Plan:
    """Everything apply must do to make ``observed`` match ``desired``."""
    moment = now or datetime.now(UTC)
    created: dict[str, tuple[DesiredResource, Change]] = {}
    steady: dict[str, tuple[DesiredResource, Change]] = {}
    changes = []
    for key, d in desired.resources.items():
        prior = observed.resources.get(key)
        if prior is None:
            hit = memo.created.get(key) if memo is not None else None
            if hit is None or hit[0] is not d:
                hit = (d, _resource_change(d, None, observed, moment))
            created[key] = hit
            change = hit[1]
        else:
            kept = memo.steady.get(key) if memo is not None else None
            noop = kept[1] if kept is not None and kept[0] is d else None
            change = _resource_change(d, prior, observed, moment, noop)
            if change.action is ActionType.NOOP:
                steady[key] = (d, change)
        changes.append(change)
    if memo is not None:
        memo.created, memo.steady = created, steady
    removed = Reason(code=R.REMOVED, message="removed from the folder")
    deleted = [
        Change(
            key=key,
            kind=rec.kind,
            name=rec.name,
            action=ActionType.DELETE,
            reasons=[removed],
            hash_before=rec.config_hash,
        )
        for key, rec in observed.resources.items()
        if key not in desired.resources
    ]
    managed = len(observed.resources)
    mass = bool(deleted) and (len(deleted) == managed or len(deleted) > mass_delete_share * managed)
    return Plan(
        created_at=created_at,
        folder=str(desired.folder),
        desired_fingerprint=desired.fingerprint,
        observed_fingerprint=observed.fingerprint(),
        changes=[*changes, *deleted],
        outputs=_output_changes(outputs, observed.outputs, memo),
        mass_delete=mass,
        warnings=_warnings(desired, observed),
    )


def _warnings(desired: DesiredState, observed: ObservedState) -> list[PlanWarning]:
    listed = listed_models(observed)
    if not listed:
        return []  # each warning is about what a probed provider lists: none was
    refs = [ref for d in desired.resources.values() for ref in model_refs(d.key, d.spec)]
    declared = {p.name.lower(): p.spec.model_ids for p in desired.providers}
    return model_warnings(refs, listed, declared)


def _resource_change(
    d: DesiredResource,
    prior: ResourceRecord | None,
    observed: ObservedState,
    now: datetime,
    noop: Change | None = None,
) -> Change:
    """The change for one resource; ``noop``: its no-op from the last plan, made from the same inputs."""
    base = {"key": d.key, "kind": d.kind, "name": d.name, "hash_after": d.config_hash}
    if prior is None:
        return Change(
            **base,
            action=ActionType.CREATE,
            reasons=[Reason(code=R.NEW, message="new resource")],
            diff=[FieldChange(path=f"spec.{k}", op="added", after=v) for k, v in d.spec.items()],
        )
    base["hash_before"] = prior.config_hash
    restarts = d.runtime in (RuntimeMode.HOSTED, RuntimeMode.PROBED)
    if prior.config_hash != d.config_hash:
        diff = field_changes(prior.spec, d.spec)
        reasons = _hash_reasons(d, prior, diff)
        action = ActionType.REPLACE if restarts else ActionType.UPDATE
        return Change(**base, action=action, reasons=reasons, diff=diff)
    reasons = _steady_reasons(d, prior, observed, now)
    if not reasons:
        return noop if noop is not None else Change(**base, action=ActionType.NOOP)
    replace = any(r.code in (R.RUNTIME_MISSING, R.RUNTIME_CRASHED, R.RUNTIME_PAUSED_EXPIRED) for r in reasons)
    return Change(**base, action=ActionType.REPLACE if replace else ActionType.UPDATE, reasons=reasons)


def _steady_reasons(
    d: DesiredResource, prior: ResourceRecord, observed: ObservedState, now: datetime
) -> list[Reason]:
    """Why a resource applied at its current hash still needs acting on."""
    return _runtime_reasons(d, observed, now) + _tool_reasons(d, observed) + _probe_reasons(d, prior)


def _hash_reasons(d: DesiredResource, prior: ResourceRecord, diff: list[FieldChange]) -> list[Reason]:
    reasons = []
    if diff:
        fields = ", ".join(sorted({c.path for c in diff}))
        reasons.append(Reason(code=R.SPEC_CHANGED, message=f"spec fields changed: {fields}"))
    before = prior.status.get("digests", {})
    if d.digests.get("secrets") != before.get("secrets"):
        reasons.append(Reason(code=R.SECRET_CHANGED, message="a referenced secret changed"))
    if d.digests.get("skills") != before.get("skills"):
        reasons.append(Reason(code=R.SKILLS_CHANGED, message="skill files or requirements changed"))
    return reasons or [Reason(code=R.SPEC_CHANGED, message="configuration changed")]


def _runtime_reasons(d: DesiredResource, observed: ObservedState, now: datetime) -> list[Reason]:
    if d.runtime is not RuntimeMode.HOSTED:
        return []
    runtime = observed.runtimes.get(d.name)
    if runtime is None or not observed.supervisor_alive:
        return [Reason(code=R.RUNTIME_MISSING, message="runtime is not running")]
    if runtime.phase in CRASHED_PHASES:
        detail = f": {runtime.last_error}" if runtime.last_error else ""
        return [Reason(code=R.RUNTIME_CRASHED, message=f"runtime is {runtime.phase}{detail}")]
    if runtime.paused_until and _parse(runtime.paused_until) <= now:
        return [Reason(code=R.RUNTIME_PAUSED_EXPIRED, message="pause expired; reconnect")]
    return []


def _tool_reasons(d: DesiredResource, observed: ObservedState) -> list[Reason]:
    if d.runtime is RuntimeMode.NONE:
        return []
    current = observed.tools_observed.get(d.name)
    applied = observed.tools_applied.get(d.name)
    if current is None:
        return [Reason(code=R.NOT_DISCOVERED, message="tools not discovered yet")]
    if applied is not None and _surface(applied) != _surface(current):
        return [Reason(code=R.TOOLS_DRIFTED, message=f"tools drifted upstream ({_drift(applied, current)})")]
    return []


def _probe_reasons(d: DesiredResource, prior: ResourceRecord) -> list[Reason]:
    if d.kind != "ModelProvider" or prior.phase != "Failed":
        return []
    error = prior.status.get("lastError") or "the last probe failed"
    return [Reason(code=R.MODELS_NOT_DISCOVERED, message=f"models not discovered: {error}")]


def _surface(tools: tuple[ToolRecord, ...]) -> dict[str, str]:
    return {t.raw_name: t.schema_hash for t in tools}


def _drift(before: tuple[ToolRecord, ...], after: tuple[ToolRecord, ...]) -> str:
    old, new = _surface(before), _surface(after)
    parts = [f"+{n}" for n in sorted(new.keys() - old.keys())]
    parts += [f"-{n}" for n in sorted(old.keys() - new.keys())]
    parts += [f"~{n}" for n in sorted(old.keys() & new.keys()) if old[n] != new[n]]
    return ", ".join(parts)


def _output_changes(
    desired: Mapping[str, str], observed: Mapping[str, str], memo: PlanMemo | None
) -> list[Change]:
    out = []
    known = memo.outputs if memo is not None else {}
    fresh: dict[tuple[str, str | None, str | None], Change] = {}
    for path in sorted(set(desired) | set(observed)):
        new, old = desired.get(path), observed.get(path)
        hit = known.get((path, new, old))
        if hit is not None:
            fresh[(path, new, old)] = hit
            out.append(hit)
            continue
        if new is None:
            action, reasons = ActionType.DELETE, [Reason(code=R.OUTPUT_STALE, message="no longer rendered")]
        elif old is None:
            action, reasons = ActionType.CREATE, [Reason(code=R.OUTPUT_MISSING, message="not rendered yet")]
        elif old != new:
            action, reasons = ActionType.UPDATE, [Reason(code=R.OUTPUT_CHANGED, message="content changes")]
        else:
            action, reasons = ActionType.NOOP, []
        out.append(
            Change(
                key=f"Output/{path}",
                kind="Output",
                name=path,
                action=action,
                reasons=reasons,
                hash_before=old,
                hash_after=new,
            )
        )
        fresh[(path, new, old)] = out[-1]
    if memo is not None:
        memo.outputs = fresh
    return out


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
