"""A pass's outcome is typed, yet shows as the same words in status, metrics and events."""

from __future__ import annotations

import json

from clawplane.reconcile.outcome import PassOutcome


def test_outcomes_show_as_the_words_status_readers_match() -> None:
    assert [str(o) for o in PassOutcome] == [
        "applied", "unchanged", "failed", "invalid", "refused", "retry", "settling", "degraded", "error",
    ]  # fmt: skip
    assert json.dumps({"result": PassOutcome.UNCHANGED}) == '{"result": "unchanged"}'
    assert f"reconcile {PassOutcome.APPLIED}" == "reconcile applied"


def test_only_applied_and_unchanged_leave_the_folder_in_sync() -> None:
    assert {o for o in PassOutcome if o.ok} == {PassOutcome.APPLIED, PassOutcome.UNCHANGED}
    assert {o for o in PassOutcome if o.is_error} == {PassOutcome.ERROR, PassOutcome.FAILED, PassOutcome.INVALID}
