"""``clawplane schema --openclaw-command …``: OpenClaw's config schema, printed by the pinned OpenClaw.

The schema is never written by hand: this runs ``<command> config schema`` and
``<command> --version`` in an empty home (so no user config or installed plugin changes what
it prints), and writes what OpenClaw printed, byte for byte, with the release it came from.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from clawplane.schema.openclaw import LICENSE_FILE, RELEASE_FILE, SCHEMA_FILE

_VERSION_RE = re.compile(r"OpenClaw (\S+) \(([0-9a-f]+)\)")


class GenerateError(Exception):
    """OpenClaw could not be run, or printed something that is not its schema."""


@dataclass(frozen=True)
class Printed:
    """What one OpenClaw printed: its schema and who it is."""

    schema: bytes
    version: str
    build: str
    license: bytes | None

    def release(self) -> dict[str, str]:
        """The ``openclaw-release.json`` that goes with the schema."""
        return {
            "version": self.version,
            "build": self.build,
            "sha256": hashlib.sha256(self.schema).hexdigest(),
            "command": "openclaw config schema",
        }


def print_schema(command: Sequence[str], *, timeout: float = 300) -> Printed:
    """Run OpenClaw (``command`` is its argv, e.g. ``node …/openclaw.mjs``) and collect its schema."""
    home = tempfile.mkdtemp(prefix="clawplane-openclaw-")
    try:
        env = {
            **os.environ,
            "HOME": home,
            "OPENCLAW_STATE_DIR": str(Path(home) / "state"),
            "OPENCLAW_CONFIG_PATH": str(Path(home) / "openclaw.json"),
            "NO_COLOR": "1",
        }
        version = _run([*command, "--version"], env, timeout).decode("utf-8", "replace")
        found = _VERSION_RE.search(version)
        if found is None:
            said = version.strip()
            raise GenerateError(f"{' '.join(command)} --version printed {said!r}, not an OpenClaw version")
        schema = _run([*command, "config", "schema"], env, timeout)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    try:
        parsed = json.loads(schema)
    except ValueError as exc:
        raise GenerateError(f"`config schema` did not print JSON ({exc})") from None
    if not isinstance(parsed, dict) or parsed.get("title") != "OpenClawConfig":
        raise GenerateError("`config schema` printed JSON that is not OpenClaw's config schema")
    return Printed(schema, found.group(1), found.group(2), _license(command))


def _license(command: Sequence[str]) -> bytes | None:
    """The licence next to the package OpenClaw runs from (its ``openclaw.mjs`` or bin link)."""
    for arg in reversed(command):
        path = Path(arg)
        for folder in (path.resolve().parent, path.resolve().parent.parent):
            candidate = folder / "LICENSE"
            if path.exists() and candidate.is_file() and (folder / "package.json").is_file():
                return candidate.read_bytes()
    return None


def _run(argv: Sequence[str], env: dict[str, str], timeout: float) -> bytes:
    try:
        proc = subprocess.run(list(argv), env=env, capture_output=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise GenerateError(f"{argv[0]}: not found (give OpenClaw with --openclaw-command)") from None
    except subprocess.TimeoutExpired:
        raise GenerateError(f"{' '.join(argv)} did not finish within {timeout:.0f} s") from None
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise GenerateError(f"{' '.join(argv)} exited {proc.returncode}: {' / '.join(tail)}")
    return proc.stdout


def stale(printed: Printed) -> list[Path]:
    """The committed files that differ from what OpenClaw printed."""
    release = (json.dumps(printed.release(), indent=2) + "\n").encode("utf-8")
    wanted = {SCHEMA_FILE: printed.schema, RELEASE_FILE: release, LICENSE_FILE: printed.license}
    return [
        path
        for path, content in wanted.items()
        if content is not None and (not path.is_file() or path.read_bytes() != content)
    ]


def write(printed: Printed) -> list[Path]:
    """Write what OpenClaw printed (schema, release, licence); returns the files that changed."""
    changed = stale(printed)
    contents = {
        SCHEMA_FILE: printed.schema,
        RELEASE_FILE: (json.dumps(printed.release(), indent=2) + "\n").encode("utf-8"),
        LICENSE_FILE: printed.license or b"",
    }
    for path in changed:
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_bytes(contents[path])
        tmp.replace(path)
    return changed
