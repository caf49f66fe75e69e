"""The resource envelope shared by every kind: apiVersion, kind, metadata, spec, status.

Models are the single source of truth: the loader validates against them, and the
JSON Schemas, CRDs and ``clawplane explain`` are generated from them. Field
docstrings become schema descriptions (``descriptions.describe_models``), so write them
for users.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema
from pydantic.alias_generators import to_camel

API_GROUP = "clawplane.dev"
API_VERSION = f"{API_GROUP}/v1alpha1"

# Kubernetes-style object names (RFC 1123 subdomain, relaxed to allow '_' for OpenClaw ids).
NAME_PATTERN = r"^[A-Za-z0-9_]([A-Za-z0-9_.-]{0,251}[A-Za-z0-9_])?$"
NAME_RE = re.compile(NAME_PATTERN)
# OpenClaw's canonical agent id.
AGENT_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
AGENT_ID_RE = re.compile(AGENT_ID_PATTERN, re.IGNORECASE)

NonEmptyStr = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Number = Annotated[int | float, WithJsonSchema({"type": "number"})]
"""A JSON number; integers stay integers when rendered back."""
AgentId = Annotated[
    str, StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
]


class Model(BaseModel):
    """Base for every part of a resource: camelCase on the wire, unknown keys rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        validate_default=False,
        defer_build=True,
    )

    OWN: ClassVar[frozenset[str]] = frozenset()
    OPENCLAW_ALIGNED: ClassVar[bool] = False
    """Validating this part's typed fields already refuses everything OpenClaw's schema refuses there
    (kept true by tests/unit/core/test_openclaw_coverage.py and test_openclaw_property.py), so only
    their presence and the OpenClaw keys written beside them are checked against the schema."""
    """Wire names of the fields that are clawplane's own where the part stands for an OpenClaw object
    (never checked against, nor rendered into, that object)."""


class ObjectMeta(Model):
    """Standard object metadata."""

    name: Annotated[str, StringConstraints(pattern=NAME_PATTERN, max_length=253)]
    """The resource's name, unique per kind (and namespace). For an Agent it is the agent id."""
    namespace: Annotated[str, StringConstraints(pattern=NAME_PATTERN, max_length=63)] | None = None
    """Kubernetes namespace; ignored by the local driver."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Free-form labels, as in Kubernetes."""
    annotations: dict[str, str] = Field(default_factory=dict)
    """Free-form annotations, as in Kubernetes."""
    generation: int | None = Field(default=None, ge=0)
    """Set by the API server in Kubernetes; ignored locally."""
    uid: str | None = None
    """Set by the API server in Kubernetes; ignored locally."""
    resource_version: str | None = None
    """Set by the API server in Kubernetes; ignored locally."""
    creation_timestamp: str | None = None
    """Set by the API server in Kubernetes; ignored locally."""


class Resource(Model):
    """The envelope every kind shares; subclasses fix ``kind`` and type ``spec``."""

    KIND: ClassVar[str] = ""
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ()
    PLURAL: ClassVar[str] = ""

    api_version: Literal["clawplane.dev/v1alpha1"] = Field(alias="apiVersion")
    """Always ``clawplane.dev/v1alpha1``."""
    kind: str
    """The resource kind."""
    metadata: ObjectMeta
    """Name, namespace, labels and annotations."""
    status: dict[str, Any] | None = None
    """Written by clawplane only; ignored on input."""

    @property
    def name(self) -> str:
        """The resource's name."""
        return self.metadata.name

    @property
    def key(self) -> str:
        """``Kind/name``: unique within one folder or namespace."""
        return f"{self.kind}/{self.metadata.name}"
