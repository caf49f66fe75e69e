"""Each consumer's share of the query worker: questions in progress, a burst of questions, worker seconds."""

from __future__ import annotations

import pytest

from clawplane.reconcile.queries.offload import BusyError, RateLimits


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_consumer_has_at_most_its_questions_in_progress_and_others_are_not_held_up() -> None:
    limits = RateLimits(per_consumer=2, clock=Clock())
    with limits.taken("reader", 4.0), limits.taken("reader", 4.0):
        with pytest.raises(BusyError) as busy, limits.taken("reader", 4.0):
            pass
        with limits.taken("cli", 4.0):
            pass
    assert busy.value.limit == "in-progress" and busy.value.retry_after == 4.0
    assert str(busy.value) == (
        '"reader" already has 2 costly questions (validate, plan, …) in progress, the most one consumer may '
        "have; retry when one is answered (in about 4 s)"
    )
    with limits.taken("reader", 4.0):  # answered: room again
        pass


def test_a_burst_of_questions_is_refused_until_the_bucket_refills() -> None:
    clock = Clock()
    limits = RateLimits(burst=3, refill_s=2.0, clock=clock)
    for _ in range(3):
        with limits.taken("reader", 1.0):
            pass
    with pytest.raises(BusyError) as busy, limits.taken("reader", 1.0):
        pass
    assert busy.value.limit == "rate" and busy.value.retry_after == pytest.approx(2.0)
    assert "asked more than 3 costly questions" in str(busy.value) and "retry in 2.0 s" in str(busy.value)
    clock.now += 2.0
    with limits.taken("reader", 1.0):
        pass


def test_worker_seconds_are_charged_so_a_large_question_costs_more_than_a_small_one() -> None:
    clock = Clock()
    limits = RateLimits(worker_s=30.0, worker_share=0.5, clock=clock)
    with limits.taken("reader", 1.0) as charge:
        charge(31.0)  # a 4 MiB plan
    with pytest.raises(BusyError) as busy, limits.taken("reader", 1.0):
        pass
    assert busy.value.limit == "rate" and busy.value.retry_after == pytest.approx(2.2)
    assert "used more than its 30 s of the supervisor's query worker at once" in str(busy.value)
    with limits.taken("cli", 1.0) as charge:  # another consumer has its own share
        charge(0.2)
    clock.now += 2.2
    with limits.taken("reader", 1.0):
        pass
