"""Model providers, live: list what a provider serves the way its own API lists models.

The engine probes every ModelProvider it applies (``probe_provider``) and records the
models found (``Ready``/``ModelsDiscovered``) or why none were (a condition reason and a
message with the cause). This is HTTP to LLM APIs, not MCP, so it sits beside
``runtimes`` rather than in it.
"""

from clawplane.providers.apis import ANTHROPIC_VERSION, DiscoveredModel, listing_for
from clawplane.providers.probe import MAX_PAGES, ProbeResult, Resolve, probe_provider

__all__ = [
    "ANTHROPIC_VERSION",
    "MAX_PAGES",
    "DiscoveredModel",
    "ProbeResult",
    "Resolve",
    "listing_for",
    "probe_provider",
]
