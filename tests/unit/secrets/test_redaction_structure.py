"""Issue 35, finding 7: the redactor rewrites values, never structure (unit level).

The end-to-end proof is ``tests/faults/test_redaction_values.py``; these pin the rules: keys
stay, identifier-shaped values of protocol fields stay, a token is never cut in two, and an
earlier ``<redacted>`` is not redacted again.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from clawplane.secrets import KNOWN, REDACTED, redact, redact_data
from clawplane.state.tokens import new_token


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    KNOWN.clear()
    yield
    KNOWN.clear()


def test_finding7_keys_and_protocol_words_stay_values_go() -> None:
    for word in ("final", "event", "Ready", "error"):
        KNOWN.add(word)
    reply = {"final": True, "ok": False, "event": "done", "phase": "Ready", "error": "final error: Ready"}
    assert redact_data(reply) == {
        "final": True, "ok": False, "event": "done", "phase": "Ready",
        "error": f"{REDACTED} {REDACTED}: {REDACTED}",
    }  # fmt: skip
    # A protocol field holding free text is still redacted.
    assert redact_data({"status": "the final word"}) == {"status": f"the {REDACTED} word"}


def test_finding7_a_token_prefix_never_cuts_a_token() -> None:
    token = new_token()
    KNOWN.add(token[:14])
    KNOWN.add("clawplane_")
    assert redact_data({"token": token}) == {"token": token}  # handed out whole where a reply must
    said = redact(f"Authorization: Bearer {token}")
    assert said == f"Authorization: Bearer {REDACTED}" and token[14:] not in said


def test_finding7_a_secret_that_is_a_whole_token_is_still_a_secret() -> None:
    token = new_token()
    KNOWN.add(token)
    assert redact_data({"x": f"Bearer {token}"}) == {"x": f"Bearer {REDACTED}"}


def test_finding7_an_earlier_marker_is_left_as_it_is() -> None:
    KNOWN.add("redacted")
    KNOWN.add("<red")
    assert redact(f"a {REDACTED} b") == f"a {REDACTED} b"
    assert redact(redact("the redacted value")) == f"the {REDACTED} value"
