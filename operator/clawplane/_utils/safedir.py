"""Directories written through their descriptors, so that no other user can aim the writes.

``open_dir`` walks a path from ``/`` one component at a time with ``O_NOFOLLOW`` (creating
missing components 0700) and checks on the way that no other user could rename what follows
away and put their own in its place; the directory itself must be ours alone (``dirtrust``).
Everything inside is then reached relative to the descriptor, never through a path resolved
again: subdirectories are opened ``O_NOFOLLOW`` (made 0700, ours, tightened), files are opened
``O_NOFOLLOW`` and checked (a regular file, ours, one link), new content goes to an ``O_EXCL``
temp file renamed into place with ``renameat``, and modes change only with ``fchmod``.
A link where a directory or file should be is refused, never followed or silently replaced.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat
from pathlib import Path
from types import TracebackType

from clawplane._utils.dirtrust import child_swap_problem, own_dir_problem, owner_name, trusted

__all__ = ["SafeDir", "UnsafePathError", "open_dir", "write_file"]

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)
_DIR_FLAGS = os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # NONBLOCK: a FIFO must not hang us


class UnsafePathError(OSError):
    """A path clawplane refuses to write through; the message says why and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EPERM, message)

    def __str__(self) -> str:
        return str(self.strerror)


def _link_target(name: str, dir_fd: int) -> str:
    try:
        return f" (to {os.readlink(name, dir_fd=dir_fd)})"
    except OSError:
        return ""


def _not_a_dir(path: Path, name: str, dir_fd: int, option: str) -> UnsafePathError:
    """Why ``name`` in ``dir_fd`` could not be opened as a directory without following a link."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        return UnsafePathError(
            f"{path} is a symbolic link{_link_target(name, dir_fd)}: clawplane does not write through links, "
            f"which another user could aim; remove it, or use {option} with a real directory"
        )
    return UnsafePathError(f"{path} is not a directory; remove it or use {option}")


class SafeDir:
    """An open directory that is ours; every file and folder under it is reached through it."""

    def __init__(self, path: Path, fd: int, option: str, *, private: bool) -> None:
        self.path = path
        self.fd = fd
        self.option = option
        self.private = private
        """Private trees are made 0700/0600; others (``import --out``) keep their modes."""

    # -- lifetime ---------------------------------------------------------------------------
    def close(self) -> None:
        """Close the descriptor (idempotent)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> SafeDir:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    # -- directories ------------------------------------------------------------------------
    def child(self, rel: str, *, create: bool = True) -> SafeDir:
        """The subdirectory ``rel`` (``a/b``), each component opened without following links.

        Raises:
            FileNotFoundError: It is missing and ``create`` is False.
            UnsafePathError: A component is a link, not a directory, or not ours.
        """
        current = SafeDir(self.path, os.dup(self.fd), self.option, private=self.private)
        try:
            for name in _components(rel, self.path):
                nxt = current._subdir(name, create=create)
                current.close()
                current = nxt
        except BaseException:
            current.close()
            raise
        return current

    def _subdir(self, name: str, *, create: bool) -> SafeDir:
        path = self.path / name
        try:
            fd = os.open(name, os.O_RDONLY | _DIR_FLAGS, dir_fd=self.fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, PRIVATE_DIR_MODE, dir_fd=self.fd)  # the umask can only take bits away
            return self._subdir(name, create=False)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise _not_a_dir(path, name, self.fd, self.option) from None
            raise
        try:
            info = os.fstat(fd)
            if info.st_uid != os.geteuid():
                raise UnsafePathError(
                    f"{path} is owned by {owner_name(info.st_uid)}, not by this user: clawplane does not "
                    f"write into it; remove it or use {self.option}"
                )
            if self.private:
                with contextlib.suppress(OSError):  # a read-only disk: reading it must still work
                    _tighten(fd, info, PRIVATE_DIR_MODE)
            elif (problem := own_dir_problem(path, info)) is not None:
                raise UnsafePathError(
                    f"{path} {problem.what}: another user could aim clawplane's writes; {problem.fix}, "
                    f"or use {self.option}"
                )
        except BaseException:
            os.close(fd)
            raise
        return SafeDir(path, fd, self.option, private=self.private)

    # -- files ------------------------------------------------------------------------------
    def lstat(self, name: str) -> os.stat_result | None:
        """The entry ``name`` itself (a link is not followed), or None when there is none."""
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def open_file(self, name: str, flags: int, *, mode: int = PRIVATE_FILE_MODE) -> int:
        """``openat`` of the file ``name`` without following a link; it must be a regular file of ours.

        With ``O_CREAT`` a new file gets ``mode``; opened for writing in a private tree, an
        existing one loses every bit beyond it.

        Raises:
            UnsafePathError: It is a link, not a regular file, not ours, or has other hard links.
        """
        path = self.path / name
        try:
            fd = os.open(name, flags | _FILE_FLAGS, mode, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePathError(
                    f"{path} is a symbolic link{_link_target(name, self.fd)}: clawplane does not write or "
                    "read through links, which another user could aim; remove it"
                ) from None
            if exc.errno in (errno.ENXIO, errno.ENODEV):  # a FIFO nobody reads, a socket, a device
                odd = f"{path} is not a regular file; clawplane does not use it: remove it"
                raise UnsafePathError(odd) from None
            raise
        try:
            info = os.fstat(fd)
            problem = _file_problem(info)
            if problem is not None:
                raise UnsafePathError(f"{path} {problem}; clawplane does not use it: remove it")
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
            if flags & os.O_CREAT or (self.private and flags & (os.O_WRONLY | os.O_RDWR)):
                _tighten(fd, info, mode)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def check_file(self, name: str) -> os.stat_result | None:
        """The file ``name`` as it is (None when absent), refused if it is not a plain file of ours.

        Nothing is opened: closing a descriptor of a file would drop the POSIX locks that another
        connection of this process (SQLite) holds on it.

        Raises:
            UnsafePathError: It is a link, not a regular file, not ours, or has other hard links.
        """
        info = self.lstat(name)
        if info is None:
            return None
        if stat.S_ISLNK(info.st_mode):
            raise UnsafePathError(
                f"{self.path / name} is a symbolic link{_link_target(name, self.fd)}: clawplane does not "
                "write or read through links, which another user could aim; remove it"
            )
        problem = _file_problem(info)
        if problem is not None:
            raise UnsafePathError(f"{self.path / name} {problem}; clawplane does not use it: remove it")
        return info

    def tighten(self, name: str, mode: int = PRIVATE_FILE_MODE) -> None:
        """Take every permission bit beyond ``mode`` from the file ``name`` (if it is there and ours).

        Through an ``O_PATH`` descriptor, whose close (unlike any other) keeps the POSIX locks
        this process holds on the file.
        """
        try:
            fd = os.open(name, _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.fd)
        except FileNotFoundError:
            return
        try:
            info = os.fstat(fd)
            current = stat.S_IMODE(info.st_mode)
            if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and current & ~mode:
                os.chmod(f"/proc/self/fd/{fd}", current & mode)  # fchmod refuses O_PATH descriptors
        finally:
            os.close(fd)

    def read(self, name: str) -> bytes | None:
        """The content of the file ``name`` (not through a link), or None when there is none."""
        try:
            fd = self.open_file(name, os.O_RDONLY)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as fh:
            return fh.read()

    def write_atomic(self, name: str, data: bytes, *, mode: int = PRIVATE_FILE_MODE) -> None:
        """Replace ``name`` with ``data``: an ``O_EXCL`` temp file, fsynced, renamed over it.

        Raises:
            UnsafePathError: ``name`` is a link or a directory (it is left as it is).
        """
        self._refuse_odd(name)
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=self.fd)  # fmt: skip
        try:
            os.fchmod(fd, mode)  # before any byte is written, whatever the umask
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.fd)
            raise
        self.sync()

    def write_if_changed(self, name: str, data: bytes, *, mode: int = PRIVATE_FILE_MODE) -> bool:
        """Write ``data`` to ``name`` unless it already holds exactly that (then only its mode is set)."""
        try:
            fd = self.open_file(name, os.O_RDONLY, mode=mode)
        except FileNotFoundError:
            fd = -1
        except IsADirectoryError:
            raise UnsafePathError(f"{self.path / name} is a directory; remove it") from None
        if fd >= 0:
            with os.fdopen(fd, "rb") as fh:
                if fh.read() == data:
                    # Unchanged content is not rewritten, but a file that may hold secrets must be private.
                    if stat.S_IMODE(os.fstat(fh.fileno()).st_mode) != mode:
                        os.fchmod(fh.fileno(), mode)
                    return False
        self.write_atomic(name, data, mode=mode)
        return True

    def unlink(self, name: str) -> None:
        """Remove the entry ``name`` (a link is removed, not followed); a missing one is fine."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.fd)

    def rename(self, src: str, dst: str) -> None:
        """Rename ``src`` to ``dst``, both in this directory."""
        os.rename(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def sync(self) -> None:
        """Make renames in this directory durable (some filesystems cannot; that is not an error)."""
        with contextlib.suppress(OSError):
            os.fsync(self.fd)

    def _refuse_odd(self, name: str) -> None:
        info = self.lstat(name)
        if info is None or stat.S_ISREG(info.st_mode):
            return
        if stat.S_ISLNK(info.st_mode):
            raise UnsafePathError(
                f"{self.path / name} is a symbolic link{_link_target(name, self.fd)}: clawplane does not "
                "write through links, which another user could aim; remove it"
            )
        raise UnsafePathError(f"{self.path / name} is not a regular file; remove it")


def _file_problem(info: os.stat_result) -> str | None:
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if info.st_uid != os.geteuid():
        return f"is owned by {owner_name(info.st_uid)}, not by this user"
    if info.st_nlink > 1:
        return f"has {info.st_nlink} hard links (another name could be anywhere)"
    return None


def _tighten(fd: int, info: os.stat_result, mode: int) -> None:
    current = stat.S_IMODE(info.st_mode)
    if current & ~mode:
        os.fchmod(fd, current & mode)


def _components(rel: str, base: Path) -> list[str]:
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafePathError(f"{base / rel} leaves {base}; clawplane writes only below it")
    return parts


def open_dir(path: Path, *, create: bool = True, option: str = "--state-dir DIR", private: bool = True,
             own: bool = True) -> SafeDir:  # fmt: skip
    """Open the directory ``path`` for writing into it, refusing anything another user could aim.

    Every component is opened with ``O_NOFOLLOW`` from ``/`` (missing ones are made 0700 with
    ``create``), and no component may let another user replace the next one. With ``own`` the
    directory itself must be ours (or root's) and writable by nobody else; ``private`` makes it
    0700. Links in the parents are resolved once, first, so a folder reached through a link works;
    ``path`` itself must not be one. ``option`` names what the user can pass instead.

    Raises:
        UnsafePathError: Another user could aim writes there (the message says who and the fix).
        FileNotFoundError: It is missing and ``create`` is False.
        OSError: It cannot be opened or made (permissions, a read-only disk).
    """
    path = Path(os.path.abspath(path))
    path = Path(os.path.realpath(path.parent)) / path.name if path.name else path
    fd = os.open("/", _O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    here = Path("/")
    swap: str | None = None  # why the first parent that lets another user swap what follows does
    try:
        info = os.fstat(fd)
        parts = path.parts[1:]
        for i, name in enumerate(parts):
            child = here / name
            # Nothing is made where someone else could swap it (then it is refused anyway).
            making = create and swap is None and _swap(here, info, None, child, option) is None
            try:
                nfd = _open_step(fd, name, child, last=i == len(parts) - 1, create=making, option=option)
            except FileNotFoundError:
                if not create:
                    raise
                raise UnsafePathError(swap or _swap(here, info, None, child, option) or str(child)) from None
            os.close(fd)
            fd, parent, info = nfd, info, os.fstat(nfd)
            swap = swap or _swap(here, parent, info, child, option)
            here = child
        if not parts:  # "/" itself: reopen readable
            nfd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            os.close(fd)
            fd = nfd
        problem = own_dir_problem(path, info) if own and not trusted(path) else None
        if problem is not None:
            also = f" (and {swap})" if swap else ""
            raise UnsafePathError(
                f"{path} {problem.what}: another user could aim clawplane's writes; {problem.fix}, "
                f"or use {option}{also}"
            )
        if swap is not None:
            raise UnsafePathError(swap)
        if own and private and not trusted(path) and info.st_uid == os.geteuid():
            with contextlib.suppress(OSError):  # a read-only disk: reading it must still work
                _tighten(fd, info, PRIVATE_DIR_MODE)
    except BaseException:
        os.close(fd)
        raise
    return SafeDir(path, fd, option, private=private)


def _swap(here: Path, info: os.stat_result, child_info: os.stat_result | None, child: Path,
          option: str) -> str | None:  # fmt: skip
    """Why another user could replace ``child`` in ``here`` (with ``info``), as the user reads it, or None."""
    problem = None if trusted(here) else child_swap_problem(here, info, child_info)
    if problem is None:
        return None
    return (f"{here} {problem.what}: another user could replace {child} and aim clawplane's writes; "
            f"{problem.fix}, or use {option}")  # fmt: skip


def _open_step(fd: int, name: str, path: Path, *, last: bool, create: bool, option: str) -> int:
    flags = (os.O_RDONLY if last else _O_PATH) | _DIR_FLAGS
    try:
        return os.open(name, flags, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _not_a_dir(path, name, fd, option) from None
        raise
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, PRIVATE_DIR_MODE, dir_fd=fd)  # the umask can only take bits away from 0700
    return _open_step(fd, name, path, last=last, create=False, option=option)


def write_file(path: Path, data: bytes, *, option: str, mode: int = PRIVATE_FILE_MODE) -> None:
    """Write a file the user named (``plan --out FILE``) atomically, where nobody else can aim it.

    Its folder must exist; it may be shared (``/tmp``) if its sticky bit keeps others from
    replacing our file, and a link or another user's file at ``path`` is refused.
    """
    path = Path(os.path.abspath(path))
    with open_dir(Path(os.path.realpath(path.parent)), create=False, option=option, own=False) as folder:
        existing = folder.lstat(path.name)
        if not trusted(folder.path):
            info = os.fstat(folder.fd)
            problem = child_swap_problem(folder.path, info, existing)
            if problem is not None:
                raise UnsafePathError(
                    f"{folder.path} {problem.what}: another user could replace {path}; {problem.fix}, "
                    f"or use {option}"
                )
        if existing is not None and stat.S_ISREG(existing.st_mode) and existing.st_uid != os.geteuid():
            owner = owner_name(existing.st_uid)
            raise UnsafePathError(f"{path} is owned by {owner}; remove it or use {option}")
        folder.write_atomic(path.name, data, mode=mode)
