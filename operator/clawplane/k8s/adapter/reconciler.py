"""One namespace's reconcile pass: the local engine, fed from the API and applied to the cluster.

A pass re-reads everything (level-based): list the custom resources, write them into
the namespace's folder, validate (falling back per resource), compile with Secret and
restart digests folded into the config hashes, plan, apply through ``KubeBackend``,
publish the rendered files as ConfigMaps and write every changed ``.status``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clawplane._utils.dirtrust import trust_tree
from clawplane._utils.safedir import open_dir
from clawplane.approvals import ApprovalQueue, mark_applied
from clawplane.approvals.records import parse_time
from clawplane.desired import DesiredState
from clawplane.events import EventType
from clawplane.k8s.adapter import observing
from clawplane.k8s.adapter.approvals import answer_annotations, approval_conditions
from clawplane.k8s.adapter.backend import KubeBackend
from clawplane.k8s.adapter.materialize import Materialized, Materializer, key_of
from clawplane.k8s.adapter.statuses import build_status, status_patch, with_condition
from clawplane.k8s.api.kubeapi import ApiError, Kind, KubeApi
from clawplane.k8s.objects.childcache import ChildCache
from clawplane.k8s.objects.children import RESTART_ANNOTATION, Owner
from clawplane.k8s.objects.configmaps import (
    agent_config_map_name,
    gateway_auth_header,
    gateway_config_map_name,
    sync_config_maps,
    wanted_config_maps,
)
from clawplane.k8s.objects.converge import ChildProblem, ChildWriter
from clawplane.k8s.objects.events import EventRecorder
from clawplane.k8s.objects.oauthsecrets import SecretCredentials, login_secret_names
from clawplane.k8s.objects.secretrefs import Redaction, SecretReader, secret_refs
from clawplane.k8s.objects.skillfiles import SkillFiles, collect
from clawplane.k8s.objects.watches import OwnWrites
from clawplane.models import API_GROUP, KINDS, SecretValue, ValueFrom
from clawplane.reconcile.applier import SETTLED_PHASES, ApplyContext, apply_plan
from clawplane.reconcile.conditions import Cond
from clawplane.reconcile.engine import Engine, InvalidFolderError, Patch, Planned
from clawplane.reconcile.holding import AppliedSources, hold_back
from clawplane.reconcile.modelproviders import local_reader
from clawplane.reconcile.outcome import PassOutcome
from clawplane.reconcile.oversight import Oversight
from clawplane.runtimes import RuntimeSettings
from clawplane.state import ObservedState, ResourceRecord, StateDB, store, utcnow
from clawplane.workspace import Workspace

log = logging.getLogger("clawplane.k8s")

DEFAULT_SKILLS_MOUNT_PATH = "/var/run/clawplane/skills"
CRD_KINDS = {kind: Kind(API_GROUP, "v1alpha1", cls.PLURAL, kind) for kind, cls in KINDS.items()}


@dataclass(frozen=True)
class ClusterSettings:
    """How the operator runs; the same for every namespace."""

    state_dir: Path
    bridge_image: str
    concurrency: int = 8
    routes: Callable[[str], str | None] | None = None
    """Test hook: in-cluster URL → a URL this process can reach (tests/k8s/kubelet.py)."""
    bridge_ingress_from: tuple[dict[str, Any], ...] = ()
    """NetworkPolicy peers that may reach bridge pods (gateway pods, the operator); empty: no policy."""
    runtime: RuntimeSettings = field(default_factory=RuntimeSettings)
    skills_mount_path: str = DEFAULT_SKILLS_MOUNT_PATH
    """Where gateway pods mount the published skills (and the operator writes inline skills)."""


@dataclass
class PassResult:
    """What a pass did: per-resource outcome, ConfigMaps written, statuses patched."""

    ok: bool = True
    error: str | None = None
    results: dict[str, str] = field(default_factory=dict)
    config_maps: list[str] = field(default_factory=list)
    statuses: int = 0
    seconds: float = 0.0
    requeue: bool = False
    """Some server is not ready yet: check again later even if no event arrives."""
    recheck_in: float | None = None
    """Seconds until a pending approval request expires: pass again then, to report it."""
    diagnostics: list[str] = field(default_factory=list)
    """Why the resources do not validate (``file:line: message``), when they do not."""


class ClusterEngine(Engine):
    """The local engine with cluster inputs: Secret/restart digests, and no local supervisor."""

    digests: dict[str, dict[str, str]]

    def load(self, patch: Patch | None = None) -> tuple[DesiredState, Any]:
        """Validate and compile, then fold in the digests collected from the API."""
        desired, result = super().load(patch)
        for label, by_key in self.digests.items():
            present = {k: v for k, v in by_key.items() if k in desired.resources}
            desired = desired.with_digests(label, present)
        return desired, result

    def observe(self, db: StateDB) -> ObservedState:
        """Observed state; the operator itself is the supervisor, so it is alive."""
        return replace(store.load_observed(db), supervisor_alive=True)


class NamespaceReconciler:
    """Keeps one namespace converged; each ``reconcile()`` is a full, idempotent pass."""

    def __init__(
        self,
        api: KubeApi,
        namespace: str,
        settings: ClusterSettings,
        *,
        own: OwnWrites | None = None,
        cache: ChildCache | None = None,
    ) -> None:
        root = settings.state_dir / "namespaces" / namespace
        self.api = api
        self.namespace = namespace
        self.settings = settings
        # The operator's volumes are trusted as deployed (an emptyDir is 0777); below them, every
        # folder it makes is 0700 and every file 0600, whatever the umask.
        trust_tree(settings.state_dir)
        trust_tree(Path(settings.skills_mount_path))
        self.ws = Workspace.for_folder(root / "resources", state_dir=root / "state")
        open_dir(self.ws.folder).close()
        open_dir(self.ws.state_dir).close()
        # Inline skills live where the gateway pod mounts them, so prompt locations hold there.
        self.skills_root = Path(settings.skills_mount_path) / namespace
        self.engine = self.new_engine()
        try:
            open_dir(self.skills_root, option="--skills-mount-path DIR").close()
        except OSError as exc:  # inline skills then fail to load, with a diagnostic per skill
            log.error("%s: cannot create %s (--skills-mount-path): %s", namespace, self.skills_root, exc)
        self._skills_left_out: set[str] = set()
        self.materializer = Materializer(self.ws.folder)
        self._render_problems: set[str] = set()
        self.db = StateDB.open(self.ws.state_dir)
        self.oversight = Oversight.open(self.db)
        """The namespace's event and approval queues (what the dashboard reads and answers through)."""
        self.approvals: ApprovalQueue = self.oversight.approvals
        self.passes = 0
        self.last: dict[str, Any] = {}
        """The last pass as the local loop's ``loop.json`` has it (folderValid, diagnostics, ...)."""
        self.sources = AppliedSources()
        """What the last pass applied: held actions keep their resources as they were."""
        self._approved: dict[str, Cond] = {}
        """``Approved`` by resource key, from the last pass's hold decision."""
        self._refused_answers: set[str] = set()
        self.events = EventRecorder(api, namespace)
        self.writer = ChildWriter(api, namespace, own or OwnWrites(), self.events, cache=cache)
        self.backend = KubeBackend(
            api,
            namespace,
            settings.bridge_image,
            self.writer,
            settings=replace(settings.runtime, credentials=SecretCredentials(api, namespace)),
            routes=settings.routes,
            ingress_from=list(settings.bridge_ingress_from),
        )
        self._published: dict[str, tuple[Owner, dict[str, Any]]] = {}
        """The last content written to each ConfigMap (a frozen one is restored from it)."""
        self.referenced_secrets: set[str] | None = None
        """Secrets the resources referenced in the last pass (None before the first)."""

    def new_engine(self) -> ClusterEngine:
        """An engine set up as the passes' own, with its own caches and no digests yet."""
        engine = ClusterEngine(self.ws, environ={})
        engine.digests = {}
        engine.renderer.secret_key_refs_as_env = True
        engine.renderer.auth_header = gateway_auth_header
        engine.renderer.skills_state_dir = self.skills_root
        return engine

    def plan(self) -> Planned:
        """What a pass would do now (with the last pass's digests), for callers other than the pass."""
        engine = self.new_engine()
        engine.digests = {label: dict(by_key) for label, by_key in self.engine.digests.items()}
        return engine.plan(self.db)

    def close(self) -> None:
        """Release the state database."""
        self.db.close()

    def _published_pass(self, result: PassResult) -> None:
        """Record the pass for the dashboard (``last``) and tell the event queue."""
        self.passes += 1
        outcome = PassOutcome.APPLIED if result.ok else PassOutcome.FAILED
        outcome = PassOutcome.INVALID if result.diagnostics else outcome
        held = sorted(k for k, v in result.results.items() if v.startswith("held: "))
        errors = {k: v for k, v in result.results.items() if v != "ok" and k not in held}
        was_valid = self.last.get("folderValid", True)
        self.last = {
            "folderValid": not result.diagnostics,
            "diagnostics": list(result.diagnostics),
            "reconciles": self.passes,
            "lastReconcile": {"at": utcnow(), "result": outcome, "reason": "pass"},
            "errors": errors,
            "held": held,
        }
        if result.diagnostics or not was_valid:
            self.oversight.events.publish(
                EventType.DIAGNOSTICS, "", valid=not result.diagnostics, errors=list(result.diagnostics)
            )
        self.oversight.events.publish(EventType.PASS_FINISHED, "", result=outcome, held=held)

    async def reconcile(self) -> PassResult:
        """Converge the namespace once."""
        started = time.monotonic()
        result = PassResult()
        crs = await self._list()
        live = [cr for cr in crs if not cr["metadata"].get("deletionTimestamp")]
        answer_annotations(self.approvals, crs, self._refused_answers)
        secrets = SecretReader(self.api, self.namespace)
        self.backend.secrets = secrets
        materialized = self.materializer.sync(live)
        secret_problems = await self._digests(live, secrets, materialized.in_effect)
        self.referenced_secrets = {name for cr in live for name, _ in secret_refs(cr.get("spec") or {})}
        self.referenced_secrets |= login_secret_names(live)  # `login --kubernetes` wakes the namespace
        self.writer.redact = Redaction(secrets, live)
        self._set_owners(crs)  # a resource being deleted owns its children until a pass removes them
        await self.backend.begin_pass()
        try:
            await self._plan_and_apply(result)
        except InvalidFolderError as exc:
            result.ok = False
            result.error = "; ".join(d.message for d in exc.diagnostics.errors)
            result.diagnostics = [str(d) for d in exc.diagnostics.errors]
        child_problems: dict[str, ChildProblem] = {
            f"McpServer/{k}": v for k, v in self.backend.problems.items()
        }
        owners = self._owners(live)
        last_good = serving_last_good(materialized, owners["gateway"])
        if result.ok or result.results:
            published = await sync_config_maps(
                self.writer,
                wanted_config_maps(
                    self.ws.out_dir,
                    self.namespace,
                    **owners,
                    skills=self._skill_files(),
                    skills_mount=str(self.skills_root),
                ),
                frozen=set(last_good.values()),
                last_good=self._published,
            )
            result.config_maps = published.changed
            child_problems.update(published.problems)
        observed = store.load_observed(self.db)  # once: statuses and the requeue check share it
        # A held delete keeps its object terminating: it still reports why.
        reported = live + [cr for cr in crs if cr not in live and key_of(cr) in self._approved]
        result.statuses = await self._write_statuses(
            reported, observed, materialized, secret_problems, child_problems, last_good
        )
        result.requeue = _unsettled(live, observed)
        result.seconds = time.monotonic() - started
        self._published_pass(result)
        return result

    async def _list(self) -> list[dict[str, Any]]:
        crs: list[dict[str, Any]] = []
        for kind in CRD_KINDS.values():
            crs.extend(await self.api.list(kind, self.namespace))
        return crs

    async def _digests(
        self, live: list[dict[str, Any]], secrets: SecretReader, in_effect: dict[str, dict[str, Any]]
    ) -> dict[str, list[str]]:
        """Missing Secrets per resource (of the spec asked for), and the digests the config hashes fold in
        (Secret values, restarts, the Gateway's observability for bridge pods). They follow the spec in
        effect: a refused spec that drops or adds a Secret reference must not roll pods running the last
        accepted one."""
        problems: dict[str, list[str]] = {}
        secret_digests: dict[str, str] = {}
        restarts: dict[str, str] = {}
        for cr in live:
            key = key_of(cr)
            asked = cr.get("spec") or {}
            effective = in_effect.get(key, asked)  # the same object unless a fallback is in effect
            digest, found = await secrets.digest(asked)
            if effective is not asked:
                digest, _ = await secrets.digest(effective)
            if digest is not None:
                secret_digests[key] = digest
            if found:
                problems[key] = found
            token = (cr["metadata"].get("annotations") or {}).get(RESTART_ANNOTATION)
            if token:
                restarts[key] = str(token)
        self.backend.observe, observed = await observing.of_pass(live, secrets, in_effect, self.events)
        self.engine.digests = {"k8s-secrets": secret_digests, "restart": restarts, "observability": observed}
        return problems

    def _set_owners(self, live: list[dict[str, Any]]) -> None:
        self.backend.owners = {
            cr["metadata"]["name"]: Owner("McpServer", cr["metadata"]["name"], cr["metadata"]["uid"])
            for cr in live
            if cr["kind"] == "McpServer"
        }

    @staticmethod
    def _owners(live: list[dict[str, Any]]) -> dict[str, Any]:
        agents = {
            cr["metadata"]["name"]: Owner("Agent", cr["metadata"]["name"], cr["metadata"]["uid"])
            for cr in live
            if cr["kind"] == "Agent"
        }
        gateways = [
            Owner("Gateway", cr["metadata"]["name"], cr["metadata"]["uid"])
            for cr in live
            if cr["kind"] == "Gateway"
        ]
        return {"agents": agents, "gateway": gateways[0] if gateways else None}

    async def _plan_and_apply(self, result: PassResult) -> None:
        held = hold_back(
            self.engine, self.db, self.engine.plan(self.db), self.approvals, self.sources,
            requested_by="clawplane k8s operator",
        )  # fmt: skip
        planned = held.planned
        ctx = ApplyContext(
            planned.desired,
            self.db,
            self.backend,
            self.engine.renderer,
            self.ws.out_dir,
            concurrency=self.settings.concurrency,
            secret_reader=self._read_secret,
        )

        async def emit(event: dict[str, Any]) -> None:
            if event.get("event") == "done" and not event.get("ok"):
                log.warning("%s/%s: %s", self.namespace, event["key"], event.get("error"))

        applied = await apply_plan(planned.plan, ctx, allow_mass_delete=True, emit=emit)
        result.ok = applied.ok
        result.results = dict(applied.results)
        self.sources.remember(planned.validation)
        released = {h.change.key for h in held.decision.released}
        if released and all(result.results.get(key) == "ok" for key in released):
            mark_applied(self.approvals, held.decision)
        self._approved = approval_conditions(held.decision)
        request = held.decision.request
        if request is not None and request.pending:
            left = (parse_time(request.expires_at) - datetime.now(UTC)).total_seconds()
            result.recheck_in = max(0.5, left + 0.5)
        for key, cond in self._approved.items():
            if not cond.status:  # not carried out: a finalizer waiting on it must keep waiting
                result.results[key] = f"held: {cond.message}"
        self._report_render_problems()

    def _skill_files(self) -> SkillFiles:
        """The files of every skill in a prompt; what cannot be published is logged once."""
        found = collect(self.engine.renderer.snapshots, self.skills_root)
        for reason in sorted(set(found.left_out) - self._skills_left_out):
            log.warning("%s: skill not published for the gateway pod: %s", self.namespace, reason)
        self._skills_left_out = set(found.left_out)
        return found

    async def _read_secret(self, value: SecretValue, base_dir: Path) -> str:
        """Provider probes read Secrets through the pass's reader, other references as MCP probes do."""
        ref = value.value_from.secret_key_ref if isinstance(value, ValueFrom) else None
        if ref is None:
            return await local_reader(None)(value, base_dir)
        reader = self.backend.secrets or SecretReader(self.api, self.namespace)
        return await reader.value(ref.name, ref.key)

    def _report_render_problems(self) -> None:
        """Log rendering problems (e.g. a value openclaw.json cannot reference) once, not every pass."""
        problems = {f"{d.resource}: {d.message}" for d in self.engine.renderer.diagnostics if d.is_error}
        for problem in sorted(problems - self._render_problems):
            log.warning("%s/%s", self.namespace, problem)
        self._render_problems = problems

    async def _write_statuses(
        self,
        live: list[dict[str, Any]],
        observed: ObservedState,
        materialized: Materialized,
        secret_problems: dict[str, list[str]],
        child_problems: dict[str, ChildProblem],
        last_good: dict[str, str],
    ) -> int:
        patches: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for cr in live:
            key = key_of(cr)
            wanted = build_status(
                cr,
                observed.resources.get(key),
                problem=materialized.problems.get(key),
                accepted_generation=materialized.accepted_generation.get(key, _held_generation(cr)),
                secret_problems=secret_problems.get(key, []),
                tools=list(observed.tools_applied.get(cr["metadata"]["name"], ())),
                child_problem=child_problems.get(key),
                last_good=_last_good_note(key, last_good, materialized),
                servers=_agent_servers(cr, live, observed) if cr["kind"] == "Agent" else None,
            )
            wanted = with_condition(wanted, cr, self._approved.get(key))
            wanted = observing.noted(wanted, cr, self.backend.observe)
            patch = status_patch(cr.get("status"), wanted)
            if patch is not None:
                patches.append((cr, patch))
        # Each status is its own request (the API has no batch write); sent side by side, as the
        # children are, a pass that changed 500 resources does not wait for 500 round trips in a row.
        limit = asyncio.Semaphore(max(1, self.settings.concurrency))

        async def write(cr: dict[str, Any], patch: dict[str, Any]) -> bool:
            async with limit:
                try:
                    await self.api.patch(
                        CRD_KINDS[cr["kind"]],
                        self.namespace,
                        cr["metadata"]["name"],
                        {"status": patch},
                        sub="status",
                    )
                except ApiError as exc:
                    if exc.status != 404:  # deleted meanwhile: nothing to report on
                        raise
                    return False
            return True

        outcomes = await asyncio.gather(*(write(cr, p) for cr, p in patches), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return sum(1 for outcome in outcomes if outcome is True)


RENDERED_KINDS = ("Agent", "Channel", "Gateway")
"""Kinds whose content is in openclaw.json: when one loses a reference, the gateway's config freezes."""


def serving_last_good(materialized: Materialized, gateway: Owner | None) -> dict[str, str]:
    """``Kind/name`` → the ConfigMap that keeps its last good content while a reference is broken.

    Same rule as the local loop: a broken reference never publishes an emptier config. An
    Agent keeps its own ConfigMap; the gateway's openclaw.json stays as it was while any
    Agent, Channel or the Gateway itself has a broken reference.
    """
    broken = [
        key
        for key, problem in materialized.problems.items()
        if problem.reason == "RefNotFound" and key not in materialized.accepted_generation
    ]
    out: dict[str, str] = {}
    for key in broken:
        kind, name = key.split("/", 1)
        if kind == "Agent":
            out[key] = agent_config_map_name(name)
    if gateway is not None and any(key.split("/", 1)[0] in RENDERED_KINDS for key in broken):
        out[f"Gateway/{gateway.name}"] = gateway_config_map_name(gateway.name)
    return out


def _last_good_note(key: str, last_good: dict[str, str], materialized: Materialized) -> str | None:
    """What a frozen resource's status says: which ConfigMap keeps serving, and why."""
    if key not in last_good:
        return None
    why = "; ".join(
        f"{k}: {p.message}" for k, p in sorted(materialized.problems.items()) if p.reason == "RefNotFound"
    )
    return f"ConfigMap {last_good[key]} keeps its last good content until the references resolve ({why})"


def _agent_servers(
    agent: dict[str, Any], live: list[dict[str, Any]], observed: ObservedState
) -> dict[str, ResourceRecord | None]:
    """The servers an Agent uses (its ``mcpServers``, else every enabled one) and their records."""
    declared = {cr["metadata"]["name"]: cr for cr in live if cr["kind"] == "McpServer"}
    names = (agent.get("spec") or {}).get("mcpServers")
    if names is None:
        names = [n for n, cr in declared.items() if (cr.get("spec") or {}).get("enabled", True)]
    return {n: observed.resources.get(f"McpServer/{n}") for n in names if n in declared}


def _held_generation(cr: dict[str, Any]) -> int | None:
    """A terminating resource whose delete is held runs the generation it has (it left the folder)."""
    meta = cr["metadata"]
    return int(meta.get("generation") or 1) if meta.get("deletionTimestamp") else None


def _unsettled(live: list[dict[str, Any]], observed: ObservedState) -> bool:
    """A server or provider is not ready (nor waiting on a login): a later pass must look again unprompted."""
    kinds = ("McpServer", "ModelProvider")
    phases = (observed.resources.get(key_of(cr)) for cr in live if cr["kind"] in kinds)
    return any(rec is not None and rec.phase not in SETTLED_PHASES for rec in phases)
