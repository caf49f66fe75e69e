"""The last step of rendering openclaw.json: literals escaped, references written out."""

from __future__ import annotations

from typing import Any

from clawplane.naming import env_reference, escape_literal
from clawplane.render.secretvalues import EnvRef, Substituted, Verbatim


def finalize(value: Any) -> Any:
    """A JSON-ready copy: strings escaped for ``${VAR}`` substitution, ``EnvRef`` as ``${NAME}``."""
    if isinstance(value, Substituted):
        return str(value)
    if isinstance(value, str):
        return escape_literal(value)
    if isinstance(value, EnvRef):
        return env_reference(value.name)
    if isinstance(value, Verbatim):
        return value.value
    if isinstance(value, dict):
        # Keys are never substituted by OpenClaw, so they stay as they are.
        return {key: finalize(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finalize(item) for item in value]
    return value
