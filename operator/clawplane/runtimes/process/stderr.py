"""A stdio server's stderr, read line by line into logs: never mixed into the protocol.

Lines split at ``\\r`` or ``\\n``, as OpenClaw's ``attachStderrLogging`` does; a line longer
than the cap keeps its last bytes and gets the prefix ``[stderr line truncated]``. Each line
is redacted, logged at DEBUG on ``clawplane.runtimes.stderr`` and kept in a bounded ring
(``RuntimeSettings.stderr_history`` lines): a failed start is explained by its last lines in
status, apply, probe and the WARNING logged for it.
Reading never stops while the process lives, so a server flooding stderr cannot block on a
full pipe.
"""

from __future__ import annotations

import codecs
import logging
import re
from collections import deque
from collections.abc import Callable

import anyio
from anyio.abc import ByteReceiveStream

__all__ = ["StderrLog", "pump_stderr"]

# The name it had before process/ was its own room: log readers and tests filter on it.
logger = logging.getLogger("clawplane.runtimes.stderr")

TRUNCATED_PREFIX = "[stderr line truncated] "
_LINE_BREAK = re.compile(r"[\r\n]")
_CHUNK_BYTES = 65536


def _utf8_tail(text: str, max_bytes: int) -> str:
    """The longest suffix of ``text`` that fits in ``max_bytes`` UTF-8 bytes."""
    if len(text) * 4 <= max_bytes:
        return text
    data = text.encode("utf-8", "replace")
    if len(data) <= max_bytes:
        return text
    # A cut inside a multi-byte character drops that character's leftover bytes.
    return data[-max_bytes:].decode("utf-8", "ignore")


class StderrLog:
    """The recent stderr lines of one server, capped per line and in number."""

    def __init__(
        self,
        server: str,
        *,
        max_line_bytes: int,
        history: int,
        redact: Callable[[str], str] = str,
        on_update: Callable[[], None] = lambda: None,
    ) -> None:
        self.server = server
        self._on_update = on_update
        self.total_lines = 0
        self._max = max_line_bytes
        self._redact = redact
        self._lines: deque[str] = deque(maxlen=history)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""
        self._truncated = False

    def feed(self, data: bytes) -> None:
        """Take a chunk of stderr bytes; complete lines are emitted at once."""
        before = self.total_lines
        parts = _LINE_BREAK.split(self._pending + self._decoder.decode(data))
        self._pending = parts.pop()
        for part in parts:
            self._emit(part)
        tail = _utf8_tail(self._pending, self._max)
        self._truncated = self._truncated or tail != self._pending
        self._pending = tail
        if self.total_lines != before:
            self._on_update()  # once per chunk, not per line: a flood must stay cheap

    def close(self) -> None:
        """Flush the last, unterminated line (the stream ended)."""
        self._pending += self._decoder.decode(b"", final=True)
        pending, self._pending = self._pending, ""
        before = self.total_lines
        self._emit(pending)
        if self.total_lines != before:
            self._on_update()

    def lines(self) -> list[str]:
        """The kept lines, oldest first."""
        return list(self._lines)

    def recent(self, limit: int, *, since: int = 0) -> list[str]:
        """The last ``limit`` kept lines written after the first ``since`` lines (oldest first).

        ``since`` is a ``total_lines`` value read earlier, e.g. when a session started, so a
        failure is explained by what this session wrote, not by an older one.
        """
        fresh = min(self.total_lines - since, len(self._lines), limit)
        return list(self._lines)[len(self._lines) - fresh :] if fresh > 0 else []

    def _emit(self, text: str) -> None:
        tail = _utf8_tail(text, self._max)
        marker = TRUNCATED_PREFIX if self._truncated or tail != text else ""
        self._truncated = False
        message = self._redact(f"{marker}{tail}".strip())
        if not message:
            return
        self.total_lines += 1
        self._lines.append(message)
        logger.debug("%s: %s", self.server, message)


async def pump_stderr(stream: ByteReceiveStream, log: StderrLog) -> None:
    """Read ``stream`` into ``log`` until it ends."""
    try:
        while True:
            log.feed(await stream.receive(_CHUNK_BYTES))
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        pass
    finally:
        log.close()
