"""The one place where a ``valueFrom`` reference becomes a value (local driver).

Where values come from, for plan and apply alike:

- ``valueFrom.file``: the file, read now (regular files only, bounded, with a timeout; see
  ``files``). A relative path is relative to the resource's file.
- ``valueFrom.env: NAME``: the Gateway's env file (``spec.secrets.envFile``, ``KEY=VALUE``
  lines, re-read on every pass) when it defines NAME; otherwise the environment of whoever
  plans. For ``clawplane plan``/``apply`` that is the shell running the command, and
  ``apply`` sends the values of the names the folder references to the supervisor over its
  private control socket (``supply``); the supervisor keeps them in memory only and uses
  them until a later apply sends others. ``clawplane run`` plans with its own environment,
  overlaid by what applies sent. So a plan resolves exactly what the apply that follows uses.
- ``valueFrom.secretKeyRef``: only the Kubernetes driver can read Secrets.

Compiling a folder resolves every reference once (``resolve_all``); the values travel with
the desired state (``ResolvedSecrets``) to the runtime that starts the server, so a restart
after a crash uses the values its config hash was computed from, and a rotated value changes
that hash and restarts exactly the servers that use it. Every value handed out is added to
the process's redaction registry.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from dotenv import dotenv_values

from clawplane.models import SecretValue, ValueFrom, literal_text
from clawplane.secrets.files import FileLimits, SecretFileError, read_secret_file
from clawplane.secrets.redaction import KNOWN

__all__ = ["ResolvedSecrets", "SecretError", "SecretResolver", "reference_path", "value_digest_of"]

_DIGEST_SALT = b"clawplane/v1/secret-digest"


class SecretError(Exception):
    """A reference could not be resolved; the message never contains a secret value."""


def reference_path(value: ValueFrom, base_dir: Path) -> Path:
    """The absolute path a ``valueFrom.file`` reference names."""
    assert value.value_from.file is not None
    path = Path(os.path.expanduser(value.value_from.file))
    return path if path.is_absolute() else base_dir / path


def value_digest_of(outcome: str | SecretError) -> str:
    """A stable digest of a resolved value (or of the error), safe to store and compare."""
    if isinstance(outcome, SecretError):
        text, marker = str(outcome), b"error:"
    else:
        text, marker = outcome, b"ok:"
    return hashlib.sha256(_DIGEST_SALT + marker + text.encode("utf-8")).hexdigest()[:16]


class ResolvedSecrets(Mapping[str, "str | SecretError"]):
    """A resource's resolved references by field path (``env/TOKEN``); shows no value when printed."""

    def __init__(self, values: Mapping[str, str | SecretError] | None = None) -> None:
        self._values = dict(values or {})

    def __getitem__(self, key: str) -> str | SecretError:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"ResolvedSecrets({len(self._values)} values, redacted)"

    __str__ = __repr__

    def errors(self) -> dict[str, str]:
        """The references that could not be resolved, with why."""
        return {k: str(v) for k, v in self._values.items() if isinstance(v, SecretError)}

    def value(self, key: str) -> str:
        """The value at ``key``.

        Raises:
            SecretError: It could not be resolved (KeyError when it was never resolved).
        """
        found = self._values[key]
        if isinstance(found, SecretError):
            raise found
        return found


class SecretResolver:
    """Resolves references from files, the Gateway's env file, supplied values and an environment."""

    def __init__(self, environ: Mapping[str, str] | None = None, *, limits: FileLimits | None = None) -> None:
        self._environ = environ
        self.limits = limits or FileLimits()
        self._supplied: dict[str, str | None] = {}
        self._env_file: dict[str, str] = {}
        self.env_file: Path | None = None
        self.env_file_error: str | None = None

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment references fall back to (the process's own unless one was given)."""
        return os.environ if self._environ is None else self._environ

    def supply(self, values: Mapping[str, str | None]) -> None:
        """Values an apply sent for ``valueFrom.env`` names (None: unset where it was planned)."""
        for name, value in values.items():
            self._supplied[name] = value
            if value is not None:
                KNOWN.add(value)

    def load_env_file(self, path: Path | None) -> None:
        """Read the Gateway's env file now (None: there is none); a failure is kept, not raised."""
        self.env_file, self.env_file_error, self._env_file = path, None, {}
        if path is None:
            return
        try:
            text = read_secret_file(path, self.limits)
        except SecretFileError as exc:
            self.env_file_error = f"env file: {exc}"
            return
        parsed = dotenv_values(stream=io.StringIO(text), interpolate=False)
        self._env_file = {k: v for k, v in parsed.items() if v is not None}
        for value in self._env_file.values():
            KNOWN.add(value)

    def lookup_env(self, name: str) -> str | None:
        """The value of ``valueFrom.env: name``, or None when no source defines it."""
        if name in self._env_file:
            return self._env_file[name]
        if name in self._supplied:
            return self._supplied[name]
        return self.environ.get(name)

    def resolve(self, value: SecretValue, *, base_dir: Path) -> str:
        """The value as a string: literals as OpenClaw passes them, references read now.

        Raises:
            SecretError: The reference cannot be resolved here.
        """
        if not isinstance(value, ValueFrom):
            return literal_text(value)
        source = value.value_from
        if source.env is not None:
            found = self.lookup_env(source.env)
            if found is None:
                where = f" (nor in env file {self.env_file})" if self.env_file is not None else ""
                hint = f"; {self.env_file_error}" if self.env_file_error else ""
                raise SecretError(f"environment variable {source.env} is not set{where}{hint}")
            KNOWN.add(found)
            return found
        if source.file is not None:
            try:
                text = read_secret_file(reference_path(value, base_dir), self.limits)
            except SecretFileError as exc:
                raise SecretError(str(exc)) from None
            KNOWN.add(text)
            return text
        ref = source.secret_key_ref
        assert ref is not None
        raise SecretError(
            f"secretKeyRef {ref.name}/{ref.key} can only be resolved by the Kubernetes driver; "
            "use valueFrom.env or valueFrom.file locally"
        )

    def outcome(self, value: SecretValue, *, base_dir: Path) -> str | SecretError:
        """``resolve``, with a failure returned instead of raised."""
        try:
            return self.resolve(value, base_dir=base_dir)
        except SecretError as exc:
            return exc

    def resolve_mapping(self, values: Mapping[str, SecretValue], *, base_dir: Path) -> dict[str, str]:
        """Resolve every value of an ``env`` or ``headers`` mapping.

        Raises:
            SecretError: One of them cannot be resolved.
        """
        return {k: self.resolve(v, base_dir=base_dir) for k, v in values.items()}
