"""The compiled desired state: what the folder asks for, normalized and hashed."""

from __future__ import annotations

import enum
import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

from clawplane.models import Agent, Channel, Gateway, McpServer, ModelProvider, Resource, Skill, ValueFrom
from clawplane.models import secret_fields as model_secret_fields
from clawplane.secrets import ResolvedSecrets
from clawplane.validation.openclaw.secretvalues import openclaw_secret_values


class RuntimeMode(enum.StrEnum):
    """What clawplane does to keep an McpServer's runtime as declared."""

    HOSTED = "hosted"  # a stdio child the supervisor keeps running and exposes over HTTP
    PROBED = "probed"  # a consumer-spawned stdio server: start, list tools, stop
    REMOTE = "remote"  # an sse/streamable-http server: connect to discover tools
    NONE = "none"  # disabled: nothing runs


@dataclass(frozen=True)
class DesiredResource:
    """One resource as compiled: redacted normalized spec plus a content hash."""

    key: str
    kind: str
    name: str
    resource: Resource
    spec: dict[str, Any]
    base_hash: str
    """Hash of the normalized spec (and resolved paths) alone."""
    source_file: str
    base_dir: Path
    runtime: RuntimeMode = RuntimeMode.NONE
    safe_name: str = ""
    digests: Mapping[str, str] = field(default_factory=dict)
    """Digests of inputs outside the spec: ``secrets`` (resolved values), ``skills`` (agent snapshot)."""
    secrets: ResolvedSecrets = field(default_factory=ResolvedSecrets, repr=False, compare=False)
    """The resolved references (``env/NAME``, ``headers/NAME``), in memory only, for the runtime."""

    @cached_property
    def config_hash(self) -> str:
        """The resource's content hash: spec plus every input digest."""
        doc = json.dumps([self.base_hash, sorted(self.digests.items())], separators=(",", ":"))
        return hashlib.sha256(doc.encode()).hexdigest()[:16]

    @property
    def is_server(self) -> bool:
        """True for McpServer resources."""
        return isinstance(self.resource, McpServer)


@dataclass(frozen=True, slots=True)
class AgentView:
    """What one agent gets: its servers (by resource name) and its skills input."""

    agent_id: str
    servers: tuple[str, ...]
    skills_filter: tuple[str, ...] | None


DigestMemo = dict[str, tuple["DesiredResource", str, "DesiredResource"]]
"""Per resource key: the resource, the digest folded into it, and the copy that made."""


@dataclass(frozen=True, slots=True)
class DesiredState:
    """Every desired resource by key, plus the derived per-agent views."""

    folder: Path
    resources: MappingProxyType[str, DesiredResource]
    agents: MappingProxyType[str, AgentView] = field(default_factory=lambda: MappingProxyType({}))
    _fingerprint: list[str] = field(default_factory=list, init=False, repr=False, compare=False)
    """The fingerprint once computed (a copy made by ``replace`` starts without it)."""
    _groups: dict[tuple[type, str], list[DesiredResource]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Resources by model class and kind name, in declaration order, grouped on first use.

    A pass asks for many kinds (a render, then the plan): one pass over the resources, not one
    per kind asked for.
    """

    @property
    def fingerprint(self) -> str:
        """A hash over every resource's config hash, computed on first use.

        A plan reads it once, from the last of several copies a pass makes (compile, then
        skills digests): hashing every copy's 1,000 resources was a share of each re-plan.
        """
        if not self._fingerprint:
            self._fingerprint.append(fingerprint_of(self.resources))
        return self._fingerprint[0]

    def with_digests(
        self, label: str, digests: Mapping[str, str], memo: DigestMemo | None = None
    ) -> DesiredState:
        """A copy in which each resource key in ``digests`` also depends on its digest (e.g. skills).

        With a ``memo`` kept from the last call, a resource that is the same object with the
        same digest as then comes back as the same copy: what a plan remembers by identity
        (its changes, config hashes) stays valid for it.
        """
        resources = dict(self.resources)
        fresh: DigestMemo = {}
        for key, digest in digests.items():
            current = resources[key]
            if current.digests.get(label) == digest:
                continue
            hit = memo.get(key) if memo is not None else None
            if hit is not None and hit[0] is current and hit[1] == digest:
                resources[key] = hit[2]
            else:
                resources[key] = replace(current, digests={**current.digests, label: digest})
            fresh[key] = (current, digest, resources[key])
        if memo is not None:
            memo.clear()
            memo.update(fresh)
        return replace(self, resources=MappingProxyType(resources))

    def env_references(self) -> set[str]:
        """Names of every environment variable a ``valueFrom.env`` in the folder refers to."""
        return {
            value.value_from.env
            for r in self.resources.values()
            for _, _, value in secret_fields(r.resource)
            if isinstance(value, ValueFrom) and value.value_from.env is not None
        }

    def of_kind(self, kind: str) -> list[DesiredResource]:
        """Resources of one kind in declaration order."""
        return self._gathered([g for g in self._grouped() if g[1] == kind], lambda r: r.kind == kind)

    def of_type(self, kind: type[Resource]) -> list[DesiredResource]:
        """Resources whose model is a ``kind`` (a subclass too), in declaration order."""
        return self._gathered(
            [g for g in self._grouped() if issubclass(g[0], kind)], lambda r: isinstance(r.resource, kind)
        )

    def _grouped(self) -> dict[tuple[type, str], list[DesiredResource]]:
        groups = self._groups
        if not groups:
            for r in self.resources.values():
                key = (type(r.resource), r.kind)
                found = groups.get(key)
                if found is None:
                    groups[key] = [r]
                else:
                    found.append(r)
        return groups

    def _gathered(
        self, keys: list[tuple[type, str]], wanted: Callable[[DesiredResource], bool]
    ) -> list[DesiredResource]:
        if len(keys) == 1:
            return list(self._groups[keys[0]])
        if not keys:
            return []
        # Several groups (a model subclass, or a class whose kind varies): keep declaration order.
        return [r for r in self.resources.values() if wanted(r)]

    @property
    def gateway(self) -> Gateway | None:
        """The folder's Gateway, if declared."""
        found = self.of_kind("Gateway")
        res = found[0].resource if found else None
        return res if isinstance(res, Gateway) else None

    def models(self, kind: type[Resource]) -> list[Any]:
        """The typed models of one kind."""
        return [r.resource for r in self.of_type(kind)]

    @property
    def servers(self) -> list[McpServer]:
        """Declared McpServers."""
        return self.models(McpServer)

    @property
    def providers(self) -> list[ModelProvider]:
        """Declared ModelProviders."""
        return self.models(ModelProvider)

    @property
    def agent_models(self) -> list[Agent]:
        """Declared Agents."""
        return self.models(Agent)

    @property
    def channels(self) -> list[Channel]:
        """Declared Channels."""
        return self.models(Channel)

    @property
    def skills(self) -> list[Skill]:
        """Declared inline Skills."""
        return self.models(Skill)


def secret_fields(res: Resource) -> list[tuple[tuple[str | int, ...], str, Any]]:
    """(path, key, value) of every secret-capable value in a resource."""
    if isinstance(res, ModelProvider):
        return model_secret_fields(res.spec)
    found = _typed_secret_fields(res)
    seen = {path for path, _, _ in found}
    found.extend((s.path, s.key, s.value) for s in openclaw_secret_values(res) if s.path not in seen)
    return found


def secret_input_paths(res: Resource) -> set[tuple[str | int, ...]]:
    """Spec paths of the literals OpenClaw's schema makes secret (SecretInput fields), whatever their name."""
    if isinstance(res, ModelProvider):
        return set()
    return {s.path for s in openclaw_secret_values(res) if s.secret_input}


def _typed_secret_fields(res: Resource) -> list[tuple[tuple[str | int, ...], str, Any]]:
    spec = getattr(res, "spec", None)
    found: list[tuple[tuple[str | int, ...], str, Any]] = []
    for attr in ("env", "headers", "credentials"):
        values = getattr(spec, attr, None)
        if isinstance(values, dict):
            found.extend(((attr, key), key, value) for key, value in values.items())
    oauth = getattr(spec, "oauth", None) if isinstance(res, McpServer) else None
    if oauth is not None:
        found.extend(
            (("oauth", key), key, value)
            for key, value in (("clientId", oauth.client_id), ("clientSecret", oauth.client_secret))
            if value is not None
        )
    if isinstance(res, Gateway):
        for skill_key, entry in res.spec.skills.entries.items():
            base = ("skills", "entries", skill_key)
            found.extend(((*base, "env", k), k, v) for k, v in entry.env.items())
            if entry.api_key is not None:
                found.append(((*base, "apiKey"), "apiKey", entry.api_key))
    return found


def fingerprint_of(resources: Mapping[str, DesiredResource]) -> str:
    """A hash over every resource's config hash.

    The hash of ``json.dumps(sorted((key, config_hash), ...), separators=(",", ":"))``, with
    the text put together from each key's encoded form, made once for a set of keys.
    """
    order, heads = _sorted_heads(tuple(resources))
    pairs = [h + _ascii_string(resources[k].config_hash) + "]" for k, h in zip(order, heads, strict=True)]
    doc = "[" + ",".join(pairs) + "]"
    return hashlib.sha256(doc.encode()).hexdigest()[:16]


_ascii_string: Callable[[str], str] = (
    getattr(json.encoder, "c_encode_basestring_ascii", None) or json.encoder.py_encode_basestring_ascii
)


@functools.lru_cache(maxsize=8)
def _sorted_heads(keys: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # A folder's keys seldom change between passes: sorting and encoding 1,000s of them once is enough.
    order = tuple(sorted(keys))
    return order, tuple(f"[{_ascii_string(k)}," for k in order)
