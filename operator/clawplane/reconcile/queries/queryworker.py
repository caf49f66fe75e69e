"""The process that answers a folder's costly questions: ``python -m`` this module.

Started by ``offload.QueryWorker`` with the folder's paths and the parent's pid; it reads one
question per line on stdin (``{"op": …, "args": {…}}``) and answers each on its own copy of
stdout as ``<status> <length>\\n`` and that many bytes of UTF-8: ``ok`` and the answer's JSON
text (bounded, see ``analysis.answer_text``), ``query`` and why the question cannot be answered
as asked, or ``error`` and what failed. Anything else printed goes to stderr (the supervisor's
log), never into the answers. It ends when stdin closes, after ``--idle`` seconds without a
question, or (on Linux) when its parent dies. It runs at a lower priority (nice 10): on a busy
machine the supervisor's own work goes first.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import logging
import os
import select
import signal
import sys
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["main"]

logger = logging.getLogger("clawplane.queryworker")
_PR_SET_PDEATHSIG = 1
_LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the signal was asked for
        raise SystemExit(0)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m clawplane.reconcile.queries.queryworker")
    p.add_argument("folder", type=Path)
    p.add_argument("--state-dir", type=Path, required=True)
    p.add_argument("--out-dir", type=Path, required=True)
    p.add_argument("--parent", type=int, required=True)
    p.add_argument("--idle", type=float, default=300.0)
    return p


class _Answerer:
    """Opens the state database on the first question and answers each question."""

    def __init__(self, folder: Path, state_dir: Path, out_dir: Path) -> None:
        from clawplane.workspace import Workspace

        self.ws = Workspace(folder, state_dir, out_dir)
        self._analysis: Any = None

    def __call__(self, line: bytes) -> tuple[str, str]:
        from clawplane.reconcile.queries.analysis import FolderAnalysis, QueryError, answer_text
        from clawplane.state import StateDB, StateError

        try:
            question = json.loads(line)
            op, args = str(question["op"]), dict(question.get("args") or {})
            if self._analysis is None:
                self._analysis = FolderAnalysis(self.ws, StateDB.open(self.ws.state_dir, create=False))
            doc = self._analysis.answer(op, args)
            return "ok", answer_text(op, doc, folder=str(self.ws.folder))
        except (QueryError, StateError) as exc:
            return "query", str(exc)
        except RecursionError:
            return "query", "the documents are nested too deeply to be read"
        except MemoryError:
            return "error", "the question needed more memory than the worker has"
        except Exception as exc:  # reported to the asker; the traceback goes to the log only
            logger.exception("a question failed")
            return "error", f"{type(exc).__name__}: {exc}"


def _serve(answer: _Answerer, questions: BinaryIO, answers: BinaryIO, idle: float) -> int:
    while True:
        ready, _, _ = select.select([questions], [], [], idle)
        if not ready:
            return 0  # idle: the parent starts another when it has a question
        line = questions.readline()
        if not line:
            return 0
        status, text = answer(line)
        payload = text.encode("utf-8", "replace")
        answers.write(f"{status} {len(payload)}\n".encode() + payload)
        answers.flush()


def main(argv: list[str] | None = None) -> int:
    """Answer questions until stdin closes, the worker idles out, or the parent dies."""
    args = _parser().parse_args(argv)
    _die_with_parent(args.parent)
    with contextlib.suppress(OSError):
        os.nice(10)  # when the machine is busy, the supervisor's hosted traffic goes first
    # The answers get their own descriptor; whatever else writes to stdout lands in stderr.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format=_LOG_FORMAT)
    # A terminal's Ctrl-C reaches the whole process group: the parent decides when this ends.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    answer = _Answerer(args.folder, args.state_dir, args.out_dir)
    return _serve(answer, sys.stdin.buffer, answers, args.idle)


if __name__ == "__main__":
    raise SystemExit(main())
