"""Secret-capable values as OpenClaw reads them, so that no secret value lands in openclaw.json.

Decisions (OpenClaw 2026.9.6):
- ``valueFrom.env`` → ``${NAME}`` (OpenClaw substitutes it in any config string at load),
  or, on SecretInput fields (channel tokens, ``skills.entries.*.apiKey``), the structured
  SecretRef ``{source: "env", provider: "default", id: NAME}`` that ``openclaw secrets``
  understands. Only upper-case names can be referenced this way.
- ``valueFrom.file`` → on SecretInput fields, a file SecretRef through a ``singleValue`` file
  provider that this module registers under ``secrets.providers`` (OpenClaw then reads the
  file itself and requires it to be private). Elsewhere (MCP ``env``/``headers``, skill
  ``env``) OpenClaw has no file reference, so the value is read at render time, but only
  when the caller passes ``resolve_secrets=True``.
- ``valueFrom.secretKeyRef`` and lower-case env names have no OpenClaw form either: resolved
  with ``resolve_secrets=True`` (secretKeyRef never resolves outside Kubernetes), otherwise
  left out with an error diagnostic. The Kubernetes driver instead passes ``secret_env``: a
  secretKeyRef then becomes an environment reference to a derived variable name, and the
  name → Secret key mapping is collected for the gateway pod's ``env``.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import SecretValue, ValueFrom
from clawplane.naming import ENV_NAME_RE, SECRET_REF_ENV_ID_RE
from clawplane.secrets import SecretError, resolve_value

FILE_PROVIDER_PREFIX = "clawplane-file-"
SECRET_ENV_PREFIX = "CLAWPLANE_SECRET_"


def secret_env_name(secret: str, key: str) -> str:
    """The environment variable a Kubernetes Secret key is passed to the gateway as (stable, unique)."""

    def part(text: str) -> str:
        return re.sub(r"[^A-Z0-9]+", "_", text.upper()).strip("_")

    digest = hashlib.sha256(f"{secret}\0{key}".encode()).hexdigest()[:6].upper()
    return f"{SECRET_ENV_PREFIX}{part(secret)}_{part(key)}_{digest}"[:128]


@dataclass(frozen=True, slots=True)
class EnvRef:
    """A reference to an environment variable, written ``${NAME}`` in the final config."""

    name: str


class Substituted(str):
    """A string already in OpenClaw's ``${VAR}`` syntax (e.g. ``Bearer ${TOKEN}``): written unescaped."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Verbatim:
    """A value written exactly as is (never escaped): SecretRef objects, raw OpenClaw config."""

    value: Any


@dataclass
class SecretRenderer:
    """Turns ``SecretValue``s into OpenClaw values, collecting file providers and diagnostics."""

    resolve_secrets: bool
    environ: Mapping[str, str] | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    providers: dict[str, dict[str, str]] = field(default_factory=dict)
    secret_env: dict[str, tuple[str, str]] | None = None
    """When set, secretKeyRefs render as env references; variable → (Secret name, key)."""

    def render(
        self, value: SecretValue, *, base_dir: Path, secret_input: bool, resource: str, path: str
    ) -> Any | None:
        """The value to write, or None (with an error diagnostic) when it cannot be written."""
        if not isinstance(value, ValueFrom):
            return value
        source = value.value_from
        if source.env is not None:
            if secret_input and SECRET_REF_ENV_ID_RE.match(source.env):
                return Verbatim({"source": "env", "provider": "default", "id": source.env})
            if ENV_NAME_RE.match(source.env):
                return EnvRef(source.env)
            why = f"OpenClaw substitutes only upper-case names ([A-Z_][A-Z0-9_]*), not {source.env!r}"
        elif source.file is not None:
            if secret_input:
                return self._file_ref(source.file, base_dir=base_dir, resource=resource, path=path)
            why = "OpenClaw has no file reference for this field"
        elif self.secret_env is not None and source.secret_key_ref is not None:
            ref = source.secret_key_ref
            name = secret_env_name(ref.name, ref.key)
            self.secret_env[name] = (ref.name, ref.key)
            return (
                Verbatim({"source": "env", "provider": "default", "id": name})
                if secret_input
                else EnvRef(name)
            )
        else:
            why = "a Kubernetes Secret cannot be referenced from openclaw.json"
        if not self.resolve_secrets:
            self._error(
                "render.secret-unrenderable",
                f"secret reference left out: {why}",
                resource,
                path,
                "use valueFrom.env with an upper-case variable name, or render with resolve_secrets",
            )
            return None
        try:
            return resolve_value(value, base_dir=base_dir, environ=self.environ)
        except SecretError as exc:
            self._error("render.secret-unresolved", str(exc), resource, path, "")
            return None

    def _file_ref(self, file: str, *, base_dir: Path, resource: str, path: str) -> Verbatim:
        target = Path(os.path.expanduser(file))
        target = target if target.is_absolute() else base_dir / target
        text = os.path.normpath(target)
        alias = FILE_PROVIDER_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
        self.providers[alias] = {"source": "file", "path": text, "mode": "singleValue"}
        self._check_private(Path(text), resource, path)
        return Verbatim({"source": "file", "provider": alias, "id": "value"})

    def _check_private(self, target: Path, resource: str, path: str) -> None:
        # OpenClaw refuses to read a secret file that others can read or that is a symlink.
        try:
            info = target.lstat()
        except OSError:
            self._warn(f"secret file {target} does not exist yet", resource, path)
            return
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
            self._warn(
                f"secret file {target} is not a regular file; OpenClaw will not read it", resource, path
            )
        elif info.st_mode & 0o077:
            self._warn(
                f"secret file {target} is readable by others; OpenClaw will refuse it (chmod 600)",
                resource,
                path,
            )

    def _warn(self, message: str, resource: str, path: str) -> None:
        self.diagnostics.append(
            Diagnostic(Severity.WARNING, "render.secret-file", message, path=path, resource=resource)
        )

    def _error(self, code: str, message: str, resource: str, path: str, hint: str) -> None:
        self.diagnostics.append(
            Diagnostic(Severity.ERROR, code, message, path=path, hint=hint, resource=resource)
        )
