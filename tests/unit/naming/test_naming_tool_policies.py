"""Codex's tool approval modes and OpenClaw's tool policy for MCP tool names."""

from __future__ import annotations

import pytest

from clawplane.naming import ToolPolicyLayer, layers_for, mcp_tool_allowed, needs_approval, rule_for

DESTRUCTIVE = {"destructiveHint": True}
READ_ONLY = {"readOnlyHint": True}
CLOSED_SAFE = {"destructiveHint": False, "openWorldHint": False}


@pytest.mark.parametrize(
    ("mode", "annotations", "asks"),
    [
        ("approve", DESTRUCTIVE, False),
        ("prompt", READ_ONLY, True),
        ("writes", READ_ONLY, False),
        ("writes", CLOSED_SAFE, True),
        ("auto", None, True),  # a missing hint counts as destructive and open-world
        ("auto", DESTRUCTIVE, True),
        ("auto", READ_ONLY, False),
        ("auto", CLOSED_SAFE, False),
        ("auto", {"destructiveHint": False}, True),
        ("auto", {**READ_ONLY, **DESTRUCTIVE}, True),  # destructive wins, as in Codex
    ],
)
def test_modes_ask_exactly_when_codex_asks(mode: str, annotations: dict[str, bool] | None, asks: bool) -> None:
    assert needs_approval(mode, annotations) is asks


def test_the_most_specific_rule_governs_a_tool() -> None:
    rules = {"*": "approve", "delete_*": "prompt", "delete_note": "auto", "delete_n*": "writes"}
    assert rule_for("delete_note", rules) == ("delete_note", "auto")
    assert rule_for("delete_nothing", rules) == ("delete_n*", "writes")
    assert rule_for("delete_all", rules) == ("delete_*", "prompt")
    assert rule_for("read", rules) == ("*", "approve")
    assert rule_for("read", {"write*": "prompt"}) is None


def test_profiles_and_lists_filter_mcp_tools_as_openclaw_does() -> None:
    def allowed(name: str, gateway: ToolPolicyLayer | None, agent: ToolPolicyLayer | None = None) -> bool:
        return mcp_tool_allowed(name, layers_for(gateway, agent))

    assert allowed("notes__add", ToolPolicyLayer(profile="coding"))
    assert not allowed("notes__add", ToolPolicyLayer(profile="minimal"))
    assert allowed("notes__add", ToolPolicyLayer(profile="minimal", also_allow=["notes__*"]))
    assert not allowed("notes__add", None, ToolPolicyLayer(deny=["bundle-mcp"]))
    assert not allowed("Notes__Add", ToolPolicyLayer(profile="full"), ToolPolicyLayer(deny=["notes__*"]))
    # An explicit allow replaces the profile.
    assert allowed("notes__add", ToolPolicyLayer(profile="minimal"), ToolPolicyLayer(allow=["group:plugins"]))
    assert not allowed("notes__add", None, ToolPolicyLayer(allow=["read", "exec"]))
    assert allowed("notes__add", ToolPolicyLayer(allow=["notes__add"]), ToolPolicyLayer(allow=["notes__*"]))
    assert not allowed("notes__add", ToolPolicyLayer(allow=["notes__read"]), ToolPolicyLayer(allow=["notes__*"]))
