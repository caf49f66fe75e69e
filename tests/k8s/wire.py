"""The wire side of the emulator: request paths, bodies, content types and what a request targets."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import kmock
import yaml
from kmock._internal import parsing

WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
APPLY_PATCH = "application/apply-patch+yaml"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"


@dataclass(frozen=True)
class WriteRecord:
    """One write request as received (before any outcome), for ``Emulator.writes()``."""

    verb: str
    path: str
    subresource: str | None
    plural: str
    namespace: str | None
    name: str | None
    user: str = ""
    """The bearer token the request carried ("" without one): tells apart clients that share a server."""


def bearer(headers: dict[str, str]) -> str:
    """The bearer token of a request ("" when it has none)."""
    scheme, _, token = (headers.get("Authorization") or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


@dataclass
class Target:
    """What a resource request addresses, resolved against the declared resources."""

    resource: kmock.resource
    info: kmock.ResourceInfo
    namespace: str | None
    name: str | None
    subresource: str | None
    params: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """Sent back as ``Warning: 299`` headers (unknown fields under fieldValidation=Warn)."""

    @property
    def qualified(self) -> str:
        """``plural.group`` as the real server names a resource in messages."""
        group = self.resource.group
        return f"{self.resource.plural}.{group}" if group else str(self.resource.plural)

    @property
    def qualified_kind(self) -> str:
        """``Kind.group`` as Invalid messages name the kind (``Kind`` for the core group)."""
        group = self.resource.group
        return f"{self.info.kind}.{group}" if group else str(self.info.kind)

    @property
    def has_status(self) -> bool:
        """Whether .status is a subresource (isolated from the main endpoint)."""
        return "status" in self.info.subresources

    @property
    def dry_run(self) -> bool:
        """``?dryRun=All``: answer as if written, store nothing."""
        return bool(self.params.get("dryRun"))

    def key(self, name: str | None = None) -> tuple[kmock.resource, str | None, str]:
        """The kmock object-store key."""
        return (self.resource, self.namespace, str(name or self.name))


def parse_k8s_path(path: str) -> parsing.ParsedPath:
    """Like kmock's parser, but ``/api/v1/namespaces[/NAME[/status|/finalize]]`` are the Namespace kind."""
    parts = [p for p in path.strip("/").split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    elif len(parts) == 2 and parts[0] == "apis":
        return parsing.ParsedPath(group=parts[1])
    else:
        return parsing.ParsedPath()
    namespace = None
    is_ns_kind = len(rest) <= 2 or (len(rest) == 3 and rest[2] in ("status", "finalize"))
    if rest and rest[0] == "namespaces" and not is_ns_kind:
        namespace, rest = rest[1], rest[2:]
    plural = rest[0] if rest else None
    name = rest[1] if len(rest) > 1 else None
    sub = "/".join(rest[2:]) or None
    return parsing.ParsedPath(group, version, plural, namespace, name, sub)


def decode_body(body: bytes) -> Any:
    """JSON, else YAML (server-side apply may send either); None when empty or undecodable."""
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        pass
    try:
        return yaml.safe_load(body.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError):
        return None
