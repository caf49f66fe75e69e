"""The supervisor's control protocol: newline-delimited JSON over a Unix socket.

A client sends one request object (its schema is ``protocol.py``) and reads event objects
until one has ``"final": true``.
Replies never contain secret values: plans and statuses are redacted upstream, and every
reply's values pass the process's redactor (``redact_data``: its keys, ``final`` among them,
and its protocol words stay as they are, whatever value a secret has). An ``apply`` request
carries the values of the ``valueFrom.env`` names the plan was made with, which is why both
ends check who is on the other side: the socket is 0600 in a 0700 directory, the server
accepts only peers of its own user (``SO_PEERCRED``), and the client talks only to a socket
file and a peer of its own user.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import SocketAttribute, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from clawplane.secrets import redact_data
from clawplane.state import StateError

MAX_MESSAGE = 16 * 1024 * 1024

Handler = Callable[[dict[str, Any], Callable[[dict[str, Any]], Awaitable[None]]], Awaitable[dict[str, Any]]]


class ControlError(Exception):
    """The supervisor could not be reached or answered with an error."""


async def _send(stream: SocketStream, message: dict[str, Any]) -> None:
    await stream.send(json.dumps(message, separators=(",", ":")).encode() + b"\n")


def peer_credentials(stream: SocketStream) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a Unix socket."""
    raw: socket.socket = stream.extra(SocketAttribute.raw_socket)
    pid, uid, _gid = struct.unpack("3i", raw.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return pid, uid


def _redacted(message: dict[str, Any]) -> dict[str, Any]:
    return dict(redact_data(message))


async def _receive(buffer: BufferedByteReceiveStream) -> dict[str, Any]:
    line = await buffer.receive_until(b"\n", MAX_MESSAGE)
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ControlError("malformed control message")
    return message


def _make_private(path: Path) -> None:
    """chmod 0600 the socket just bound at ``path``, never through a link put there meanwhile."""
    fd = os.open(path, getattr(os, "O_PATH", os.O_RDONLY) | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.geteuid():
            raise StateError(f"{path} was replaced while the supervisor bound it; remove it and start again")
        os.chmod(f"/proc/self/fd/{fd}", 0o600)  # the inode itself: fchmod refuses O_PATH descriptors
    finally:
        os.close(fd)


async def serve_control(
    path: Path,
    handler: Handler,
    *,
    after_reply: Callable[[dict[str, Any]], None] | None = None,
    task_status: Any = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve requests on ``path`` until cancelled; each connection is one request.

    ``after_reply(request)`` runs once the final answer was sent (e.g. to shut down only
    after telling the client so).
    """
    path.unlink(missing_ok=True)
    listener = await anyio.create_unix_listener(path)
    try:
        _make_private(path)
    except BaseException:
        await listener.aclose()
        raise
    task_status.started()

    async def handle(stream: SocketStream) -> None:
        async with stream:
            if peer_credentials(stream)[1] != os.geteuid():
                return  # another user: say nothing (the socket mode should have kept them out)
            buffer = BufferedByteReceiveStream(stream)
            try:
                request = await _receive(buffer)
            except (anyio.EndOfStream, anyio.IncompleteRead, ValueError, ControlError):
                return

            # Changes are applied concurrently and each reports progress on this one stream: a
            # send that waits for a slow reader must not meet another task's send (anyio refuses
            # two writers, which failed applies of hundreds of resources).
            sending = anyio.Lock()

            async def emit(event: dict[str, Any]) -> None:
                async with sending:
                    await _send(stream, _redacted({**event, "final": False}))

            try:
                result = await handler(request, emit)
            except Exception as exc:  # report to the client instead of killing the supervisor
                result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                async with sending:
                    await _send(stream, _redacted({**result, "final": True}))
            if after_reply is not None:
                after_reply(request)

    try:
        async with listener:
            await listener.serve(handle)
    finally:
        path.unlink(missing_ok=True)


_MAX_SOCKET_PATH = 100  # AF_UNIX names are limited to about 108 bytes


async def _connect(path: Path) -> SocketStream:
    """Connect to the socket at ``path``, through its directory's descriptor when the name is too long
    for ``AF_UNIX`` (a folder moved to a longer path keeps its socket in its state directory)."""
    if len(os.fsencode(path)) <= _MAX_SOCKET_PATH:
        return await anyio.connect_unix(path)
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return await anyio.connect_unix(f"/proc/self/fd/{fd}/{path.name}")
    finally:
        os.close(fd)


async def request(
    path: Path, message: dict[str, Any], *, timeout: float = 5.0
) -> AsyncIterator[dict[str, Any]]:
    """Send one request and yield events until (and including) the final one.

    Raises:
        ControlError: No supervisor answers there, or the socket or its peer belongs to
            another user (never trusted: a request may carry secret values).
    """
    try:
        owner = os.lstat(path).st_uid
    except OSError as exc:
        raise ControlError(f"cannot reach the supervisor at {path}: {exc.strerror}") from None
    if owner != os.geteuid():
        raise ControlError(f"not using {path}: it belongs to uid {owner}, not to this user")
    try:
        with anyio.fail_after(timeout):
            stream = await _connect(path)
    except (OSError, TimeoutError) as exc:
        raise ControlError(f"cannot reach the supervisor at {path}: {exc}") from None
    async with stream:
        peer_pid, peer_uid = peer_credentials(stream)
        if peer_uid != os.geteuid():
            raise ControlError(f"not using {path}: its server (pid {peer_pid}) runs as uid {peer_uid}")
        await _send(stream, message)
        buffer = BufferedByteReceiveStream(stream)
        while True:
            try:
                event = await _receive(buffer)
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError) as exc:
                raise ControlError("the supervisor closed the connection before answering") from exc
            yield event
            if event.get("final"):
                return
