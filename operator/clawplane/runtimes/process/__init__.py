"""clawplane.runtimes.process: a stdio server's child process and proof that it is ours.

Starting it (``child``), marking it so a later supervisor can prove it started it (``marks``),
reaping orphans as the subreaper (``reaping``, ``childwatch``), its cgroup (``cgroups``), its
captured stderr (``stderr``) and the slots starts wait for (``starts``). Nothing here knows MCP.
"""

from clawplane.runtimes.process.child import (
    OwnedProcess,
    ServerProcess,
    Teardown,
    live_processes,
    open_process,
    use_ledger,
)
from clawplane.runtimes.process.childwatch import (
    DESCRIPTORS_PER_SERVER,
    raise_descriptor_limit,
    watch_children_with_pidfds,
)
from clawplane.runtimes.process.marks import Owned, marked_processes, own_mark, owner_of, proven
from clawplane.runtimes.process.starts import StartSlots, default_start_slots
from clawplane.runtimes.process.stderr import StderrLog

__all__ = [
    "DESCRIPTORS_PER_SERVER",
    "Owned",
    "OwnedProcess",
    "ServerProcess",
    "StartSlots",
    "StderrLog",
    "Teardown",
    "default_start_slots",
    "live_processes",
    "marked_processes",
    "open_process",
    "own_mark",
    "owner_of",
    "proven",
    "raise_descriptor_limit",
    "use_ledger",
    "watch_children_with_pidfds",
]
