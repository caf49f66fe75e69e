"""Reading a secret from a file without letting the file stall or exhaust the reader.

``read_secret_file`` opens without blocking (a FIFO with no writer, a terminal or a device
cannot hold it up), accepts only regular files, reads at most ``max_bytes`` (so
``/dev/zero`` or a runaway log cannot grow the process) and gives up after ``timeout``
seconds (a hung network filesystem). The read runs in a worker thread, so a caller on an
event loop waits at most ``timeout``; a worker stuck in the kernel is left behind as a
daemon thread rather than holding the caller.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FileLimits", "SecretFileError", "read_secret_file"]


@dataclass(frozen=True, slots=True)
class FileLimits:
    """Bounds of one secret-file read."""

    max_bytes: int = 256 * 1024
    """Largest file accepted (a private key or a service-account JSON is a few KiB)."""
    timeout: float = 2.0
    """Seconds one read may take before it is abandoned."""


class SecretFileError(Exception):
    """The file cannot be used as a secret; the message names the path, never the content."""


def _read(path: Path, max_bytes: int) -> bytes:
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise SecretFileError(f"cannot read secret file {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SecretFileError(f"secret file {path} is not a regular file ({_kind(info.st_mode)})")
        if info.st_size > max_bytes:
            raise SecretFileError(f"secret file {path} is larger than {max_bytes} bytes")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:  # it grew while we read
            raise SecretFileError(f"secret file {path} is larger than {max_bytes} bytes")
        return b"".join(chunks)
    except OSError as exc:
        raise SecretFileError(f"cannot read secret file {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_secret_file(path: Path, limits: FileLimits | None = None) -> str:
    """The file's UTF-8 text with trailing line breaks stripped.

    Raises:
        SecretFileError: Not a regular file, too large, unreadable, not UTF-8, or too slow.
    """
    limits = limits or FileLimits()
    box: list[bytes | BaseException] = []
    done = threading.Event()

    def work() -> None:
        try:
            box.append(_read(path, limits.max_bytes))
        except BaseException as exc:  # handed to the caller's thread
            box.append(exc)
        finally:
            done.set()

    threading.Thread(target=work, name="clawplane-secret-file", daemon=True).start()
    if not done.wait(limits.timeout):
        raise SecretFileError(f"reading secret file {path} took longer than {limits.timeout:g}s")
    result = box[0]
    if isinstance(result, BaseException):
        raise result
    try:
        return result.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        raise SecretFileError(f"secret file {path} is not UTF-8 text") from None
