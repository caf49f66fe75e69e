"""``LeaderElector`` against the emulator, with a clock the test moves: races, expiry, fencing, release."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from tests.k8s.emulator import EmulatorThread

from clawplane.k8s.api.kubeapi import CONFIGMAPS, ApiError, KubeApi
from clawplane.k8s.api.kubeconfig import load_connection
from clawplane.k8s.ha.election import ElectionError, ElectionSettings, LeaderElector


class Clock:
    """A monotonic clock that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def elector(emulator: EmulatorThread, tmp_path: Path, who: str, clock: Clock) -> LeaderElector:
    kubeconfig = emulator.write_kubeconfig(tmp_path / f"{who}.kubeconfig", token=who)
    settings = ElectionSettings(namespace="default", identity=who, lease_duration=15, renew_deadline=10)
    return LeaderElector(KubeApi(load_connection(str(kubeconfig))), settings, clock=clock)


def holder(emulator: EmulatorThread) -> str | None:
    lease = emulator.get("leases", "default", "clawplane-operator")
    return None if lease is None else lease["spec"]["holderIdentity"]


def test_of_two_racing_candidates_exactly_one_leads(emulator: EmulatorThread, tmp_path: Path) -> None:
    clock = Clock()
    a, b = elector(emulator, tmp_path, "a", clock), elector(emulator, tmp_path, "b", clock)

    async def race() -> list[bool]:
        try:
            won = list(await asyncio.gather(a.try_acquire_or_renew(), b.try_acquire_or_renew()))
            loser = b if won[0] else a
            assert not await loser.try_acquire_or_renew()  # its next attempt reads the winner's Lease
            return won
        finally:
            await a.api.aclose()
            await b.api.aclose()

    won = asyncio.run(race())
    assert sorted(won) == [False, True]
    winner, loser = (a, b) if won[0] else (b, a)
    assert holder(emulator) == winner.settings.identity
    assert winner.leading and not loser.leading
    assert loser.holder == winner.settings.identity


def test_a_standby_waits_a_lease_duration_from_the_last_change_it_saw(
    emulator: EmulatorThread, tmp_path: Path
) -> None:
    clock = Clock()
    a, b = elector(emulator, tmp_path, "a", clock), elector(emulator, tmp_path, "b", clock)

    async def scenario() -> None:
        try:
            assert await a.try_acquire_or_renew()
            assert not await b.try_acquire_or_renew()  # b sees the Lease now
            clock.now += 9
            assert await a.try_acquire_or_renew()  # a renews at +9
            assert not await b.try_acquire_or_renew()  # b sees the new version at +9
            clock.now += 14
            assert not await b.try_acquire_or_renew()  # 14 s since the change b saw: not expired
            assert not a.leading  # but a, 14 s after its renewal, has stopped considering itself leader
            assert a.fence() is not None
            clock.now += 1
            assert await b.try_acquire_or_renew()  # 15 s: expired, b takes over
            assert b.leading
            assert not await a.try_acquire_or_renew()  # a sees b's fresh renewal
        finally:
            await a.api.aclose()
            await b.api.aclose()

    asyncio.run(scenario())
    lease = emulator.get("leases", "default", "clawplane-operator")
    assert lease is not None
    assert (lease["spec"]["holderIdentity"], lease["spec"]["leaseTransitions"]) == ("b", 1)
    assert lease["spec"]["leaseDurationSeconds"] == 15


def test_a_deposed_leader_refuses_its_own_writes_before_sending_them(
    emulator: EmulatorThread, tmp_path: Path
) -> None:
    clock = Clock()
    a = elector(emulator, tmp_path, "a", clock)
    fenced = KubeApi(a.api.conn, write_fence=a.fence)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe"}, "data": {"k": "v"}}

    async def scenario() -> ApiError:
        try:
            with pytest.raises(ApiError) as refused:
                await fenced.create(CONFIGMAPS, "default", cm)  # standby: not even sent
            assert await a.try_acquire_or_renew()
            await fenced.create(CONFIGMAPS, "default", cm)  # the leader writes
            clock.now += 10  # the renew deadline passed without a renewal
            assert await fenced.get(CONFIGMAPS, "default", "probe") is not None  # reads still work
            with pytest.raises(ApiError) as deposed:
                await fenced.patch(CONFIGMAPS, "default", "probe", {"data": {"k": "w"}})
            assert refused.value.status == 503
            return deposed.value
        finally:
            await fenced.aclose()
            await a.api.aclose()

    error = asyncio.run(scenario())
    assert (error.status, error.reason) == (503, "NotLeader")
    assert "does not hold the leader Lease default/clawplane-operator" in str(error)
    assert [w.verb for w in emulator.write_log() if w.plural == "configmaps"] == ["POST"]


def test_release_frees_the_lease_for_the_next_attempt(emulator: EmulatorThread, tmp_path: Path) -> None:
    clock = Clock()
    a, b = elector(emulator, tmp_path, "a", clock), elector(emulator, tmp_path, "b", clock)

    async def scenario() -> None:
        try:
            assert await a.try_acquire_or_renew()
            assert not await b.try_acquire_or_renew()
            assert await a.release()
            assert not a.leading and holder(emulator) == ""
            assert await b.try_acquire_or_renew()  # no waiting for expiry
            assert not await a.release()  # not the leader any more: nothing to release
        finally:
            await a.api.aclose()
            await b.api.aclose()

    asyncio.run(scenario())
    assert holder(emulator) == "b"


@pytest.mark.parametrize(
    ("durations", "message"),
    [
        ((1.5, 1.0, 0.2), "whole number of seconds"),
        ((10, 10, 2), "must be shorter than the lease duration"),
        ((15, 10, 9), "must be positive and below the renew deadline"),
    ],
)
def test_durations_that_cannot_work_are_refused(durations: tuple[float, float, float], message: str) -> None:
    lease, renew, retry = durations
    with pytest.raises(ElectionError, match=message):
        ElectionSettings("default", "me", lease_duration=lease, renew_deadline=renew, retry_period=retry)
    cmd = [sys.executable, "-m", "clawplane", "k8s", "run", "--leader-elect-lease-duration", str(lease)]
    cmd += ["--leader-elect-renew-deadline", str(renew), "--leader-elect-retry-period", str(retry)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr
