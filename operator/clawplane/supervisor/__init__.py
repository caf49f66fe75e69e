"""clawplane.supervisor: the folder supervisor behind ``clawplane run``, above the engine.

- ``daemon`` — ``run_supervisor``: the hosted runtimes and their endpoint, the control socket,
  the run loop, health and metrics, and teardown; ``SupervisorOptions``, ``PagesContext``.
- ``handler`` — its answers to the control protocol (``workspace.protocol``).
- ``processes`` — every process it spawns, recorded and marked; what a dead one left is ended.
- ``extensions`` — services an entry point runs on its endpoint (``SupervisorContext``).
- ``tokenops`` — rotating the endpoint's tokens and rewriting the configs that carry them.
- ``watch`` and ``inotify`` — the one watch of the folder.
- ``endpoint`` — where the hosted endpoint listens.
- ``lifecycle`` — start one detached and wait until it answers, stop it.

The names resolve on first use (PEP 562): ``clawplane down`` and ``apply`` start and stop a
supervisor without loading the MCP SDK that running one needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawplane._utils.lazy import LazyNames

if TYPE_CHECKING:
    from clawplane.supervisor.daemon import PagesContext, SupervisorOptions, run_supervisor
    from clawplane.supervisor.extensions import FileChanges, SupervisorContext, SupervisorService
    from clawplane.supervisor.handler import ControlHandler, live_reports
    from clawplane.supervisor.lifecycle import (
        STOP_TIMEOUT_S,
        LoopArgs,
        SupervisorStartError,
        start_detached,
        stop_supervisor,
    )
    from clawplane.supervisor.processes import cleanup_stale_runtimes
    from clawplane.supervisor.tokenops import rotate
    from clawplane.supervisor.watch import watch_folder

_HOMES: dict[str, str] = {
    "ControlHandler": "clawplane.supervisor.handler",
    "FileChanges": "clawplane.supervisor.extensions",
    "LoopArgs": "clawplane.supervisor.lifecycle",
    "PagesContext": "clawplane.supervisor.daemon",
    "STOP_TIMEOUT_S": "clawplane.supervisor.lifecycle",
    "SupervisorContext": "clawplane.supervisor.extensions",
    "SupervisorOptions": "clawplane.supervisor.daemon",
    "SupervisorService": "clawplane.supervisor.extensions",
    "SupervisorStartError": "clawplane.supervisor.lifecycle",
    "cleanup_stale_runtimes": "clawplane.supervisor.processes",
    "live_reports": "clawplane.supervisor.handler",
    "rotate": "clawplane.supervisor.tokenops",
    "run_supervisor": "clawplane.supervisor.daemon",
    "start_detached": "clawplane.supervisor.lifecycle",
    "stop_supervisor": "clawplane.supervisor.lifecycle",
    "watch_folder": "clawplane.supervisor.watch",
}

__all__ = [
    "STOP_TIMEOUT_S",
    "ControlHandler",
    "FileChanges",
    "LoopArgs",
    "PagesContext",
    "SupervisorContext",
    "SupervisorOptions",
    "SupervisorService",
    "SupervisorStartError",
    "cleanup_stale_runtimes",
    "live_reports",
    "rotate",
    "run_supervisor",
    "start_detached",
    "stop_supervisor",
    "watch_folder",
]


_names = LazyNames(__name__, _HOMES, globals())
__getattr__ = _names.getattr
__dir__ = _names.dir
