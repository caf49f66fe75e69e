"""Fair, bounded sessions on the hosted endpoint and the bridge (issue 35, finding 3; issue 37, part 4).

A hostile consumer speaks raw HTTP to a real hosted server (the fault fixture over stdio, one
process per session, found by its ``--tag``): it opens every slot and walks away, holds its
sessions in use with open streams, keeps abandoned sessions "alive" with pings, opens sessions
whose ``initialize`` the server never answers, and sends ids that cannot be routed. Whatever it
does, another consumer still gets a session, and every slot and process comes back. Only when
every session that could make room is busy is a client refused: 503 with ``-32011`` and
``Retry-After``; the evictions are counted in status, on ``/healthz`` and in metrics.
"""

from __future__ import annotations

import contextlib
import sys
import uuid
from pathlib import Path

import anyio
import pytest
from tests.fixtures.servers.helpers import (
    START_TIMEOUT,
    TOKEN,
    authed,
    bridge_process,
    script,
    settings,
    stdio_spec,
)
from tests.support import rawsessions as raw
from tests.support.patience import CONDITION_S

from clawplane.models import McpServerSpec
from clawplane.runtimes import Phase, Supervisor
from clawplane.runtimes.proxy import Principal, RequestGuard, TokenTable

pytestmark = pytest.mark.anyio

QUIET = settings(ping_interval=None)
"""Short backoffs, and no liveness pings of the primary: they are not what these tests are about."""
HOSTILE = "clawplane_hostile-token-0123456789"
OPENCLAW = "clawplane_openclaw-token-0123456789"


@pytest.fixture
def anyio_backend() -> str:
    """The hosted endpoint embeds uvicorn, which needs asyncio."""
    return "asyncio"


def two_consumers() -> RequestGuard:
    """A listener guard with a hostile consumer's token and OpenClaw's."""
    table = TokenTable.of({HOSTILE: Principal("client:cursor:coder"), OPENCLAW: Principal("openclaw")})
    return RequestGuard("127.0.0.1", table)


async def start(supervisor: Supervisor, name: str, spec: McpServerSpec, tmp_path: Path) -> None:
    await supervisor.ensure(name, spec, config_hash="h", base_dir=tmp_path)
    await supervisor.wait_until(name, lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)


async def gone(pids: list[int]) -> None:
    """Wait until none of ``pids`` runs (a process teardown has no event to await here)."""
    with anyio.fail_after(CONDITION_S):
        while raw.alive(pids):
            await anyio.sleep(0.05)


async def test_no_consumer_can_lock_the_others_out(tmp_path: Path) -> None:
    """Default limits (32 sessions, a consumer's share 24): abandoned sessions make room, and sessions
    held in use stop at the consumer's share, so OpenClaw always gets in."""
    tag = f"fair-{uuid.uuid4().hex[:8]}"
    async with Supervisor(settings=QUIET) as supervisor:
        await start(supervisor, "notes", stdio_spec("fault", "--tag", tag), tmp_path)
        url = (await supervisor.expose(two_consumers())).url("notes")
        async with raw.client() as http, contextlib.AsyncExitStack() as held:
            # 1. The hostile consumer fills every slot and walks away.
            for _ in range(32):
                await raw.open_session(http, url, HOSTILE)
            after_abandoned = await raw.initialize(http, url, OPENCLAW)
            # 2. It holds sessions in use, each with an open stream, as many as it is let.
            admitted, refused = 0, None
            for _ in range(32):
                response = await raw.initialize(http, url, HOSTILE)
                if response.status_code != 200:
                    refused = response
                    break
                await raw.hold(held, http, url, HOSTILE, response.headers[raw.SESSION])
                admitted += 1
            after_held = await raw.initialize(http, url, OPENCLAW)
            status = supervisor.status("notes")

    assert after_abandoned.status_code == 200, after_abandoned.text
    assert admitted == 24, f"{admitted} sessions held in use by one consumer"
    assert refused is not None and refused.status_code == 503
    error = raw.error_of(refused)
    assert error["code"] == -32011
    assert 'consumer "client:cursor:coder" already holds 24' in error["message"]
    assert "maxSessionsPerConsumer" in error["message"]
    assert after_held.status_code == 200, after_held.text
    assert status.sessions <= 32 and len(status.session_pids) <= 32


async def test_pings_do_not_keep_abandoned_sessions(tmp_path: Path) -> None:
    """An abandoned session pinged every 0.2 s still ends ``sessionIdleTtlMs`` after its last real use
    (the pings are the attack's own cadence, not a wait), its process with it; and a ping does not
    move a session back in the eviction order."""
    tag = f"pings-{uuid.uuid4().hex[:8]}"
    async with Supervisor(settings=QUIET) as supervisor:
        await start(
            supervisor, "brief", stdio_spec("fault", "--tag", tag, session_idle_ttl_ms=2000), tmp_path
        )
        await start(supervisor, "pair", stdio_spec("fault", "--tag", tag, max_sessions=2), tmp_path)
        endpoint = await supervisor.expose(two_consumers())
        brief, pair = endpoint.url("brief"), endpoint.url("pair")
        async with raw.client() as http:
            session = await raw.open_session(http, brief, HOSTILE)
            listed = await raw.request(http, brief, HOSTILE, session, "tools/list")
            pids = list(supervisor.status("brief").session_pids)
            pinged = 0
            with anyio.fail_after(CONDITION_S):
                while (
                    answer := await raw.request(http, brief, HOSTILE, session, "ping", pinged)
                ).status_code == 200:
                    pinged += 1
                    await anyio.sleep(0.2)
            await gone(pids)
            brief_sessions = supervisor.status("brief").sessions

            older = await raw.open_session(http, pair, OPENCLAW)
            assert (await raw.request(http, pair, OPENCLAW, older, "tools/list")).status_code == 200
            newer = await raw.open_session(http, pair, OPENCLAW)
            assert (await raw.request(http, pair, OPENCLAW, newer, "tools/list")).status_code == 200
            assert (await raw.request(http, pair, OPENCLAW, older, "ping")).status_code == 200
            third = await raw.initialize(http, pair, OPENCLAW)
            older_after = await raw.request(http, pair, OPENCLAW, older, "tools/list", 2)
            newer_after = await raw.request(http, pair, OPENCLAW, newer, "tools/list", 2)

    assert listed.status_code == 200 and len(pids) == 1
    assert answer.status_code == 404 and pinged >= 1
    assert brief_sessions == 0
    assert third.status_code == 200, third.text  # the least recently *used* session made room
    assert older_after.status_code == 404  # it only pinged since its last use
    assert newer_after.status_code == 200


async def test_an_unanswered_initialize_frees_its_slot(tmp_path: Path) -> None:
    """A session process that never answers ``initialize``: the client hears why after the server's
    ``connectionTimeoutMs``, and the slot (``maxSessions: 1``) and the process are freed."""
    tag = f"shy-{uuid.uuid4().hex[:8]}"
    silent = tmp_path / "silent"
    spec = stdio_spec(
        "shy", "--silent-if", str(silent), "--tag", tag, max_sessions=1, connection_timeout_ms=5000
    )
    async with Supervisor(settings=QUIET) as supervisor:
        await start(supervisor, "shy", spec, tmp_path)
        primary = supervisor.status("shy").pid
        url = (await supervisor.expose(two_consumers())).url("shy")
        silent.touch()  # from now on every new process of the server hangs on the handshake
        async with raw.client(read_timeout=CONDITION_S) as http:
            unanswered = await raw.initialize(http, url, HOSTILE)
            with anyio.fail_after(CONDITION_S):  # the hung session's process is torn down
                while [p for p in raw.tagged(tag) if p.pid != primary]:
                    await anyio.sleep(0.05)
            sessions = supervisor.status("shy").sessions
            silent.unlink()
            answered = await raw.initialize(http, url, OPENCLAW)

    assert unanswered.status_code == 200  # an SSE stream, which carries the error
    error = raw.error_of(unanswered)
    assert error["code"] == -32010
    assert "did not answer initialize within 5 s" in error["message"]
    assert sessions == 0
    assert answered.status_code == 200, answered.text
    assert "result" in raw.messages(answered)[0]


MALFORMED_IDS = ["{}", '{"a": 1}', "[]", "[1]", "NaN", "1.5", "null", "true"]


async def test_malformed_ids_get_invalid_request_not_500(tmp_path: Path) -> None:
    """Ids that are objects, arrays, NaN, fractions, null or booleans: HTTP 400 with ``-32600``,
    before a session opens and within one; the session goes on."""
    tag = f"ids-{uuid.uuid4().hex[:8]}"
    async with Supervisor(settings=QUIET) as supervisor:
        await start(supervisor, "notes", stdio_spec("fault", "--tag", tag), tmp_path)
        url = (await supervisor.expose(two_consumers())).url("notes")
        opening, within = {}, {}
        async with raw.client() as http:
            for bad in MALFORMED_IDS:
                body = '{"jsonrpc": "2.0", "id": ' + bad + ', "method": "initialize", "params": {}}'
                opening[bad] = await raw.post(http, url, HOSTILE, body)
            session = await raw.open_session(http, url, HOSTILE)
            for bad in MALFORMED_IDS:
                body = '{"jsonrpc": "2.0", "id": ' + bad + ', "method": "tools/list"}'
                within[bad] = await raw.post(http, url, HOSTILE, body, session)
            still = await raw.request(http, url, HOSTILE, session, "tools/list")
            sessions = supervisor.status("notes").sessions

    for bad, response in [*opening.items(), *within.items()]:
        assert response.status_code == 400, (bad, response.status_code, response.text)
        assert raw.error_of(response)["code"] == -32600, (bad, response.text)
    assert still.status_code == 200 and "result" in raw.messages(still)[0]
    assert sessions == 1


async def test_abandoned_sessions_do_not_lock_the_bridge() -> None:
    """The conformance suite's pattern: 40 sessions opened and never closed, through ``clawplane
    bridge`` with default limits; the next client still works and the processes stay bounded."""
    tag = f"bridge-{uuid.uuid4().hex[:8]}"
    async with bridge_process(sys.executable, script("fault"), "--tag", tag) as (_bridge, url):
        async with raw.client() as http:
            for n in range(40):
                response = await raw.initialize(http, url, TOKEN)
                assert response.status_code == 200, f"session {n + 1}: {response.text}"
                session = response.headers[raw.SESSION]
                initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                assert (await raw.post(http, url, TOKEN, initialized, session)).status_code == 202
                assert (await raw.request(http, url, TOKEN, session, "tools/list")).status_code == 200
        async with authed(url, mode="legacy") as next_client:
            tools = {t.name for t in (await next_client.list_tools()).tools}
        with anyio.fail_after(CONDITION_S):
            while len(raw.tagged(tag)) > 1 + 32:  # the primary and at most maxSessions sessions
                await anyio.sleep(0.05)
    assert "echo" in tools


async def test_a_hundred_abandoned_sessions_leave_room_for_the_next_client(tmp_path: Path) -> None:
    """One consumer opens 100 sessions and abandons each (a client restarting in a loop, issue 37);
    another is served on its first try, and every eviction is counted in status and on ``/healthz``."""
    tag = f"hundred-{uuid.uuid4().hex[:8]}"
    async with Supervisor(settings=QUIET) as supervisor:
        await start(supervisor, "notes", stdio_spec("fault", "--tag", tag), tmp_path)
        endpoint = await supervisor.expose(two_consumers())
        url = endpoint.url("notes")
        async with raw.client() as http:
            for n in range(100):
                session = await raw.open_session(http, url, HOSTILE)
                listed = await raw.request(http, url, HOSTILE, session, "tools/list")
                assert listed.status_code == 200, f"session {n + 1}: {listed.text}"
            openclaw = await raw.initialize(http, url, OPENCLAW)
            listed = await raw.request(http, url, OPENCLAW, openclaw.headers[raw.SESSION], "tools/list")
            health = (await http.get(endpoint.health_url, headers={"Authorization": f"Bearer {HOSTILE}"})).json()
        status = supervisor.status("notes")

    assert openclaw.status_code == 200, openclaw.text
    assert listed.status_code == 200 and "result" in raw.messages(listed)[0]
    # The hostile consumer's share is 24 of the 32 (three quarters): each session past it ended its
    # own least recently used idle one, so OpenClaw found a free slot without evicting anyone.
    assert status.session_evictions == 100 - 24
    assert status.to_dict()["sessionEvictions"] == 76
    assert status.sessions == 25 and len(status.session_pids) <= 25
    assert health["sessionEvictions"] == {"notes": 76}


async def test_a_client_holding_32_busy_sessions_gets_503_with_retry_after() -> None:
    """Through ``clawplane bridge`` (one token, so its share is every one of the 32 slots): 32
    sessions each with an open stream are busy, none can make room, and the 33rd ``initialize``
    is refused with 503, ``Retry-After`` and ``-32011`` under its own id, saying what to do."""
    tag = f"busy-{uuid.uuid4().hex[:8]}"
    async with (
        bridge_process(sys.executable, script("fault"), "--tag", tag) as (_bridge, url),
        raw.client() as http,
        contextlib.AsyncExitStack() as held,
    ):
        for n in range(32):
            response = await raw.initialize(http, url, TOKEN)
            assert response.status_code == 200, f"session {n + 1}: {response.text}"
            await raw.hold(held, http, url, TOKEN, response.headers[raw.SESSION])
        refused = await raw.initialize(http, url, TOKEN, request_id=33)
        health_url = url.replace("/mcp", "/healthz")
        health = (await http.get(health_url, headers={"Authorization": f"Bearer {TOKEN}"})).json()

    assert refused.status_code == 503, refused.text
    assert refused.headers["retry-after"] == "1"
    body = refused.json()
    assert body["id"] == 33
    assert body["error"]["code"] == -32011
    assert "already has 32 client sessions" in body["error"]["message"]
    assert "none of them is idle" in body["error"]["message"]
    assert "--max-sessions" in body["error"]["message"]
    assert "sessionEvictions" not in health  # nothing was idle, so nothing was ended
