"""Applying a ModelProvider: probe it, and turn what the probe found into its status.

A provider is part of openclaw.json (``Programmed`` once rendered); ``ModelsDiscovered``
and ``Ready`` say whether it answered a model listing, with the models found, or why it did
not (the probe's reason and message, e.g. ``Unauthorized``, ``Timeout``). A provider that
cannot be probed (``probe: false``, no ``baseUrl``, an API without key-based listing) has
``ModelsDiscovered`` Unknown and ``Ready`` True with the reason it was not checked (it is
declared and rendered; Kubernetes tooling such as kstatus needs Ready True or False).
Secrets are resolved by ``ApplyContext.secret_reader``: Kubernetes reads Secrets; the local
supervisor uses its engine's one resolver (``resolver_reader``), so a probe sees exactly the
values the plan was made with (an apply's supplied values, the Gateway's env file, files).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from clawplane.desired import DesiredResource
from clawplane.models import ModelProvider, SecretValue
from clawplane.providers import ProbeResult, probe_provider
from clawplane.reconcile.conditions import Cond
from clawplane.secrets import SecretResolver, resolve_value
from clawplane.state import utcnow

SecretReader = Callable[[SecretValue, Path], Awaitable[str]]
"""Resolves a secret-capable value of a resource whose file is in the given folder."""

MAX_STATUS_MODELS = 5000
"""Most model ids kept in a status (``modelCount`` always has the full count)."""


def local_reader(environ: Mapping[str, str] | None) -> SecretReader:
    """Resolution from this process's environment (or ``environ``) and files."""

    async def read(value: SecretValue, base_dir: Path) -> str:
        return resolve_value(value, base_dir=base_dir, environ=environ)

    return read


def resolver_reader(resolver: SecretResolver) -> SecretReader:
    """Resolution by ``resolver``: the values plan and apply resolve, not this process's start-up ones."""

    async def read(value: SecretValue, base_dir: Path) -> str:
        return resolver.resolve(value, base_dir=base_dir)

    return read


async def probe(d: DesiredResource, reader: SecretReader) -> ProbeResult:
    """Probe the provider ``d`` declares."""
    assert isinstance(d.resource, ModelProvider)

    async def resolve(value: SecretValue) -> str:
        return await reader(value, d.base_dir)

    return await probe_provider(d.resource.spec, resolve=resolve)


def provider_status(d: DesiredResource, result: ProbeResult) -> tuple[list[Cond], str, dict[str, Any]]:
    """Conditions, phase and status fields of a provider after ``result``."""
    assert isinstance(d.resource, ModelProvider)
    spec = d.resource.spec
    status: dict[str, Any] = {
        "api": spec.effective_api.value,
        "configHash": d.config_hash,
        "probe": {"reason": result.reason, "at": utcnow(), "elapsedMs": result.elapsed_ms},
    }
    if result.endpoint:
        status["endpoint"] = result.endpoint
    refs_ok = result.reason != "SecretUnresolved"
    conds = [
        Cond("Accepted", True, "Valid"),
        Cond(
            "ResolvedRefs",
            refs_ok,
            "AllResolved" if refs_ok else "SecretUnresolved",
            "" if refs_ok else result.message,
        ),
        Cond("Programmed", True, "Rendered", "in openclaw.json models.providers"),
    ]
    if result.outcome == "not-probed":
        conds += [
            Cond("ModelsDiscovered", None, result.reason, result.message),
            Cond("Ready", True, result.reason, f"not checked: {result.message}"),
        ]
        return conds, "NotProbed", status
    if not result.ready:
        status["lastError"] = result.message
        if result.http_status is not None:
            status["probe"]["httpStatus"] = result.http_status
        conds += [
            Cond("ModelsDiscovered", False, result.reason, result.message),
            Cond("Ready", False, result.reason, result.message),
        ]
        return conds, "Failed", status
    ids = [m.id for m in result.models]
    status["models"] = ids[:MAX_STATUS_MODELS]
    status["modelCount"] = len(ids)
    missing = [m for m in spec.model_ids if m not in set(ids)]
    if missing:
        status["missingModels"] = missing
    conds += [
        Cond("ModelsDiscovered", True, "ModelsListed", result.message),
        Cond("Ready", True, "Ready", result.message),
    ]
    return conds, "Ready", status
