"""Literal-secret detection follows `openclaw mcp doctor`; URL credentials are redacted."""

import pytest

from clawplane.naming import REDACTED, is_sensitive_key, looks_like_literal_secret, redact_url_userinfo


@pytest.mark.parametrize(
    "key",
    [
        "Authorization",
        "proxy-authorization",
        "X-API-Key",
        "api-key",
        "API_KEY",
        " Authorization ",
        "apikey",
        "x_api_key",
        "GITHUB_TOKEN",
        "X-Session-Token",
        "X-Secret",
        "X-Password",
        "password",
        "x-bearer",
        "CLIENT_SECRET",
    ],
)
def test_sensitive_keys(key: str) -> None:
    assert is_sensitive_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "Content-Type",
        "TOKENS",
        "mytoken",
        "passwords",
        "KEY",
        "token ",  # trimmed only for the exact list; the pattern sees the trailing space
        "secret\n",  # JS `$` is end of input, not before a final newline
        "ſecret",  # JS /i without the u flag does not fold the long s to `s`
        "",
    ],
)
def test_non_sensitive_keys(key: str) -> None:
    assert not is_sensitive_key(key)


def test_literal_value_under_sensitive_key_is_a_literal_secret() -> None:
    assert looks_like_literal_secret("Authorization", "Bearer abc")
    assert looks_like_literal_secret("GITHUB_TOKEN", "ghp_x")


def test_env_references_blank_values_and_non_strings_are_not_literal_secrets() -> None:
    assert not looks_like_literal_secret("Authorization", "${TOKEN}")
    assert not looks_like_literal_secret("Authorization", "  $TOKEN")
    assert not looks_like_literal_secret("Authorization", "   ")
    assert not looks_like_literal_secret("X-Api-Key", 12345)
    assert not looks_like_literal_secret("Content-Type", "application/json")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://user:pw@example.com/x", f"https://{REDACTED}@example.com/x"),
        ("https://token@example.com", f"https://{REDACTED}@example.com"),
        ("https://a@b:pw@host:8443/p?q#f", f"https://{REDACTED}@host:8443/p?q#f"),
        ("http://u:p@host\\path@x", f"http://{REDACTED}@host\\path@x"),
    ],
)
def test_url_userinfo_is_replaced_by_the_redaction_marker(url: str, expected: str) -> None:
    assert redact_url_userinfo(url) == (expected, True)


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/a@b",
        "http://host?x=a@b",
        "http://host#a@b",
        "http://@host/",
        "mailto:a@b.example",
        "not a url",
        "",
    ],
)
def test_urls_without_userinfo_are_returned_unchanged(url: str) -> None:
    assert redact_url_userinfo(url) == (url, False)
