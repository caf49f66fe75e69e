"""How each provider API lists its models: the request to send and how to read one page.

- OpenAI-compatible (``openai-completions``, ``openai-responses``, ``azure-openai-responses``):
  ``GET {baseUrl}/models`` with ``Authorization: Bearer <key>``; ``{"data": [{"id"}]}``.
- Anthropic (``anthropic-messages``): ``GET {baseUrl}/v1/models`` (``/models`` when the base
  already ends in ``/v1``) with ``x-api-key`` and ``anthropic-version: 2023-06-01``; pages
  through ``has_more``/``last_id`` → ``after_id``.
- Google (``google-generative-ai``): ``GET {baseUrl}/models`` with ``x-goog-api-key`` (never the
  key in the URL); ``{"models": [{"name": "models/<id>"}]}``, pages through ``nextPageToken``.
- Ollama (``ollama``): ``GET {root}/api/tags`` (the native API; a trailing ``/v1`` is dropped).
Other adapters (Vertex, Bedrock, Copilot, ChatGPT, pi) have no key-based listing here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clawplane.models import ModelApi

ANTHROPIC_VERSION = "2023-06-01"
_OPENAI_LIKE = frozenset(
    {ModelApi.OPENAI_COMPLETIONS, ModelApi.OPENAI_RESPONSES, ModelApi.AZURE_OPENAI_RESPONSES}
)


@dataclass(frozen=True, slots=True)
class DiscoveredModel:
    """One model a provider lists."""

    id: str
    name: str | None = None
    context_window: int | None = None


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing: its models and the query that fetches the next page (None: last)."""

    models: tuple[DiscoveredModel, ...]
    next_query: dict[str, str] | None = None


class BadListing(ValueError):
    """The response is not a model listing of this API."""


@dataclass(frozen=True, slots=True)
class Listing:
    """The listing endpoint of one API: URL, auth headers and the page parser."""

    api: ModelApi
    url: str

    def auth_headers(self, key: str | None, *, auth_header: bool) -> dict[str, str]:
        """The headers that carry ``key`` the way this API expects it."""
        headers: dict[str, str] = {}
        if self.api is ModelApi.ANTHROPIC_MESSAGES:
            headers["anthropic-version"] = ANTHROPIC_VERSION
        if not key:
            return headers
        if auth_header or self.api in _OPENAI_LIKE or self.api is ModelApi.OLLAMA:
            headers["Authorization"] = f"Bearer {key}"
        elif self.api is ModelApi.ANTHROPIC_MESSAGES:
            headers["x-api-key"] = key
        elif self.api is ModelApi.GOOGLE_GENERATIVE_AI:
            headers["x-goog-api-key"] = key
        return headers

    def first_query(self) -> dict[str, str]:
        """Query parameters of the first request."""
        if self.api is ModelApi.ANTHROPIC_MESSAGES:
            return {"limit": "1000"}
        if self.api is ModelApi.GOOGLE_GENERATIVE_AI:
            return {"pageSize": "1000"}
        return {}

    def parse(self, doc: Any) -> Page:
        """One response body (decoded JSON) as a page; ``BadListing`` when it is not one."""
        if not isinstance(doc, Mapping):
            raise BadListing("the response is not a JSON object")
        if self.api is ModelApi.GOOGLE_GENERATIVE_AI:
            return _google(doc)
        if self.api is ModelApi.OLLAMA:
            return Page(_entries(doc, "models", ("name", "model"), prefix=""))
        page = Page(_entries(doc, "data", ("id",), prefix=""))
        if self.api is ModelApi.ANTHROPIC_MESSAGES and doc.get("has_more") is True:
            last = doc.get("last_id")
            if not isinstance(last, str) or not last:
                raise BadListing("has_more is true but last_id is missing")
            return Page(page.models, {"limit": "1000", "after_id": last})
        return page


def listing_for(api: ModelApi, base_url: str) -> Listing | None:
    """The listing endpoint for ``api`` at ``base_url``, or None when this API cannot be listed."""
    base = base_url.rstrip("/")
    if api in _OPENAI_LIKE or api is ModelApi.GOOGLE_GENERATIVE_AI:
        return Listing(api, f"{base}/models")
    if api is ModelApi.ANTHROPIC_MESSAGES:
        return Listing(api, f"{base}/models" if base.endswith("/v1") else f"{base}/v1/models")
    if api is ModelApi.OLLAMA:
        return Listing(api, f"{base.removesuffix('/v1')}/api/tags")
    return None


def _entries(
    doc: Mapping[str, Any], key: str, id_keys: tuple[str, ...], *, prefix: str
) -> tuple[DiscoveredModel, ...]:
    items = doc.get(key)
    if not isinstance(items, list):
        raise BadListing(f"the response has no {key!r} list")
    found: list[DiscoveredModel] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        ident = next((item[k] for k in id_keys if isinstance(item.get(k), str) and item[k]), None)
        if ident is None:
            continue
        name = item.get("display_name") or item.get("displayName")
        window = item.get("inputTokenLimit") or item.get("context_window") or item.get("context_length")
        found.append(
            DiscoveredModel(
                ident.removeprefix(prefix),
                name if isinstance(name, str) else None,
                window if isinstance(window, int) and not isinstance(window, bool) else None,
            )
        )
    return tuple(found)


def _google(doc: Mapping[str, Any]) -> Page:
    models = _entries(doc, "models", ("name",), prefix="models/")
    token = doc.get("nextPageToken")
    return Page(
        models, {"pageSize": "1000", "pageToken": token} if isinstance(token, str) and token else None
    )


__all__ = ["ANTHROPIC_VERSION", "BadListing", "DiscoveredModel", "Listing", "Page", "listing_for"]
