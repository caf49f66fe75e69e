"""Costly questions answered off the event loop: one worker process, a bounded queue, a time limit.

Validation and planning of caller-supplied documents take CPU time in proportion to their size
(seconds for a few MiB). Run on the event loop, they would stall every hosted server's traffic
and ``/healthz`` meanwhile; run in a thread, they would still hold the interpreter's lock for
most of it. So ``QueryWorker`` hands them to a child process (``queryworker``, started on the
first question, reused, gone after a while without one), one at a time in the order asked:

- at most ``max_waiting`` questions wait or run at once; one more is refused with ``BusyError``
  and a time to retry after;
- a question that runs longer than ``time_limit`` seconds is stopped (the worker is killed and
  a fresh one answers the next question) and answered with a ``QueryError`` that says so; a
  question whose asker goes away is stopped the same way;
- the answers come back as bounded JSON text (``analysis.answer_text``), which is all the loop
  parses.

``RateLimits`` keeps each consumer to its share of the worker: at most ``per_consumer``
questions in progress (waiting or running), ``burst`` questions at once and one more every
``refill_s``, and ``worker_s`` seconds of the worker's time at once and ``worker_share`` more
each second (a large plan costs more than a small one). Beyond any of them, ``BusyError`` says
when to retry; clawplane's own questions (``who`` None) are not counted. A consumer's flood is
refused while the others are still answered, in turn.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from subprocess import PIPE
from typing import Any, Final

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from clawplane._utils.identity import ProcessIdentity, identify, send_signal
from clawplane.reconcile.queries.analysis import MAX_LISTING_BYTES, QueryError
from clawplane.workspace import Workspace

__all__ = ["Answer", "BusyError", "QueryWorker", "RateLimits"]

logger = logging.getLogger(__name__)

TIME_LIMIT_S: Final = 60.0
"""How long one question may run (an MCP client waits 60 s by default)."""
MAX_WAITING: Final = 8
IDLE_S: Final = 300.0
_HEADER_MAX = 64
_BROKEN = (anyio.EndOfStream, anyio.IncompleteRead, anyio.DelimiterNotFound, anyio.BrokenResourceError,
           anyio.ClosedResourceError, ValueError)  # fmt: skip
"""How a worker that died (or wrote nonsense) shows while its answer is read."""


class BusyError(QueryError):
    """A question refused for now (a consumer's rate, or the worker's queue); ``retry_after`` in seconds."""

    def __init__(self, message: str, retry_after: float, *, limit: str) -> None:
        super().__init__(message)
        self.retry_after = max(0.1, retry_after)
        self.limit = limit
        """Which limit refused it: ``rate``, ``in-progress`` or ``queue``."""


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer as the worker wrote it (``text``) and as parsed (``value``)."""

    value: dict[str, Any]
    text: str


@dataclass(slots=True)
class _Share:
    questions: float
    seconds: float
    at: float
    running: int = 0


@dataclass
class RateLimits:
    """Each consumer's share of the worker (see the module docstring)."""

    per_consumer: int = 2
    """Questions one consumer may have waiting or running at once."""
    burst: int = 60
    """Questions one consumer may ask in a burst; one more every ``refill_s``."""
    refill_s: float = 0.5
    worker_s: float = 30.0
    """Seconds of the worker's time one consumer may use in a burst; ``worker_share`` more each second."""
    worker_share: float = 0.5
    clock: Any = time.monotonic
    _shares: dict[str, _Share] = field(default_factory=dict)

    def _refilled(self, who: str) -> _Share:
        now = self.clock()
        share = self._shares.get(who)
        if share is None:
            share = self._shares[who] = _Share(float(self.burst), self.worker_s, now)
        elapsed, share.at = now - share.at, now
        share.questions = min(float(self.burst), share.questions + elapsed / self.refill_s)
        share.seconds = min(self.worker_s, share.seconds + elapsed * self.worker_share)
        return share

    @contextlib.contextmanager
    def taken(self, who: str, typical_s: float) -> Iterator[Callable[[float], None]]:
        """Hold one of ``who``'s questions in progress; yields what charges the worker's time to it.

        Raises:
            BusyError: ``who`` is past its share (the message and ``retry_after`` say when to retry).
        """
        share = self._refilled(who)
        if share.running >= self.per_consumer:
            about = max(1.0, typical_s)
            raise BusyError(
                f'"{who}" already has {share.running} costly questions (validate, plan, …) in progress, '
                f"the most one consumer may have; retry when one is answered (in about {about:.0f} s)",
                typical_s, limit="in-progress",
            )  # fmt: skip
        if share.seconds <= 0:
            wait = (0.1 - share.seconds) / self.worker_share
            raise BusyError(
                f'"{who}" used more than its {self.worker_s:g} s of the supervisor\'s query worker at once '
                f"(it gets {self.worker_share:g} s more each second); retry in {wait:.1f} s",
                wait, limit="rate",
            )  # fmt: skip
        if share.questions < 1.0:
            wait = (1.0 - share.questions) * self.refill_s
            raise BusyError(
                f'"{who}" asked more than {self.burst} costly questions (validate, plan, …) in a burst, one '
                f"more every {self.refill_s:g} s; retry in {wait:.1f} s",
                wait, limit="rate",
            )  # fmt: skip
        share.questions -= 1.0
        share.running += 1

        def charge(seconds: float) -> None:
            self._refilled(who).seconds -= seconds

        try:
            yield charge
        finally:
            share.running -= 1
            if len(self._shares) > 1024:  # forget consumers whose shares are whole again
                whole = [k for k, b in self._shares.items() if not b.running and b.questions >= self.burst
                         and b.seconds >= self.worker_s]  # fmt: skip
                for key in whole[:512]:
                    del self._shares[key]


class QueryWorker:
    """Answers ``analysis.FolderAnalysis`` questions in a child process (see the module docstring)."""

    def __init__(
        self,
        ws: Workspace,
        *,
        time_limit: float = TIME_LIMIT_S,
        max_waiting: int = MAX_WAITING,
        idle_s: float = IDLE_S,
        limits: RateLimits | None = None,
    ) -> None:
        self.ws = ws
        self.time_limit = time_limit
        self.max_waiting = max_waiting
        self.idle_s = idle_s
        self.limits = limits or RateLimits()
        self._turn = anyio.Lock()  # fair: questions are answered in the order asked
        self._waiting = 0
        self._process: Process | None = None
        self._identity: ProcessIdentity | None = None
        self._reader: BufferedByteReceiveStream | None = None
        self._typical = 1.0  # seconds a question took lately (a retry hint)
        self.stopped = 0
        """How many questions were stopped (time limit, asker gone) by killing the worker."""

    async def ask(self, op: str, args: Mapping[str, Any], *, who: str | None = None) -> Answer:
        """The answer to ``op`` (``who``: the consumer, whose share is counted; None: clawplane itself).

        Raises:
            BusyError: Refused for now (the consumer's share, or the queue); says when to retry.
            QueryError: It cannot be answered as asked, it failed, or it ran out of time.
        """
        if self._waiting >= self.max_waiting:
            raise BusyError(
                f"{self._waiting} costly questions (validate, plan, …) are already waiting for the "
                f"supervisor's worker; retry in about {self._typical * 2:.0f} s",
                self._typical * 2, limit="queue",
            )  # fmt: skip
        share = self.limits.taken(who, self._typical) if who is not None else contextlib.nullcontext(_free)
        with share as charge:
            self._waiting += 1
            try:
                async with self._turn:
                    started = anyio.current_time()
                    try:
                        return await self._run(op, args)
                    finally:
                        charge(anyio.current_time() - started)
            finally:
                self._waiting -= 1

    async def _run(self, op: str, args: Mapping[str, Any]) -> Answer:
        line = (json.dumps({"op": op, "args": dict(args)}, ensure_ascii=False) + "\n").encode("utf-8")
        for attempt in (1, 2):
            started = anyio.current_time()
            process, reader = await self._started()
            try:
                with anyio.fail_after(self.time_limit):
                    await _send(process, line)
                    header = await reader.receive_until(b"\n", _HEADER_MAX)
                    status, _, size = header.decode("ascii", "replace").partition(" ")
                    payload = (await reader.receive_exactly(int(size))).decode("utf-8") if int(size) else ""
            except TimeoutError:
                self.stopped += 1
                await self._stop(f"it ran longer than {self.time_limit:g} s")
                raise QueryError(
                    f"the {op} question ran longer than {self.time_limit:g} s and was stopped; ask about "
                    f"less at once (fewer documents), or use the CLI (`clawplane {op} {self.ws.folder}`)"
                ) from None
            except _BROKEN:
                died = await self._stop("it broke off its answer")
                if attempt == 1 and died == 0:
                    continue  # it had just idled out as the question came: ask a fresh one
                raise QueryError(
                    f"the supervisor's query worker ended while answering the {op} question ({_exit(died)}); "
                    "ask again, and see the supervisor's log if it keeps happening"
                ) from None
            except BaseException:
                # Its asker is gone: the answer is not wanted, and the worker must not answer it later.
                self.stopped += 1
                with anyio.CancelScope(shield=True):
                    await self._stop("its asker went away")
                raise
            self._typical = 0.7 * self._typical + 0.3 * (anyio.current_time() - started)
            return _answer(op, status, payload)
        raise AssertionError("unreachable")

    async def _started(self) -> tuple[Process, BufferedByteReceiveStream]:
        if self._process is not None and self._process.returncode is None and self._reader is not None:
            return self._process, self._reader
        await self._stop("")
        argv = [
            sys.executable, "-m", "clawplane.reconcile.queries.queryworker", str(self.ws.folder),
            "--state-dir", str(self.ws.state_dir), "--out-dir", str(self.ws.out_dir),
            "--parent", str(os.getpid()), "--idle", f"{self.idle_s:g}",
        ]  # fmt: skip
        try:
            process = await anyio.open_process(argv, stdin=PIPE, stdout=PIPE, stderr=None)
        except OSError as exc:
            raise QueryError(f"could not start the supervisor's query worker: {exc}") from None
        assert process.stdout is not None
        # Our child, not yet waited for: the pid is still its own, so this names it for good.
        self._identity = identify(process.pid)
        self._process, self._reader = process, BufferedByteReceiveStream(process.stdout)
        return process, self._reader

    async def _stop(self, why: str) -> int | None:
        """End the worker (killed when it is busy); its exit status (None: there was none).

        The signal goes through the worker's identity (a pidfd), never ``Process.kill``:
        ``Popen.send_signal`` first polls with ``waitpid``, and a poll that collects a worker
        that has just died leaves asyncio's watcher only ``ECHILD``, which it reports as status 255
        instead of the real cause.
        """
        process, self._process, self._reader = self._process, None, None
        identity, self._identity = self._identity, None
        if process is None:
            return None
        if process.returncode is None:
            if why:
                logger.info("stopping the query worker (pid %d): %s", process.pid, why)
            if identity is not None:
                send_signal(identity, signal.SIGKILL)
        with anyio.CancelScope(shield=True):
            await process.wait()
            await process.aclose()
        return process.returncode

    async def aclose(self) -> None:
        """End the worker now (the server is stopping): a question it was answering fails cleanly."""
        await self._stop("the server is stopping")


def _free(seconds: float) -> None:
    return None


async def _send(process: Process, line: bytes) -> None:
    assert process.stdin is not None
    await process.stdin.send(line)


def _exit(code: int | None) -> str:
    if code is None:
        return "no exit status"
    return f"killed by signal {-code}" if code < 0 else f"exit status {code}"


def _answer(op: str, status: str, payload: str) -> Answer:
    if status == "ok":
        if len(payload) > MAX_LISTING_BYTES:  # answer_text bounds it; a worker that did not is broken
            raise QueryError(f"the {op} answer is larger than any answer may be")
        value = json.loads(payload)
        if not isinstance(value, dict):
            raise QueryError(f"the {op} answer is not a JSON object")
        return Answer(value, payload)
    if status == "query":
        raise QueryError(payload)
    raise QueryError(f"the {op} question failed: {payload}; see the supervisor's log")
