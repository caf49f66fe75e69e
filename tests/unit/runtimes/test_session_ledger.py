"""The session ledger's rules, on its own: shares, eviction order, what counts as use, idle expiry.

The sessions here are stand-ins (a callback that records the end): the ledger only ever asks a
session to end, so nothing else of one can take part. The endpoints' tests (tests/faults/
test_session_fairness.py, test_agent_endpoint_sessions.py) run the same rules on real servers.
"""

from __future__ import annotations

import anyio
import pytest

from clawplane.models.gateway import EndpointSessions, GatewayEndpoint
from clawplane.reconcile.agents.endpoint import endpoint_limits
from clawplane.runtimes.proxy.ledger import (
    Seat,
    SessionLedger,
    SessionLimitError,
    SessionLimits,
    default_share,
)

pytestmark = pytest.mark.anyio


def ledger(tg: anyio.abc.TaskGroup, limits: SessionLimits) -> SessionLedger:
    return SessionLedger(
        "the test endpoint", lambda: limits, tg, total_setting="TOTAL", share_setting="SHARE"
    )


def seated(book: SessionLedger, consumer: str, ended: list[str], *, at: float) -> Seat:
    """An opened, idle session of ``consumer`` last used at ``at``."""
    seat = book.admit(consumer, lambda _why: ended.append(consumer))
    seat.opened()
    seat.last_used = at
    return seat


def test_a_consumers_share_is_three_quarters_unless_declared() -> None:
    assert [default_share(n) for n in (1, 2, 3, 4, 8, 32, 64)] == [1, 2, 3, 3, 6, 24, 48]
    assert SessionLimits(32).share == 24
    assert SessionLimits(32, per_consumer=40).share == 32
    assert SessionLimits(32, per_consumer=5).share == 5


async def test_a_consumer_at_its_share_makes_room_from_its_own_idle_sessions() -> None:
    ended: list[str] = []
    async with anyio.create_task_group() as tg:
        book = ledger(tg, SessionLimits(4, per_consumer=2, idle_ttl=None))
        other = seated(book, "other", ended, at=0.0)  # the least recently used of all
        first = seated(book, "greedy", ended, at=1.0)
        seated(book, "greedy", ended, at=2.0)
        seated(book, "greedy", ended, at=3.0)
        tg.cancel_scope.cancel()
    assert ended == ["greedy"] and first.ended and not other.ended
    assert book.held_by("greedy") == 2 and len(book) == 3


async def test_sessions_in_use_are_never_evicted_and_the_refusal_says_why() -> None:
    ended: list[str] = []
    async with anyio.create_task_group() as tg:
        book = ledger(tg, SessionLimits(3, per_consumer=2, idle_ttl=None))
        for at in (1.0, 2.0):
            seat = seated(book, "greedy", ended, at=at)
            seat.in_flight += 1  # an open stream
        with pytest.raises(SessionLimitError) as share:
            book.admit("greedy", lambda _why: None)
        idle = seated(book, "other", ended, at=0.0)
        idle.in_flight += 1
        with pytest.raises(SessionLimitError) as total:
            book.admit("third", lambda _why: None)
        tg.cancel_scope.cancel()
    assert ended == []
    assert str(share.value).startswith('consumer "greedy" already holds 2 of the client sessions of the test')
    assert str(share.value).endswith("or raise SHARE")
    assert str(total.value).startswith("the test endpoint already has 3 client sessions (its maxSessions)")
    assert str(total.value).endswith("or raise TOTAL")


async def test_a_ping_is_not_a_use() -> None:
    ended: list[str] = []
    async with anyio.create_task_group() as tg:
        book = ledger(tg, SessionLimits(2, idle_ttl=None))
        pinged = seated(book, "a", ended, at=1.0)
        used = seated(book, "b", ended, at=2.0)
        with pinged.busy():
            assert not pinged.idle
        with used.busy() as use:
            use()
        assert pinged.last_used == 1.0 and used.last_used > 2.0
        book.admit("c", lambda _why: None)
        tg.cancel_scope.cancel()
    assert ended == ["a"]


async def test_idle_sessions_end_after_the_ttl_and_busy_ones_do_not() -> None:
    ended: list[str] = []
    gone = anyio.Event()

    def end(consumer: str) -> None:
        ended.append(consumer)
        gone.set()

    async with anyio.create_task_group() as tg:
        book = ledger(tg, SessionLimits(4, idle_ttl=0.05))
        busy = book.admit("busy", lambda _why: end("busy"))  # its opening request is never answered
        idle = book.admit("idle", lambda _why: end("idle"))
        idle.opened()
        with anyio.fail_after(30):  # a hang guard: the TTL is 0.05 s
            await gone.wait()
        tg.cancel_scope.cancel()
    assert ended == ["idle"] and not busy.ended and len(book) == 1


def test_the_gateway_declares_the_limits_of_its_own_endpoints() -> None:
    endpoint = GatewayEndpoint.model_validate(
        {"agentSessions": {"maxSessions": 8, "maxSessionsPerConsumer": 3, "sessionIdleTtlMs": 1500}}
    )
    assert endpoint_limits(endpoint.agent_sessions) == SessionLimits(8, 3, 1.5)
    assert endpoint_limits(endpoint.control_sessions) == SessionLimits(32, None, 600.0)
    assert endpoint_limits(EndpointSessions(max_sessions=4)).share == 3
