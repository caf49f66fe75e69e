"""Validated resources → ``DesiredState``: defaults applied, secrets redacted, hashes computed.

A resource's config hash covers its normalized spec, the digests of the secrets it
references (so rotating a secret restarts what uses it, without the value ever being
stored) and, for stdio servers, the resolved working directory. Compiling is cached
per resource on the exact document it came from, so recompiling after one file changed
only redoes that file's resources.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from clawplane._utils.compactjson import canonical as _canonical
from clawplane.desired.state import (
    AgentView,
    DesiredResource,
    DesiredState,
    RuntimeMode,
    secret_fields,
    secret_input_paths,
)
from clawplane.models import Agent, Gateway, Hosting, McpServer, ModelProvider, Resource, Transport, ValueFrom
from clawplane.naming import assign_server_names
from clawplane.secrets import REDACTED, ResolvedSecrets, SecretResolver, display_value, value_digest_of
from clawplane.validation import LoadedResource, ValidationResult


def _spec_dump(res: Resource) -> dict[str, Any]:
    spec: dict[str, Any] = res.model_dump(mode="json", by_alias=True, exclude_none=True).get("spec", {})
    return spec


def _redacted_spec(res: Resource, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    """The normalized spec with sensitive literals replaced; references stay as references.

    ``spec`` is the resource's own dump when the caller has one; it is redacted in place.
    """
    spec = _spec_dump(res) if spec is None else spec
    fields = secret_fields(res)
    secret_inputs = secret_input_paths(res) if fields else set()
    for path, key, value in fields:
        if isinstance(value, ValueFrom):
            continue
        node: Any = spec
        for part in path[:-1]:
            node = node[part]
        sensitive = _always_sensitive(res, path) or path in secret_inputs
        node[path[-1]] = REDACTED if sensitive else display_value(key, value)
    return spec


def _always_sensitive(res: Resource, path: tuple[str | int, ...]) -> bool:
    """OpenClaw treats every provider credential and header as sensitive, whatever its name."""
    return isinstance(res, ModelProvider) and path[0] not in ("models", "localService")


def _runtime_mode(res: McpServer) -> RuntimeMode:
    spec = res.spec
    if not spec.enabled:
        return RuntimeMode.NONE
    if spec.effective_transport is Transport.STDIO:
        return RuntimeMode.HOSTED if spec.hosting is Hosting.CLAWPLANE else RuntimeMode.PROBED
    return RuntimeMode.REMOTE


def _base_hash(res: Resource, base_dir: Path, full: dict[str, Any] | None = None) -> str:
    full = _spec_dump(res) if full is None else full
    extra: dict[str, Any] = {}
    if isinstance(res, McpServer) and res.spec.cwd:
        extra["cwd"] = str((base_dir / res.spec.cwd).resolve())
    doc = {"kind": res.kind, "name": res.name, "spec": full, "extra": extra}
    return hashlib.sha256(_canonical(doc).encode("utf-8")).hexdigest()[:16]


def _resolve_references(res: Resource, base_dir: Path, resolver: SecretResolver) -> ResolvedSecrets:
    return ResolvedSecrets(
        {
            "/".join(map(str, path)): resolver.outcome(value, base_dir=base_dir)
            for path, _, value in secret_fields(res)
            if isinstance(value, ValueFrom)
        }
    )


def _secrets_digest(resolved: ResolvedSecrets) -> dict[str, str]:
    if not resolved:
        return {}
    digests = {path: value_digest_of(outcome) for path, outcome in resolved.items()}
    return {"secrets": hashlib.sha256(_canonical(digests).encode()).hexdigest()[:16]}


def env_file_of(result: ValidationResult) -> Path | None:
    """The Gateway's ``spec.secrets.envFile`` as an absolute path, or None."""
    for item in result.resources:
        res = item.resource
        if isinstance(res, Gateway) and res.spec.secrets.env_file:
            path = Path(res.spec.secrets.env_file).expanduser()
            return path if path.is_absolute() else Path(item.source.file).resolve().parent / path
    return None


class Compiler:
    """Compiles validation results, reusing work for resources whose document did not change."""

    def __init__(self) -> None:
        # Keyed by the validated resource object: a validation cache hands back the same object
        # for an unchanged file, so identity is the cheapest "nothing changed" test.
        self._cache: dict[int, tuple[LoadedResource, DesiredResource, bool]] = {}
        # An agent's view depends on its resource and the enabled servers: kept while those are.
        self._views: dict[int, tuple[LoadedResource, AgentView]] = {}
        self._enabled: list[str] = []

    def compile(
        self,
        result: ValidationResult,
        *,
        folder: Path,
        environ: Mapping[str, str] | None = None,
        resolver: SecretResolver | None = None,
    ) -> DesiredState:
        """The desired state of a validated folder (call only when ``result.ok``).

        References are resolved by ``resolver`` (default: one over ``environ``), which first
        re-reads the Gateway's env file.
        """
        resolver = resolver or SecretResolver(environ)
        resolver.load_env_file(env_file_of(result))
        names = [r.resource.metadata.name for r in result.resources if isinstance(r.resource, McpServer)]
        safe = dict(zip(names, assign_server_names(names), strict=True))
        resources: dict[str, DesiredResource] = {}
        fresh: dict[int, tuple[LoadedResource, DesiredResource, bool]] = {}
        dirs: dict[str, Path] = {}  # one resolve per file, not per resource
        agents: list[tuple[LoadedResource, Agent]] = []
        for item in result.resources:
            res = item.resource
            hit = self._cache.get(id(item))
            if hit is not None and hit[0] is item:
                cached: DesiredResource | None = hit[1]
                has_refs = hit[2]
            else:
                cached = None
                has_refs = any(isinstance(v, ValueFrom) for _, _, v in secret_fields(res))
            # A referenced secret may change without the document changing: always rehash those.
            if isinstance(res, McpServer):
                safe_name = safe[res.metadata.name]
            else:
                safe_name = ""
                if isinstance(res, Agent):
                    agents.append((item, res))
            if cached is None or has_refs:
                desired = self._one(item, resolver, dirs, safe_name)
            elif cached.safe_name != safe_name:
                desired = _with_safe_name(cached, safe_name)
            else:
                desired = cached
            fresh[id(item)] = (item, desired, has_refs)
            resources[desired.key] = desired  # the item's key, already made
        self._cache = fresh
        views = self._agent_views(agents, resources)
        return DesiredState(folder, MappingProxyType(resources), MappingProxyType(views))

    def _agent_views(
        self, agents: list[tuple[LoadedResource, Agent]], resources: Mapping[str, DesiredResource]
    ) -> dict[str, AgentView]:
        # Only enabled servers have a runtime (``_runtime_mode``): no model to look into.
        enabled = [r.name for r in resources.values() if r.runtime is not RuntimeMode.NONE]
        known = self._views if enabled == self._enabled else {}
        fresh: dict[int, tuple[LoadedResource, AgentView]] = {}
        views: dict[str, AgentView] = {}
        for item, res in agents:
            hit = known.get(id(item))
            view = hit[1] if hit is not None and hit[0] is item else _agent_view(res, enabled)
            fresh[id(item)] = (item, view)
            views[view.agent_id] = view
        self._views, self._enabled = fresh, enabled
        return views

    def _one(
        self, item: LoadedResource, resolver: SecretResolver, dirs: dict[str, Path], safe_name: str
    ) -> DesiredResource:
        res = item.resource
        base_dir = dirs.get(item.source.file)
        if base_dir is None:
            base_dir = dirs[item.source.file] = Path(item.source.file).resolve().parent
        dump = _spec_dump(res)
        # Hash first: redaction rewrites the dump in place.
        base_hash = _base_hash(res, base_dir, dump)
        resolved = _resolve_references(res, base_dir, resolver)
        return DesiredResource(
            key=item.key,
            kind=res.kind,
            name=res.name,
            resource=res,
            spec=_redacted_spec(res, dump),
            base_hash=base_hash,
            source_file=item.source.file,
            base_dir=base_dir,
            digests=_secrets_digest(resolved),
            secrets=resolved,
            runtime=_runtime_mode(res) if isinstance(res, McpServer) else RuntimeMode.NONE,
            safe_name=safe_name,
        )


def _with_safe_name(desired: DesiredResource, safe_name: str) -> DesiredResource:
    return replace(desired, safe_name=safe_name)


def _agent_view(res: Agent, enabled: list[str]) -> AgentView:
    servers = tuple(
        enabled if res.spec.mcp_servers is None else [s for s in res.spec.mcp_servers if s in enabled]
    )
    skills = None if res.spec.skills is None else tuple(res.spec.skills)
    return AgentView(res.name, servers, skills)
