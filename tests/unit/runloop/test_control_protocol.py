"""The control protocol has one schema: every request round-trips, and nothing else spells the wire."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clawplane.workspace import (
    Apply,
    Op,
    Ping,
    ProtocolError,
    Request,
    Respond,
    RotateTokens,
    Runtimes,
    Shutdown,
    decode,
    encode,
)

PACKAGE = Path(__file__).resolve().parents[3] / "operator" / "clawplane"


@pytest.mark.parametrize(
    "request_",
    [
        Ping(),
        Runtimes(),
        Shutdown(),
        Apply({"formatVersion": 1}, {"TOKEN": "x", "UNSET": None}, wait=False, by="cli:me", approve_as="cli:me"),
        Respond("a1", "approve", by="cli:me", reason="looks fine"),
        RotateTokens(["claude-code"]),
        RotateTokens(None),
    ],
)
def test_every_request_round_trips(request_: Request) -> None:
    wire = encode(request_)
    assert wire["op"] == str(request_.op)
    assert decode(wire) == request_


def test_the_wire_names_are_the_ones_older_clients_send() -> None:
    assert [str(op) for op in Op] == ["ping", "runtimes", "apply", "approvals-respond", "rotate-tokens", "shutdown"]


def test_an_unknown_operation_is_refused_by_name() -> None:
    with pytest.raises(ProtocolError, match="unknown operation 'reboot'"):
        decode({"op": "reboot"})


def test_an_apply_whose_env_is_not_names_to_strings_is_refused() -> None:
    with pytest.raises(ProtocolError, match="env must map names to strings or null"):
        decode({"op": "apply", "plan": {}, "env": {"A": 1}})


def test_no_module_but_the_schema_spells_an_operation() -> None:
    """``{"op": …}`` literals of the control protocol live in ``workspace/protocol.py`` only.

    The query worker's own stdin protocol (``reconcile/queries/offload.py``, ``queryworker.py``) and
    admission selectors are other protocols that happen to use the same key.
    """
    others = {"workspace/protocol.py", "reconcile/queries/offload.py", "reconcile/queries/queryworker.py"}
    found = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if str(path.relative_to(PACKAGE)) not in others
        and re.search(r"""[{,]\s*["']op["']\s*:""", path.read_text(encoding="utf-8"))
    ]
    assert found == []
