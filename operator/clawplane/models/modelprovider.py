"""ModelProvider: one LLM provider of OpenClaw's registry (``models.providers.<id>``).

The fields follow OpenClaw 2026.9.6's ``ModelProviderSchema`` one to one (camelCase on
the wire, unknown keys rejected), except that every secret-capable value (``apiKey``,
``headers``, ``request`` credentials and TLS material) may be a ``valueFrom`` reference,
and ``probe``/``connectionTimeoutMs`` say how clawplane checks the provider. The
resource's name is the provider id that model references use (``<id>/<model>``).
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from clawplane.models.base import Model, NonEmptyStr, Resource
from clawplane.models.providermodel import (
    AgentRuntimePolicy,
    ModelApi,
    PositiveInt,
    PositiveNumber,
    ProviderModel,
)
from clawplane.models.providerrequest import ProviderRequest
from clawplane.models.values import SecretValue

DEFAULT_PROBE_TIMEOUT_MS = 10000

# OpenClaw normalizes provider ids to lower case; model references split on the first "/".
PROVIDER_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"


class ProviderAuth(enum.StrEnum):
    """How OpenClaw authenticates to the provider."""

    API_KEY = "api-key"
    AWS_SDK = "aws-sdk"
    OAUTH = "oauth"
    TOKEN = "token"


class LocalService(Model):
    """A local model server OpenClaw starts on demand before sending requests."""

    command: NonEmptyStr
    """Absolute path of the server executable."""
    args: list[str] | None = None
    """Arguments, without shell expansion."""
    cwd: NonEmptyStr | None = None
    """Working directory; relative paths are relative to the resource file."""
    env: dict[str, SecretValue] = Field(default_factory=dict)
    """Extra environment; a ``valueFrom.env`` becomes ``${NAME}``."""
    health_url: NonEmptyStr | None = None
    """Readiness URL (default: baseUrl + ``/models``)."""
    ready_timeout_ms: PositiveInt | None = None
    """How long to wait for readiness after starting."""
    idle_stop_ms: Annotated[int, Field(ge=0, le=9007199254740991)] | None = None
    """Keep the server this long after the last request; 0 = until OpenClaw exits."""


class ModelProviderSpec(Model):
    """Desired configuration of one model provider."""

    OWN: ClassVar[frozenset[str]] = frozenset({"probe", "connectionTimeoutMs"})

    api: ModelApi | None = None
    """Request adapter (default ``openai-completions`` when baseUrl is set); also how clawplane lists models."""
    base_url: str | None = None
    """Endpoint, e.g. ``https://api.openai.com/v1`` (required unless the id is one of OpenClaw's bundled providers)."""
    api_key: SecretValue | None = None
    """API key, best as ``valueFrom`` (a literal gets a warning)."""
    auth: ProviderAuth | None = None
    """Auth mode: ``api-key``, ``token``, ``oauth`` or ``aws-sdk``."""
    auth_header: bool | None = None
    """Force the credential into the ``Authorization`` header."""
    headers: dict[str, SecretValue] = Field(default_factory=dict)
    """Extra headers for every request (values may be ``valueFrom``)."""
    max_tokens: PositiveNumber | None = None
    """Default output-token cap for models that set none."""
    timeout_seconds: PositiveInt | None = None
    """Per-request timeout for model calls, in seconds."""
    region: NonEmptyStr | None = None
    """Deployment region, for providers with regional endpoints."""
    inject_num_ctx_for_openai_compat: bool | None = Field(default=None, alias="injectNumCtxForOpenAICompat")
    """Ollama behind ``openai-completions``: inject ``options.num_ctx`` (default true)."""
    params: dict[str, Any] | None = None
    """Provider-specific runtime parameters."""
    agent_runtime: AgentRuntimePolicy | None = None
    """Agent runtime for this provider's models."""
    local_service: LocalService | None = None
    """A local model server OpenClaw starts on demand."""
    request: ProviderRequest | None = None
    """Transport overrides (headers, auth, proxy, TLS)."""
    models: list[ProviderModel] | None = None
    """The provider's models (required unless the id is one of OpenClaw's bundled providers)."""
    probe: bool = True
    """clawplane lists the provider's models to check it; ``false`` never calls it."""
    connection_timeout_ms: Annotated[int, Field(gt=0, le=2_147_483_647)] = DEFAULT_PROBE_TIMEOUT_MS
    """How long clawplane's model-list probe may take, in milliseconds."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("Expected http:// or https:// URL")
        return value.strip()

    @field_validator("models")
    @classmethod
    def _unique_ids(cls, value: list[ProviderModel] | None) -> list[ProviderModel] | None:
        seen: set[str] = set()
        for model in value or []:
            if model.id in seen:
                raise ValueError(f"model id {model.id!r} is declared twice")
            seen.add(model.id)
        return value

    @property
    def effective_api(self) -> ModelApi:
        """The adapter OpenClaw uses: explicit, else ``openai-completions``."""
        return self.api or ModelApi.OPENAI_COMPLETIONS

    @property
    def model_ids(self) -> list[str]:
        """The declared model ids, in order."""
        return [m.id for m in self.models or []]


class ModelProvider(Resource):
    """A model provider; ``metadata.name`` is its provider id."""

    KIND: ClassVar[str] = "ModelProvider"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("mp",)
    PLURAL: ClassVar[str] = "modelproviders"

    kind: Literal["ModelProvider"]
    spec: ModelProviderSpec
    """Desired configuration."""


__all__ = [
    "DEFAULT_PROBE_TIMEOUT_MS",
    "PROVIDER_ID_PATTERN",
    "ModelApi",
    "ModelProvider",
    "ModelProviderSpec",
    "ProviderModel",
]
