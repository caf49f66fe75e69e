"""Property tests: sanitized names are always safe, bounded and unique."""

import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from clawplane.jscompat import js_trim, utf16_cut, utf16_len
from clawplane.naming import assign_server_names, assign_tool_names, glob_matches, sanitize_fragment

SAFE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
names = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=80) | st.sampled_from(
    ["", "   ", "github", "GitHub", "a" * 30, "x y", "x-y", "a😀b", "ÄÖÜ", "9lives"]
)
fast = settings(deadline=None)


@fast
@given(names, st.one_of(st.none(), st.integers(min_value=1, max_value=64)))
def test_sanitized_fragment_is_safe_starts_with_a_letter_and_fits(
    raw: str, max_chars: int | None
) -> None:
    result = sanitize_fragment(raw, fallback="mcp", max_chars=max_chars)
    assert SAFE_NAME.match(result)
    if max_chars is not None:
        assert utf16_len(result) <= max_chars


@fast
@given(names)
def test_sanitizing_keeps_the_utf16_length_of_a_letter_led_name(raw: str) -> None:
    trimmed = js_trim(raw)
    if trimmed[:1] in set(string.ascii_letters):
        assert utf16_len(sanitize_fragment(raw, fallback="x", max_chars=None)) == utf16_len(trimmed)


@fast
@given(st.lists(names, max_size=15))
def test_assigned_server_names_are_unique_case_insensitively_and_fit(raw: list[str]) -> None:
    assigned = assign_server_names(raw)
    assert len(assigned) == len(raw)
    assert len({name.lower() for name in assigned}) == len(assigned)
    assert all(SAFE_NAME.match(name) and len(name) <= 30 for name in assigned)


@fast
@given(names, st.lists(names, max_size=15), st.lists(names, max_size=5))
def test_assigned_tool_names_are_unique_prefixed_and_at_most_64(
    raw_server: str, raw_tools: list[str], reserved: list[str]
) -> None:
    [server] = assign_server_names([raw_server])
    assigned = assign_tool_names(server, raw_tools, reserved=reserved)
    reserved_keys = {js_trim(name).lower() for name in reserved}
    assert len({name.lower() for name in assigned}) == len(assigned)
    assert not {name.lower() for name in assigned} & reserved_keys
    for name in assigned:
        assert name.startswith(server + "__")
        assert len(name) <= 64
        assert SAFE_NAME.match(name)


@fast
@given(st.text(max_size=20), st.integers(min_value=0, max_value=25))
def test_utf16_cut_is_the_utf16_prefix_of_the_requested_length(s: str, n: int) -> None:
    cut = utf16_cut(s, n)
    assert utf16_len(cut) == min(n, utf16_len(s))
    encoded = s.encode("utf-16-le", "surrogatepass")
    assert cut.encode("utf-16-le", "surrogatepass") == encoded[: 2 * n]


@fast
@given(
    st.lists(st.text(alphabet="ab*", max_size=4), min_size=1, max_size=4).map("*".join),
    st.text(alphabet="ab", max_size=8),
)
def test_glob_agrees_with_an_anchored_regex(pattern: str, name: str) -> None:
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    expected = bool(pattern) and re.fullmatch(regex, name, re.DOTALL) is not None
    assert glob_matches(pattern, name) == expected
