"""Server names match every example observed from OpenClaw 2026.9.6 (notes section c)."""

import pytest

from clawplane.naming import (
    OPENCLAW_REJECTED_SERVER_NAME,
    RESERVED_SERVER_NAMES,
    SERVER_NAME_MAX,
    TOOL_NAME_MAX_TOTAL,
    TOOL_NAME_SEPARATOR,
    assign_server_names,
    is_reserved_server_name,
    sanitize_fragment,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("github", "github"),
        ("my server", "my-server"),
        ("weird/name!", "weird-name-"),
        ("123abc", "mcp-123abc"),
        ("_x", "mcp-_x"),
        ("-y", "mcp--y"),
        ("", "mcp"),
        ("ÄÖÜ", "mcp----"),
        ("a" * 40, "a" * 30),
        ("a.b.c", "a-b-c"),
        ("x__y", "x__y"),
        ("a😀b", "a--b"),
    ],
)
def test_single_server_name_matches_observed_openclaw_output(raw: str, expected: str) -> None:
    assert assign_server_names([raw]) == [expected]


def test_blank_server_name_after_empty_one_becomes_mcp_2() -> None:
    assert assign_server_names(["", "   "]) == ["mcp", "mcp-2"]


def test_server_name_collision_is_case_insensitive_and_keeps_original_case() -> None:
    assert assign_server_names(["github", "GitHub"]) == ["github", "GitHub-2"]


def test_thirty_char_collisions_cut_the_base_to_fit_suffixes_up_to_ten() -> None:
    names = assign_server_names(["a" * 30] * 10)
    assert names[0] == "a" * 30
    assert names[1:9] == [f"{'a' * 28}-{n}" for n in range(2, 10)]
    assert names[9] == f"{'a' * 27}-10"
    assert all(len(name) == 30 for name in names)


def test_names_that_sanitize_alike_get_increasing_suffixes_in_declaration_order() -> None:
    assert assign_server_names(["x y", "x-y", "x.y"]) == ["x-y", "x-y-2", "x-y-3"]


def test_suffix_search_skips_a_suffixed_name_already_declared() -> None:
    assert assign_server_names(["x-y-2", "x y", "x-y"]) == ["x-y-2", "x-y", "x-y-3"]


def test_sanitize_fragment_replaces_each_unsafe_code_unit_without_collapsing() -> None:
    assert sanitize_fragment("é", fallback="tool", max_chars=None) == "tool--"
    assert sanitize_fragment("a  b", fallback="mcp", max_chars=None) == "a--b"


def test_sanitize_fragment_trims_surrounding_whitespace_before_replacing() -> None:
    assert sanitize_fragment("  my server \n", fallback="mcp", max_chars=None) == "my-server"


def test_sanitize_fragment_cut_applies_after_the_fallback_prefix() -> None:
    assert sanitize_fragment("1" * 40, fallback="mcp", max_chars=30) == "mcp-" + "1" * 26


def test_sanitize_fragment_zero_max_chars_means_no_limit_like_js_falsy_check() -> None:
    assert sanitize_fragment("a" * 40, fallback="mcp", max_chars=0) == "a" * 40


def test_naming_constants_match_openclaw() -> None:
    assert (SERVER_NAME_MAX, TOOL_NAME_MAX_TOTAL, TOOL_NAME_SEPARATOR) == (30, 64, "__")


def test_reserved_server_names_are_the_js_prototype_keys_and_compare_exactly() -> None:
    assert frozenset({"__proto__", "constructor", "prototype"}) == RESERVED_SERVER_NAMES
    assert OPENCLAW_REJECTED_SERVER_NAME in RESERVED_SERVER_NAMES
    assert is_reserved_server_name("__proto__")
    assert is_reserved_server_name("constructor")
    assert not is_reserved_server_name(" __proto__")
    assert not is_reserved_server_name("Prototype")
    assert not is_reserved_server_name("github")
