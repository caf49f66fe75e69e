"""Tool filters match raw tool names with `*` globs, include-then-exclude."""

import pytest

from clawplane.naming import glob_matches, is_tool_allowed, normalize_filter_list


@pytest.mark.parametrize(
    ("pattern", "name"),
    [
        ("read_file", "read_file"),
        ("read_*", "read_file"),
        ("read_*", "read_"),
        ("*_file", "read_file"),
        ("*", ""),
        ("*", "anything"),
        ("**", "x"),
        ("a*b*c", "aXbYc"),
        ("a*b*c", "abc"),
        ("*dir*", "list.dir.all"),
        ("  read_*  ", "read_file"),
        ("a*a", "aa"),
    ],
)
def test_glob_matches(pattern: str, name: str) -> None:
    assert glob_matches(pattern, name)


@pytest.mark.parametrize(
    ("pattern", "name"),
    [
        ("read", "Read"),
        ("read", "read_file"),
        ("read_*", "xread_file"),
        ("*_file", "read_files"),
        ("a*b*c", "acb"),
        ("ab*ba", "aba"),
        ("a*a", "a"),
        ("", "x"),
        ("   ", ""),
        ("read_file", " read_file"),
    ],
)
def test_glob_does_not_match(pattern: str, name: str) -> None:
    assert not glob_matches(pattern, name)


def test_no_filter_lists_allow_every_tool() -> None:
    assert is_tool_allowed("anything", include=None, exclude=None)
    assert is_tool_allowed("anything", include=[], exclude=[])


def test_include_list_allows_only_matching_tools() -> None:
    assert is_tool_allowed("read_file", include=["read_*", "list"], exclude=None)
    assert not is_tool_allowed("write_file", include=["read_*", "list"], exclude=None)


def test_exclude_wins_over_include() -> None:
    assert not is_tool_allowed("read_secret", include=["read_*"], exclude=["*secret*"])


def test_filter_list_is_trimmed_deduplicated_and_sorted_like_the_cli_stores_it() -> None:
    assert normalize_filter_list(["read_*", " list ", "", "list", "  "]) == ["list", "read_*"]


def test_filter_list_sorts_by_utf16_code_units() -> None:
    assert normalize_filter_list(["\uff5e", "😀", "B", "a"]) == ["B", "a", "😀", "\uff5e"]
