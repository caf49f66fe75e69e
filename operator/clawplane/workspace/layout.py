"""Where a folder's clawplane files live: state database, outputs, pidfile, control socket."""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

STATE_DIR_NAME = ".clawplane"
_MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to about 108 bytes


@dataclass(frozen=True, slots=True)
class Workspace:
    """The paths clawplane uses for one resource folder."""

    folder: Path
    state_dir: Path
    out_dir: Path

    @classmethod
    def for_folder(
        cls, folder: Path, *, state_dir: Path | None = None, out_dir: Path | None = None
    ) -> Workspace:
        """Defaults: ``<folder>/.clawplane`` for state and ``<state>/out`` for rendered files.

        The folder stays as given (made absolute, symlinks kept): a folder that is a symlink
        swapped to each new revision (git-sync) is read through the link on every pass. The
        parents of the state and output directories are resolved once, so they do not move with
        it; their own names are kept, so that a state directory that is a link is seen (and
        refused: another user could aim our writes through it).
        """
        folder = Path(os.path.abspath(folder))
        state = _resolved_parent(state_dir or folder / STATE_DIR_NAME)
        return cls(folder, state, _resolved_parent(out_dir or state / "out"))

    @property
    def pidfile(self) -> Path:
        """The supervisor's pidfile (also the lock that keeps it single)."""
        return self.state_dir / "supervisor.pid"

    @property
    def log_file(self) -> Path:
        """Where a detached supervisor writes its log."""
        return self.state_dir / "supervisor.log"

    @property
    def socket_path(self) -> Path:
        """The supervisor's control socket (moved to the temp dir when the path is too long)."""
        path = self.state_dir / "control.sock"
        if len(os.fsencode(path)) <= _MAX_SOCKET_PATH:
            return path
        digest = hashlib.sha256(os.fsencode(self.state_dir)).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"clawplane-{digest}.sock"


def _resolved_parent(path: Path) -> Path:
    """``path`` made absolute, with the links in its parents resolved and its own name kept."""
    path = Path(os.path.abspath(path))
    return Path(os.path.realpath(path.parent)) / path.name if path.name else path
