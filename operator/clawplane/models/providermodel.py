"""One model of a ModelProvider's catalog (``models.providers.<id>.models[]``) and what describes it.

Prices, thinking levels, media limits, OpenRouter and Vercel routing and the compat flags of a
custom endpoint; ``ModelApi`` lives here because a model may name its own adapter.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, StringConstraints, WithJsonSchema

from clawplane.models.base import Model, NonEmptyStr, Number
from clawplane.models.values import SecretValue

__all__ = [
    "AgentRuntimePolicy",
    "MediaInput",
    "ModelApi",
    "ModelCompat",
    "ModelCost",
    "ModelInput",
    "PositiveInt",
    "PositiveNumber",
    "ProviderModel",
    "ThinkingLevelMap",
]

PositiveNumber = Annotated[
    int | float, Field(gt=0), WithJsonSchema({"type": "number", "exclusiveMinimum": 0})
]
PositiveInt = Annotated[int, Field(gt=0, le=9007199254740991)]


class ModelApi(enum.StrEnum):
    """OpenClaw's request adapters (``models.providers.*.api``)."""

    OPENAI_COMPLETIONS = "openai-completions"
    OPENAI_RESPONSES = "openai-responses"
    OPENAI_CHATGPT_RESPONSES = "openai-chatgpt-responses"
    ANTHROPIC_MESSAGES = "anthropic-messages"
    GOOGLE_GENERATIVE_AI = "google-generative-ai"
    GOOGLE_VERTEX = "google-vertex"
    GITHUB_COPILOT = "github-copilot"
    BEDROCK_CONVERSE_STREAM = "bedrock-converse-stream"
    OLLAMA = "ollama"
    PI_MESSAGES = "pi-messages"
    AZURE_OPENAI_RESPONSES = "azure-openai-responses"


class ModelInput(enum.StrEnum):
    """Input modalities a model accepts."""

    TEXT = "text"
    IMAGE = "image"
    VIDEO = "video"
    AUDIO = "audio"


class TieredPrice(Model):
    """Prices that apply within a token range."""

    input: Number
    """Price per million input tokens."""
    output: Number
    """Price per million output tokens."""
    cache_read: Number
    """Price per million cached input tokens read."""
    cache_write: Number
    """Price per million input tokens written to the cache."""
    range: Annotated[list[Number], Field(min_length=1, max_length=2)]
    """``[from]`` or ``[from, to]`` in tokens."""


class ModelCost(Model):
    """What the model costs (OpenClaw uses it for usage reports)."""

    input: Number | None = None
    """Price per million input tokens."""
    output: Number | None = None
    """Price per million output tokens."""
    cache_read: Number | None = None
    """Price per million cached input tokens read."""
    cache_write: Number | None = None
    """Price per million input tokens written to the cache."""
    tiered_pricing: list[TieredPrice] | None = None
    """Prices per token range."""


class ThinkingLevelMap(Model):
    """OpenClaw thinking levels → the provider's own values (``null`` = level not offered)."""

    NULLABLE: ClassVar[bool] = True

    off: str | None = None
    """Value for ``off``."""
    minimal: str | None = None
    """Value for ``minimal``."""
    low: str | None = None
    """Value for ``low``."""
    medium: str | None = None
    """Value for ``medium``."""
    high: str | None = None
    """Value for ``high``."""
    xhigh: str | None = None
    """Value for ``xhigh``."""
    max: str | None = None
    """Value for ``max``."""


class AgentRuntimePolicy(Model):
    """Which agent runtime runs turns for this provider or model."""

    id: str | None = None
    """``openclaw``, ``auto``, a plugin harness id such as ``codex``, or a CLI backend alias such as ``claude-cli``."""


class ImageInputLimits(Model):
    """Limits applied to images before they are sent."""

    max_bytes: PositiveInt | None = None
    """Largest image in bytes."""
    max_pixels: PositiveInt | None = None
    """Most pixels per image."""
    max_side_px: PositiveInt | None = None
    """Longest side in pixels."""
    preferred_side_px: PositiveInt | None = None
    """Side length images are scaled to."""
    token_mode: Literal["tile", "detail", "provider"] | None = None
    """How image tokens are counted."""


class MediaInput(Model):
    """Media input limits used by routing and preflight compression."""

    image: ImageInputLimits | None = None
    """Image limits."""


class _SnakeCase(Model):
    """OpenRouter's routing fields are snake_case on the wire."""

    model_config = ConfigDict(alias_generator=None)


class Percentiles(_SnakeCase):
    """Per-percentile thresholds."""

    p50: Number | None = None
    """50th percentile."""
    p75: Number | None = None
    """75th percentile."""
    p90: Number | None = None
    """90th percentile."""
    p99: Number | None = None
    """99th percentile."""


class OpenRouterSort(_SnakeCase):
    """OpenRouter sort order."""

    NULLABLE: ClassVar[bool] = True

    by: str | None = None
    """Sort key."""
    partition: str | None = None
    """Partition key (``null`` = none)."""


class OpenRouterMaxPrice(_SnakeCase):
    """Most OpenRouter may charge, per kind."""

    prompt: Number | str | None = None
    """Per prompt token."""
    completion: Number | str | None = None
    """Per completion token."""
    image: Number | str | None = None
    """Per image."""
    audio: Number | str | None = None
    """Per audio unit."""
    request: Number | str | None = None
    """Per request."""


class OpenRouterRouting(_SnakeCase):
    """OpenRouter provider routing (used only when baseUrl points to OpenRouter)."""

    allow_fallbacks: bool | None = None
    """Allow other upstream providers when the first fails."""
    require_parameters: bool | None = None
    """Only upstreams that support every request parameter."""
    data_collection: Literal["deny", "allow"] | None = None
    """Whether upstreams may store data."""
    zdr: bool | None = None
    """Zero data retention upstreams only."""
    enforce_distillable_text: bool | None = None
    """Only upstreams whose output may be distilled."""
    order: list[str] | None = None
    """Upstreams to try, in order."""
    only: list[str] | None = None
    """Upstreams allowed."""
    ignore: list[str] | None = None
    """Upstreams never used."""
    quantizations: list[str] | None = None
    """Quantizations allowed."""
    sort: str | OpenRouterSort | None = None
    """Sort order of upstreams."""
    max_price: OpenRouterMaxPrice | None = None
    """Price ceilings."""
    preferred_min_throughput: Number | Percentiles | None = None
    """Preferred minimum throughput."""
    preferred_max_latency: Number | Percentiles | None = None
    """Preferred maximum latency."""


class VercelGatewayRouting(Model):
    """Vercel AI Gateway routing (used only when baseUrl points to it)."""

    only: list[str] | None = None
    """Upstreams allowed."""
    order: list[str] | None = None
    """Upstreams to try, in order."""


NonEmptyList = list[Annotated[str, StringConstraints(min_length=1)]]


class ModelCompat(Model):
    """Capabilities of a custom endpoint; set only what was verified against it."""

    supports_store: bool | None = None
    """Accepts the OpenAI ``store`` request field."""
    supports_prompt_cache_key: bool | None = None
    """Accepts prompt-cache/session-affinity keys."""
    supports_responses_continuation: bool | None = None
    """Stored HTTP continuation on a verified compatible endpoint."""
    supports_developer_role: bool | None = None
    """Accepts ``developer`` messages instead of requiring ``system``."""
    supports_reasoning_effort: bool | None = None
    """Accepts a reasoning-effort control."""
    supports_temperature: bool | None = None
    """Accepts ``temperature`` (default true)."""
    supports_instructions: bool | None = None
    """Responses API: honours top-level ``instructions``."""
    supports_usage_in_streaming: bool | None = None
    """Emits usage in streaming responses (default true)."""
    supports_tools: bool | None = None
    """Supports tool/function calling."""
    code_mode: Literal["preferred", "capable"] | None = None
    """Code-mode tier (absent = capable)."""
    supports_strict_mode: bool | None = None
    """Accepts the ``strict`` tool field (default true)."""
    supports_json_schema_response_format: bool | None = None
    """Supports JSON Schema through ``response_format``."""
    requires_string_content: bool | None = None
    """Requires plain-string message content."""
    strict_message_keys: bool | None = None
    """Requires outgoing messages to contain only accepted keys."""
    visible_reasoning_detail_types: NonEmptyList | None = None
    """Reasoning detail block types safe to show in transcripts."""
    supported_reasoning_efforts: NonEmptyList | None = None
    """The endpoint's accepted reasoning labels."""
    reasoning_effort_map: dict[Annotated[str, StringConstraints(min_length=1)], NonEmptyStr] | None = None
    """OpenClaw thinking labels → endpoint labels."""
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] | None = None
    """Which field carries the output-token cap."""
    thinking_format: (
        Literal["openai", "openrouter", "deepseek", "together", "qwen", "qwen-chat-template", "zai"] | None
    ) = None
    """Reasoning payload dialect."""
    requires_tool_result_name: bool | None = None
    """Tool results need a ``name``."""
    requires_assistant_after_tool_result: bool | None = None
    """An assistant message must follow tool results."""
    requires_thinking_as_text: bool | None = None
    """Replay reasoning as text rather than structured content."""
    requires_reasoning_content_on_assistant_messages: bool | None = None
    """Preserve DeepSeek-style ``reasoning_content`` during replay."""
    tool_schema_profile: str | None = None
    """Tool-schema normalization profile (``llamacpp``, ``gemini``)."""
    unsupported_tool_schema_keywords: NonEmptyList | None = None
    """JSON Schema keywords removed from tool schemas."""
    tool_call_arguments_encoding: str | None = None
    """Encoding of tool-call arguments."""
    requires_open_ai_anthropic_tool_payload: bool | None = None
    """Reshape OpenAI-style tool calls into Anthropic-family payloads."""
    open_router_routing: OpenRouterRouting | None = None
    """OpenRouter routing preferences."""
    vercel_gateway_routing: VercelGatewayRouting | None = None
    """Vercel AI Gateway routing preferences."""
    zai_tool_stream: bool | None = None
    """z.ai: top-level ``tool_stream: true``."""
    cache_control_format: Literal["anthropic"] | None = None
    """Prompt-caching convention."""
    send_session_affinity_headers: bool | None = None
    """Send session-affinity headers when caching."""
    send_session_id_header: bool | None = None
    """Send the OpenAI ``session_id`` header when caching (default true)."""
    supports_eager_tool_input_streaming: bool | None = None
    """Accepts per-tool ``eager_input_streaming`` (default true)."""
    supports_long_cache_retention: bool | None = None
    """Supports long prompt-cache retention (default true)."""


class ProviderModel(Model):
    """One model of the provider's catalog (``models.providers.<id>.models[]``)."""

    id: NonEmptyStr
    """The provider-facing model id; agents name it ``<provider>/<id>``."""
    name: NonEmptyStr | None = None
    """Display name (default: the id)."""
    api: ModelApi | None = None
    """Request adapter for this model (default: the provider's)."""
    base_url: NonEmptyStr | None = None
    """Base URL for this model (default: the provider's)."""
    reasoning: bool | None = None
    """The model reasons (thinking)."""
    input: list[ModelInput] | None = None
    """Input modalities, e.g. ``[text]`` or ``[text, image]``."""
    cost: ModelCost | None = None
    """Prices, for usage reports."""
    context_window: PositiveNumber | None = None
    """Native context window in tokens."""
    context_tokens: PositiveInt | None = None
    """Effective input budget in tokens, below the native context window."""
    max_tokens: PositiveNumber | None = None
    """Most output tokens per request."""
    thinking_level_map: ThinkingLevelMap | None = None
    """Thinking levels → provider values."""
    params: dict[str, Any] | None = None
    """Provider-specific request parameters."""
    agent_runtime: AgentRuntimePolicy | None = None
    """Agent runtime for this model."""
    headers: dict[str, SecretValue] = Field(default_factory=dict)
    """Static headers for this model's requests; a ``valueFrom.env`` becomes ``${NAME}``."""
    compat: ModelCompat | None = None
    """Capabilities of a custom endpoint."""
    media_input: MediaInput | None = None
    """Media input limits."""
    metadata_source: Literal["models-add"] | None = None
    """Marker OpenClaw's CLI writes for models it added."""
