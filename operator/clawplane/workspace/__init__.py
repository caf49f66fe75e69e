"""A resource folder's own files and its supervisor's door: layout, pidfile and lock, control protocol.

The folder's paths (``layout``), who runs its supervisor (``pidfile``), and how to talk to it: the
control socket (``control``), the one message schema (``protocol``) and a typed client
(``client``). Everything above that reaches a supervisor goes through ``SupervisorClient``.
"""

from clawplane.workspace.client import SupervisorClient, answer, ping
from clawplane.workspace.control import ControlError, serve_control
from clawplane.workspace.layout import STATE_DIR_NAME, Workspace
from clawplane.workspace.pidfile import (
    LOOP_STATUS_FILE,
    SUPERVISOR_LOCK,
    SupervisorInfo,
    lock_holders,
    pid_alive,
    read_info,
    read_loop_status,
    remove_info,
    supervisor_alive,
    write_info,
    write_loop_status,
)
from clawplane.workspace.protocol import (
    Apply,
    Op,
    Ping,
    ProtocolError,
    Request,
    Respond,
    RotateTokens,
    Runtimes,
    Shutdown,
    decode,
    encode,
)

__all__ = [
    "LOOP_STATUS_FILE",
    "STATE_DIR_NAME",
    "SUPERVISOR_LOCK",
    "Apply",
    "ControlError",
    "Op",
    "Ping",
    "ProtocolError",
    "Request",
    "Respond",
    "RotateTokens",
    "Runtimes",
    "Shutdown",
    "SupervisorClient",
    "SupervisorInfo",
    "Workspace",
    "answer",
    "decode",
    "encode",
    "lock_holders",
    "pid_alive",
    "ping",
    "read_info",
    "read_loop_status",
    "remove_info",
    "serve_control",
    "supervisor_alive",
    "write_info",
    "write_loop_status",
]
