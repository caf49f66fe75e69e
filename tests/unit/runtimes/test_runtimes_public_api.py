"""The runtimes package's public surface is deliberate: every name exported, nothing missing."""

from __future__ import annotations

import clawplane.runtimes as runtimes


def test_public_names_are_exactly_the_documented_ones() -> None:
    assert sorted(runtimes.__all__) == sorted(
        [
            "BridgeOptions", "BridgeOutcome", "ConnectTimeoutError", "Endpoint", "EventKind", "ListingError",
            "McpRuntimeError", "Phase", "PortInUseError", "Principal", "ProbeCall", "ProbeCallOutcome", "ProbeReport", "ProbeTarget",
            "RequestFailedError", "RequestGuard", "RequestTimeoutError", "RuntimeEvent", "RuntimeSettings",
            "RuntimeStatus", "ServerPausedError", "ServerUnavailableError", "StartError", "Supervisor",
            "TokenTable", "ToolEntry", "ToolKind", "ToolResult", "UnknownServerError", "probe_servers",
            "run_bridge", "token_digest",
            # what the engine's per-agent endpoints, catalogs and the login flows use
            "AGENT_SCOPE_KEY", "AgentEndpoint", "Launch", "ServerTools", "ToolSpec", "merge_catalog",
            "prepare_launch", "redact_url", "schema_hash",
        ]
    )  # fmt: skip
    assert all(hasattr(runtimes, name) for name in runtimes.__all__)


def test_every_error_is_a_runtime_error() -> None:
    for name in runtimes.__all__:
        value = getattr(runtimes, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, runtimes.McpRuntimeError), name
