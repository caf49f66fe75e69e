"""Who may read the operator's ``/metrics``: a bearer token from a file, and Host checks.

The listener is loopback unless ``--metrics-bind-address`` says otherwise (the chart binds
``0.0.0.0`` because the kubelet probes the pod IP). ``/healthz`` and ``/readyz`` answer anyone
whose Host passes, with one word each; ``/metrics`` needs ``Authorization: Bearer <token>``.
The token comes from ``--metrics-token-file`` (the chart mounts a Secret there); the file is
re-read when it changes, so a rotated Secret takes effect without a restart. Without a file the
operator generates a token into ``STATE_DIR/metrics-token`` (0600) and logs where it is.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from clawplane.runtimes import Principal, RequestGuard, token_digest

__all__ = ["GENERATED_TOKEN_FILE", "FileToken", "MetricsAuthError", "generated_token_file", "metrics_guard"]

GENERATED_TOKEN_FILE = "metrics-token"
_MAX_TOKEN_BYTES = 4096
SCRAPER = Principal("metrics", scopes=frozenset({"read"}))


class MetricsAuthError(Exception):
    """The token file cannot be used (the message names the file and the fix)."""


def _read(path: Path, option: str) -> str:
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise MetricsAuthError(f"{option} {path} is not a regular file")
        if info.st_size > _MAX_TOKEN_BYTES:
            raise MetricsAuthError(f"{option} {path} is larger than 4 KiB; it should hold one token")
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise MetricsAuthError(f"cannot read {option} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise MetricsAuthError(f"{option} {path} is not UTF-8 text") from None
    if len(token) < 16 or any(c.isspace() for c in token):
        raise MetricsAuthError(f"{option} {path} must hold one token of at least 16 characters (no spaces)")
    return token


@dataclass
class FileToken:
    """An ``Authorizer`` that accepts the one token held in a file (re-read when the file changes)."""

    path: Path
    principal: Principal = SCRAPER
    """Who the token's holder is (the dashboard's tokens carry ``read`` and ``approve``)."""
    option: str = "--metrics-token-file"
    """The command-line option that named the file (for error messages)."""
    _digest: str = ""
    _seen: tuple[int, int, int] | None = field(default=None)

    def __post_init__(self) -> None:
        self._load()  # a bad file fails at start-up, with its cause

    def _load(self) -> None:
        try:
            info = self.path.stat()
        except OSError as exc:
            raise MetricsAuthError(f"cannot read {self.option} {self.path}: {exc.strerror or exc}") from None
        seen = (info.st_ino, info.st_size, info.st_mtime_ns)
        if seen != self._seen:
            self._digest = token_digest(_read(self.path, self.option))
            self._seen = seen

    def digest(self) -> str:
        """The digest of the file's token now (the last good one while the file cannot be read)."""
        with contextlib.suppress(OSError, MetricsAuthError):
            self._load()
        return self._digest

    def authenticate(self, token: str) -> Principal | None:
        """The file's principal when ``token`` is the file's token."""
        # A Secret update swaps the file (symlinks); keep the last good token meanwhile.
        digest = self.digest()
        if digest and secrets.compare_digest(token_digest(token), digest):
            return self.principal
        return None


def generated_token_file(state_dir: Path, name: str = GENERATED_TOKEN_FILE) -> Path:
    """``STATE_DIR/metrics-token`` (or ``name``): created 0600, whatever the umask, with a random token."""
    path = state_dir / name
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, (secrets.token_urlsafe(32) + "\n").encode())
        finally:
            os.close(fd)
    return path


def metrics_guard(bind: str, token_file: Path, allowed_hosts: frozenset[str] = frozenset()) -> RequestGuard:
    """The guard of the metrics listener bound to ``bind``.

    On a loopback address only loopback Host names pass; elsewhere the ``allowed_hosts``
    (the chart gives the pod IP and ``localhost``), or any Host when none are given.
    """
    hosts = frozenset(h.strip().lower().strip("[]") for h in allowed_hosts if h.strip())
    return RequestGuard(bind, FileToken(token_file), allowed_hosts=hosts)
