"""stderr capture: lines split at CR or LF, capped keeping the tail, redacted, bounded history."""

from __future__ import annotations

from clawplane.runtimes.process.stderr import TRUNCATED_PREFIX, StderrLog
from clawplane.runtimes.redaction import Redactor


def log(**kwargs: object) -> StderrLog:
    defaults: dict[str, object] = {"max_line_bytes": 8192, "history": 10}
    return StderrLog("srv", **{**defaults, **kwargs})  # type: ignore[arg-type]


def test_lines_split_at_cr_and_lf_across_chunks() -> None:
    stderr = log()
    stderr.feed(b"one\ntw")
    stderr.feed(b"o\r\nthree\rfour")
    assert stderr.lines() == ["one", "two", "three"]
    stderr.close()
    assert stderr.lines() == ["one", "two", "three", "four"]
    assert stderr.total_lines == 4


def test_blank_lines_are_skipped_and_lines_trimmed() -> None:
    stderr = log()
    stderr.feed(b"\n\n   \n  padded  \n")
    assert stderr.lines() == ["padded"]


def test_long_lines_keep_their_tail_with_a_marker() -> None:
    stderr = log(max_line_bytes=10)
    stderr.feed(b"0123456789ABCDEF\nshort\n")
    stderr.feed(b"x" * 25)
    stderr.feed(b"y" * 5 + b"\n")
    assert stderr.lines() == [TRUNCATED_PREFIX + "6789ABCDEF", "short", TRUNCATED_PREFIX + "xxxxxyyyyy"]


def test_a_cut_never_splits_a_utf8_character() -> None:
    stderr = log(max_line_bytes=5)
    stderr.feed("aé€😀\n".encode())
    assert stderr.lines() == [TRUNCATED_PREFIX + "😀"]
    split = log()
    data = "héllo\n".encode()
    split.feed(data[:2])
    split.feed(data[2:])
    assert split.lines() == ["héllo"]


def test_history_is_bounded_and_secrets_are_redacted() -> None:
    updates: list[int] = []
    stderr = log(history=3, redact=Redactor(["hunter22"]), on_update=lambda: updates.append(1))
    stderr.feed(b"".join(f"line {n} hunter22\n".encode() for n in range(100)))
    assert stderr.lines() == [f"line {n} <redacted>" for n in (97, 98, 99)]
    assert stderr.total_lines == 100 and updates == [1]
