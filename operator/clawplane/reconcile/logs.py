"""Log lines of the supervisor: human text or JSON lines, each tagged with its reconcile id.

Every formatted line (message, arguments and traceback alike) passes the process's secret
redactor before it is written, so no value the supervisor resolved reaches its log.
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from clawplane.secrets import redact

_reconcile_id: contextvars.ContextVar[str] = contextvars.ContextVar("reconcile_id", default="-")

LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")


class LogLevelError(ValueError):
    """A log level name that is not one of ``LOG_LEVELS``."""


def level_number(name: str) -> int:
    """The ``logging`` level for one of ``LOG_LEVELS`` (any case)."""
    lowered = name.strip().lower()
    if lowered not in LOG_LEVELS:
        raise LogLevelError(f"--log-level must be one of {', '.join(LOG_LEVELS)} (got {name!r})")
    return int(getattr(logging, lowered.upper()))


@contextmanager
def reconcile_context(reconcile_id: str) -> Iterator[None]:
    """Tag every log line written inside the block with ``reconcile_id``."""
    token = _reconcile_id.set(reconcile_id)
    try:
        yield
    finally:
        _reconcile_id.reset(token)


class _ReconcileIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "reconcile_id"):
            # Runtime tasks outlive the pass that started them: their lines carry no pass id.
            runtime = record.name.startswith("clawplane.runtimes")
            record.reconcile_id = "-" if runtime else _reconcile_id.get()
        return True


def _redacted_record(record: logging.LogRecord, formatter: logging.Formatter) -> logging.LogRecord:
    """A copy of ``record`` whose message and traceback passed the redactor.

    Only what the line says is redacted, never its frame (time, level, logger, the JSON keys):
    a secret that happens to be ``INFO`` or ``msg`` must not garble every line.
    """
    copy = logging.makeLogRecord(record.__dict__)
    copy.msg, copy.args = redact(record.getMessage()), None
    if record.exc_info:
        copy.exc_text = redact(record.exc_text or formatter.formatException(record.exc_info))
        copy.exc_info = None
    if record.stack_info:
        copy.stack_info = redact(record.stack_info)
    return copy


class _RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return super().format(_redacted_record(record, self))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, reconcile_id, msg."""

    def format(self, record: logging.LogRecord) -> str:
        clean = _redacted_record(record, self)
        doc = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "reconcile_id": getattr(record, "reconcile_id", "-"),
            "msg": clean.getMessage(),
        }
        if clean.exc_text:
            doc["exc"] = clean.exc_text
        return json.dumps(doc, ensure_ascii=False)


def configure_logging(fmt: str = "text", *, level: int = logging.INFO) -> None:
    """Send ``clawplane`` logs to stderr as human lines or JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_ReconcileIdFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            _RedactingFormatter("%(asctime)s %(levelname)-7s [%(reconcile_id)s] %(name)s: %(message)s")
        )
    root = logging.getLogger("clawplane")
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False
