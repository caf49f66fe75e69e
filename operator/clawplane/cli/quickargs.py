"""``clawplane validate`` arguments read without typer, when typer would read them the same way.

Importing typer and building its parameter adapters is a sixth of a quick ``validate`` of a
thousand resources. The common invocations (paths, ``--quiet``/``-q``, ``--strict``,
``--format``/``-f`` with one of its values) are read here; anything else (help, a misspelt
option, a missing path, ``--``, shell completion, a path typer would refuse) returns ``None``
and typer parses the command line as always, with its own help and error messages. The
unit tests check that every accepted command line means the same to typer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from clawplane.cli.validating import OutputFormat

__all__ = ["ValidateArgs", "parse_validate"]

_FORMATS = {member.value: member for member in OutputFormat}
_FORMAT_NAMES = ("--format", "-f")
_COMPLETION_VAR = "_CLAWPLANE_COMPLETE"


@dataclass(frozen=True, slots=True)
class ValidateArgs:
    """The parameters of ``validate`` as typer would pass them."""

    paths: list[Path]
    output: OutputFormat = OutputFormat.TEXT
    strict: bool = False
    quiet: bool = False


def parse_validate(args: list[str]) -> ValidateArgs | None:
    """The parameters for ``validate ARGS``, or ``None`` when typer must read ``args``."""
    if _COMPLETION_VAR in os.environ:
        return None
    paths: list[Path] = []
    output, strict, quiet = OutputFormat.TEXT, False, False
    tokens = iter(args)
    for token in tokens:
        if token in ("--quiet", "-q"):
            quiet = True
        elif token == "--strict":
            strict = True
        elif token in _FORMAT_NAMES or token.startswith("--format="):
            value = token.partition("=")[2] if "=" in token else next(tokens, None)
            if value not in _FORMATS:
                return None
            output = _FORMATS[value]
        elif token.startswith("-") or not _typer_accepts(token):
            return None
        else:
            paths.append(Path(token))
    if not paths:
        return None
    return ValidateArgs(paths, output, strict, quiet)


def _typer_accepts(token: str) -> bool:
    """Whether typer's path check passes ``token``: a path that exists must be readable."""
    if not token or "\x00" in token:
        return False
    try:
        os.stat(token)
    except OSError:
        return True  # a missing path is the validator's to report, as it is after typer
    return os.access(token, os.R_OK)
