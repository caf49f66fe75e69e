"""The control protocol's one message schema: every request a supervisor answers, typed.

A request travels as one JSON object whose ``op`` names its kind; ``encode`` and ``decode`` are
the only places that spell the wire form, so the client (``client.py``) and the supervisor's
handler agree by construction. Answers stay JSON objects (``{"ok": …, "final": true}``) whose
fields each operation documents where it builds them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, ClassVar


class Op(StrEnum):
    """The operations a supervisor answers (the wire's ``op`` values)."""

    PING = "ping"
    RUNTIMES = "runtimes"
    APPLY = "apply"
    RESPOND = "approvals-respond"
    ROTATE_TOKENS = "rotate-tokens"
    SHUTDOWN = "shutdown"


class ProtocolError(ValueError):
    """A request that does not follow the schema (the supervisor answers it with this message)."""


@dataclass(frozen=True, slots=True)
class _Bare:
    """A request without arguments."""

    op: ClassVar[Op]


class Ping(_Bare):
    """Is the supervisor there; its endpoint, loop state and degraded writes."""

    __slots__ = ()
    op = Op.PING


class Runtimes(_Bare):
    """The live phase, pid, restarts, error and stderr of every hosted server."""

    __slots__ = ()
    op = Op.RUNTIMES


class Shutdown(_Bare):
    """Stop the supervisor (after answering) and everything it runs."""

    __slots__ = ()
    op = Op.SHUTDOWN


@dataclass(frozen=True, slots=True)
class Apply:
    """Carry out a plan (its JSON form) with the values of the names it was made with."""

    op: ClassVar[Op] = Op.APPLY
    plan: Any
    env: dict[str, str | None] = field(default_factory=dict)
    """The applying shell's values of the ``valueFrom.env`` names (None: unset); memory only."""
    wait: bool = True
    """Wait until each server is Ready (or says why not)."""
    allow_mass_delete: bool = False
    by: str = "unknown"
    approve_as: str | None = None
    """Approve what an approval rule holds, as this approver (None: hold it)."""


@dataclass(frozen=True, slots=True)
class Respond:
    """Answer an approval request."""

    op: ClassVar[Op] = Op.RESPOND
    id: str
    decision: str
    by: str = "unknown"
    reason: str = ""


@dataclass(frozen=True, slots=True)
class RotateTokens:
    """Issue new endpoint tokens (None: every consumer's) and rewrite the configs carrying them."""

    op: ClassVar[Op] = Op.ROTATE_TOKENS
    consumers: list[str] | None = None


Request = Ping | Runtimes | Shutdown | Apply | Respond | RotateTokens


def encode(request: Request) -> dict[str, Any]:
    """The wire form of ``request``."""
    return {"op": str(request.op), **asdict(request)}


def decode(message: dict[str, Any]) -> Request:
    """The request a wire message holds.

    Raises:
        ProtocolError: An unknown operation, or fields of the wrong shape.
    """
    op = message.get("op")
    if op == Op.PING:
        return Ping()
    if op == Op.RUNTIMES:
        return Runtimes()
    if op == Op.SHUTDOWN:
        return Shutdown()
    if op == Op.APPLY:
        return _apply(message)
    if op == Op.RESPOND:
        return Respond(
            str(message.get("id", "")),
            str(message.get("decision", "")),
            by=str(message.get("by") or "unknown"),
            reason=str(message.get("reason") or ""),
        )
    if op == Op.ROTATE_TOKENS:
        consumers = message.get("consumers")
        return RotateTokens([str(c) for c in consumers] if isinstance(consumers, list) else None)
    raise ProtocolError(f"unknown operation {op!r}")


def _apply(message: dict[str, Any]) -> Apply:
    env = message.get("env") or {}
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in env.items()
    ):
        raise ProtocolError("malformed apply request: env must map names to strings or null")
    approver = message.get("approve_as")
    return Apply(
        message.get("plan"),
        env,
        wait=bool(message.get("wait", True)),
        allow_mass_delete=bool(message.get("allow_mass_delete")),
        by=str(message.get("by") or "unknown"),
        approve_as=str(approver) if approver else None,
    )
