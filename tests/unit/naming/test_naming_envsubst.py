"""OpenClaw's ${VAR} substitution, and literals escaped so that they survive it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clawplane.naming.envsubst import (
    escape_literal,
    has_substitution,
    substitute,
    substitute_env,
    whole_reference,
)

ENV = {"HOME": "/home/u", "TOKEN": "t0k", "EMPTY": ""}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${HOME}/x", "/home/u/x"),
        ("a${TOKEN}b${HOME}", "at0kb/home/u"),
        ("$${HOME}", "${HOME}"),  # escaped
        ("$$${HOME}", "$${HOME}"),
        ("${home}", "${home}"),  # lower-case names are never substituted
        ("${MISSING}", "${MISSING}"),  # unset stays visible
        ("${EMPTY}", "${EMPTY}"),  # so does empty
        ("${HOME", "${HOME"),  # unclosed
        ("$HOME", "$HOME"),  # bare $NAME is not substituted in config strings
        ("${A B}", "${A B}"),
        ("${_X1}", "${_X1}"),
        ("price: $5", "price: $5"),
    ],
)
def test_substitute_like_openclaw(text: str, expected: str) -> None:
    assert substitute_env(text, ENV) == expected


@pytest.mark.parametrize(
    "literal",
    ["plain", "${HOME}", "$${HOME}", "a${X}b${Y}", "${lower}", "$", "$$", "${", "${A", "${A ${B}", "}${A}{"],
)
def test_escaped_literal_reads_back(literal: str) -> None:
    escaped = escape_literal(literal)
    assert substitute_env(escaped, ENV) == literal
    assert not has_substitution(escaped)


@given(st.text(alphabet="${}AB_a $", max_size=24))
def test_escape_roundtrip_property(literal: str) -> None:
    escaped = escape_literal(literal)
    assert substitute(escaped, lambda name: "SUBSTITUTED") == literal


def test_escape_leaves_text_without_tokens_alone() -> None:
    assert escape_literal("no dollars") == "no dollars"
    assert escape_literal("cost $5 ${lower}") == "cost $5 ${lower}"


def test_whole_reference() -> None:
    assert whole_reference("${TOKEN}") == "TOKEN"
    assert whole_reference("Bearer ${TOKEN}") is None
    assert whole_reference("${token}") is None
    assert has_substitution("Bearer ${TOKEN}")
    assert not has_substitution("Bearer $${TOKEN}")
