"""The emulator's write rules: admission on every write, NamespaceLifecycle, namespace teardown.

Mixed into ``Emulator`` (tests/k8s/api.py). Every create and update goes through
``_admit`` (decode, defaults, validation: tests/k8s/rules), namespaced creates through the
NamespaceLifecycle admission plugin (the namespace must exist and not be terminating), and
deleting a Namespace works as on a real cluster: it turns ``Terminating``, the namespace
controller deletes what is in it (finalizers honoured), then the namespace goes.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

import kmock
from tests.k8s import crds
from tests.k8s import objects as o
from tests.k8s.rules import admission
from tests.k8s.rules.crd import CEL_WARNING, UnsupportedByEmulatorError, has_cel
from tests.k8s.wire import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, Target

JSON = dict[str, Any]
logger = logging.getLogger(__name__)
NAMESPACES = kmock.resource("", "v1", "namespaces")
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
FIELD_VALIDATION = ("Ignore", "Warn", "Strict")


class StrictWrites:
    """Admission, NamespaceLifecycle and namespace teardown for ``Emulator``."""

    resources: kmock.ResourcesArray
    objects: Any
    _crd_resources: dict[str, list[kmock.resource]]
    _teardowns: dict[str, asyncio.Task[None]]

    def _live(self, key: tuple[kmock.resource, str | None, str]) -> JSON | None:
        raise NotImplementedError

    def _live_items(self, t: Target, matcher: Any = None) -> list[JSON]:
        raise NotImplementedError

    def _delete_object(self, t: Target, name: str, old: JSON) -> JSON:
        raise NotImplementedError

    def _commit(self, t: Target, name: str, obj: JSON | None, old: JSON | None, final: JSON | None = None) -> JSON:
        raise NotImplementedError

    async def wait_for(self, predicate: Any, timeout: float) -> Any:
        raise NotImplementedError

    # --- admission ----------------------------------------------------------------------------

    def _custom_schema(self, res: kmock.resource) -> JSON | None:
        for crd_name, served in self._crd_resources.items():
            if res in served:
                crd = self._live((crds.CRD_RESOURCE, None, crd_name))
                if crd is not None:
                    return admission.served_schema(crd, str(res.version))
        return None

    def _custom_selectable_fields(self, res: kmock.resource) -> tuple[str, ...]:
        """A CRD version's ``selectableFields`` as field labels (``.spec.x`` → ``spec.x``)."""
        for crd_name, served in self._crd_resources.items():
            crd = self._live((crds.CRD_RESOURCE, None, crd_name)) if res in served else None
            for version in ((crd or {}).get("spec") or {}).get("versions") or []:
                if version.get("name") == res.version:
                    return tuple(str(f.get("jsonPath", "")).lstrip(".") for f in version.get("selectableFields") or [])
        return ()

    def _custom_printer_columns(self, res: kmock.resource) -> list[JSON]:
        """A served CRD version's ``additionalPrinterColumns``."""
        for crd_name, served in self._crd_resources.items():
            crd = self._live((crds.CRD_RESOURCE, None, crd_name)) if res in served else None
            for version in ((crd or {}).get("spec") or {}).get("versions") or []:
                if version.get("name") == res.version:
                    return list(version.get("additionalPrinterColumns") or [])
        return []

    def _is_custom(self, res: kmock.resource) -> bool:
        return any(res in declared for declared in self._crd_resources.values())

    def _admit(self, t: Target, obj: JSON, old: JSON | None) -> None:
        """Decode, default and validate ``obj``; warnings go to the response."""
        directive = t.params.get("fieldValidation") or "Warn"
        if directive not in FIELD_VALIDATION:
            raise o.ApiError(
                400, "BadRequest", f'fieldValidation parameter unsupported: "{directive}" (use Ignore, Warn or Strict)'
            )
        custom = self._is_custom(t.resource)
        schema = self._custom_schema(t.resource) if custom else None
        if custom and schema is None:
            raise o.ApiError(404, "NotFound", "the server could not find the requested resource")
        write = admission.Write(
            group=str(t.resource.group),
            version=str(t.resource.version),
            kind=str(t.info.kind),
            plural=str(t.resource.plural),
            namespaced=bool(t.info.namespaced),
            subresource=t.subresource,
            field_validation=directive,
            schema=schema,
        )
        try:
            t.warnings.extend(admission.admit(write, obj, old))
        except admission.Rejected as exc:
            raise o.ApiError(exc.code, exc.reason, exc.message, body=exc.body) from None
        except UnsupportedByEmulatorError as exc:
            raise o.ApiError(501, "NotImplemented", str(exc)) from None
        if t.resource == crds.CRD_RESOURCE and t.subresource != "status":
            if has_cel(obj.get("spec")):
                # Logged, not a Warning header: a real cluster warns nothing here, and tests
                # check that kubectl apply of our manifests prints no warning.
                logger.info("%s: %s", obj["metadata"]["name"], CEL_WARNING)
            crds.establish(obj)

    @staticmethod
    def _check_patch_type(t: Target, ctype: str, custom: bool) -> None:
        """The patch types the server decodes; strategic merge is for built-in kinds only."""
        accepted = [JSON_PATCH, MERGE_PATCH, APPLY_PATCH] + ([] if custom else [STRATEGIC_PATCH])
        if ctype not in accepted:
            shown = ", ".join(accepted)
            raise o.ApiError(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format - accepted media types include: {shown}",
            )

    # --- NamespaceLifecycle -------------------------------------------------------------------

    def _namespace_lifecycle(self, t: Target) -> None:
        """Creating in a namespace requires that it exists and is not being torn down."""
        if not t.info.namespaced or t.namespace is None:
            return
        ns = self._live((NAMESPACES, None, t.namespace))
        if ns is None:
            raise o.not_found("namespaces", t.namespace)
        if ns["metadata"].get("deletionTimestamp") or (ns.get("status") or {}).get("phase") == "Terminating":
            message = (
                f'{t.qualified} "{(t.name or "")}" is forbidden: unable to create new content in namespace '
                f"{t.namespace} because it is being terminated"
            )
            cause = {"reason": "NamespaceTerminating", "message": f'namespace {t.namespace} is being terminated', "field": "metadata.namespace"}
            raise o.ApiError(403, "Forbidden", message, {"name": t.name or "", "kind": str(t.resource.plural), "causes": [cause]})

    def _delete_namespace(self, t: Target, name: str, old: JSON) -> JSON:
        """Mark the namespace Terminating and start the namespace controller for it."""
        if name in IMMORTAL_NAMESPACES:
            raise o.ApiError(
                403, "Forbidden", f'namespaces "{name}" is forbidden: this namespace may not be deleted', {"name": name, "kind": "namespaces"}
            )
        if old["metadata"].get("deletionTimestamp"):
            return old
        new = copy.deepcopy(old)
        new["metadata"].update(deletionTimestamp=o.now_rfc3339(), deletionGracePeriodSeconds=0)
        new.setdefault("status", {})["phase"] = "Terminating"
        stored = self._commit(t, name, new, old)
        if name not in self._teardowns:
            self._teardowns[name] = asyncio.get_running_loop().create_task(self._teardown(t, name))
        return stored

    def _namespaced_contents(self, namespace: str) -> list[tuple[Target, JSON]]:
        found: list[tuple[Target, JSON]] = []
        for res in list(self.resources):
            info = self.resources[res]
            if not info.namespaced or not isinstance(res, kmock.resource) or res.plural is None:
                continue
            t = Target(res, info, namespace, None, None)
            found.extend((t, obj) for obj in self._live_items(t))
        return found

    async def _teardown(self, t: Target, name: str) -> None:
        """The namespace controller: delete everything inside, wait for finalizers, then finalize."""
        try:
            for target, obj in self._namespaced_contents(name):
                meta = obj["metadata"]
                if not meta.get("deletionTimestamp"):
                    item = Target(target.resource, target.info, name, meta["name"], None)
                    self._delete_object(item, meta["name"], obj)
            await self.wait_for(lambda: not self._namespaced_contents(name), timeout=3600)
            final = self._live((NAMESPACES, None, name))
            if final is not None:
                finalized = copy.deepcopy(final)
                finalized.setdefault("spec", {})["finalizers"] = []
                self._commit(t, name, None, final, final=finalized)
        finally:
            self._teardowns.pop(name, None)
