"""Timing and size limits of the MCP runtimes.

The defaults are OpenClaw 2026.9.6's constants (``src/agents/agent-bundle-mcp-runtime.ts``,
``mcp-transport.ts``, ``owned-stdio``): 3 failures pause a server for 60 s, a tool listing is
bounded to 128 pages, 16 384 tools and 10 MiB, stderr lines are capped at 8 192 bytes, and a
stdio process gets 2 s after stdin closes and 2 s after SIGTERM. Restart backoff (1 s doubling
to 30 s) is clawplane's own. Tests pass smaller values; nothing else should need to.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clawplane.runtimes.oauth import CredentialSource
    from clawplane.telemetry import CallTelemetry

__all__ = ["RuntimeSettings"]


@dataclass(frozen=True, slots=True)
class RuntimeSettings:
    """How the supervisor times, bounds and retries the servers it runs."""

    failure_threshold: int = 3
    """Consecutive failed requests that pause a server (OpenClaw ``BUNDLE_MCP_FAILURE_THRESHOLD``)."""
    pause_seconds: float = 60.0
    """How long a paused server refuses calls (``BUNDLE_MCP_FAILURE_COOLDOWN_MS``)."""
    restart_backoff_base: float = 1.0
    """Delay before the first restart of a crashed server; doubles on each further crash."""
    restart_backoff_max: float = 30.0
    """Upper bound of the restart delay."""
    stable_seconds: float = 30.0
    """A server that stayed ready this long starts its next backoff from the base again."""
    max_restarts: int | None = None
    """Stop restarting after this many restarts (``None``: forever; the bridge uses 0)."""
    catalog_list_timeout: float = 1.5
    """tools/list budget without an explicit ``requestTimeoutMs`` (``BUNDLE_MCP_CATALOG_LIST_TIMEOUT_MS``)."""
    catalog_retry_seconds: float = 5.0
    """Delay before retrying a failed refresh of the tool list (``BUNDLE_MCP_CATALOG_FAILURE_RETRY_MS``)."""
    max_list_pages: int = 128
    """Pages one listing may take (``BUNDLE_MCP_MAX_LIST_PAGES``)."""
    max_list_items: int = 16_384
    """Items one listing may return (``BUNDLE_MCP_MAX_LIST_ITEMS``)."""
    max_list_bytes: int = 10 * 1024 * 1024
    """UTF-8 bytes of JSON one listing may take (``BUNDLE_MCP_MAX_LIST_BYTES``)."""
    stdin_close_grace: float = 2.0
    """How long a stdio server may take to exit after its stdin closes."""
    terminate_grace: float = 2.0
    """How long its process group may take to exit after SIGTERM, before SIGKILL."""
    kill_wait: float = 2.0
    """How long to wait for killed processes to disappear before giving up on them."""
    stderr_line_bytes: int = 8192
    """Longest stderr line kept; longer lines keep their tail (``MAX_MCP_STDERR_LINE_BYTES``)."""
    stderr_history: int = 200
    """stderr lines kept per server for ``Supervisor.stderr``."""
    max_message_bytes: int = 64 * 1024 * 1024
    """Longest stdout line accepted as one protocol message; longer lines are dropped."""
    adopt_orphans: bool = True
    """Make this process a child subreaper (Linux), so killed grandchildren are reaped at once."""
    ping_interval: float | None = 15.0
    """Seconds between liveness checks of a ready server: an MCP ``ping`` (a server that does not
    implement it still answers), and for stdio a look at whether the process is stopped. A server
    that fails one is restarted. ``None`` turns the checks off."""
    ping_timeout: float = 10.0
    """How long a liveness ping may take (at most the server's ``requestTimeoutMs``)."""
    use_cgroups: bool = True
    """Start each stdio server in a cgroup v2 of its own where the hierarchy is writable, so its
    whole tree (``setsid`` helpers included) is ended with it."""
    inherit_environment: bool = False
    """Give stdio servers clawplane's whole environment (the standalone bridge in a container)."""
    state_dir: Path | None = None
    """The folder's state directory: where ``auth: oauth`` servers' logins are stored (None: none)."""
    folder: Path | None = None
    """The resource folder, for the ``clawplane login`` command that status suggests."""
    credentials: CredentialSource | None = None
    """Where ``auth: oauth`` servers' logins are read and refreshed tokens written back, when not
    the state directory (the Kubernetes operator: a Secret per server)."""
    telemetry: CallTelemetry | None = None
    """Where the proxy reports every request it carries (metrics, charts, the audit trail; None: off)."""
    max_starting: int | None = None
    """How many stdio servers may be starting (spawned, not yet ready) at once; the others wait
    their turn (``runtimes.process.starts``). None: four per core, at least eight."""

    def restart_delay(self, attempt: int) -> float:
        """Seconds to wait before restart number ``attempt`` (1-based) of a crash streak."""
        exponent = max(0, attempt - 1)
        # Cap the exponent so a long streak cannot overflow the float.
        return float(min(self.restart_backoff_max, self.restart_backoff_base * 2 ** min(exponent, 62)))
