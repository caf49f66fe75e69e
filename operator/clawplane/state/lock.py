"""A per-folder lock so that two applies never run at once; the second fails fast."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from clawplane.state.db import StateError


class FolderLock:
    """An exclusive, non-blocking ``flock`` on a file in the state directory."""

    def __init__(self, state_dir: Path, name: str = "apply.lock") -> None:
        self.path = state_dir / name
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise ``StateError`` naming the holder."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise StateError(
                f"another apply is running for this folder (pid {holder}, lock {self.path}); "
                "wait for it to finish and try again"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Release the lock."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.release()
