"""Tool names match every example observed from OpenClaw 2026.9.6 (notes section c)."""

import pytest

from clawplane.naming import (
    ToolName,
    assign_server_names,
    assign_tool_names,
    is_tool_allowed,
    max_tool_chars,
    name_tools,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("9lives", "srv__tool-9lives"),
        ("tool.name/x", "srv__tool-name-x"),
        ("", "srv__tool"),
        ("Ünïcode", "srv__tool--n-code"),
        ("read_file", "srv__read_file"),
    ],
)
def test_single_tool_name_matches_observed_openclaw_output(raw: str, expected: str) -> None:
    assert assign_tool_names("srv", [raw]) == [expected]


def test_long_tool_name_is_cut_so_the_full_name_is_64_units() -> None:
    [name] = assign_tool_names("srv", ["a" * 80])
    assert name == "srv__" + "a" * 59
    assert len(name) == 64


def test_reserved_name_collision_gets_suffix_2_then_3() -> None:
    assert assign_tool_names("srv", ["read", "read"], reserved=["srv__read"]) == [
        "srv__read-2",
        "srv__read-3",
    ]


def test_reserved_names_are_trimmed_and_compared_case_insensitively() -> None:
    assert assign_tool_names("srv", ["read"], reserved=[" SRV__Read ", "", "  "]) == ["srv__read-2"]


def test_tools_colliding_among_themselves_case_insensitively_get_suffixes() -> None:
    assert assign_tool_names("srv", ["Read", "read", "READ"]) == [
        "srv__Read",
        "srv__read-2",
        "srv__READ-3",
    ]


def test_suffixed_long_tool_name_still_fits_in_64_units() -> None:
    names = assign_tool_names("srv", ["a" * 80, "a" * 90])
    assert names == ["srv__" + "a" * 59, "srv__" + "a" * 57 + "-2"]
    assert all(len(name) == 64 for name in names)


def test_tool_budget_shrinks_with_the_server_name_and_never_drops_below_one() -> None:
    assert max_tool_chars("srv") == 59
    assert max_tool_chars("a" * 30) == 32
    assert max_tool_chars("a" * 70) == 1


def test_name_tools_pairs_raw_names_with_safe_names() -> None:
    assert name_tools("srv", ["list.dir"]) == [ToolName(raw="list.dir", safe="srv__list-dir")]


def test_end_to_end_probe_example_gives_the_observed_sorted_tool_list() -> None:
    # `openclaw mcp probe --json`: server "my server", toolFilter.exclude ["secret_*"].
    [safe_server] = assign_server_names(["my server"])
    raw_tools = ["read_file", "list.dir", "9lives", "a" * 70, "secret_tool"]
    allowed = [t for t in raw_tools if is_tool_allowed(t, include=None, exclude=["secret_*"])]
    names = sorted(assign_tool_names(safe_server, allowed))
    # 53 = 64 - len("my-server") - len("__"), as the notes report.
    assert max_tool_chars(safe_server) == 53
    assert names == [
        "my-server__" + "a" * 53,
        "my-server__list-dir",
        "my-server__read_file",
        "my-server__tool-9lives",
    ]
    assert len(raw_tools) - len(allowed) == 1  # filteredTools: 1
