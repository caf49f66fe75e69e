"""UTF-16 length/cut helpers and JavaScript trim behave like their JavaScript originals."""

from clawplane.jscompat import js_lower_key, js_trim, utf16_cut, utf16_len, utf16_sort_key


def test_utf16_len_counts_an_emoji_as_two_units() -> None:
    assert utf16_len("a😀b") == 4
    assert utf16_len("ÄÖÜ") == 3
    assert utf16_len("") == 0


def test_utf16_cut_keeps_whole_characters_when_the_cut_falls_between_them() -> None:
    assert utf16_cut("a😀b", 3) == "a😀"
    assert utf16_cut("a😀b", 4) == "a😀b"
    assert utf16_cut("abc", 10) == "abc"


def test_utf16_cut_inside_a_surrogate_pair_keeps_the_lone_high_surrogate_like_js_slice() -> None:
    cut = utf16_cut("a😀b", 2)
    assert cut == "a\ud83d"
    assert utf16_len(cut) == 2


def test_utf16_cut_with_zero_or_negative_length_is_empty() -> None:
    assert utf16_cut("abc", 0) == ""
    assert utf16_cut("abc", -1) == ""


def test_utf16_sort_key_orders_astral_characters_before_high_bmp_ones_as_js_sort_does() -> None:
    assert sorted(["\uff5e", "😀"], key=utf16_sort_key) == ["😀", "\uff5e"]


def test_js_trim_removes_bom_and_unicode_spaces_but_keeps_next_line_and_separators() -> None:
    assert js_trim("\ufeff\u3000 x \u00a0\n") == "x"
    assert js_trim("\u0085x\u001f") == "\u0085x\u001f"


def test_js_lower_key_trims_and_lowercases() -> None:
    assert js_lower_key("  GitHub\t") == "github"
