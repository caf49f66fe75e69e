"""The one write path for every child: level-based, ownership-checked, refusals reported verbatim.

``ChildWriter.converge`` compares the live object with what the operator wants, as the API
server would store it: the server adds defaults and canonicalizes values (quantities, ports,
a Service's cluster IP), so the wanted object is first sent as a dry run and the server's
answer is the reference. Everything the operator sets (the spec, data, its labels and
annotations, its ownerReference) must match; drift (``kubectl set image``, an edited
ConfigMap, a removed label) is written back. Extra template annotations are left alone (a
``kubectl rollout restart`` is a user's deliberate act). Once known, the reference is kept
per spec hash, so a pass where nothing changed costs no dry run.

Only objects carrying clawplane's ownerReference to this owner, or clawplane's labels and no
other controller, are adopted; anything else with the wanted name is a ``Conflict`` and is
never written or deleted. A write the API server refuses is a ``ChildRejected`` problem
whose message is the server's own (secrets redacted).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clawplane.k8s.api.kubeapi import CONFLICT_RETRIES, ApiError, Kind, KubeApi
from clawplane.k8s.objects.childcache import ChildCache
from clawplane.k8s.objects.children import GROUP, MANAGED_BY, Owner, spec_hash
from clawplane.k8s.objects.events import EventRecorder
from clawplane.k8s.objects.watches import OwnWrites

log = logging.getLogger("clawplane.k8s")

JSON = dict[str, Any]
IDENTITY_LABELS = (f"{GROUP}/mcpserver", f"{GROUP}/agent", f"{GROUP}/gateway", f"{GROUP}/skills")
_SKIPPED_TOP = ("apiVersion", "kind", "metadata", "status")


class ChildProblem(Exception):
    """A child that cannot be written: ``Conflict`` (someone else's object) or ``ChildRejected``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def _where(kind: Kind, obj: JSON) -> str:
    meta = obj.get("metadata") or {}
    return f"{kind.kind} {meta.get('namespace')}/{meta.get('name')}"


def owned(current: JSON, owner: Owner, wanted: JSON) -> bool:
    """Whether ``current`` is clawplane's child of ``owner`` (and so may be adopted and written)."""
    meta = current.get("metadata") or {}
    refs = meta.get("ownerReferences") or []
    for ref in refs:
        ours = str(ref.get("apiVersion", "")).startswith(f"{GROUP}/")
        if ours and ref.get("kind") == owner.kind and ref.get("name") == owner.name:
            return True
    if any(ref.get("controller") for ref in refs):
        return False
    labels = meta.get("labels") or {}
    wanted_labels = (wanted.get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in MANAGED_BY.items()):
        return False
    identity = [k for k in IDENTITY_LABELS if k in wanted_labels]
    return bool(identity) and all(labels.get(k) == wanted_labels[k] for k in identity)


def conflict_message(kind: Kind, current: JSON, owner: Owner) -> str:
    """What the owner's status says about a foreign object in the way."""
    refs = (current.get("metadata") or {}).get("ownerReferences") or []
    controller = next((f"{r.get('kind')} {r.get('name')}" for r in refs if r.get("controller")), None)
    why = (
        f"it is controlled by {controller}" if controller else "it has no clawplane ownerReference or labels"
    )
    return (
        f"{_where(kind, current)} already exists and is not managed by clawplane ({why}); "
        f"clawplane will not take it over: delete or rename it, or rename {owner.kind} {owner.name}"
    )


def project(obj: JSON, wanted: JSON) -> JSON:
    """The parts of ``obj`` the operator decides: top-level fields, its labels and annotations, owner.

    The result shares the fields' values with ``obj`` (nothing mutates either; only the template's
    metadata, which it narrows, is copied): a settled pass projects every child, and deep copies of
    them all were most of its CPU time.
    """
    meta = obj.get("metadata") or {}
    wanted_meta = wanted.get("metadata") or {}
    out: JSON = {k: v for k, v in obj.items() if k not in _SKIPPED_TOP}
    out["labels"] = {k: (meta.get("labels") or {}).get(k) for k in wanted_meta.get("labels") or {}}
    out["annotations"] = {
        k: (meta.get("annotations") or {}).get(k) for k in wanted_meta.get("annotations") or {}
    }
    out["owners"] = sorted(
        (r.get("kind"), r.get("name"), r.get("uid"))
        for r in meta.get("ownerReferences") or []
        if r.get("controller")
    )
    spec = out.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    template_meta = template.get("metadata") if isinstance(template, dict) else None
    if isinstance(spec, dict) and isinstance(template, dict) and isinstance(template_meta, dict):
        wanted_template = ((wanted.get("spec") or {}).get("template") or {}).get("metadata") or {}
        keys = (wanted_template.get("annotations") or {}).keys()
        narrowed = {k: (template_meta.get("annotations") or {}).get(k) for k in keys}
        narrowed_meta = {**template_meta, "annotations": narrowed}
        out["spec"] = {**spec, "template": {**template, "metadata": narrowed_meta}}
    return out


def drifted_fields(live: Any, reference: Any, prefix: str = "") -> list[str]:
    """The dotted paths where ``live`` differs from ``reference`` (for the Event's note)."""
    if isinstance(live, dict) and isinstance(reference, dict):
        out: list[str] = []
        for key in sorted(set(live) | set(reference)):
            if live.get(key) != reference.get(key):
                out += drifted_fields(live.get(key), reference.get(key), f"{prefix}.{key}" if prefix else key)
        return out
    if isinstance(live, list) and isinstance(reference, list) and len(live) == len(reference):
        return [
            p
            for i, (a, b) in enumerate(zip(live, reference, strict=True))
            for p in drifted_fields(a, b, f"{prefix}[{i}]")
        ]
    return [prefix or "."]


@dataclass
class ChildWriter:
    """Writes one namespace's children; remembers the server's form of each wanted object."""

    api: KubeApi
    namespace: str
    own: OwnWrites = field(default_factory=OwnWrites)
    events: EventRecorder | None = None
    redact: Callable[[str], str] = lambda text: text
    cache: ChildCache | None = None
    """The watch-fed children (``existing`` reads them); every write of ours goes in as answered."""
    _reference: dict[tuple[str, str], tuple[str | None, JSON]] = field(default_factory=dict)

    async def converge(self, kind: Kind, wanted: JSON, current: JSON | None, owner: Owner) -> JSON:
        """The stored child, created or written back first when it differs from ``wanted``."""
        name = wanted["metadata"]["name"]
        for _ in range(CONFLICT_RETRIES):
            if current is None:
                created = await self._create(kind, wanted, owner)
                if created is not None:
                    return created
                current = await self.api.get(kind, self.namespace, name)
                if current is None:
                    continue  # deleted between our create and get: create again
            if not owned(current, owner, wanted):
                raise ChildProblem("Conflict", conflict_message(kind, current, owner))
            reference = await self._reference_for(kind, wanted, current)
            if reference is None:
                current = await self.api.get(kind, self.namespace, name)
                continue
            live = project(current, wanted)
            if live == reference:
                return current
            stored = await self._replace(kind, wanted, current)
            if stored is None:
                current = await self.api.get(kind, self.namespace, name)
                continue
            fields = ", ".join(drifted_fields(live, reference)[:8])
            await self._event(
                owner, kind, stored, "Updated", "Update", f"wrote {kind.kind} {name} back: {fields} differed"
            )
            return stored
        # Someone keeps writing it between our reads: a transient failure, retried with backoff.
        raise ApiError(409, "Conflict", f"{kind.kind} {self.namespace}/{name} kept changing during the pass")

    async def existing(self, kind: Kind, *, label: str | None = None) -> list[JSON]:
        """The namespace's managed objects of ``kind`` (with ``label`` set): from the cache, else listed.

        ``label`` None: those with clawplane's managed-by label, which every child of ours carries.
        """
        cached = self.cache.objects(kind, self.namespace, label=label) if self.cache is not None else None
        if cached is not None:
            return cached
        selector = label or ",".join(f"{k}={v}" for k, v in MANAGED_BY.items())
        return await self.api.list(kind, self.namespace, labels=selector)

    def _wrote(self, kind: Kind, obj: JSON) -> None:
        self.own.add(kind, obj)
        if self.cache is not None:
            self.cache.wrote(kind, obj)

    async def delete(self, kind: Kind, name: str, owner: Owner) -> bool:
        """Delete a child if it is ours; a foreign object of that name is left alone."""
        current = await self.api.get(kind, self.namespace, name)
        if current is None:
            return False
        probe = {"metadata": {"labels": (current.get("metadata") or {}).get("labels") or {}}}
        if not owned(current, owner, probe):
            log.warning(
                "%s: not deleting %s: %s",
                self.namespace,
                _where(kind, current),
                conflict_message(kind, current, owner),
            )
            return False
        self._reference.pop((kind.plural, name), None)
        deleted = await self.api.delete(kind, self.namespace, name)
        if self.cache is not None:
            self.cache.deleted(kind, self.namespace, name)
        if deleted:
            await self._event(owner, kind, current, "Deleted", "Delete", f"deleted {kind.kind} {name}")
        return deleted

    async def _create(self, kind: Kind, wanted: JSON, owner: Owner) -> JSON | None:
        try:
            created = await self.api.create(kind, self.namespace, copy.deepcopy(wanted))
        except ApiError as exc:
            if exc.status == 409:
                return None
            raise self._rejected(kind, wanted, exc) from None
        self._wrote(kind, created)
        self._reference[(kind.plural, wanted["metadata"]["name"])] = (
            spec_hash(wanted),
            project(created, wanted),
        )
        await self._event(
            owner, kind, created, "Created", "Create", f"created {kind.kind} {wanted['metadata']['name']}"
        )
        return created

    async def _reference_for(self, kind: Kind, wanted: JSON, current: JSON) -> JSON | None:
        """The server's form of ``wanted`` (a dry-run replace of ``current``); None on a 409."""
        key = (kind.plural, wanted["metadata"]["name"])
        known = self._reference.get(key)
        if known is not None and known[0] == spec_hash(wanted):
            return known[1]
        body = self._replacement(wanted, current)
        try:
            answer = await self.api.replace(kind, self.namespace, body, dry_run=True)
        except ApiError as exc:
            if exc.status == 409:
                return None
            raise self._rejected(kind, wanted, exc) from None
        reference = project(answer, wanted)
        self._reference[key] = (spec_hash(wanted), reference)
        return reference

    @staticmethod
    def _replacement(wanted: JSON, current: JSON) -> JSON:
        body = copy.deepcopy(wanted)
        body["metadata"]["resourceVersion"] = current["metadata"].get("resourceVersion")
        return body

    async def _replace(self, kind: Kind, wanted: JSON, current: JSON) -> JSON | None:
        try:
            stored = await self.api.replace(kind, self.namespace, self._replacement(wanted, current))
        except ApiError as exc:
            if exc.status == 409:
                return None
            raise self._rejected(kind, wanted, exc) from None
        self._wrote(kind, stored)
        self._reference[(kind.plural, wanted["metadata"]["name"])] = (
            spec_hash(wanted),
            project(stored, wanted),
        )
        return stored

    def _rejected(self, kind: Kind, wanted: JSON, exc: ApiError) -> ChildProblem:
        if exc.status >= 500 or exc.status in (401, 404, 409, 429):
            raise exc  # not about the object: the pass fails and is retried
        message = self.redact(
            f"{kind.kind} {self.namespace}/{wanted['metadata']['name']} was refused by the API server: {exc}"
        )
        return ChildProblem("ChildRejected", message)

    async def _event(self, owner: Owner, kind: Kind, obj: JSON, reason: str, action: str, note: str) -> None:
        if self.events is None:
            return
        meta = obj.get("metadata") or {}
        related = {
            "apiVersion": kind.api_version,
            "kind": kind.kind,
            "name": meta.get("name"),
            "namespace": self.namespace,
            "uid": meta.get("uid"),
        }
        self.events.record(owner, reason=reason, action=action, note=note, related=related)

    async def rejected_event(self, owner: Owner, problem: ChildProblem) -> None:
        """A Warning Event for a child that could not be written."""
        if self.events is not None:
            self.events.record(
                owner, reason=problem.reason, action="Reconcile", note=problem.message, warning=True
            )
