"""Issued bearer tokens are recognised anywhere; identifiers that only share the prefix are not."""

from __future__ import annotations

from clawplane.secrets import REDACTED, scrub_tokens
from clawplane.state.tokens import new_token


def test_every_issued_token_is_scrubbed_inside_any_text() -> None:
    for _ in range(200):
        token = new_token()
        text = f"Authorization: Bearer {token}\n'{token}' {token}."
        assert token not in scrub_tokens(text)
        assert scrub_tokens(text).count(REDACTED) == 3


def test_names_that_start_with_the_prefix_are_left_alone() -> None:
    text = (
        "ModuleNotFoundError: No module named 'clawplane_test_module_that_does_not_exist'\n"
        'clawplane_runtime_restarts{server="notes"} 3\n'
        "clawplane_folder_valid 1.0"
    )
    assert scrub_tokens(text) == text


def test_a_token_glued_to_the_text_after_it_is_still_scrubbed() -> None:
    token = new_token()
    assert scrub_tokens(f"x {token}abc") == f"x {REDACTED}abc"
