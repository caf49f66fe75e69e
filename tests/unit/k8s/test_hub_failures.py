"""A namespace pass that the API server refuses is logged with its cause, not a traceback.

Each failed pass is retried with backoff; a traceback per retry for a 403 or an unreachable
API server buried the one line that mattered. A bug of ours still gets its traceback.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest

from clawplane.k8s.adapter.hub import Worker
from clawplane.k8s.api.kubeapi import ApiError


class _Failing:
    """Stands in for a NamespaceReconciler whose pass raises ``error``."""

    namespace = "team-a"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def reconcile(self) -> Any:
        raise self.error


def _pass(error: BaseException, caplog: pytest.LogCaptureFixture) -> tuple[Any, list[logging.LogRecord]]:
    worker = Worker(reconciler=_Failing(error))  # type: ignore[arg-type]

    async def run() -> Any:
        result = await worker._pass()
        if worker._retry is not None:
            worker._retry.cancel()
        return result

    with caplog.at_level(logging.INFO, logger="clawplane.k8s"):
        result = asyncio.run(run())
    return result, [r for r in caplog.records if "reconcile failed" in r.getMessage()]


@pytest.mark.parametrize(
    "error",
    [
        ApiError(403, "Forbidden", 'configmaps is forbidden: User "x" cannot create resource'),
        httpx.ConnectError("All connection attempts failed"),
        ConnectionRefusedError(111, "Connection refused"),
    ],
    ids=["refused", "unreachable", "socket"],
)
def test_an_api_failure_is_one_line_with_its_cause(error: BaseException, caplog: pytest.LogCaptureFixture) -> None:
    result, records = _pass(error, caplog)
    assert not result.ok and str(error) in (result.error or "")
    assert len(records) == 1
    assert records[0].levelno == logging.WARNING and records[0].exc_info is None
    assert str(error) in records[0].getMessage() and "team-a" in records[0].getMessage()


def test_a_bug_keeps_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    result, records = _pass(KeyError("spec"), caplog)
    assert not result.ok
    assert len(records) == 1 and records[0].levelno == logging.ERROR and records[0].exc_info is not None
