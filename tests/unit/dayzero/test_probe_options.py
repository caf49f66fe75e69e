"""The pieces ``clawplane mcp probe --url/--header/--args`` is made of: parsing, redaction, escaping.

The command as a whole runs against real servers in tests/integration/runtimes/test_probe_url.py.
"""

from __future__ import annotations

import pytest
import typer

from clawplane.cli.console import EXIT_USAGE
from clawplane.cli.probing import Secrets, escape, parse_args, parse_headers, url_target


def test_headers_parse_name_colon_value_and_refuse_anything_else() -> None:
    assert parse_headers(["Authorization: Bearer a:b", "X-Team:blue"]) == {
        "Authorization": "Bearer a:b",
        "X-Team": "blue",
    }
    for bad in ("no colon", ": value", "Two words: v"):
        with pytest.raises(typer.Exit) as caught:
            parse_headers([bad])
        assert caught.value.exit_code == EXIT_USAGE


def test_args_must_be_a_json_object() -> None:
    assert parse_args(None) == {} and parse_args('{"a": [1, 2]}') == {"a": [1, 2]}
    for bad in ('{"a": ', "[1]", '"text"', "null"):
        with pytest.raises(typer.Exit) as caught:
            parse_args(bad)
        assert caught.value.exit_code == EXIT_USAGE


def test_secrets_are_replaced_longest_first_and_empty_values_ignored() -> None:
    redact = Secrets(["abc", "abcdef", ""])
    assert redact("token abcdef and abc") == "token <redacted> and <redacted>"
    assert Secrets()("nothing to hide") == "nothing to hide"


def test_escape_keeps_lines_and_tabs_and_shows_control_characters() -> None:
    assert escape("a\tb\nc") == "a\tb\nc"
    assert escape("red\x1b[31m bell\x07 zero\u200b") == "red\\x1b[31m bell\\x07 zero\\u200b"
    assert escape("héllo 世界") == "héllo 世界"


def test_url_targets_take_the_host_as_name_and_refuse_other_schemes() -> None:
    target = url_target("http://127.0.0.1:8080/sse", "sse", {"X-Team": "blue"})
    assert target.name == "127.0.0.1" and target.spec.url == "http://127.0.0.1:8080/sse"
    assert target.spec.effective_transport is not None and target.spec.effective_transport.value == "sse"
    for url, transport in (("ftp://host/x", "sse"), ("http:///mcp", "sse"), ("http://h/mcp", "stdio")):
        with pytest.raises(typer.Exit):
            url_target(url, transport, {})
