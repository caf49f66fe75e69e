"""``metadata.openclaw`` manifests, invocation flags, install specs and JS value helpers."""

from __future__ import annotations

import pytest

from clawplane.jscompat import js_number, js_string, json_stringify, locale_sort_key, normalize_string_list
from clawplane.jscompat.collation import _builtin_key
from clawplane.skills import parse_manifest
from clawplane.skills.install import parse_install_spec, valid_npm_spec
from clawplane.skills.installoptions import install_options
from clawplane.skills.manifest import parse_bool, parse_invocation


def meta(text: str) -> dict[str, str]:
    return {"metadata": text}


def test_manifest_comes_from_json_then_json5() -> None:
    m = parse_manifest(meta('{"openclaw": {"always": true, "emoji": "🦞"}}'))
    assert m is not None and m.always is True and m.emoji == "🦞"
    m5 = parse_manifest(meta("{openclaw: {requires: {bins: ['a',],},}, // comment\n}"))
    assert m5 is not None and m5.requires is not None and m5.requires.bins == ("a",)


def test_legacy_clawdbot_block_is_read_when_openclaw_is_absent() -> None:
    m = parse_manifest(meta('{"clawdbot": {"primaryEnv": "KEY"}}'))
    assert m is not None and m.primary_env == "KEY"
    both = parse_manifest(meta('{"openclaw": {"emoji": "a"}, "clawdbot": {"emoji": "b"}}'))
    assert both is not None and both.emoji == "a"


def test_no_manifest_without_an_openclaw_object() -> None:
    for text in ("not json", "42", '{"other": {}}', '["openclaw"]', '{"openclaw": "string"}'):
        assert parse_manifest(meta(text)) is None
    assert parse_manifest({}) is None


def test_always_must_be_a_real_boolean() -> None:
    m = parse_manifest(meta('{"openclaw": {"always": "yes"}}'))
    assert m is not None and m.always is None


def test_list_fields_accept_arrays_or_comma_strings() -> None:
    m = parse_manifest(meta('{"openclaw": {"os": "darwin, linux", '
                            '"requires": {"bins": [" sh ", 1, null, ""], "anyBins": "a,,b"}}}'))
    assert m is not None and m.requires is not None
    assert m.os == ("darwin", "linux")
    assert m.requires.bins == ("sh", "1", "null")
    assert m.requires.any_bins == ("a", "b")
    assert normalize_string_list({"x": 1}) == ()


def test_skill_key_keeps_whitespace_and_rejects_empty() -> None:
    keyed = parse_manifest(meta('{"openclaw": {"skillKey": " k "}}'))
    empty = parse_manifest(meta('{"openclaw": {"skillKey": ""}}'))
    assert keyed is not None and keyed.skill_key == " k "
    assert empty is not None and empty.skill_key is None


@pytest.mark.parametrize(("value", "expected"), [
    ("true", True), ("YES", True), (" on ", True), ("1", True),
    ("false", False), ("No", False), ("OFF", False), ("0", False),
    ("maybe", None), ("", None), (None, None),
])
def test_boolean_spellings(value: str | None, expected: bool | None) -> None:
    assert parse_bool(value, True) is (True if expected is None else expected)
    assert parse_bool(value, False) is (False if expected is None else expected)


def test_invocation_defaults_and_flags() -> None:
    assert parse_invocation({}).user_invocable is True
    flags = parse_invocation({"user-invocable": "no", "disable-model-invocation": "on"})
    assert flags.user_invocable is False and flags.disable_model_invocation is True


def test_install_specs_are_validated_like_openclaw() -> None:
    brew = parse_install_spec({"kind": "BREW", "cask": "jq", "bins": "jq, jqx", "id": ""})
    assert brew is not None and brew.formula == "jq" and brew.bins == ("jq", "jqx") and brew.id is None
    assert parse_install_spec({"type": "node", "package": "left-pad@1.3.0"}) is not None
    assert parse_install_spec({"kind": "node", "package": "left-pad@^1"}) is None
    assert parse_install_spec({"kind": "go", "module": "example.com/x@v1.2.3"}) is not None
    assert parse_install_spec({"kind": "uv", "package": "ruff==0.5"}) is not None
    assert parse_install_spec({"kind": "brew", "formula": "../evil"}) is None
    assert parse_install_spec({"kind": "brew", "formula": "-x"}) is None
    assert parse_install_spec({"kind": "apt", "package": "x"}) is None
    assert parse_install_spec("brew") is None


def test_download_specs_need_http_urls_and_valid_checksums() -> None:
    ok = parse_install_spec({"kind": "download", "url": "HTTPS://Example.COM:443/a/../b.tgz",
                             "sha256": "AB" * 32})
    assert ok is not None and ok.url == "https://example.com/b.tgz" and ok.sha256 == "ab" * 32
    assert parse_install_spec({"kind": "download", "url": "https://x/y", "sha256": "no"}) is None
    assert parse_install_spec({"kind": "download", "url": "ftp://x/y"}) is None
    assert parse_install_spec({"kind": "download", "url": "https://x/ y"}) is None


def test_npm_specs_allow_exact_versions_and_tags_only() -> None:
    assert valid_npm_spec("@scope/pkg@1.2.3+build")
    assert valid_npm_spec("pkg@latest")
    assert not valid_npm_spec("pkg@>=1")
    assert not valid_npm_spec("git+https://x")
    assert not valid_npm_spec("Pkg")


def test_install_options_prefer_like_openclaw() -> None:
    specs = tuple(s for s in (parse_install_spec({"kind": "brew", "formula": "jq"}),
                              parse_install_spec({"kind": "node", "package": "jqn"})) if s)
    no_brew = install_options(specs, (), "linux", prefer_brew=True, node_manager="pnpm",
                              has_bin=lambda b: False)
    assert [o.label for o in no_brew] == ["Install jqn (pnpm)"]
    with_brew = install_options(specs, (), "linux", prefer_brew=True, node_manager="npm",
                                has_bin=lambda b: b == "brew")
    assert [(o.id, o.label) for o in with_brew] == [("brew-0", "Install jq (brew)")]
    assert install_options(specs, ("darwin",), "linux", prefer_brew=True, node_manager="npm",
                           has_bin=lambda b: True) == ()


def test_js_number_formatting() -> None:
    cases = {1.0: "1", 1e21: "1e+21", 1e20: "100000000000000000000", 1e-7: "1e-7",
             0.000001: "0.000001", -0.0: "0", 12345678901234567890: "12345678901234567000"}
    for value, text in cases.items():
        assert js_number(value) == text
    assert js_string([1, None, [2, "a"]]) == "1,,2,a"
    assert js_string({"a": 1}) == "[object Object]"


def test_json_stringify_orders_index_keys_first() -> None:
    assert json_stringify({"b": 1, "2": True, "a": [None, 1.5]}) == '{"2":true,"b":1,"a":[null,1.5]}'
    assert json_stringify(float("nan")) == "null"


def test_names_sort_like_locale_compare_en() -> None:
    ordered = ["_x", "-y", "10", "2", "a", "A", "a-b", "a_b", "ab", "alpha", "b", "B2", "beta", "Zeta"]
    assert sorted(reversed(ordered), key=locale_sort_key) == [
        "_x", "-y", "10", "2", "a", "A", "a_b", "a-b", "ab", "alpha", "b", "B2", "beta", "Zeta"]
    # Without ICU the built-in table still orders ASCII exactly like ICU.
    assert sorted(ordered, key=_builtin_key) == sorted(ordered, key=locale_sort_key)
