"""A per-folder lock so that two applies never run at once; the second fails fast."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from clawplane._utils.safedir import UnsafePathError
from clawplane.state.db import StateError, open_state_dir


class FolderLock:
    """An exclusive, non-blocking ``flock`` on a file in the state directory."""

    def __init__(self, state_dir: Path, name: str = "apply.lock") -> None:
        self.path = state_dir / name
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise ``StateError`` naming the holder."""
        try:
            with open_state_dir(self.path.parent) as folder:
                fd = folder.open_file(self.path.name, os.O_RDWR | os.O_CREAT)
        except UnsafePathError as exc:
            raise StateError(str(exc)) from None
        except OSError as exc:
            raise StateError(
                f"cannot open the lock {self.path}: {exc.strerror}; make the state directory writable "
                "or pass --state-dir"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip()
            os.close(fd)
            raise StateError(self._held_message(holder)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd

    def _held_message(self, holder: str) -> str:
        """Who holds the lock (pid and command line) and how to make it let go."""
        who = f"pid {holder}" if holder.isdigit() else "another process"
        command = _command_line(int(holder)) if holder.isdigit() else ""
        if command:
            who += f": {command}"
        folder = self.path.parent.parent if self.path.parent.name == ".clawplane" else "FOLDER"
        if self.path.name == "supervisor.lock":
            return (
                f"a supervisor already runs this folder ({who}); stop it with `clawplane down {folder}` "
                f"(lock {self.path})"
            )
        kill = f" or `kill {holder}`" if holder.isdigit() else ""
        return (
            f"another `clawplane apply` is running for this folder ({who}); wait for it to finish, "
            f"or stop it (Ctrl-C in its terminal{kill}), then try again (lock {self.path})"
        )

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


def _command_line(pid: int) -> str:
    """The command line of ``pid`` (shortened), or "" when it cannot be read."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            words = fh.read().decode(errors="replace").split("\0")
    except OSError:
        return ""
    text = " ".join(w for w in words if w)
    return text if len(text) <= 160 else text[:157] + "..."
